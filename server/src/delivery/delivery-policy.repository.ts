// The delivery policy applied to sends: a recipient's recent messages on the channel counted under a lock, then decided.
import { sql } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { channelPolicy, type Channel } from '../db/schema.js';
import { capWindowStart, checkDeliveryPolicy, localZone, type PolicyDecision } from './delivery-policy.js';
import type { SendingProject } from './delivery.repository.js';

const CAP_LOCK = 7_305_003; // pg_advisory_xact_lock class: one cap decision at a time per recipient and channel

/**
 * Serialises cap decisions for these recipients on `channel` until the caller's transaction ends, so two concurrent
 * sends cannot both see room for one more message. Locks are taken in order (unnest keeps the array's order): two
 * sends to overlapping recipients never wait on each other in a cycle.
 */
async function lockRecipientsForCap(tx: Db, projectId: string, channel: Channel, recipients: readonly string[]): Promise<void> {
  const sorted = [...recipients].sort();
  await tx.execute(sql`
    SELECT pg_advisory_xact_lock(${CAP_LOCK}, hashtext(${`${projectId}:${channel}:`} || r)) FROM unnest(${sql.param(sorted)}::text[]) AS r`);
}

/**
 * Messages of `channel` each recipient got since `since` (sent_at within the window) plus those in flight
 * (`sending`, no sent_at yet). A recipient is a device (subscriber id) on push, an address (the delivery's
 * destination) on the other channels, whichever subscriber carried it. Two halves so each is an index range of
 * deliveries_subscriber_idx (subscriber_id, sent_at) or deliveries_destination_idx (destination, sent_at): a
 * recipient's older history is never read. Recipients without any are left out. A subscriber is live or sandbox, and
 * so are all its deliveries: sandbox sends only count against sandbox subscribers.
 * `excludeDeliveryIds` leaves out the caller's own claimed rows: `sending` (so in flight) yet still to be decided.
 */
export async function recentSendCounts(
  db: Db,
  projectId: string,
  channel: Channel,
  recipients: readonly string[],
  since: Date,
  excludeDeliveryIds: readonly number[] = [],
): Promise<Map<string, number>> {
  const column = sql.raw(channel === 'push' ? 'subscriber_id' : 'destination');
  const ids = sql`${sql.param([...recipients])}::text[]`;
  // Claimed rows never have a sent_at (a sent row is never claimed again), so only the in-flight half can hold them.
  const excluded = excludeDeliveryIds.length > 0 ? sql` AND NOT (id = ANY(${sql.param([...excludeDeliveryIds])}::bigint[]))` : sql``;
  const { rows } = await db.execute<{ recipient: string; sends: number }>(sql`
    SELECT recipient, count(*)::int AS sends FROM (
      SELECT ${column} AS recipient FROM deliveries
      WHERE ${column} = ANY(${ids}) AND sent_at > ${since.toISOString()}::timestamptz AND project_id = ${projectId} AND channel = ${channel}
      UNION ALL
      SELECT ${column} FROM deliveries
      WHERE ${column} = ANY(${ids}) AND sent_at IS NULL AND status = 'sending' AND project_id = ${projectId} AND channel = ${channel}${excluded}
    ) recent
    GROUP BY recipient`);
  return new Map(rows.map((r) => [r.recipient, r.sends]));
}

/** One recipient a send would reach: a device (its subscriber id) on push, an address otherwise. */
export interface PolicyTarget {
  recipient: string;
  /** The subscriber's own zone; the project's zone stands in. */
  timezone: string | null;
}

/**
 * Decides, in order, whether each target may get one more message of `channel` now under the project's policy for
 * that channel. Run it in the transaction that records the outcome: with a frequency cap the targets are locked until
 * that transaction ends, so concurrent sends to one recipient are decided one at a time. Each message allowed here
 * counts toward the cap of the targets after it (a recipient may appear more than once). `excludeDeliveryIds`: see
 * `recentSendCounts`.
 */
export async function decidePolicy(
  tx: Db,
  project: Pick<SendingProject, 'id' | 'deliveryPolicy' | 'timezone'>,
  channel: Channel,
  targets: readonly PolicyTarget[],
  now: Date,
  excludeDeliveryIds?: readonly number[],
): Promise<PolicyDecision[]> {
  const policy = channelPolicy(project.deliveryPolicy, channel);
  const since = capWindowStart(policy, now);
  let counts = new Map<string, number>();
  if (since) {
    const recipients = [...new Set(targets.map((t) => t.recipient))];
    await lockRecipientsForCap(tx, project.id, channel, recipients);
    counts = await recentSendCounts(tx, project.id, channel, recipients, since, excludeDeliveryIds);
  }
  return targets.map((target) => {
    const recentSends = counts.get(target.recipient) ?? 0;
    const decision = checkDeliveryPolicy(policy, { zone: localZone(target.timezone, project.timezone), recentSends }, now);
    if (decision.allowed) counts.set(target.recipient, recentSends + 1);
    return decision;
  });
}
