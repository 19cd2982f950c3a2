// The email campaign builder between its form and the API's body (what goes in comes back out, empty fields left
// out), a subscriber's merge fields as the server renders them, and merge-tag insertion at the cursor.
import { describe, expect, it } from 'vitest';
import type { Schemas } from '../api/client';
import { EMPTY_FORM, formOf, insertAt, mergeFieldsOf, mergeTag, parseAddresses, partsOf, toEmailCampaignBody, type EmailCampaignForm } from './email-campaign-builder-model';
import { treeOf } from './filters-tree-model';

const form: EmailCampaignForm = {
  ...EMPTY_FORM,
  name: 'Spring sale',
  subject: 'Hello {{ first_name | default: "there" }}',
  preheader: 'Everything half price',
  html: '<p>See <a href="https://shop.example.com/sale">the sale</a></p>',
  fromName: 'Example Shop',
  fromLocal: 'hello',
  fromDomain: 'news.example.com',
  replyToLocal: 'help',
  replyToDomain: 'news.example.com',
  utm: { source: 'herald', medium: '', campaign: 'spring', content: 'hero' },
  filters: treeOf({ country: ['FR', 'BE'], tags: { any: ['vip'] } }),
  mode: 'scheduled',
  sendAt: '2026-12-01T09:00',
  timezone: 'Europe/Paris',
  localTime: true,
};

describe('toEmailCampaignBody', () => {
  it('writes the content, senders, audience, schedule and UTM the API takes, leaving out empty fields', () => {
    expect(toEmailCampaignBody(form, 'prj_1')).toEqual({
      name: 'Spring sale',
      projectId: 'prj_1',
      content: {
        subject: 'Hello {{ first_name | default: "there" }}',
        preheader: 'Everything half price',
        html: '<p>See <a href="https://shop.example.com/sale">the sale</a></p>',
        from: { email: 'hello@news.example.com', name: 'Example Shop' },
        replyTo: { email: 'help@news.example.com' },
      },
      segment: { filters: { country: ['FR', 'BE'], tags: { any: ['vip'] } } },
      schedule: { mode: 'scheduled', sendAt: '2026-12-01T09:00', timezone: 'Europe/Paris', localTime: true },
      utm: { source: 'herald', campaign: 'spring', content: 'hero' },
    });
  });

  it('sends a written plain text, a saved segment, no Reply-To when its address is empty, and local time only when scheduled', () => {
    const body = toEmailCampaignBody(
      { ...form, textMode: 'custom', text: 'See the sale', replyToLocal: ' ', audience: 'saved', savedSegmentId: 'seg_1', mode: 'draft', utm: EMPTY_FORM.utm },
      'prj_1',
    );
    expect(body.content).toMatchObject({ text: 'See the sale' });
    expect(body.content.replyTo).toBeUndefined();
    expect(body.segment).toEqual({ savedSegmentId: 'seg_1' });
    expect(body.schedule).toEqual({ mode: 'draft', timezone: 'Europe/Paris' });
    expect(body.utm).toBeUndefined();
  });

  it('keeps an empty part or local part, so the API can say what it lacks beside the field', () => {
    expect(toEmailCampaignBody({ ...EMPTY_FORM, fromDomain: 'news.example.com' }, 'prj_1').content).toEqual({ subject: '', html: '', from: { email: '@news.example.com' } });
  });
});

describe('partsOf', () => {
  it('gives the preview the parts as they will be stored: auto text and an empty preheader are none', () => {
    expect(partsOf({ ...form, preheader: '', text: 'ignored' })).toEqual({ subject: form.subject, html: form.html });
    expect(partsOf({ ...form, textMode: 'custom', text: 'Plain' })).toMatchObject({ text: 'Plain', preheader: 'Everything half price' });
  });
});

describe('formOf', () => {
  it('reads a stored campaign back into the same form (sendAt as the wall clock of its zone)', () => {
    const body = toEmailCampaignBody(form, 'prj_1');
    const stored = {
      ...body,
      schedule: { mode: 'scheduled', sendAt: '2026-12-01T09:00:00+01:00', timezone: 'Europe/Paris', localTime: true, localWindow: null },
      utm: body.utm ?? null,
    } as unknown as Schemas['EmailCampaign'];
    expect(formOf(stored)).toEqual(form);
    expect(toEmailCampaignBody(formOf(stored), 'prj_1')).toEqual(body);

    const custom = { ...stored, content: { ...stored.content, text: 'Plain', preheader: undefined, replyTo: undefined } } as Schemas['EmailCampaign'];
    expect(formOf(custom)).toMatchObject({ textMode: 'custom', text: 'Plain', preheader: '', replyToLocal: '', replyToDomain: '' });
  });
});

describe('mergeFieldsOf', () => {
  it('names the standard fields as merge tags, leaves out those it lacks, and lets attributes win', () => {
    const subscriber = { email: 'ada@example.org', externalId: 'u-1', country: 'GB', city: null, language: 'en', timezone: null, attributes: { first_name: 'Ada', country: 'UK' } };
    expect(mergeFieldsOf(subscriber)).toEqual({ email: 'ada@example.org', external_id: 'u-1', country: 'UK', language: 'en', first_name: 'Ada' });
  });
});

describe('merge tags', () => {
  it('inserts a tag with an empty default in place of the selection, the cursor after it', () => {
    const tag = mergeTag(' first_name ');
    expect(tag).toBe('{{ first_name | default: "" }}');
    expect(insertAt('<p>Hi !</p>', 6, 6, tag)).toEqual({ text: `<p>Hi ${tag}!</p>`, cursor: 6 + tag.length });
    expect(insertAt('<p>Hi NAME</p>', 6, 10, tag).text).toBe(`<p>Hi ${tag}</p>`);
  });

  it('reads test addresses however they are separated, each once', () => {
    expect(parseAddresses(' a@example.org, b@example.org;c@example.org\nd@example.org a@example.org ')).toEqual(['a@example.org', 'b@example.org', 'c@example.org', 'd@example.org']);
    expect(parseAddresses('  ')).toEqual([]);
  });
});
