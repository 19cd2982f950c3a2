// The shared send rate and 24-hour quota: concurrent reservations, from any number of workers, never grant more than a key's rate or quota.
import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/harness.js';
import { openDatabase, type Database } from '../db/database.js';
import { postgresSendRate, redisSendRate, StoreClock, type SendRate } from './send-rate.js';
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
/** Each store, made when its tests run; Redis only with HERALD_TEST_REDIS_URL. */
const STORES = [
  ['PostgreSQL', () => postgresSendRate(database.db), false],
  ['Redis', () => redisSendRate(redis!), !redisUrl],
] as const;

/** 20 reservations of one fresh key at once: what each got, and how long they took together. */
async function twentyAtOnce(store: SendRate, slots: number, perSecond: number, withinMs: number) {
  const key = freshKey();
  const started = Date.now();
  const reservations = await Promise.all(Array.from({ length: 20 }, () => store.reserve(key, slots, perSecond, withinMs)));
  const elapsed = Date.now() - started;
  return { started, elapsed, reservations, granted: reservations.reduce((sum, r) => sum + r.granted, 0) };
}

describe.each(STORES)('send rate in %s', (_name, makeStore, skip) => {
  let store: SendRate;
  beforeAll(() => {
    if (!skip) store = makeStore();
  });

  it.skipIf(skip)('20 concurrent reservations of a 10/s key are granted no more than one slot per 100 ms', async () => {
    const { elapsed, reservations, granted } = await twentyAtOnce(store, 1, 10, 0);
    expect(granted).toBeGreaterThanOrEqual(1);
    expect(granted).toBeLessThanOrEqual(1 + Math.floor(elapsed / 100));
    for (const refused of reservations.filter((r) => r.granted === 0)) {
      expect(refused.waitMs).toBeGreaterThan(0);
      expect(refused.waitMs).toBeLessThanOrEqual(100);
    }
  });

  it.skipIf(skip)('20 concurrent bookings of 3 slots within 500 ms never book more slots than the rate has in that time', async () => {
    const { started, elapsed, reservations, granted } = await twentyAtOnce(store, 3, 10, 500);
    // Slots at 0, 100, … 500 ms from the first booking, and those the time the others took added.
    expect(granted).toBeGreaterThanOrEqual(6);
    expect(granted).toBeLessThanOrEqual(6 + Math.floor(elapsed / 100));
    for (const { granted: n, firstAt } of reservations.filter((r) => r.granted > 0)) {
      expect(firstAt - started).toBeLessThanOrEqual(500 + elapsed);
      expect(n).toBeLessThanOrEqual(3);
    }
  });

  it.skipIf(skip)('books the slots that start within the window, one interval apart, holds the next, and keeps keys apart', async () => {
    const key = freshKey();
    // At 10/s within 250 ms: slots at 0, 100 and 200 ms from now.
    const asked = Date.now();
    const first = await store.reserve(key, 5, 10, 250);
    expect(first.granted).toBe(3);
    expect(first.firstAt).toBeGreaterThanOrEqual(asked - 5);
    expect(first.firstAt).toBeLessThanOrEqual(Date.now() + 5);
    expect(first.waitMs).toBeGreaterThan(250);
    expect(first.waitMs).toBeLessThanOrEqual(300);
    // The next free slot, at 300 ms, is beyond another 250 ms window: nothing booked, and when it comes said.
    const held = await store.reserve(key, 1, 10, 250);
    expect(held.granted).toBe(0);
    expect(held.waitMs).toBeGreaterThan(250);
    expect(held.waitMs).toBeLessThanOrEqual(300);
    // A wider window books from that slot on: 300 ms after the first on the store's clock (give or take the error of
    // this process's estimate of it, half a round trip, which a faster answer in between may have corrected).
    const later = await store.reserve(key, 2, 10, 1000);
    expect(later.granted).toBe(2);
    expect(later.firstAt - first.firstAt).toBeGreaterThanOrEqual(290);
    expect(later.firstAt - first.firstAt).toBeLessThanOrEqual(310);
    expect(later.waitMs).toBeGreaterThan(400);
    expect(later.waitMs).toBeLessThanOrEqual(500);
    // Another sender's rate is its own.
    expect((await store.reserve(freshKey(), 1, 2, 0)).granted).toBe(1);
    await sleep(later.waitMs + 5);
    expect((await store.reserve(key, 1, 10, 0)).granted).toBe(1);
  });
});

describe.each(STORES)('the line of held deliveries in %s', (_name, makeStore, skip) => {
  it.skipIf(skip)('gives turns after the booked slots and after every turn given before, never two the same', async () => {
    const store = makeStore();
    const key = freshKey();
    // At 10/s, 300 ms booked: slots at 0, 100, 200 ms; the next free one at 300.
    expect(await store.reserve(key, 10, 10, 250)).toMatchObject({ granted: 3 });
    // Two workers hold 4 and 3 deliveries at once: their turns follow one another from 300 ms.
    const [a, b] = await Promise.all([store.line(key, 4, 10), store.line(key, 3, 10)]);
    const starts = [a, b].sort((x, y) => x - y);
    expect(starts[0]).toBeGreaterThan(250);
    expect(starts[0]).toBeLessThanOrEqual(300);
    // The second worker's first turn comes after the first worker's three or four.
    expect(starts[1]! - starts[0]!).toBeGreaterThanOrEqual(295);
    expect(starts[1]! - starts[0]!).toBeLessThanOrEqual(405);
    // The next in line comes after all seven.
    const next = await store.line(key, 1, 10);
    expect(next).toBeGreaterThan(950);
    expect(next).toBeLessThanOrEqual(1000);
  });
});

describe("the store's clock", () => {
  it('takes its offset from the fastest answer: a slow one under load does not move it, an old one is followed', () => {
    const clock = new StoreClock();
    // Asked at 1,000, answered 2 ms later, the store said 1,501: 500 ms ahead (of 1,001), give or take 1.
    clock.observe(1000, 1002, 1501);
    expect(clock.toLocal(2501)).toBe(2001);
    // An answer that took 200 ms says 600 ahead: half its round trip could be either way, so it is not taken.
    clock.observe(5000, 5200, 5700);
    expect(clock.toLocal(2501)).toBe(2001);
    // Ten minutes on, the old sample has aged 60 ms: a 20 ms answer replaces it (550 ahead of 601,010).
    clock.observe(601_000, 601_020, 601_560);
    expect(clock.toLocal(2501)).toBe(1951);
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
