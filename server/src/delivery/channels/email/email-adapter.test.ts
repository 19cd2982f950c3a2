// The email adapter's addressing and rendering: reachability, merge tags per recipient, tracked links, pixel, footer,
// headers, VERP, determinism.
import { describe, expect, it } from 'vitest';
import type { EmailContent } from '../../../db/schema.js';
import type { AddressRecipient, ClaimedDelivery, MessageRecord, SendingProject, SubscriberMergeFields } from '../../delivery.repository.js';
import { createEmailLinks } from '../../email-links.js';
import { createSandboxProvider } from '../sandbox.js';
import { createEmailAdapter } from './email-adapter.js';
import type { EmailItem } from './email-item.js';
import { recipientVariables } from './email-render.js';

const links = createEmailLinks('https://herald.example.com', { current: 'a-secret-a-secret-a-secret-a-secret-0', previous: [] });
const adapter = createEmailAdapter({
  links,
  bounceDomain: 'bounces.herald.example.com',
  live: { smtp: createSandboxProvider(), ses: createSandboxProvider() },
  sandbox: createSandboxProvider(),
  sesCallbacks: { topicArns: [], maxAgeSeconds: 3600, machineSignals: () => [] },
});

const html = `<!doctype html><html><head><title>Sale</title></head><body class="main">
<p>Our <a class="cta" title="a > b" href="https://shop.example.com/sale?utm_source=mail&amp;ref=a%20b#top">sale</a> starts now.</p>
<p><a href='https://shop.example.com/'>Shop</a> · <a href=https://example.com/bare>bare</a> · <A HREF=" https://example.com/spaced ">spaced</A></p>
<p><a href="mailto:help@example.com">Mail us</a> · <a href="tel:+15551234567">Call</a> · <a href="#details">Details</a> · <a href="/relative">Relative</a></p>
<p><a href="https://herald.example.com/u/preferences-token">Preferences</a></p>
</body></html>`;

const content: EmailContent = { subject: ' Big sale ', html, preheader: 'Up to 50% off <today>', from: { email: 'news@Mail.Example.com', name: 'Example Shop' } };

const to = (fields: Partial<AddressRecipient<'email'>> = {}): AddressRecipient<'email'> => ({
  channel: 'email',
  address: 'ada@example.org',
  status: 'reachable',
  reason: null,
  ...fields,
});

const delivery = (fields: Partial<ClaimedDelivery<'email'>> = {}): ClaimedDelivery<'email'> => ({
  id: 4242,
  projectId: 'prj_1',
  messageId: 'msg_01jd3abcdefghjkmnpqrstvwxy',
  subscriberId: 'sub_01jd3abcdefghjkmnpqrstvwxy',
  channel: 'email',
  attempts: 1,
  recipient: to(),
  subscriberStatus: 'unsubscribed',
  subscriberSandbox: false,
  subscriberTimezone: null,
  messageCancelled: false,
  messagePaused: false,
  mergeFields: null,
  ...fields,
});

const message = (fields: Partial<MessageRecord<'email'>> = {}): MessageRecord<'email'> => ({
  id: 'msg_01jd3abcdefghjkmnpqrstvwxy',
  projectId: 'prj_1',
  channel: 'email',
  source: 'campaign',
  campaignId: 'cmp_01jd3abcdefghjkmnpqrstvwxy',
  sandbox: false,
  content,
  options: {},
  ...fields,
});

const project = (email: SendingProject['channels']['email']): SendingProject => ({
  id: 'prj_1',
  channels: email === undefined ? {} : { email },
  vapidSubject: undefined,
  deliveryPolicy: undefined,
  timezone: undefined,
});
const smtp = { provider: 'smtp', settings: { host: 'smtp.example.com', port: 587, secure: false, ratePerSecond: 14 }, credentials: { user: 'herald', pass: 'p4ss' } };

function itemOf(addressed: ReturnType<typeof adapter.address>): EmailItem {
  if (!('item' in addressed)) throw new Error(`refused: ${addressed.refusal}`);
  return addressed.item;
}

const hrefs = (body: string) => [...body.matchAll(/<a\b(?:[^>"']|"[^"]*"|'[^']*')*?\shref="([^"]*)"/gi)].map((m) => m[1]!.replace(/&amp;/g, '&'));

describe('the email adapter', () => {
  it('wraps every http(s) link in a signed click URL, entities decoded, query and fragment kept; leaves the others alone', () => {
    const { email } = itemOf(adapter.address(delivery(), message(), project(smtp)));
    const body = email.html!;
    const [sale, shop, bare, spaced, ...rest] = hrefs(body);
    const targets = [
      'https://shop.example.com/sale?utm_source=mail&ref=a%20b#top',
      'https://shop.example.com/',
      'https://example.com/bare',
      'https://example.com/spaced',
    ];
    [sale, shop, bare, spaced].forEach((href, i) => {
      const url = new URL(href!);
      expect(url.origin + url.pathname).toBe('https://herald.example.com/e/click/cmp_01jd3abcdefghjkmnpqrstvwxy/sub_01jd3abcdefghjkmnpqrstvwxy');
      expect(url.searchParams.get('u')).toBe(targets[i]);
      expect(links.verifyClick({ id: 'cmp_01jd3abcdefghjkmnpqrstvwxy', subscriberId: 'sub_01jd3abcdefghjkmnpqrstvwxy' }, targets[i]!, url.searchParams.get('s')!)).toBe(true);
    });
    // Untracked: mailto, tel, an anchor, a relative link, a preference-center link — and the footer.
    const unsubscribe = links.unsubscribeUrl(links.unsubscribeToken(4242));
    expect(rest).toEqual(['mailto:help@example.com', 'tel:+15551234567', '#details', '/relative', 'https://herald.example.com/u/preferences-token', unsubscribe]);
    // Other attributes are kept as they were.
    expect(body).toContain('<a class="cta" title="a > b" href="https://herald.example.com/e/click/');
  });

  it('adds the preheader first, then the unsubscribe footer and the open pixel at the end of the body', () => {
    const { email } = itemOf(adapter.address(delivery(), message(), project(smtp)));
    const body = email.html!;
    expect(body).toMatch(/<body class="main"><div style="display:none;[^"]*">Up to 50% off &lt;today&gt;<\/div>\n<p>Our/);
    const pixel = links.openUrl({ id: 'cmp_01jd3abcdefghjkmnpqrstvwxy', subscriberId: 'sub_01jd3abcdefghjkmnpqrstvwxy' }).replace(/&/g, '&amp;');
    expect(body).toMatch(
      new RegExp(`>Unsubscribe or change your email preferences</a></p><img src="${pixel.replace(/[?.]/g, '\\$&')}" width="1" height="1" alt="" [^>]*>\\n?</body></html>$`),
    );
  });

  it('carries a readable plain part, the List-Unsubscribe and bulk mail headers, an opaque Message-ID of the delivery and a VERP Return-Path', () => {
    const { email } = itemOf(adapter.address(delivery(), message(), project(smtp)));
    const token = links.unsubscribeToken(4242);
    expect(email.text).toContain('Our sale [https://shop.example.com/sale?utm_source=mail&ref=a%20b#top] starts');
    expect(email.text).not.toContain('/e/click/');
    expect(email.text.endsWith(`\n\n--\nUnsubscribe or change your email preferences: https://herald.example.com/u/${token}\n`)).toBe(true);
    expect(email.headers).toEqual({
      'List-Unsubscribe': `<https://herald.example.com/u/${token}>, <mailto:unsubscribe+${token}@bounces.herald.example.com>`,
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
      'List-Id': '<prj_1.mail.example.com>',
      'Feedback-ID': 'cmp_01jd3abcdefghjkmnpqrstvwxy:prj_1:campaign:herald',
    });
    expect(email).toMatchObject({
      subject: 'Big sale',
      to: 'ada@example.org',
      from: { email: 'news@Mail.Example.com', name: 'Example Shop' },
      messageId: `<${links.messageIdToken(4242)}@mail.example.com>`,
      returnPath: `bounce+${links.bounceToken(4242)}@bounces.herald.example.com`,
    });
    expect(links.verifyBounce(email.returnPath.slice('bounce+'.length, email.returnPath.indexOf('@')))).toBe(4242);
    expect(email.messageId).toMatch(/^<[a-z2-7]{28}@mail\.example\.com>$/);
    expect(itemOf(adapter.address(delivery({ id: 4243 }), message(), project(smtp))).email.messageId).not.toBe(email.messageId);
    // Transactional mail and automation mail: a stream of the project's, and on a list only when it is bulk mail.
    const transactional = itemOf(adapter.address(delivery(), message({ source: 'transactional', campaignId: null }), project(smtp))).email.headers;
    expect(transactional).toMatchObject({ 'Feedback-ID': 'prj_1:transactional:herald' });
    expect(transactional).not.toHaveProperty('List-Id');
    const automation = itemOf(adapter.address(delivery(), message({ source: 'automation', campaignId: null }), project(smtp))).email.headers;
    expect(automation).toMatchObject({ 'List-Id': '<prj_1.mail.example.com>', 'Feedback-ID': 'prj_1:automation:herald' });
  });

  it('renders the same delivery the same every time, and a text-only message without html, pixel or wrapping', () => {
    expect(adapter.address(delivery(), message(), project(smtp))).toEqual(adapter.address(delivery({ attempts: 3 }), message(), project(smtp)));
    const text = itemOf(
      adapter.address(delivery(), message({ source: 'transactional', campaignId: null, content: { subject: 'Code', text: 'Your code is 1234 https://x.example.com/a', from: { email: 'a@example.com' } } }), project(smtp)),
    );
    expect(text.email.html).toBeUndefined();
    expect(text.email.text).toMatch(/^Your code is 1234 https:\/\/x\.example\.com\/a\n\n--\nUnsubscribe/);
  });

  it('names transactional mail by its message in tracked links', () => {
    const { email } = itemOf(adapter.address(delivery(), message({ source: 'transactional', campaignId: null }), project(smtp)));
    expect(hrefs(email.html!)[0]).toMatch(/^https:\/\/herald\.example\.com\/e\/click\/msg_01jd3abcdefghjkmnpqrstvwxy\/sub_/);
  });

  it('refuses an address that is not reachable, whatever the push status of its subscriber, and a live message without a provider', () => {
    expect(adapter.address(delivery({ recipient: to({ status: 'unreachable' }) }), message(), project(smtp))).toEqual({ refusal: 'recipient_bounced' });
    expect(adapter.address(delivery({ recipient: to({ status: 'opted_out' }) }), message(), project(smtp))).toEqual({ refusal: 'subscriber_unsubscribed' });
    const unsubscribed = delivery({ recipient: to({ status: 'opted_out', reason: 'unsubscribed' }) });
    const complained = delivery({ recipient: to({ status: 'opted_out', reason: 'complained' }) });
    expect(adapter.address(unsubscribed, message(), project(smtp))).toEqual({ refusal: 'subscriber_unsubscribed' });
    expect(adapter.address(complained, message(), project(smtp))).toEqual({ refusal: 'recipient_complained' });
    // Essential mail goes to an address unsubscribed from campaigns, never to one that complained or was suppressed otherwise.
    const essential = message({ source: 'transactional', campaignId: null, options: { essential: true } });
    expect(itemOf(adapter.address(unsubscribed, essential, project(smtp))).email.to).toBe('ada@example.org');
    expect(adapter.address(complained, essential, project(smtp))).toEqual({ refusal: 'recipient_complained' });
    expect(adapter.address(delivery({ recipient: to({ status: 'opted_out', reason: 'manual' }) }), essential, project(smtp))).toEqual({ refusal: 'subscriber_unsubscribed' });
    expect(adapter.address(delivery({ recipient: to({ status: 'unreachable', reason: 'bounced' }) }), essential, project(smtp))).toEqual({ refusal: 'recipient_bounced' });
    expect(adapter.address(delivery(), message(), project(undefined))).toEqual({ refusal: 'provider_not_configured' });
    // A test key's message renders without one: the sandbox sends nothing.
    expect(itemOf(adapter.address(delivery(), message({ sandbox: true }), project(undefined))).account).toBeUndefined();
  });

  it("draws from the account's rate when the provider settings name one", () => {
    const item = itemOf(adapter.address(delivery(), message(), project(smtp)));
    expect(adapter.rate!(item)).toEqual({ key: 'smtp:smtp.example.com:herald', perSecond: 14 });
    const unrated = itemOf(adapter.address(delivery(), message(), project({ ...smtp, settings: { host: 'smtp.example.com', port: 587, secure: false } })));
    expect(adapter.rate!(unrated)).toBeUndefined();
  });

  it("holds an account in its provider's sandbox to 1 per second and 200 per 24 hours, or its own lower quota (spec 8)", () => {
    const rateOf = (email: SendingProject['channels']['email']) => adapter.rate!(itemOf(adapter.address(delivery(), message(), project(email))));
    expect(rateOf({ ...smtp, settings: { ...smtp.settings, sandbox: true } })).toEqual({ key: 'smtp:smtp.example.com:herald', perSecond: 1, per24Hours: 200 });
    const ses = {
      provider: 'ses',
      settings: { region: 'eu-west-1', sandbox: true, ratePerSecond: 0.5, per24Hours: 100 },
      credentials: { accessKeyId: 'AKIAEXAMPLE0000001', secretAccessKey: 'secret' },
    };
    expect(rateOf(ses)).toEqual({ key: 'ses:eu-west-1:AKIAEXAMPLE0000001', perSecond: 0.5, per24Hours: 100 });
    expect(rateOf({ ...ses, settings: { region: 'eu-west-1', sandbox: false, ratePerSecond: 14, per24Hours: 50_000 } })).toEqual({ key: 'ses:eu-west-1:AKIAEXAMPLE0000001', perSecond: 14 });
  });
});

describe('a personalized message', () => {
  const personal: EmailContent = {
    subject: 'Hello {{ first_name }}, {{ plan | default: "your plan" }} is ready',
    preheader: 'For {{ first_name }}',
    html:
      '<html><body><p>Hi {{ first_name }}</p>' +
      '<p><a href="https://shop.example.com/u/{{ external_id }}?ref={{ source | default: \'mail\' }}">Your page</a></p></body></html>',
    from: { email: 'news@mail.example.com' },
  };
  const fields = (data: Partial<SubscriberMergeFields> = {}): SubscriberMergeFields => ({
    attributes: {},
    externalId: null,
    country: null,
    city: null,
    language: null,
    timezone: null,
    ...data,
  });
  const ada = delivery({ mergeFields: fields({ attributes: { first_name: '<b>Ada</b>', plan: 'Pro' }, externalId: 'ada-1' }) });
  const grace = delivery({
    id: 4343,
    subscriberId: 'sub_01jd3grace0000000000000000',
    recipient: to({ address: 'grace@example.org' }),
    mergeFields: fields({ attributes: { first_name: 'Grace' }, externalId: 'grace-2' }),
  });
  const personalized = (content: EmailContent = personal) => message({ content, options: { personalized: true } });

  it("renders each recipient's own values: escaped in the HTML, as given in subject, preheader and plain part", () => {
    const first = itemOf(adapter.address(ada, personalized(), project(smtp))).email;
    expect(first.subject).toBe('Hello <b>Ada</b>, Pro is ready');
    expect(first.html).toContain('<p>Hi &lt;b&gt;Ada&lt;/b&gt;</p>');
    expect(first.html).toContain('>For &lt;b&gt;Ada&lt;/b&gt;</div>');
    // Made from this recipient's HTML: its entities read back as the value.
    expect(first.text).toMatch(/^Hi <b>Ada<\/b>\n\nYour page \[https:\/\/shop\.example\.com\/u\/ada-1\?ref=mail\]\n/);

    const second = itemOf(adapter.address(grace, personalized(), project(smtp))).email;
    expect(second.subject).toBe('Hello Grace, your plan is ready');
    expect(second.html).toContain('<p>Hi Grace</p>');
    expect(second.to).toBe('grace@example.org');
  });

  it('wraps a link whose href holds merge tags with its rendered target, signed for that target', () => {
    for (const [recipient, target] of [
      [ada, 'https://shop.example.com/u/ada-1?ref=mail'],
      [grace, 'https://shop.example.com/u/grace-2?ref=mail'],
    ] as const) {
      const [href] = hrefs(itemOf(adapter.address(recipient, personalized(), project(smtp))).email.html!);
      const url = new URL(href!);
      expect(url.searchParams.get('u')).toBe(target);
      expect(links.verifyClick({ id: 'cmp_01jd3abcdefghjkmnpqrstvwxy', subscriberId: recipient.subscriberId }, target, url.searchParams.get('s')!)).toBe(true);
    }
  });

  it('renders a text part as given, a subject on one line, and the same bytes on every attempt', () => {
    const withText = personalized({ ...personal, text: 'Hi {{ first_name }} <{{ email }}>, from {{ city | default: "somewhere" }}' });
    const multiline = delivery({ mergeFields: fields({ attributes: { first_name: 'Ada\r\n  Lovelace' }, externalId: 'ada-1' }) });
    const { email } = itemOf(adapter.address(multiline, withText, project(smtp)));
    expect(email.text.startsWith('Hi Ada\r\n  Lovelace <ada@example.org>, from somewhere\n\n--\n')).toBe(true);
    expect(email.subject).toBe('Hello Ada Lovelace, your plan is ready');
    expect(adapter.address(ada, personalized(), project(smtp))).toEqual(adapter.address({ ...ada, attempts: 3 }, personalized(), project(smtp)));
  });

  it('fails a recipient missing a variable without default; one whose render a limit stops, whose content does not parse or renders what cannot go', () => {
    expect(adapter.address(delivery({ mergeFields: fields({ externalId: 'x-1' }) }), personalized(), project(smtp))).toEqual({ refusal: 'template_variables_missing' });
    // A city the subscriber has not got is missing, like an absent attribute.
    const city = personalized({ ...personal, subject: 'News from {{ city }}', preheader: undefined, html: '<p>News</p>' });
    expect(adapter.address(ada, city, project(smtp))).toEqual({ refusal: 'template_variables_missing' });
    expect(itemOf(adapter.address(delivery({ mergeFields: fields({ city: 'Lyon' }) }), city, project(smtp))).email.subject).toBe('News from Lyon');

    const endless = personalized({ ...personal, html: '<p>{% for i in (1..5000000) %}{{ first_name }}{% endfor %}</p>' });
    expect(adapter.address(ada, endless, project(smtp))).toEqual({ refusal: 'template_render_failed' });
    expect(adapter.address(ada, personalized({ ...personal, html: '<p>{% if %}</p>' }), project(smtp))).toEqual({ refusal: 'template_render_failed' });
    // What renders into something that cannot go as an email: a subject past 998 characters, no body at all.
    const long = delivery({ mergeFields: fields({ attributes: { first_name: 'A'.repeat(1000) }, externalId: 'ada-1' }) });
    expect(adapter.address(long, personalized(), project(smtp))).toEqual({ refusal: 'template_render_failed' });
    expect(adapter.address(ada, personalized({ ...personal, html: '{{ nothing | default: "" }}' }), project(smtp))).toEqual({ refusal: 'template_render_failed' });
    // Refused before anything is rendered: the address comes first.
    expect(adapter.address({ ...ada, recipient: to({ status: 'unreachable' }) }, endless, project(smtp))).toEqual({ refusal: 'recipient_bounced' });
  });

  it('sends a message without `personalized` as written, whatever its braces say', () => {
    const { email } = itemOf(adapter.address(ada, message({ content: personal }), project(smtp)));
    expect(email.subject).toBe('Hello {{ first_name }}, {{ plan | default: "your plan" }} is ready');
    expect(email.html).toContain('<p>Hi {{ first_name }}</p>');
  });
});

describe('recipientVariables', () => {
  const all = { attributes: { first_name: 'Ada', order: { total: 12 } }, externalId: 'ada-1', country: 'GB', city: 'London', language: 'en-GB', timezone: 'Europe/London' };

  it("names the subscriber's attributes and its known standard fields, email being the address the delivery goes to", () => {
    expect(recipientVariables('ada@example.org', all)).toEqual({
      email: 'ada@example.org',
      external_id: 'ada-1',
      country: 'GB',
      city: 'London',
      language: 'en-GB',
      timezone: 'Europe/London',
      first_name: 'Ada',
      order: { total: 12 },
    });
    expect(recipientVariables('ada@example.org', { ...all, attributes: {}, country: null, city: null })).toEqual({
      email: 'ada@example.org',
      external_id: 'ada-1',
      language: 'en-GB',
      timezone: 'Europe/London',
    });
    expect(recipientVariables('ada@example.org', null)).toEqual({ email: 'ada@example.org' });
  });

  it('lets an attribute of the same name win over a standard field', () => {
    const variables = recipientVariables('ada@example.org', { ...all, attributes: { country: 'United Kingdom', email: 'ada@work.example.com' } });
    expect(variables).toMatchObject({ country: 'United Kingdom', email: 'ada@work.example.com', city: 'London' });
  });
});
