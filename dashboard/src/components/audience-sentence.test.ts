// Every filter of a segment (spec 2.4's 11 and the marketing consents) said in words, alone and together.
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
});
