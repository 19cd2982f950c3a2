// Identity verification: the per-project secret and the HMAC a customer's server computes over an externalId.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { randomToken } from '../../shared/secrets.js';

/** 40 base32 characters: 200 bits. The prefix says what it is when it turns up in a config file. */
export const newIdentitySecret = () => `hrd_ids_${randomToken(40)}`;

/** hex HMAC-SHA256(secret, externalId): what the customer's server computes and the browser sends as externalIdHash. */
const identityHash = (secret: string, externalId: string) => createHmac('sha256', secret).update(externalId, 'utf8').digest('hex');

/** Compared in constant time, so the answer's timing tells nothing about how much of a guess was right. */
export function identityHashMatches(secret: string | null, externalId: string, given: string): boolean {
  if (secret === null) return false;
  const expected = Buffer.from(identityHash(secret, externalId), 'hex');
  const presented = Buffer.from(given, 'hex');
  return presented.length === expected.length && timingSafeEqual(presented, expected);
}
