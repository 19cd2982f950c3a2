// SQL of the shared send rates: one statement reserves a rate key's next slot, whatever the workers racing for it.
import { sql } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import type { SendSlots } from './send-rate.js';

/**
 * Reserves up to `slots` sends on `key` at `perSecond` (GCRA): a slot is free once the key's `next_free_at` has
 * passed; one goes now and the next frees 1/perSecond later. The upsert locks the key's row, so concurrent
 * reservations are decided one after the other against the latest `next_free_at`, each at the instant it holds the
 * lock (`clock_timestamp()`, read once per decision: not the transaction's start, which a wait for the lock would
 * leave behind), on the database's clock whatever the workers' clocks say.
 */
export async function reserveSendSlots(db: Db, key: string, slots: number, perSecond: number): Promise<SendSlots> {
  const granted = Math.min(slots, 1);
  const interval = sql`make_interval(secs => ${1 / perSecond}::float8)`;
  const { rows } = await db.execute<{ granted: number; wait_ms: number }>(sql`
    INSERT INTO send_rates AS r (key, next_free_at, last_granted) VALUES (${key}, clock_timestamp() + ${granted} * ${interval}, ${granted})
    ON CONFLICT (key) DO UPDATE SET (next_free_at, last_granted) = (
      SELECT CASE WHEN r.next_free_at <= c.now THEN c.now + ${granted} * ${interval} ELSE r.next_free_at END,
             CASE WHEN r.next_free_at <= c.now THEN ${granted}::int ELSE 0 END
      FROM (SELECT clock_timestamp() AS now) c
    )
    RETURNING last_granted AS granted, greatest(0, extract(epoch FROM next_free_at - clock_timestamp()) * 1000)::float8 AS wait_ms`);
  const row = rows[0]!;
  return { granted: row.granted, waitMs: Math.ceil(row.wait_ms) };
}
