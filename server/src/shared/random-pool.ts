// Cryptographically random bytes served from a pooled buffer: ids and tokens are made on every registration, and one
// call into OpenSSL per id cost more than the bytes themselves (docs/PERFORMANCE.md, Ingest).
import { randomFillSync } from 'node:crypto';

const POOL_BYTES = 4096;
const pool = Buffer.allocUnsafe(POOL_BYTES);
let offset = POOL_BYTES;

/**
 * `length` (at most 4096) fresh random bytes, never handed out twice. The view is overwritten by later calls: read it
 * at once.
 */
export function pooledRandomBytes(length: number): Buffer {
  if (offset + length > POOL_BYTES) {
    randomFillSync(pool);
    offset = 0;
  }
  const bytes = pool.subarray(offset, offset + length);
  offset += length;
  return bytes;
}
