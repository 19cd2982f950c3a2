// SQL of the delivery engine: messages, claiming due deliveries under a lease, and recording outcomes in bulk.
// Claimed rows are the authority here: the engine works across projects, and every row carries its project id.
import { sql, type SQL } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { messageStats, messages, type DeliveryPolicy, type PushContent, type PushOptions } from '../db/schema.js';
import type { DeadRecipient, DeliveryReason } from './channel.js';

export interface MessageRecord {
  id: string;
  projectId: string;
  source: 'transactional' | 'campaign';
  campaignId: string | null;
  sandbox: boolean;
  content: PushContent;
  options: PushOptions;
}

/** A delivery this process holds the lease of, with what sending it needs from its subscriber. */
export interface ClaimedDelivery {
  id: number;
  projectId: string;
  messageId: string;
  subscriberId: string;
  /** Attempts made including this one; also the fencing token of the claim. */
  attempts: number;
  endpoint: string | null;
  p256dh: string | null;
  auth: string | null;
  subscriberStatus: 'active' | 'inactive' | 'unsubscribed';
  subscriberSandbox: boolean;
  /** IANA zone of the subscriber, when known (quiet hours). */
  subscriberTimezone: string | null;
  /** Its message was withdrawn (a cancelled campaign) after the delivery was queued. */
  messageCancelled: boolean;
}

/** The final or next state of a claimed delivery. */
export interface DeliveryUpdate {
  id: number;
  /** The claim's `attempts`: an update whose claim was taken over by another worker is dropped. */
  fence: number;
  attempts: number;
  status: 'queued' | 'sent' | 'failed' | 'suppressed';
  reason: DeliveryReason | null;
  providerCode: string | null;
  /** For `queued`: wait this long before the next attempt. */
  delayMs: number;
}

export async function insertMessage(db: Db, message: MessageRecord): Promise<void> {
  await db.insert(messages).values({ ...message, channel: 'push' });
}

/** Starts counting a message's deliveries (`message_stats`); messages without a row are not counted. */
export async function insertMessageStats(db: Db, messageId: string): Promise<void> {
  await db.insert(messageStats).values({ messageId }).onConflictDoNothing();
}

/**
 * Snapshots an audience into queued deliveries in one set-based statement: each subscriber of the project matching
 * `audience` (a predicate over `subscribers`) gets one delivery, and a re-run adds nobody twice (unique message and
 * subscriber). The rows created are added to the message's `queued` counter; run both inside one transaction.
 */
export async function snapshotDeliveries(db: Db, projectId: string, messageId: string, audience: SQL): Promise<number> {
  const inserted = await db.execute(sql`
    INSERT INTO deliveries (project_id, message_id, subscriber_id)
    SELECT ${projectId}, ${messageId}, id FROM subscribers WHERE project_id = ${projectId} AND ${audience}
    ON CONFLICT (message_id, subscriber_id) DO NOTHING`);
  const count = inserted.rowCount ?? 0;
  await db.execute(sql`UPDATE message_stats SET queued = queued + ${count}, updated_at = now() WHERE message_id = ${messageId}`);
  return count;
}

/**
 * Withdraws a message (a cancelled campaign): its queued deliveries become `suppressed` (`campaign_cancelled`) and
 * are counted, and the engine suppresses any it claims later (a retry, a lease taken over); deliveries being sent
 * finish. Returns how many were suppressed here.
 */
export async function withdrawMessage(db: Db, projectId: string, messageId: string): Promise<number> {
  const { rows } = await db.execute<{ suppressed: number }>(sql`
    WITH withdrawn AS (
      UPDATE messages SET cancelled_at = coalesce(cancelled_at, now()) WHERE id = ${messageId} AND project_id = ${projectId}
    ), suppressed AS (
      UPDATE deliveries SET status = 'suppressed', reason = 'campaign_cancelled', failed_at = now(), updated_at = now()
      WHERE message_id = ${messageId} AND project_id = ${projectId} AND status = 'queued'
      RETURNING 1
    ), counted AS (
      UPDATE message_stats SET suppressed = suppressed + (SELECT count(*) FROM suppressed)::int, updated_at = now()
      WHERE message_id = ${messageId}
    )
    SELECT count(*)::int AS suppressed FROM suppressed`);
  return rows[0]?.suppressed ?? 0;
}

export async function findMessages(db: Db, ids: readonly string[]): Promise<MessageRecord[]> {
  const { rows } = await db.execute<{
    id: string;
    project_id: string;
    source: MessageRecord['source'];
    campaign_id: string | null;
    sandbox: boolean;
    content: PushContent;
    options: PushOptions;
  }>(sql`SELECT id, project_id, source, campaign_id, sandbox, content, options FROM messages WHERE id = ANY(${sql.param([...ids])})`);
  return rows.map((r) => ({
    id: r.id,
    projectId: r.project_id,
    source: r.source,
    campaignId: r.campaign_id,
    sandbox: r.sandbox,
    content: r.content,
    options: r.options,
  }));
}

export interface SendingProject {
  id: string;
  vapidPublicKey: string;
  vapidPrivateKey: string;
  vapidSubject: string | undefined;
  /** Campaign deliveries obey it in the engine (transactional sends apply it before they send). */
  deliveryPolicy: DeliveryPolicy | undefined;
  /** The project's zone for subscribers without one (quiet hours). */
  timezone: string | undefined;
}

export async function findSendingProjects(db: Db, ids: readonly string[]): Promise<SendingProject[]> {
  const { rows } = await db.execute<{
    id: string;
    vapid_public_key: string;
    vapid_private_key: string;
    vapid_subject: string | null;
    delivery_policy: DeliveryPolicy | null;
    timezone: string | null;
  }>(
    sql`SELECT id, vapid_public_key, vapid_private_key, settings->>'vapidSubject' AS vapid_subject,
          settings->'deliveryPolicy' AS delivery_policy, settings->>'timezone' AS timezone
        FROM projects WHERE id = ANY(${sql.param([...ids])})`,
  );
  return rows.map((r) => ({
    id: r.id,
    vapidPublicKey: r.vapid_public_key,
    vapidPrivateKey: r.vapid_private_key,
    vapidSubject: r.vapid_subject ?? undefined,
    deliveryPolicy: r.delivery_policy ?? undefined,
    timezone: r.timezone ?? undefined,
  }));
}

const claimedColumns = sql`c.id::float8 AS id, c.project_id, c.message_id, c.subscriber_id, c.attempts,
  s.endpoint, s.p256dh, s.auth, s.status AS subscriber_status, s.sandbox AS subscriber_sandbox, s.timezone AS subscriber_timezone,
  m.cancelled_at IS NOT NULL AS message_cancelled`;
const claimedJoins = sql`JOIN subscribers s ON s.id = c.subscriber_id JOIN messages m ON m.id = c.message_id`;

type ClaimedRow = {
  id: number;
  project_id: string;
  message_id: string;
  subscriber_id: string;
  attempts: number;
  endpoint: string | null;
  p256dh: string | null;
  auth: string | null;
  subscriber_status: ClaimedDelivery['subscriberStatus'];
  subscriber_sandbox: boolean;
  subscriber_timezone: string | null;
  message_cancelled: boolean;
};

const toClaimed = (r: ClaimedRow): ClaimedDelivery => ({
  id: r.id,
  projectId: r.project_id,
  messageId: r.message_id,
  subscriberId: r.subscriber_id,
  attempts: r.attempts,
  endpoint: r.endpoint,
  p256dh: r.p256dh,
  auth: r.auth,
  subscriberStatus: r.subscriber_status,
  subscriberSandbox: r.subscriber_sandbox,
  subscriberTimezone: r.subscriber_timezone,
  messageCancelled: r.message_cancelled,
});

/**
 * Claims up to `limit` due deliveries of any project under a lease: `FOR UPDATE SKIP LOCKED`, so concurrent
 * workers never claim the same row, and the claim itself is the commit that moves the rows to `sending`.
 */
export async function claimDue(db: Db, limit: number, leaseSeconds: number): Promise<ClaimedDelivery[]> {
  return db.transaction(async (tx) => {
    // Due rows are read in order from deliveries_due_idx, never sorted. With statistics older than the queue (a
    // fresh table, a campaign just snapshotted) the planner would bitmap-scan and sort every queued row on each
    // claim — the row lock sits between sort and limit, so not even a top-N sort: 30 ms instead of 0.2 ms per claim
    // at 100,000 queued (docs/PERFORMANCE.md, "Push delivery").
    await tx.execute(sql`SET LOCAL enable_sort = off`);
    const { rows } = await tx.execute<ClaimedRow>(sql`
      WITH due AS (
        SELECT id FROM deliveries
        WHERE status = 'queued' AND next_attempt_at <= now()
        ORDER BY next_attempt_at
        LIMIT ${limit}
        FOR UPDATE SKIP LOCKED
      ), c AS (
        UPDATE deliveries d
        SET status = 'sending', attempts = d.attempts + 1, lease_until = now() + make_interval(secs => ${leaseSeconds}), updated_at = now()
        FROM due WHERE d.id = due.id
        RETURNING d.id, d.project_id, d.message_id, d.subscriber_id, d.attempts
      )
      SELECT ${claimedColumns} FROM c ${claimedJoins}`);
    return rows.map(toClaimed);
  });
}

/**
 * Inserts deliveries already claimed by the caller (`sending`, first attempt, under a lease): the transactional
 * path sends them at once; if its process dies, the lease expires and a worker takes them over.
 */
export async function insertClaimed(
  db: Db,
  projectId: string,
  messageId: string,
  subscriberIds: readonly string[],
  leaseSeconds: number,
): Promise<ClaimedDelivery[]> {
  const { rows } = await db.execute<ClaimedRow>(sql`
    WITH c AS (
      INSERT INTO deliveries (project_id, message_id, subscriber_id, status, attempts, lease_until)
      SELECT ${projectId}, ${messageId}, sid, 'sending', 1, now() + make_interval(secs => ${leaseSeconds})
      FROM unnest(${sql.param([...subscriberIds])}::text[]) AS sid
      RETURNING id, project_id, message_id, subscriber_id, attempts
    )
    SELECT ${claimedColumns} FROM c ${claimedJoins}`);
  return rows.map(toClaimed);
}

/** Puts deliveries whose worker died (lease expired while `sending`) back in the queue; returns how many. */
export async function requeueExpiredLeases(db: Db): Promise<number> {
  const result = await db.execute(sql`
    UPDATE deliveries SET status = 'queued', lease_until = NULL, next_attempt_at = now(), updated_at = now()
    WHERE status = 'sending' AND lease_until < now()`);
  return result.rowCount ?? 0;
}

/**
 * Records outcomes in one statement. Fenced: a row is updated only while still `sending` under the same claim.
 * A device that confirmed delivery (or a click) before the send was recorded keeps that later state.
 * The same statement adds the rows it changed to their messages' counters (`message_stats`): the fence makes each
 * sent, failed or suppressed outcome count once, whatever the workers and retries. Returns the rows recorded.
 */
export async function recordOutcomes(db: Db, updates: readonly DeliveryUpdate[]): Promise<number> {
  if (updates.length === 0) return 0;
  const column = <T>(pick: (u: DeliveryUpdate) => T) => sql.param(updates.map(pick));
  const { rows } = await db.execute<{ recorded: number }>(sql`
    WITH changed AS (
      UPDATE deliveries d SET
        status = (CASE
          WHEN x.status <> 'sent' THEN x.status
          WHEN d.clicked_at IS NOT NULL THEN 'clicked'
          WHEN d.dismissed_at IS NOT NULL THEN 'dismissed'
          WHEN d.delivered_at IS NOT NULL THEN 'delivered'
          ELSE 'sent' END)::delivery_status,
        attempts = x.attempts,
        reason = x.reason,
        provider_code = x.code,
        lease_until = NULL,
        updated_at = now(),
        next_attempt_at = CASE WHEN x.status = 'queued' THEN now() + x.delay_ms * interval '1 millisecond' ELSE d.next_attempt_at END,
        sent_at = CASE WHEN x.status = 'sent' THEN now() ELSE d.sent_at END,
        failed_at = CASE WHEN x.status IN ('failed', 'suppressed') THEN now() ELSE d.failed_at END
      FROM unnest(
        ${column((u) => u.id)}::bigint[], ${column((u) => u.fence)}::int[], ${column((u) => u.attempts)}::int[],
        ${column((u) => u.status)}::text[], ${column((u) => u.reason)}::text[], ${column((u) => u.providerCode)}::text[],
        ${column((u) => u.delayMs)}::int[]
      ) AS x(id, fence, attempts, status, reason, code, delay_ms)
      WHERE d.id = x.id AND d.status = 'sending' AND d.attempts = x.fence
      RETURNING d.message_id, x.status AS outcome
    ), locked AS (
      -- Counter rows are locked in one order, so two workers recording batches of the same messages never deadlock.
      SELECT message_id FROM message_stats WHERE message_id IN (SELECT message_id FROM changed) ORDER BY message_id FOR UPDATE
    ), counted AS (
      UPDATE message_stats ms SET
        sent = ms.sent + n.sent, failed = ms.failed + n.failed, suppressed = ms.suppressed + n.suppressed, updated_at = now()
      FROM (
        SELECT message_id,
          count(*) FILTER (WHERE outcome = 'sent')::int AS sent,
          count(*) FILTER (WHERE outcome = 'failed')::int AS failed,
          count(*) FILTER (WHERE outcome = 'suppressed')::int AS suppressed
        FROM changed GROUP BY message_id
      ) n JOIN locked USING (message_id)
      WHERE ms.message_id = n.message_id AND n.sent + n.failed + n.suppressed > 0
    )
    SELECT count(*)::int AS recorded FROM changed`);
  return rows[0]?.recorded ?? 0;
}

/**
 * Deactivates subscribers whose push subscription is dead. Gone (404/410): `unsubscribed`, until the browser registers
 * again. Refused by the endpoint guard: `inactive` — Herald's decision, so neither a campaign nor a re-registration of
 * the same endpoint offers it again.
 */
export async function deactivateDeadSubscriptions(db: Db, dead: Record<DeadRecipient, readonly string[]>): Promise<void> {
  const ids = [...dead.gone, ...dead.refused];
  if (ids.length === 0) return;
  await db.execute(sql`
    UPDATE subscribers
    SET status = CASE WHEN id = ANY(${sql.param([...dead.refused])}) THEN 'inactive'::subscriber_status ELSE 'unsubscribed'::subscriber_status END,
        status_reason = CASE WHEN id = ANY(${sql.param([...dead.refused])}) THEN 'push_endpoint_refused' ELSE 'push_subscription_gone' END,
        updated_at = now()
    WHERE id = ANY(${sql.param(ids)}) AND status = 'active'`);
}
