// The segment builder ⇄ the API's filter object: every one of the 11 filters survives the round trip.
import { describe, expect, it } from 'vitest';
import { EMPTY, fromFilters, toFilters, type BuilderState, type SegmentFilters } from './segment-builder-model';

const all11: SegmentFilters = {
  platform: ['mobile', 'tablet'],
  browser: ['Firefox'],
  os: ['Android', 'iOS'],
  country: ['FR', 'BE'],
  city: ['Paris'],
  device: ['Apple iPhone'],
  language: ['en', 'pt-BR'],
  tags: { any: ['vip', 'beta'], all: ['newsletter'], none: ['churned'] },
  lastSeenDays: 30,
  emailStatus: ['active'],
  subscriptionDate: { from: '2026-01-01', to: '2026-06-30' },
};

describe('segment builder model', () => {
  it('round-trips all 11 filters: filters → form → filters', () => {
    expect(Object.keys(all11)).toHaveLength(11);
    expect(toFilters(fromFilters(all11))).toEqual(all11);
  });

  it('round-trips the marketing consent filters', () => {
    const consent: SegmentFilters = { emailConsent: ['subscribed'], smsConsent: ['transactional', 'unsubscribed'], whatsappConsent: ['unsubscribed'] };
    expect(toFilters(fromFilters({ ...all11, ...consent }))).toEqual({ ...all11, ...consent });
    expect(fromFilters({ emailConsent: 'transactional' })).toEqual({ ...EMPTY, emailConsent: ['transactional'] });
  });

  it('round-trips the form: form → filters → form', () => {
    const state: BuilderState = { ...EMPTY, country: 'FR, DE', tagsNone: 'churned', lastSeenDays: '7', subscribedTo: '2026-02-01', browser: ['Safari'] };
    expect(fromFilters(toFilters(state))).toEqual(state);
  });

  it('sends nothing for an empty form, and no empty parts', () => {
    expect(toFilters(EMPTY)).toEqual({});
    expect(toFilters({ ...EMPTY, city: ' , ', tagsAll: 'a' })).toEqual({ tags: { all: ['a'] } });
    expect(toFilters({ ...EMPTY, subscribedFrom: '2026-01-01' })).toEqual({ subscriptionDate: { from: '2026-01-01' } });
  });

  it('reads the shorthand forms a segment may be saved with', () => {
    expect(fromFilters({ country: 'FR', tags: ['vip', 'beta'] })).toEqual({ ...EMPTY, country: 'FR', tagsAny: 'vip, beta' });
    expect(toFilters(fromFilters({ country: 'FR', tags: ['vip'] }))).toEqual({ country: ['FR'], tags: { any: ['vip'] } });
  });
});
