// The campaign builder between its form and the API's body: what goes in comes back out, empty fields are left out.
import { describe, expect, it } from 'vitest';
import type { Schemas } from '../api/client';
import { contentOf, EMPTY_FORM, formOf, toCampaignBody, type CampaignForm } from './campaign-builder-model';
import { treeOf } from './filters-tree-model';

const form: CampaignForm = {
  ...EMPTY_FORM,
  name: 'Spring sale',
  title: 'Sale',
  body: 'Now on',
  iconUrl: 'https://shop.example/icon.png',
  clickUrl: 'https://shop.example/sale',
  actions: [
    { action: 'https://shop.example/buy', title: 'Buy' },
    { action: '', title: '' },
  ],
  utm: { source: 'herald', medium: '', campaign: 'spring' },
  filters: treeOf({ country: ['FR', 'BE'], tags: { any: ['vip'] } }),
  mode: 'scheduled',
  sendAt: '2026-12-01T09:00',
  timezone: 'Europe/Paris',
};

describe('toCampaignBody', () => {
  it('leaves out empty fields and buttons, and writes the audience and schedule the API takes', () => {
    expect(toCampaignBody(form, 'prj_1')).toEqual({
      name: 'Spring sale',
      projectId: 'prj_1',
      content: {
        title: 'Sale',
        body: 'Now on',
        iconUrl: 'https://shop.example/icon.png',
        clickUrl: 'https://shop.example/sale',
        actions: [{ action: 'https://shop.example/buy', title: 'Buy' }],
      },
      segment: { filters: { country: ['FR', 'BE'], tags: { any: ['vip'] } } },
      schedule: { mode: 'scheduled', sendAt: '2026-12-01T09:00', timezone: 'Europe/Paris' },
      utm: { source: 'herald', campaign: 'spring' },
    });
    expect(toCampaignBody({ ...form, audience: 'saved', savedSegmentId: 'seg_1', mode: 'draft' }, 'prj_1')).toMatchObject({
      segment: { savedSegmentId: 'seg_1' },
      schedule: { mode: 'draft', timezone: 'Europe/Paris' },
    });
  });

  it('keeps a half-filled button, so the API can say what it lacks', () => {
    expect(contentOf({ ...form, actions: [{ action: '', title: 'Buy' }, { action: '', title: '' }] }).actions).toEqual([{ action: '', title: 'Buy' }]);
  });
});

describe('formOf', () => {
  it('reads a stored campaign back into the same form (sendAt as the wall clock of its zone)', () => {
    const body = toCampaignBody(form, 'prj_1');
    const stored = {
      ...body,
      schedule: { mode: 'scheduled', sendAt: '2026-12-01T09:00:00+01:00', timezone: 'Europe/Paris' },
      utm: body.utm ?? null,
    } as unknown as Schemas['Campaign'];
    expect(formOf(stored)).toEqual({ ...form, utm: { source: 'herald', medium: '', campaign: 'spring' } });
    expect(toCampaignBody(formOf(stored), 'prj_1')).toEqual(body);
  });
});
