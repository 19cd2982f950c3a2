// The pooled random source: fresh bytes on every call, across refills of the pool.
import { describe, expect, it } from 'vitest';
import { newId } from './ids.js';
import { pooledRandomBytes } from './random-pool.js';

describe('pooledRandomBytes', () => {
  it('never hands out the same bytes twice, across several refills of the pool', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 3_000; i++) seen.add(pooledRandomBytes(10).toString('hex'));
    expect(seen.size).toBe(3_000);
  });

  it('serves any length up to the pool size, including one that does not fit what is left', () => {
    pooledRandomBytes(4_000);
    const whole = Buffer.from(pooledRandomBytes(4_096));
    expect(whole.length).toBe(4_096);
    expect(new Set(whole).size).toBeGreaterThan(200); // 4 KB of random bytes take nearly every byte value
  });

  it('keeps ids unique and well-formed', () => {
    const ids = Array.from({ length: 5_000 }, () => newId('sub'));
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids.slice(0, 50)) expect(id).toMatch(/^sub_[0-9a-hjkmnp-tv-z]{26}$/);
  });
});
