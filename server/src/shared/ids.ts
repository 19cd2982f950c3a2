// Record identifiers: a type prefix plus a time-ordered random part, so ids are opaque, typed and index-friendly.
import { pooledRandomBytes } from './random-pool.js';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz'; // Crockford base32, lower case

export type IdPrefix = 'usr' | 'org' | 'prj' | 'key' | 'sub' | 'seg' | 'cmp' | 'dlv' | 'msg' | 'evt' | 'txs' | 'aut' | 'enr' | 'inv' | 'dom' | 'etp' | 'wat' | 'sms' | 'pwr';

/** `prj_01jd3…`: 10 characters of milliseconds, then 16 of randomness (80 bits). */
export function newId(prefix: IdPrefix): string {
  let time = Date.now();
  let head = '';
  for (let i = 0; i < 10; i++) {
    head = ALPHABET[time % 32] + head;
    time = Math.floor(time / 32);
  }
  const random = pooledRandomBytes(10);
  let tail = '';
  let bits = 0;
  let buffer = 0;
  for (const byte of random) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      tail += ALPHABET[(buffer >> bits) & 31];
    }
  }
  return `${prefix}_${head}${tail}`;
}
