// Every filter of a segment (spec 2.4's 11, the marketing consents and the conditions of docs/TARGETING.md) said in
// words, alone and together.
import { describe, expect, it } from 'vitest';
import { audienceSentence, countryName, languageName } from './audience-sentence';
import { listWords } from './format';

describe('audienceSentence', () => {
  it('says everyone subscribed when nothing filters', () => {
    expect(audienceSentence({})).toBe('Everyone subscribed');
    expect(audienceSentence(undefined)).toBe('Everyone subscribed');
  });

  it.each([
    [{ platform: ['desktop'] }, 'Desktop'],
    [{ platform: ['mobile', 'tablet'] }, 'Mobile or Tablet'],
    [{ platform: 'tablet' }, 'Tablet'],
    [{ browser: ['Chrome', 'Safari', 'Edge'] }, 'Chrome, Safari or Edge'],
    [{ os: ['macOS'] }, 'macOS'],
    [{ country: ['DE', 'fr'] }, 'Germany or France'],
    [{ city: ['Berlin', 'Paris'] }, 'city Berlin or Paris'],
    [{ device: 'Apple iPhone' }, 'device Apple iPhone'],
    [{ language: ['de', 'pt-BR'] }, 'speaks German or Brazilian Portuguese'],
    [{ tags: ['vip', 'beta'] }, 'tagged vip or beta'],
    [{ tags: { any: ['vip'] } }, 'tagged vip'],
    [{ tags: { all: ['vip', 'beta'] } }, 'tagged vip and beta'],
    [{ tags: { none: ['trial'] } }, 'not tagged trial'],
    [{ tags: { any: ['a', 'b'], all: ['c'], none: ['d', 'e'] } }, 'tagged a or b · tagged c · not tagged d or e'],
    [{ lastSeenDays: 1 }, 'seen in the last day'],
    [{ lastSeenDays: 30 }, 'seen in the last 30 days'],
    [{ emailStatus: ['verified', 'active'] }, 'email verified or active'],
    [{ emailStatus: ['none'] }, 'no email address'],
    [{ emailStatus: ['bounced', 'none'] }, 'email bounced or no email address'],
    [{ emailStatus: ['unsubscribed', 'bounced', 'complained'] }, 'email unsubscribed, bounced or complained'],
    [{ emailConsent: ['subscribed'] }, 'Email marketing subscribed'],
    [{ smsConsent: ['transactional'] }, 'SMS marketing transactional only'],
    [{ whatsappConsent: ['unsubscribed', 'subscribed'] }, 'WhatsApp marketing unsubscribed or subscribed'],
    [{ subscriptionDate: { from: '2026-01-01', to: '2026-01-31' } }, 'subscribed 1 Jan 2026 – 31 Jan 2026'],
    [{ subscriptionDate: { from: '2026-03-05' } }, 'subscribed since 5 Mar 2026'],
    [{ subscriptionDate: { to: '2026-03-05T14:30:00Z' } }, 'subscribed until 5 Mar 2026, 14:30 UTC'],
  ] as const)('%j reads %s', (filters, words) => {
    expect(audienceSentence(filters as never)).toBe(words);
  });

  it('joins every filter in the builder’s order, with no JSON left', () => {
    const sentence = audienceSentence({
      platform: ['desktop'],
      browser: ['Chrome'],
      os: ['Windows'],
      country: ['DE', 'FR'],
      city: ['Berlin'],
      device: ['Dell XPS'],
      language: ['en'],
      tags: { none: ['trial'] },
      lastSeenDays: 7,
      emailStatus: ['verified'],
      emailConsent: ['subscribed'],
      subscriptionDate: { from: '2026-01-01' },
    });
    expect(sentence).toBe(
      'Desktop · Chrome · Windows · Germany or France · city Berlin · device Dell XPS · speaks English · not tagged trial · seen in the last 7 days · email verified · Email marketing subscribed · subscribed since 1 Jan 2026',
    );
    expect(sentence).not.toMatch(/[{}[\]"]/);
  });

  it('keeps a code or tag no name is known for', () => {
    expect(countryName('XZ')).toBe('XZ');
    expect(languageName('not a tag!')).toBe('not a tag!');
    expect(listWords([])).toBe('');
  });

  it.each([
    [{ attribute: 'plan', operator: 'eq', value: 'pro' }, 'plan is “pro”'],
    [{ attribute: 'plan', operator: 'neq', value: 'free' }, 'plan is not “free”'],
    [{ attribute: 'plan', operator: 'in', value: ['pro', 'team'] }, 'plan is one of “pro” or “team”'],
    [{ attribute: 'name', operator: 'contains', value: 'an' }, 'name contains “an”'],
    [{ attribute: 'email', operator: 'starts_with', value: 'a' }, 'email starts with “a”'],
    [{ attribute: 'nickname', operator: 'exists' }, 'nickname is set'],
    [{ attribute: 'nickname', operator: 'not_exists' }, 'nickname is not set'],
    [{ attribute: 'total', operator: 'gt', value: 50 }, 'total is more than 50'],
    [{ attribute: 'total', operator: 'gte', value: 50 }, 'total is at least 50'],
    [{ attribute: 'total', operator: 'lt', value: 5 }, 'total is less than 5'],
    [{ attribute: 'total', operator: 'lte', value: 5 }, 'total is at most 5'],
    [{ attribute: 'age', operator: 'between', value: [18, 30] }, 'age is between 18 and 30'],
    [{ attribute: 'beta', operator: 'eq', value: true }, 'beta is true'],
    [{ attribute: 'renewsAt', operator: 'gt', value: '2026-01-31' }, 'renewsAt is after 31 Jan 2026'],
    [{ attribute: 'renewsAt', operator: 'between', value: ['2026-01-01', '2026-02-01'] }, 'renewsAt is between 1 Jan 2026 and 1 Feb 2026'],
    [{ attribute: 'signedUpAt', operator: 'within_last_days', value: 7 }, 'signedUpAt is in the last 7 days'],
    [{ attribute: 'signedUpAt', operator: 'more_than_days_ago', value: 90 }, 'signedUpAt is more than 90 days ago'],
    [{ event: 'order.completed' }, 'performed order.completed'],
    [{ event: 'order.completed', count: { operator: 'gte', value: 1 }, withinLastDays: 30 }, 'performed order.completed in the last 30 days'],
    [{ event: 'order.completed', count: { operator: 'gte', value: 2 }, withinLastDays: 1 }, 'performed order.completed at least 2 times in the last day'],
    [{ event: 'login', count: { operator: 'eq', value: 1 }, between: { from: '2026-01-01', to: '2026-01-31' } }, 'performed login exactly once between 1 Jan 2026 and 31 Jan 2026'],
    [{ event: 'login', performed: false, withinLastDays: 14 }, 'did not perform login in the last 14 days'],
    [{ event: 'login', count: { operator: 'lte', value: 3 }, between: { from: '2026-01-01' } }, 'performed login at most 3 times since 1 Jan 2026'],
    [
      { event: 'order.completed', where: [{ property: 'total', operator: 'gt', value: 50 }, { property: 'currency', operator: 'eq', value: 'EUR' }] },
      'performed order.completed, where total is more than 50 and currency is “EUR”',
    ],
    [
      { event: 'order.completed', first: { operator: 'lt', value: '2026-01-01' }, last: { operator: 'within_last_days', value: 7 } },
      'performed order.completed, first is before 1 Jan 2026, last is in the last 7 days',
    ],
    [{ inSegment: 'seg_1' }, 'in segment “VIPs”'],
    [{ notInSegment: 'seg_1' }, 'not in segment “VIPs”'],
    [{ inSegment: 'seg_gone' }, 'in a saved segment'],
  ] as const)('the condition %j reads %s', (condition, words) => {
    expect(audienceSentence({ all: [condition] } as never, (id) => ({ seg_1: 'VIPs' })[id])).toBe(words);
  });

  it('says groups: all as parts, any with "or", nested groups in brackets', () => {
    const plan = { attribute: 'plan', operator: 'eq', value: 'pro' } as const;
    const order = { event: 'order.completed', withinLastDays: 30 } as const;
    expect(audienceSentence({ all: [plan, order] })).toBe('plan is “pro” · performed order.completed in the last 30 days');
    expect(audienceSentence({ any: [plan, order] })).toBe('plan is “pro” or performed order.completed in the last 30 days');
    expect(audienceSentence({ country: ['FR'], any: [{ tags: ['vip'] }, plan] })).toBe('France · (tagged vip or plan is “pro”)');
    expect(audienceSentence({ all: [{ any: [plan, order] }, { country: ['FR'], lastSeenDays: 7 }] })).toBe(
      'plan is “pro” or performed order.completed in the last 30 days · (France and seen in the last 7 days)',
    );
    // Conditions still being filled in say nothing yet.
    expect(audienceSentence({ all: [{}, { attribute: '', operator: 'exists' }, { event: '', where: [{ property: '', operator: 'eq', value: '' }] }, { inSegment: '' }] })).toBe('Everyone subscribed');
    expect(audienceSentence({ all: [{ event: 'signup', where: [{ property: '', operator: 'eq', value: '' }] }] })).toBe('performed signup');
  });
});
