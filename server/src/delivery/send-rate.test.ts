// The shared send rate and 24-hour quota: concurrent reservations, from any number of workers, never grant more than a key's rate or quota.
import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/harness.js';
import { openDatabase, type Database } from '../db/database.js';
import { postgresSendRate, redisSendRate, type SendRate } from './send-rate.js';
import { reserveWindowSends } from './send-window.repository.js';

const redisUrl = process.env.HERALD_TEST_REDIS_URL;
let testDb: TestDatabase;
let database: Database;
let redis: Redis | undefined;

beforeAll(async () => {
  testDb = await createTestDatabase();
  // A connection per reservation, so they really race for the key's row.
  database = openDatabase(testDb.url, 20);
  if (redisUrl) redis = new Redis(redisUrl);
});
afterAll(async () => {
  await redis?.quit();
  await database.close();
  await testDb.drop();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const freshKey = () => `test:${randomBytes(6).toString('hex')}`;

describe.each([
  ['PostgreSQL', () => postgresSendRate(database.db), false],
  ['Redis', () => redisSendRate(redis!), !redisUrl],
] as const)('send rate in %s', (_name, makeStore, skip) => {
  let store: SendRate;
  beforeAll(() => {
    if (!skip) store = makeStore();
  });

  it.skipIf(skip)('20 concurrent reservations of a 10/s key are granted no more than one slot per 100 ms', async () => {
    const key = freshKey();
    const started = Date.now();
    const reservations = await Promise.all(Array.from({ length: 20 }, () => store.reserve(key, 1, 10)));
    const elapsed = Date.now() - started;
    const granted = reservations.reduce((sum, r) => sum + r.granted, 0);
    expect(granted).toBeGreaterThanOrEqual(1);
    expect(granted).toBeLessThanOrEqual(1 + Math.floor(elapsed / 100));
    for (const refused of reservations.filter((r) => r.granted === 0)) {
      expect(refused.waitMs).toBeGreaterThan(0);
      expect(refused.waitMs).toBeLessThanOrEqual(100);
    }
  });

  it.skipIf(skip)('grants one slot of several asked for, holds the next until it frees, and keeps keys apart', async () => {
    const key = freshKey();
    expect(await store.reserve(key, 3, 2)).toEqual({ granted: 1, waitMs: expect.any(Number) });
    const held = await store.reserve(key, 1, 2);
    expect(held.granted).toBe(0);
    expect(held.waitMs).toBeGreaterThan(400);
    expect(held.waitMs).toBeLessThanOrEqual(500);
    // Another sender's rate is its own.
    expect((await store.reserve(freshKey(), 1, 2)).granted).toBe(1);
    await sleep(held.waitMs + 5);
    expect((await store.reserve(key, 1, 2)).granted).toBe(1);
  });
});

describe('24-hour send quota in PostgreSQL', () => {
  it('40 concurrent reservations of 10 against a quota of 200 grant exactly 200, and say when the oldest minute frees', async () => {
    const key = freshKey();
    const answers = await Promise.all(Array.from({ length: 40 }, () => reserveWindowSends(database.db, key, 10, 200)));
    expect(answers.reduce((sum, a) => sum + a.granted, 0)).toBe(200);
    const refused = answers.filter((a) => a.granted < 10);
    expect(refused.length).toBeGreaterThan(0);
    // Every send of this minute counts until the minute's last instant is a day old.
    for (const { waitMs } of refused) expect(waitMs).toBeGreaterThan(24 * 3600_000 - 60_000);
    expect(await reserveWindowSends(database.db, key, 1, 200)).toMatchObject({ granted: 0 });
  });

  it('forgets a minute once it is a day and a minute old, and keeps keys apart', async () => {
    const key = freshKey();
    await database.db.execute(sql`INSERT INTO send_windows (key, minute, sends) VALUES (${key}, date_trunc('minute', now()) - interval '24 hours 2 minutes', 200), (${key}, date_trunc('minute', now()) - interval '23 hours', 150)`);
    expect(await reserveWindowSends(database.db, key, 80, 200)).toEqual({ granted: 50, waitMs: expect.any(Number) });
    expect(await reserveWindowSends(database.db, freshKey(), 80, 200)).toEqual({ granted: 80, waitMs: 0 });
    const { rows } = await database.db.execute<{ minutes: number }>(sql`SELECT count(*)::int AS minutes FROM send_windows WHERE key = ${key}`);
    expect(rows[0]!.minutes).toBe(2);
  });
});
