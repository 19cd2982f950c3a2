// SQL of 24-hour send quotas held across workers (a provider sandbox's 200 messages per 24 hours): a rolling window by minute.
import { sql } from 'drizzle-orm';
import type { Db } from '../db/database.js';

/**
 * Reserves up to `sends` of `key`'s quota of `limit` over the last 24 hours, on the database's clock. Sends are
 * counted per minute, and a minute counts until its last instant is 24 hours old: a send is never forgotten early,
 * at most a minute late. Concurrent reservations on a key take its advisory lock in turn, so the quota is never
 * exceeded however many workers reserve at once. `waitMs`, when nothing is left, is when the oldest minute leaves.
 */
export async function reserveWindowSends(db: Db, key: string, sends: number, limit: number): Promise<{ granted: number; waitMs: number }> {
  return db.transaction(async (tx) => {
    await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtextextended(${`send-window:${key}`}, 0))`);
    const window = sql`clock_timestamp() - interval '24 hours 1 minute'`;
    await tx.execute(sql`DELETE FROM send_windows WHERE key = ${key} AND minute <= ${window}`);
    const { rows } = await tx.execute<{ used: number; frees_in_ms: number | null }>(sql`
      SELECT coalesce(sum(sends), 0)::int AS used,
             extract(epoch FROM min(minute) + interval '24 hours 1 minute' - clock_timestamp()) * 1000 AS frees_in_ms
      FROM send_windows WHERE key = ${key}`);
    const { used, frees_in_ms: freesInMs } = rows[0]!;
    const granted = Math.max(0, Math.min(sends, limit - used));
    if (granted > 0) {
      await tx.execute(sql`
        INSERT INTO send_windows AS w (key, minute, sends) VALUES (${key}, date_trunc('minute', clock_timestamp()), ${granted})
        ON CONFLICT (key, minute) DO UPDATE SET sends = w.sends + excluded.sends`);
    }
    return { granted, waitMs: granted === sends || freesInMs === null ? 0 : Math.max(0, Math.ceil(Number(freesInMs))) };
  });
}
