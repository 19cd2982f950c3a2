// Random secrets and their digests: API keys, generated passwords and signing keys.
import { createHash } from 'node:crypto';
import { pooledRandomBytes } from './random-pool.js';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

/** `length` characters of Crockford base32, 5 bits of randomness each. */
export function randomToken(length: number): string {
  const bytes = pooledRandomBytes(length);
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHABET[bytes[i]! & 31];
  return out;
}

export const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');
