// VAPID signing: a token a push service accepts, signed once per origin and key, renewed before it gets old.
import { decodeJwt, importJWK, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { generateVapidKeys } from '../../../modules/channels/vapid.js';
import { createVapidSigner } from './vapid-signer.js';

const identity = { ...generateVapidKeys(), subject: 'mailto:ops@example.com' };
const HOUR = 3600_000;

function parse(header: string) {
  const match = /^vapid t=(\S+), k=(\S+)$/.exec(header);
  if (!match) throw new Error(`not a vapid header: ${header}`);
  return { token: match[1]!, key: match[2]! };
}

describe('createVapidSigner', () => {
  it('signs an ES256 JWT verifiable with the k= key, for the origin, at most 24 h ahead', async () => {
    const { token, key } = parse(createVapidSigner().authorization('https://push.example.com', identity));
    expect(key).toBe(identity.publicKey);
    const point = Buffer.from(key, 'base64url');
    const publicKey = await importJWK(
      { kty: 'EC', crv: 'P-256', x: point.subarray(1, 33).toString('base64url'), y: point.subarray(33).toString('base64url') },
      'ES256',
    );
    const { payload, protectedHeader } = await jwtVerify(token, publicKey, { audience: 'https://push.example.com' });
    expect(protectedHeader.alg).toBe('ES256');
    expect(payload.sub).toBe('mailto:ops@example.com');
    expect(payload.exp! - Date.now() / 1000).toBeGreaterThan(11 * 3600);
    expect(payload.exp! - Date.now() / 1000).toBeLessThanOrEqual(24 * 3600);
  });

  it('reuses the header per origin, key and subject, and signs again after six hours', () => {
    let now = Date.now();
    const signer = createVapidSigner(() => now);
    const first = signer.authorization('https://push.example.com', identity);
    now += 5 * HOUR;
    expect(signer.authorization('https://push.example.com', identity)).toBe(first);
    expect(signer.authorization('https://other.example.com', identity)).not.toBe(first);
    expect(signer.authorization('https://push.example.com', { ...identity, subject: 'https://example.com' })).not.toBe(first);
    now += 2 * HOUR;
    const renewed = signer.authorization('https://push.example.com', identity);
    expect(renewed).not.toBe(first);
    expect(decodeJwt(parse(renewed).token).exp! * 1000).toBeGreaterThan(now + 11 * HOUR);
  });

  it('throws on a malformed key', () => {
    expect(() => createVapidSigner().authorization('https://push.example.com', { ...identity, publicKey: 'AAAA' })).toThrow();
    expect(() => createVapidSigner().authorization('https://push.example.com', { ...identity, privateKey: 'AAAA' })).toThrow();
  });
});
