// SQL behind the frequency cap: a subscriber's recent pushes, counted under a per-subscriber lock.
import { sql } from 'drizzle-orm';
import type { Db } from '../db/database.js';

const CAP_LOCK = 7_305_003; // pg_advisory_xact_lock class: one cap decision at a time per subscriber

/**
 * Serialises cap decisions for these subscribers until the caller's transaction ends, so two concurrent sends
 * cannot both see room for one more push. Locks are taken in id order (unnest keeps the array's order): two sends
 * to overlapping devices never wait on each other in a cycle.
 */
export async function lockSubscribersForCap(tx: Db, projectId: string, subscriberIds: readonly string[]): Promise<void> {
  const ids = [...subscriberIds].sort();
  await tx.execute(sql`
    SELECT pg_advisory_xact_lock(${CAP_LOCK}, hashtext(${projectId} || ':' || id)) FROM unnest(${sql.param(ids)}::text[]) AS id`);
}

/**
 * Pushes each subscriber got since `since` (sent_at within the window) plus those in flight (`sending`, no sent_at
 * yet). Two halves so each is an index range: the window is a range of deliveries_subscriber_idx (subscriber_id,
 * sent_at), so a subscriber's older history is never read; the in-flight half reads only rows without sent_at (or
 * the few `sending` rows of deliveries_lease_idx). Subscribers without any are left out. A subscriber is live or
 * sandbox, and so are all its deliveries: sandbox sends only count against sandbox subscribers.
 */
export async function recentSendCounts(
  db: Db,
  projectId: string,
  subscriberIds: readonly string[],
  since: Date,
): Promise<Map<string, number>> {
  const ids = sql`${sql.param([...subscriberIds])}::text[]`;
  const { rows } = await db.execute<{ subscriber_id: string; sends: number }>(sql`
    SELECT subscriber_id, count(*)::int AS sends FROM (
      SELECT subscriber_id FROM deliveries
      WHERE subscriber_id = ANY(${ids}) AND sent_at > ${since.toISOString()}::timestamptz AND project_id = ${projectId}
      UNION ALL
      SELECT subscriber_id FROM deliveries
      WHERE subscriber_id = ANY(${ids}) AND sent_at IS NULL AND status = 'sending' AND project_id = ${projectId}
    ) recent
    GROUP BY subscriber_id`);
  return new Map(rows.map((r) => [r.subscriber_id, r.sends]));
}
