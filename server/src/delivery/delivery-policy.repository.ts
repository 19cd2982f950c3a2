// The delivery policy applied to sends: a subscriber's recent pushes counted under a per-subscriber lock, then decided.
import { sql } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { capWindowStart, checkDeliveryPolicy, localZone, type PolicyDecision } from './delivery-policy.js';
import type { SendingProject } from './delivery.repository.js';

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
 * `excludeDeliveryIds` leaves out the caller's own claimed rows: `sending` (so in flight) yet still to be decided.
 */
export async function recentSendCounts(
  db: Db,
  projectId: string,
  subscriberIds: readonly string[],
  since: Date,
  excludeDeliveryIds: readonly number[] = [],
): Promise<Map<string, number>> {
  const ids = sql`${sql.param([...subscriberIds])}::text[]`;
  // Claimed rows never have a sent_at (a sent row is never claimed again), so only the in-flight half can hold them.
  const excluded = excludeDeliveryIds.length > 0 ? sql` AND NOT (id = ANY(${sql.param([...excludeDeliveryIds])}::bigint[]))` : sql``;
  const { rows } = await db.execute<{ subscriber_id: string; sends: number }>(sql`
    SELECT subscriber_id, count(*)::int AS sends FROM (
      SELECT subscriber_id FROM deliveries
      WHERE subscriber_id = ANY(${ids}) AND sent_at > ${since.toISOString()}::timestamptz AND project_id = ${projectId}
      UNION ALL
      SELECT subscriber_id FROM deliveries
      WHERE subscriber_id = ANY(${ids}) AND sent_at IS NULL AND status = 'sending' AND project_id = ${projectId}${excluded}
    ) recent
    GROUP BY subscriber_id`);
  return new Map(rows.map((r) => [r.subscriber_id, r.sends]));
}

/** One subscriber (one device) a send would reach; `timezone` is its own, the project's zone standing in. */
export interface PolicyTarget {
  subscriberId: string;
  timezone: string | null;
}

/**
 * Decides, in order, whether each target may get one more push now under the project's policy. Run it in the
 * transaction that records the outcome: with a frequency cap the targets are locked until that transaction ends, so
 * concurrent sends to one device are decided one at a time. Each push allowed here counts toward the cap of the
 * targets after it (a subscriber may appear more than once). `excludeDeliveryIds`: see `recentSendCounts`.
 */
export async function decidePolicy(
  tx: Db,
  project: Pick<SendingProject, 'id' | 'deliveryPolicy' | 'timezone'>,
  targets: readonly PolicyTarget[],
  now: Date,
  excludeDeliveryIds?: readonly number[],
): Promise<PolicyDecision[]> {
  const policy = project.deliveryPolicy;
  const since = capWindowStart(policy, now);
  let counts = new Map<string, number>();
  if (since) {
    const ids = [...new Set(targets.map((t) => t.subscriberId))];
    await lockSubscribersForCap(tx, project.id, ids);
    counts = await recentSendCounts(tx, project.id, ids, since, excludeDeliveryIds);
  }
  return targets.map((target) => {
    const recentSends = counts.get(target.subscriberId) ?? 0;
    const decision = checkDeliveryPolicy(policy, { zone: localZone(target.timezone, project.timezone), recentSends }, now);
    if (decision.allowed) counts.set(target.subscriberId, recentSends + 1);
    return decision;
  });
}
