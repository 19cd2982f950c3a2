// The encryption pool: the same decryptable bodies from threads as inline, in the jobs' order, errors in place.
import { afterAll, describe, expect, it } from 'vitest';
import { createFakeBrowser } from '../../../../test/push-service.js';
import { createEncryptionPool, type EncryptionJob, type EncryptionResult } from './push-encryption-pool.js';

const browsers = Array.from({ length: 4 }, () => createFakeBrowser());
const jobs: EncryptionJob[] = Array.from({ length: 100 }, (_, i) => ({
  plaintext: JSON.stringify({ title: `Push ${i}`, body: 'x'.repeat(i) }),
  p256dh: browsers[i % 4]!.p256dh,
  auth: browsers[i % 4]!.auth,
}));
const body = (result: EncryptionResult | undefined) => {
  if (!result || !('body' in result)) throw new Error(`expected a body, got ${JSON.stringify(result)}`);
  return Buffer.from(result.body);
};

const pools = { inline: createEncryptionPool(0), 'two threads': createEncryptionPool(2) };
afterAll(async () => {
  await Promise.all(Object.values(pools).map((pool) => pool.close()));
});

describe.each(Object.entries(pools))('%s', (_, pool) => {
  it('encrypts each job for its own subscription, results in the jobs’ order', async () => {
    const results = await pool.encrypt(jobs);
    expect(results).toHaveLength(jobs.length);
    results.forEach((result, i) => expect(browsers[i % 4]!.decrypt(body(result)).toString()).toBe(jobs[i]!.plaintext));
  });

  it('reports unusable keys in place, without failing the batch', async () => {
    const broken = { ...jobs[1]!, p256dh: browsers[0]!.p256dh.slice(0, 20) };
    const results = await pool.encrypt([jobs[0]!, broken, jobs[2]!]);
    expect(results[1]).toEqual({ error: 'p256dh is not an uncompressed P-256 point' });
    expect(browsers[2]!.decrypt(body(results[2])).toString()).toBe(jobs[2]!.plaintext);
  });

  it('answers an empty batch with nothing', async () => {
    expect(await pool.encrypt([])).toEqual([]);
  });
});
