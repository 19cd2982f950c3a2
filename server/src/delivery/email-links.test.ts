// Signed email links: what verifies, what does not, and what a key rotation keeps working.
import { describe, expect, it } from 'vitest';
import { createEmailLinks } from './email-links.js';

const OLD = 'old-secret-old-secret-old-secret-0123';
const NEW = 'new-secret-new-secret-new-secret-0123';
const subject = { id: 'cmp_01jd3abcdefghjkmnpqrstvwxy', subscriberId: 'sub_01jd3abcdefghjkmnpqrstvwxy' };
const target = 'https://shop.example.com/sale?ref=mail&x=a%20b#top';

const signatureOf = (url: string) => new URL(url).searchParams.get('s')!;

describe('email links', () => {
  const links = createEmailLinks('https://herald.example.com', { current: NEW, previous: [] });

  it('signs the click target with the ids it names: only that target, campaign and subscriber verify', () => {
    const url = new URL(links.clickUrl(subject, target));
    expect(url.pathname).toBe(`/e/click/${subject.id}/${subject.subscriberId}`);
    expect(url.searchParams.get('u')).toBe(target);
    const s = url.searchParams.get('s')!;
    expect(links.verifyClick(subject, target, s)).toBe(true);
    expect(links.verifyClick(subject, 'https://evil.example.net/', s)).toBe(false);
    expect(links.verifyClick(subject, `${target}x`, s)).toBe(false);
    expect(links.verifyClick({ ...subject, subscriberId: 'sub_other' }, target, s)).toBe(false);
    expect(links.verifyClick({ ...subject, id: 'msg_other' }, target, s)).toBe(false);
    // An open's signature is not a click's, and the reverse.
    expect(links.verifyOpen(subject, s)).toBe(false);
    expect(links.verifyClick(subject, target, signatureOf(links.openUrl(subject)))).toBe(false);
  });

  it('refuses signatures that are not exactly what it signed: altered, truncated, respelled, empty', () => {
    const s = signatureOf(links.openUrl(subject));
    expect(links.verifyOpen(subject, s)).toBe(true);
    const flipped = s.slice(0, 5) + (s[5] === 'A' ? 'B' : 'A') + s.slice(6);
    for (const bad of [flipped, s.slice(0, -1), `${s}A`, '', s.toUpperCase() === s ? s.toLowerCase() : s.toUpperCase()]) {
      expect(links.verifyOpen(subject, bad)).toBe(false);
    }
  });

  it('unsubscribe and bounce tokens name a delivery, fit an email local part, and survive case folding', () => {
    const token = links.unsubscribeToken(123456789);
    expect(token).toMatch(/^[a-z2-7]{28}$/);
    expect(`unsubscribe+${token}`.length).toBeLessThanOrEqual(64);
    expect(links.verifyUnsubscribe(token)).toBe(123456789);
    expect(links.verifyUnsubscribe(token.toUpperCase())).toBe(123456789);
    expect(links.unsubscribeUrl(token)).toBe(`https://herald.example.com/u/${token}`);
    // Deterministic, and purposes apart: a bounce token is no unsubscribe token.
    expect(links.unsubscribeToken(123456789)).toBe(token);
    const bounce = links.bounceToken(123456789);
    expect(bounce).not.toBe(token);
    expect(links.verifyBounce(bounce)).toBe(123456789);
    expect(links.verifyUnsubscribe(bounce)).toBeUndefined();
    expect(links.verifyBounce(token)).toBeUndefined();
    // Neighbouring deliveries share nothing visible.
    expect(links.unsubscribeToken(123456790).slice(2)).not.toBe(token.slice(2));
    const altered = token.slice(0, 10) + (token[10] === 'a' ? 'b' : 'a') + token.slice(11);
    expect(links.verifyUnsubscribe(altered)).toBeUndefined();
    expect(links.verifyUnsubscribe('nope')).toBeUndefined();
  });

  it('after a rotation, links signed with the previous secret keep verifying, new ones are signed with the new secret only', () => {
    const before = createEmailLinks('https://herald.example.com', { current: OLD, previous: [] });
    const after = createEmailLinks('https://herald.example.com', { current: NEW, previous: [OLD] });
    const click = signatureOf(before.clickUrl(subject, target));
    const open = signatureOf(before.openUrl(subject));
    const unsubscribe = before.unsubscribeToken(42);
    const bounce = before.bounceToken(42);
    expect(after.verifyClick(subject, target, click)).toBe(true);
    expect(after.verifyOpen(subject, open)).toBe(true);
    expect(after.verifyUnsubscribe(unsubscribe)).toBe(42);
    expect(after.verifyBounce(bounce)).toBe(42);
    // What the rotated ring signs, the old ring alone does not verify: it is the new key's.
    expect(before.verifyOpen(subject, signatureOf(after.openUrl(subject)))).toBe(false);
    expect(before.verifyUnsubscribe(after.unsubscribeToken(42))).toBeUndefined();
    // Once the previous secret is dropped, its links stop working.
    expect(links.verifyClick(subject, target, click)).toBe(false);
    expect(links.verifyUnsubscribe(unsubscribe)).toBeUndefined();
  });
});
