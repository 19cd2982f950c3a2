// The P-256 curve check agrees with OpenSSL's point decoding on valid keys and on points off the curve.
import { createECDH, ECDH, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { p256dhProblem } from './push-keys.js';

const P = 0xffffffff00000001000000000000000000000000ffffffffffffffffffffffffn;

function openSslAccepts(point: Buffer): boolean {
  try {
    ECDH.convertKey(point, 'prime256v1', undefined, undefined, 'uncompressed');
    return true;
  } catch {
    return false;
  }
}

const uncompressed = (x: Buffer, y: Buffer) => Buffer.concat([Buffer.from([4]), x, y]);

describe('p256dhProblem', () => {
  it('accepts generated public keys', () => {
    for (let i = 0; i < 200; i++) {
      const ecdh = createECDH('prime256v1');
      ecdh.generateKeys();
      expect(p256dhProblem(ecdh.getPublicKey().toString('base64url'))).toBeUndefined();
    }
  });

  it('rejects what OpenSSL rejects: random points, a flipped bit, coordinates ≥ p', () => {
    const ecdh = createECDH('prime256v1');
    ecdh.generateKeys();
    const valid = ecdh.getPublicKey();
    const flipped = Buffer.from(valid);
    flipped[64]! ^= 1;
    // The field has no element p or above.
    const p = Buffer.from(P.toString(16), 'hex');
    const candidates = [flipped, uncompressed(Buffer.alloc(32, 0xff), valid.subarray(33)), uncompressed(p, valid.subarray(33)), uncompressed(valid.subarray(1, 33), p)];
    for (let i = 0; i < 200; i++) candidates.push(uncompressed(randomBytes(32), randomBytes(32)));
    for (const point of candidates) {
      expect(p256dhProblem(point.toString('base64url')) === undefined, point.toString('hex')).toBe(openSslAccepts(point));
    }
    expect(p256dhProblem(flipped.toString('base64url'))).toBe('is not a point on the P-256 curve');
  });
});
