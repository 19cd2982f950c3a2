// VAPID (RFC 8292): the ES256-signed Authorization header a push service identifies the sender by, cached per origin.
import { createECDH, createPrivateKey, sign, type KeyObject } from 'node:crypto';
import { boundedMemo } from '../../../shared/bounded-memo.js';
import type { VapidIdentity } from '../../channel.js';

// Signing is the dominant per-message cost of naive senders; one token per (origin, key, subject) is reused for
// half its lifetime, so a reused token still has ≥ 6 h left and is never more than 12 h (< the 24 h cap) ahead.
const TOKEN_LIFETIME_S = 12 * 3600;
const REUSE_MS = 6 * 3600 * 1000;
/** Both caches are keyed by user-influenced values (endpoint origins, projects): bounded, oldest out first. */
const MAX_ENTRIES = 10_000;
const JWT_HEADER = Buffer.from(JSON.stringify({ typ: 'JWT', alg: 'ES256' })).toString('base64url');

export interface VapidSigner {
  /** `vapid t=<jwt>, k=<public key>` for requests to `origin` (scheme://host[:port]). Throws on a malformed key. */
  authorization(origin: string, identity: VapidIdentity): string;
}

function remember<V>(cache: Map<string, V>, key: string, value: V): V {
  cache.delete(key);
  if (cache.size >= MAX_ENTRIES) cache.delete(cache.keys().next().value!);
  cache.set(key, value);
  return value;
}

/** A project's stored key pair (`<public>.<private>`: raw public point, raw scalar d, base64url) as a signing key. */
function importKey(keyPair: string): KeyObject {
  const parts = keyPair.split('.');
  if (parts.length !== 2) throw new RangeError('VAPID key is not base64url');
  const [publicKey, privateKey] = parts as [string, string];
  const point = Buffer.from(publicKey, 'base64url');
  if (point.length !== 65 || point[0] !== 4) throw new RangeError('VAPID public key is not an uncompressed P-256 point');
  // The JWK import does not check that d and the point belong together; a mismatch would only show as 403s.
  const ecdh = createECDH('prime256v1');
  ecdh.setPrivateKey(Buffer.from(privateKey, 'base64url'));
  if (!ecdh.getPublicKey().equals(point)) throw new RangeError('VAPID private key does not match the public key');
  return createPrivateKey({
    format: 'jwk',
    key: {
      kty: 'EC',
      crv: 'P-256',
      x: point.subarray(1, 33).toString('base64url'),
      y: point.subarray(33).toString('base64url'),
      d: privateKey,
    },
  });
}

export function createVapidSigner(now: () => number = Date.now): VapidSigner {
  const keyOf = boundedMemo(importKey, MAX_ENTRIES);
  const headers = new Map<string, { value: string; renewAt: number }>();

  return {
    authorization(origin, identity) {
      const cacheKey = `${origin} ${identity.publicKey} ${identity.subject}`;
      const at = now();
      const cached = headers.get(cacheKey);
      if (cached && cached.renewAt > at) return cached.value;

      const key = keyOf(`${identity.publicKey}.${identity.privateKey}`);
      const claims = { aud: origin, exp: Math.floor(at / 1000) + TOKEN_LIFETIME_S, sub: identity.subject };
      const input = `${JWT_HEADER}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
      const signature = sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' }).toString('base64url');
      const value = `vapid t=${input}.${signature}, k=${identity.publicKey}`;
      return remember(headers, cacheKey, { value, renewAt: at + REUSE_MS }).value;
    },
  };
}
