// SQL of the shared send rates: one statement books a rate key's next slots, or lines up held deliveries, whatever the workers racing for it.
import { sql, type SQL } from 'drizzle-orm';
import type { Db } from '../db/database.js';

/**
 * Books up to `slots` sends on `key` at `perSecond` (GCRA): the key's `next_free_at` is its first slot nobody has
 * booked (now, if it has passed); the slots from there, 1/perSecond apart, that start within `withinMs` are booked
 * and `next_free_at` moves past them. The upsert locks the key's row, so concurrent reservations are decided one
 * after the other against the latest `next_free_at`, each at the instant it holds the lock (`clock_timestamp()`,
 * read once per decision: not the transaction's start, which a wait for the lock would leave behind), on the
 * database's clock whatever the workers' clocks say.
 */
export async function reserveSendSlots(
  db: Db,
  key: string,
  slots: number,
  perSecond: number,
  withinMs: number,
): Promise<{ granted: number; firstAt: number; storeNow: number; waitMs: number }> {
  const interval = sql`make_interval(secs => ${1 / perSecond}::float8)`;
  // How many slots from `start` begin by `now` + withinMs: none if the first is later.
  const booked = (start: SQL, now: SQL) => sql`
    CASE WHEN ${start} > ${now} + make_interval(secs => ${withinMs / 1000}::float8) THEN 0
    ELSE least(${slots}::int, floor((extract(epoch FROM ${now} - ${start}) + ${withinMs / 1000}::float8) * ${perSecond}::float8)::int + 1) END`;
  const { rows } = await db.execute<{ granted: number; first_at: number; store_now: number; wait_ms: number }>(sql`
    INSERT INTO send_rates AS r (key, next_free_at, last_granted)
    SELECT ${key}, c.now + g.n * ${interval}, g.n
    FROM (SELECT clock_timestamp() AS now) c, LATERAL (SELECT ${booked(sql`c.now`, sql`c.now`)} AS n) g
    ON CONFLICT (key) DO UPDATE SET (next_free_at, last_granted) = (
      SELECT s.start + g.n * ${interval}, g.n
      FROM (SELECT greatest(r.next_free_at, c.now) AS start, c.now FROM (SELECT clock_timestamp() AS now) c) s,
           LATERAL (SELECT ${booked(sql`s.start`, sql`s.now`)} AS n) g
    )
    RETURNING last_granted AS granted,
      (extract(epoch FROM next_free_at - last_granted * ${interval}) * 1000)::float8 AS first_at,
      (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS store_now,
      greatest(0, extract(epoch FROM next_free_at - clock_timestamp()) * 1000)::float8 AS wait_ms`);
  const row = rows[0]!;
  return { granted: row.granted, firstAt: Number(row.first_at), storeNow: Number(row.store_now), waitMs: Math.ceil(row.wait_ms) };
}

/**
 * Gives `count` held deliveries turns on `key`, one interval apart, from the later of the key's line end and its next
 * free slot (now, if both have passed); returns milliseconds until the first turn. Reserve made the key's row.
 */
export async function lineUp(db: Db, key: string, count: number, perSecond: number): Promise<number> {
  const interval = sql`make_interval(secs => ${1 / perSecond}::float8)`;
  const { rows } = await db.execute<{ first_ms: number }>(sql`
    UPDATE send_rates SET line_until = greatest(line_until, next_free_at, clock_timestamp()) + ${count} * ${interval}
    WHERE key = ${key}
    RETURNING greatest(0, extract(epoch FROM line_until - ${count} * ${interval} - clock_timestamp()) * 1000)::float8 AS first_ms`);
  return Math.ceil(rows[0]?.first_ms ?? 0);
}
