// SQL of the delivery engine: messages, claiming due deliveries under a lease, and recording outcomes in bulk.
// Claimed rows are the authority here: the engine works across projects, and every row carries its project id.
import { sql, type SQL } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { messageStats, messages, type AddressStatus, type Channel, type ChannelMessage, type DeliveryPolicy } from '../db/schema.js';
import { recordAddressStates, type AddressState } from './address-states.repository.js';
import type { DeadRecipient, DeliveryReason } from './delivery-reason.js';

/** A message: `channel` chooses the engine's adapter and types its content and options. */
export type MessageRecord<C extends Channel = Channel> = {
  id: string;
  projectId: string;
  source: 'transactional' | 'campaign' | 'automation';
  campaignId: string | null;
  sandbox: boolean;
} & ChannelMessage<C>;

/** What a personalized email's merge tags may read of its subscriber (the email channel names them for templates). */
export interface SubscriberMergeFields {
  attributes: Record<string, unknown>;
  externalId: string | null;
  country: string | null;
  city: string | null;
  language: string | null;
  timezone: string | null;
}

/** A subscriber row's merge fields as one JSON object (`SubscriberMergeFields`), read from the row aliased `s`. */
const MERGE_FIELDS = sql`jsonb_build_object('attributes', s.attributes, 'externalId', s.external_id, 'country', s.country,
  'city', s.city, 'language', s.language, 'timezone', s.timezone)`;

/**
 * The merge fields of the subscriber holding `address` in a project's environment (the one seen last), or null: what
 * a test send renders an email campaign with.
 */
export async function findMergeFields(db: Db, projectId: string, sandbox: boolean, address: string): Promise<SubscriberMergeFields | null> {
  const { rows } = await db.execute<{ fields: SubscriberMergeFields }>(sql`
    SELECT ${MERGE_FIELDS} AS fields
    FROM subscribers s WHERE s.project_id = ${projectId} AND s.sandbox = ${sandbox} AND lower(s.email) = ${address.toLowerCase()}
    ORDER BY s.last_seen_at DESC, s.id LIMIT 1`);
  return rows[0]?.fields ?? null;
}

/** A push's recipient: the subscription of its subscriber's device. */
export interface PushRecipient {
  channel: 'push';
  endpoint: string;
  p256dh: string;
  auth: string;
}

/** The channels that reach a person at an address (push reaches a device). */
export type AddressChannel = Exclude<Channel, 'push'>;

/** An email's, SMS's or WhatsApp message's recipient: its address, and what `channel_addresses` says of it now. */
export interface AddressRecipient<C extends AddressChannel = AddressChannel> {
  channel: C;
  address: string;
  status: AddressStatus;
  /** Why the address is not reachable (on email, its suppression reason: `unsubscribed`, `complained` …). */
  reason: string | null;
}

/** Who a delivery on channel `C` goes to, in that channel's terms. */
export type RecipientOf<C extends Channel> = C extends 'push' ? PushRecipient : C extends AddressChannel ? AddressRecipient<C> : never;

/** A delivery this process holds the lease of, with what sending it needs from its subscriber. */
export interface ClaimedDelivery<C extends Channel = Channel> {
  id: number;
  projectId: string;
  messageId: string;
  subscriberId: string;
  channel: C;
  /** Attempts made including this one; also the fencing token of the claim. */
  attempts: number;
  /** Null when there is nothing to send to: a subscriber without a push subscription, a delivery without an address. */
  recipient: RecipientOf<C> | null;
  subscriberStatus: 'active' | 'inactive' | 'unsubscribed';
  subscriberSandbox: boolean;
  /** IANA zone of the subscriber, when known (quiet hours). */
  subscriberTimezone: string | null;
  /** Its message was withdrawn (a cancelled campaign) after the delivery was queued. */
  messageCancelled: boolean;
  /** Its message is paused: the delivery goes back to `paused`, unsent and its attempt not counted. */
  messagePaused: boolean;
  /** Read for an email of a personalized message only; null for every other delivery. */
  mergeFields: SubscriberMergeFields | null;
}

/** The final or next state of a claimed delivery. */
export interface DeliveryUpdate {
  id: number;
  /** The claim's `attempts`: an update whose claim was taken over by another worker is dropped. */
  fence: number;
  attempts: number;
  /** `paused`: put back unsent, its message paused. */
  status: 'queued' | 'paused' | 'sent' | 'failed' | 'suppressed';
  reason: DeliveryReason | null;
  providerCode: string | null;
  /** For a provider's refusal (`failed`, or `queued` for a retry): what it said, beside its code. */
  providerError?: string | undefined;
  /** For `sent`: the provider's id of the message, when it gives one. */
  providerMessageId?: string | undefined;
  /** For `queued`: wait this long before the next attempt. */
  delayMs: number;
}

export async function insertMessage(db: Db, message: MessageRecord): Promise<void> {
  await db.insert(messages).values(message);
}

/** Starts counting a message's deliveries (`message_stats`); messages without a row are not counted. */
export async function insertMessageStats(db: Db, messageId: string): Promise<void> {
  await db.insert(messageStats).values({ messageId }).onConflictDoNothing();
}

/** Who a message goes to: a predicate over `subscribers`, and the address one recipient is, when not the row. */
export interface SnapshotAudience {
  where: SQL;
  address: SQL | undefined;
}

/**
 * When each recipient of a local-time send is due: `wallClock` in its subscriber's zone, or `defaultZone` for one
 * without a zone PostgreSQL knows. A wall time that happens twice (fall back) is its earlier occurrence and one the
 * clocks skip moves forward by the gap, as a campaign's own sendAt is read (campaign-schedule.ts).
 */
export interface LocalDue {
  wallClock: string;
  defaultZone: string;
}

/**
 * Snapshots an audience into queued deliveries in one set-based statement: each recipient matching `audience` gets
 * one delivery — each subscriber, or with an `address` each distinct address, through the subscriber seen last — and
 * a re-run adds nobody twice (unique message and subscriber, message and destination). The rows created are added to
 * the message's `queued` counter; run both inside one transaction. Due now, or with `localDue` at that local time
 * (a time already past is due now).
 */
export async function snapshotDeliveries(
  db: Db,
  message: Pick<MessageRecord, 'id' | 'projectId' | 'channel'>,
  audience: SnapshotAudience,
  localDue?: LocalDue,
): Promise<number> {
  const { id: messageId, projectId, channel } = message;
  const zone = localDue && sql`CASE WHEN timezone IN (SELECT name FROM pg_timezone_names) THEN timezone ELSE ${localDue.defaultZone} END`;
  // The earlier of the two readings an hour apart is the first occurrence of an ambiguous wall time; elsewhere they agree.
  const due = localDue
    ? sql`least(${localDue.wallClock}::timestamp AT TIME ZONE ${zone}, (${localDue.wallClock}::timestamp - interval '1 hour') AT TIME ZONE ${zone} + interval '1 hour')`
    : sql`now()`;
  const recipients = audience.address
    ? sql`SELECT DISTINCT ON (${audience.address}) id, ${audience.address} AS destination, ${due} AS due FROM subscribers
          WHERE project_id = ${projectId} AND ${audience.where} ORDER BY ${audience.address}, last_seen_at DESC, id`
    : sql`SELECT id, NULL::text AS destination, ${due} AS due FROM subscribers WHERE project_id = ${projectId} AND ${audience.where}`;
  const inserted = await db.execute(sql`
    INSERT INTO deliveries (project_id, message_id, subscriber_id, channel, destination, next_attempt_at)
    SELECT ${projectId}, ${messageId}, r.id, ${channel}, r.destination, greatest(r.due, now()) FROM (${recipients}) r
    ON CONFLICT DO NOTHING`);
  const count = inserted.rowCount ?? 0;
  await db.execute(sql`UPDATE message_stats SET queued = queued + ${count}, updated_at = now() WHERE message_id = ${messageId}`);
  return count;
}

/**
 * Withdraws a message (a cancelled campaign): its queued (or paused) deliveries become `suppressed` (`campaign_cancelled`) and
 * are counted, and the engine suppresses any it claims later (a retry, a lease taken over); deliveries being sent
 * finish. Returns how many were suppressed here.
 */
export async function withdrawMessage(db: Db, projectId: string, messageId: string): Promise<number> {
  const { rows } = await db.execute<{ suppressed: number }>(sql`
    WITH withdrawn AS (
      UPDATE messages SET cancelled_at = coalesce(cancelled_at, now()) WHERE id = ${messageId} AND project_id = ${projectId}
    ), suppressed AS (
      UPDATE deliveries SET status = 'suppressed', reason = 'campaign_cancelled', failed_at = now(), updated_at = now()
      WHERE message_id = ${messageId} AND project_id = ${projectId} AND status IN ('queued', 'paused')
      RETURNING 1
    ), counted AS (
      UPDATE message_stats SET suppressed = suppressed + (SELECT count(*) FROM suppressed)::int, updated_at = now()
      WHERE message_id = ${messageId}
    )
    SELECT count(*)::int AS suppressed FROM suppressed`);
  return rows[0]?.suppressed ?? 0;
}

/**
 * Pauses a message: its deliveries still waiting become `paused` (each keeping when it is due) and no worker claims
 * them until `resumeMessage`; one a worker claims meanwhile (a retry recorded in the instant of the pause) is put
 * back unsent. Those being sent finish. Returns how many were held.
 */
export async function pauseMessage(db: Db, projectId: string, messageId: string): Promise<number> {
  const { rows } = await db.execute<{ held: number }>(sql`
    WITH paused AS (
      UPDATE messages SET paused_at = now() WHERE id = ${messageId} AND project_id = ${projectId}
    ), held AS (
      UPDATE deliveries SET status = 'paused', updated_at = now()
      WHERE message_id = ${messageId} AND project_id = ${projectId} AND status = 'queued'
      RETURNING 1
    )
    SELECT count(*)::int AS held FROM held`);
  return rows[0]?.held ?? 0;
}

/**
 * Puts a paused message's deliveries back in the queue as they were due (those overdue go first); those the monthly
 * cap held are due now, so a raised cap takes effect at once (and a cap still reached holds them again). Returns how
 * many.
 */
export async function resumeMessage(db: Db, projectId: string, messageId: string): Promise<number> {
  const { rows } = await db.execute<{ queued: number }>(sql`
    WITH resumed AS (
      UPDATE messages SET paused_at = NULL WHERE id = ${messageId} AND project_id = ${projectId}
    ), queued AS (
      UPDATE deliveries SET status = 'queued', updated_at = now(),
        next_attempt_at = CASE WHEN reason = 'monthly_cap_reached' THEN now() ELSE next_attempt_at END
      WHERE message_id = ${messageId} AND project_id = ${projectId} AND status = 'paused'
      RETURNING 1
    )
    SELECT count(*)::int AS queued FROM queued`);
  return rows[0]?.queued ?? 0;
}

export async function findMessages(db: Db, ids: readonly string[]): Promise<MessageRecord[]> {
  const { rows } = await db.execute<{
    id: string;
    project_id: string;
    channel: Channel;
    source: MessageRecord['source'];
    campaign_id: string | null;
    sandbox: boolean;
    content: MessageRecord['content'];
    options: MessageRecord['options'];
  }>(sql`SELECT id, project_id, channel, source, campaign_id, sandbox, content, options FROM messages WHERE id = ANY(${sql.param([...ids])})`);
  return rows.map(
    (r) =>
      // Stored by insertMessage from a MessageRecord: the content is its channel's.
      ({
        id: r.id,
        projectId: r.project_id,
        source: r.source,
        campaignId: r.campaign_id,
        sandbox: r.sandbox,
        ...({ channel: r.channel, content: r.content, options: r.options } as ChannelMessage),
      }),
  );
}

export interface SendingProject {
  id: string;
  /**
   * Each channel's provider as the project configured it (`PUT /projects/:id/channels/<channel>`), credentials
   * opened; a channel it has chosen none for is absent. Push's is its VAPID key pair (`vapidPublicKey` in settings,
   * `vapidPrivateKey` in credentials).
   */
  channels: Partial<Record<Channel, ProviderConfig>>;
  vapidSubject: string | undefined;
  /** Campaign deliveries obey it in the engine (transactional sends apply it before they send). */
  deliveryPolicy: DeliveryPolicy | undefined;
  /** The project's zone for subscribers without one (quiet hours). */
  timezone: string | undefined;
}

/** A channel's provider as a project configured it: its name, settings, and credentials. */
export interface ProviderConfig {
  provider: string;
  settings: Record<string, unknown>;
  credentials: Record<string, string>;
}

/** A project's sending settings as stored: each channel's credentials still sealed. */
export type StoredSendingProject = Omit<SendingProject, 'channels'> & {
  channels: Partial<Record<Channel, Omit<ProviderConfig, 'credentials'> & { credentials: string }>>;
};

export async function findSendingProjects(db: Db, ids: readonly string[]): Promise<StoredSendingProject[]> {
  const { rows } = await db.execute<{
    id: string;
    vapid_subject: string | null;
    delivery_policy: DeliveryPolicy | null;
    timezone: string | null;
    channels: StoredSendingProject['channels'];
  }>(
    // Provider 'none': the project set its email domain and chose no provider yet.
    sql`SELECT p.id, p.settings->>'vapidSubject' AS vapid_subject, p.settings->'deliveryPolicy' AS delivery_policy, p.settings->>'timezone' AS timezone,
          coalesce((SELECT jsonb_object_agg(c.channel, jsonb_build_object('provider', c.provider, 'settings', c.settings, 'credentials', c.credentials))
                    FROM channel_configs c WHERE c.project_id = p.id AND c.provider <> 'none'), '{}') AS channels
        FROM projects p
        WHERE p.id = ANY(${sql.param([...ids])})`,
  );
  return rows.map((r) => ({
    id: r.id,
    channels: r.channels,
    vapidSubject: r.vapid_subject ?? undefined,
    deliveryPolicy: r.delivery_policy ?? undefined,
    timezone: r.timezone ?? undefined,
  }));
}

// The destination's state is read only for deliveries that have one (its lateral lookup is gated on it before any
// index is read): a push claim pays nothing for it. The merge fields likewise only for a personalized email: CASE
// evaluates them for its rows alone, so no other claim reads (or detoasts) the subscriber's attributes.
const claimedColumns = sql`c.id::float8 AS id, c.project_id, c.message_id, c.subscriber_id, c.channel, c.attempts, c.destination,
  coalesce(a.status, 'reachable') AS destination_status, a.status_reason AS destination_reason,
  s.endpoint, s.p256dh, s.auth, s.status AS subscriber_status, s.sandbox AS subscriber_sandbox, s.timezone AS subscriber_timezone,
  m.cancelled_at IS NOT NULL AS message_cancelled, m.paused_at IS NOT NULL AS message_paused,
  CASE WHEN c.channel = 'email' AND m.options @> '{"personalized": true}' THEN ${MERGE_FIELDS} END AS merge_fields`;
// `messages`: the table, or the rows a statement has just inserted into it (which it cannot read back from the table).
const claimedJoins = (messages: SQL = sql`messages`) => sql`JOIN subscribers s ON s.id = c.subscriber_id JOIN ${messages} m ON m.id = c.message_id
  LEFT JOIN LATERAL (SELECT a.status, a.status_reason FROM channel_addresses a WHERE c.destination IS NOT NULL
    AND a.project_id = c.project_id AND a.sandbox = s.sandbox AND a.channel = c.channel AND a.address = c.destination) a ON true`;

type ClaimedRow = {
  id: number;
  project_id: string;
  message_id: string;
  subscriber_id: string;
  channel: Channel;
  attempts: number;
  destination: string | null;
  /** `reachable` when `channel_addresses` has no row for the destination, or there is none (then unused). */
  destination_status: AddressStatus;
  destination_reason: string | null;
  endpoint: string | null;
  p256dh: string | null;
  auth: string | null;
  subscriber_status: ClaimedDelivery['subscriberStatus'];
  subscriber_sandbox: boolean;
  subscriber_timezone: string | null;
  message_cancelled: boolean;
  message_paused: boolean;
  merge_fields: SubscriberMergeFields | null;
};

function recipientOf(r: ClaimedRow): RecipientOf<Channel> | null {
  if (r.channel === 'push') return r.endpoint && r.p256dh && r.auth ? { channel: 'push', endpoint: r.endpoint, p256dh: r.p256dh, auth: r.auth } : null;
  return r.destination === null ? null : { channel: r.channel, address: r.destination, status: r.destination_status, reason: r.destination_reason };
}

const toClaimed = (r: ClaimedRow): ClaimedDelivery => ({
  id: r.id,
  projectId: r.project_id,
  messageId: r.message_id,
  subscriberId: r.subscriber_id,
  channel: r.channel,
  attempts: r.attempts,
  recipient: recipientOf(r),
  subscriberStatus: r.subscriber_status,
  subscriberSandbox: r.subscriber_sandbox,
  subscriberTimezone: r.subscriber_timezone,
  messageCancelled: r.message_cancelled,
  messagePaused: r.message_paused,
  mergeFields: r.merge_fields,
});

/**
 * Claims up to `limit` due deliveries of one channel (its lane), of any project, under a lease: `FOR UPDATE SKIP
 * LOCKED`, so concurrent workers never claim the same row, and the claim itself is the commit that moves the rows to
 * `sending`.
 */
export async function claimDue(db: Db, channel: Channel, limit: number, leaseSeconds: number): Promise<ClaimedDelivery[]> {
  return db.transaction(async (tx) => {
    // Due rows are read in order from deliveries_due_idx, never sorted. With statistics older than the queue (a
    // fresh table, a campaign just snapshotted) the planner would bitmap-scan and sort every queued row on each
    // claim — the row lock sits between sort and limit, so not even a top-N sort: 30 ms instead of 0.2 ms per claim
    // at 100,000 queued (docs/PERFORMANCE.md, "Push delivery").
    await tx.execute(sql`SET LOCAL enable_sort = off`);
    const { rows } = await tx.execute<ClaimedRow>(sql`
      WITH due AS (
        SELECT id FROM deliveries
        WHERE status = 'queued' AND channel = ${channel} AND next_attempt_at <= now()
        ORDER BY next_attempt_at
        LIMIT ${limit}
        FOR UPDATE SKIP LOCKED
      ), c AS (
        UPDATE deliveries d
        SET status = 'sending', attempts = d.attempts + 1, lease_until = now() + make_interval(secs => ${leaseSeconds}), updated_at = now()
        FROM due WHERE d.id = due.id
        RETURNING d.id, d.project_id, d.message_id, d.subscriber_id, d.attempts, d.channel, d.destination
      )
      SELECT ${claimedColumns} FROM c ${claimedJoins()}`);
    return rows.map(toClaimed);
  });
}

/**
 * Writes messages of one recipient each (an automation's sends) with their queued deliveries, in two multi-row
 * statements; a message already written (the same id: a step run again) adds nothing, so it is never sent twice.
 * Returns how many deliveries were queued: announce them after the commit.
 */
export async function queueMessages(db: Db, items: readonly { message: MessageRecord; recipient: DeliveryTarget }[]): Promise<number> {
  if (items.length === 0) return 0;
  const column = <T>(pick: (item: (typeof items)[number]) => T) => sql.param(items.map(pick));
  const { rows } = await db.execute<{ id: string }>(sql`
    INSERT INTO messages (id, project_id, channel, source, campaign_id, sandbox, content, options)
    SELECT * FROM unnest(${column((i) => i.message.id)}::text[], ${column((i) => i.message.projectId)}::text[],
      ${column((i) => i.message.channel)}::channel[], ${column((i) => i.message.source)}::text[], ${column((i) => i.message.campaignId)}::text[],
      ${column((i) => i.message.sandbox)}::boolean[], ${column((i) => JSON.stringify(i.message.content))}::jsonb[],
      ${column((i) => JSON.stringify(i.message.options))}::jsonb[])
    ON CONFLICT (id) DO NOTHING
    RETURNING id`);
  const written = new Set(rows.map((r) => r.id));
  const fresh = items.filter((i) => written.has(i.message.id));
  if (fresh.length === 0) return 0;
  const fresher = <T>(pick: (item: (typeof fresh)[number]) => T) => sql.param(fresh.map(pick));
  const queued = await db.execute(sql`
    INSERT INTO deliveries (project_id, message_id, subscriber_id, channel, destination)
    SELECT * FROM unnest(${fresher((i) => i.message.projectId)}::text[], ${fresher((i) => i.message.id)}::text[],
      ${fresher((i) => i.recipient.subscriberId)}::text[], ${fresher((i) => i.message.channel)}::channel[], ${fresher((i) => i.recipient.destination)}::text[])
    ON CONFLICT DO NOTHING`);
  return queued.rowCount ?? 0;
}

/** Whom a delivery is written for: its subscriber, and the address it goes to off push (null: the subscriber's device). */
export interface DeliveryTarget {
  subscriberId: string;
  destination: string | null;
}

/**
 * Inserts deliveries already claimed by the caller (`sending`, first attempt, under a lease): the transactional
 * path sends them at once; if its process dies, the lease expires and a worker takes them over.
 */
export async function insertClaimed(
  db: Db,
  message: Pick<MessageRecord, 'id' | 'projectId' | 'channel'>,
  recipients: readonly DeliveryTarget[],
  leaseSeconds: number,
): Promise<ClaimedDelivery[]> {
  const { rows } = await db.execute<ClaimedRow>(sql`
    WITH c AS (
      INSERT INTO deliveries (project_id, message_id, subscriber_id, channel, destination, status, attempts, lease_until)
      SELECT ${message.projectId}, ${message.id}, r.sid, ${message.channel}, r.destination, 'sending', 1, now() + make_interval(secs => ${leaseSeconds})
      FROM unnest(${sql.param(recipients.map((r) => r.subscriberId))}::text[], ${sql.param(recipients.map((r) => r.destination))}::text[]) AS r(sid, destination)
      RETURNING id, project_id, message_id, subscriber_id, attempts, channel, destination
    )
    SELECT ${claimedColumns} FROM c ${claimedJoins()}`);
  return rows.map(toClaimed);
}

/** One message the caller sends itself at once, to one recipient. */
export interface SingleSend {
  message: MessageRecord;
  recipient: DeliveryTarget;
}

/**
 * Inserts messages, each with its one delivery already claimed by the caller (`sending`, first attempt, under a
 * lease), in one statement: the transactional sends that arrive together share it. Answers the deliveries in the
 * order given.
 */
export async function insertSingleSends(db: Db, sends: readonly SingleSend[], leaseSeconds: number): Promise<ClaimedDelivery[]> {
  if (sends.length === 0) return [];
  const column = <T>(pick: (send: SingleSend) => T) => sql.param(sends.map(pick));
  // unnest, not a JSON recordset: the planner then knows how many rows come, and joins them by index. The contents
  // go as one JSON array, each taken by its position: a text array would escape every quote of every body.
  const { rows } = await db.execute<ClaimedRow & { i: number }>(sql`
    WITH given AS (
      SELECT * FROM unnest(
        ${column((s) => s.message.id)}::text[], ${column((s) => s.message.projectId)}::text[], ${column((s) => s.message.channel)}::channel[],
        ${column((s) => s.message.source)}::text[], ${column((s) => s.message.campaignId)}::text[], ${column((s) => s.message.sandbox)}::boolean[],
        ${column((s) => s.recipient.subscriberId)}::text[], ${column((s) => s.recipient.destination)}::text[]
      ) WITH ORDINALITY AS g(id, project_id, channel, source, campaign_id, sandbox, subscriber_id, destination, i)
    ), parts AS (
      SELECT ${JSON.stringify(sends.map((s) => s.message.content))}::jsonb AS contents, ${JSON.stringify(sends.map((s) => s.message.options))}::jsonb AS options
    ), m AS (
      INSERT INTO messages (id, project_id, channel, source, campaign_id, sandbox, content, options)
      SELECT id, project_id, channel, source, campaign_id, sandbox, parts.contents -> (i::int - 1), parts.options -> (i::int - 1)
      FROM given, parts
      RETURNING id, cancelled_at, paused_at, options
    ), c AS (
      INSERT INTO deliveries (project_id, message_id, subscriber_id, channel, destination, status, attempts, lease_until)
      SELECT project_id, id, subscriber_id, channel, destination, 'sending', 1, now() + make_interval(secs => ${leaseSeconds}) FROM given
      RETURNING id, project_id, message_id, subscriber_id, attempts, channel, destination
    )
    SELECT ${claimedColumns}, g.i FROM c JOIN given g ON g.id = c.message_id ${claimedJoins(sql`m`)} ORDER BY g.i`);
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
 * Extends the lease of rows a live worker still sends (`sending` under its claim, fenced like an outcome): a batch
 * may take longer than a lease, its sends queued behind a provider's few connections. Returns the rows renewed.
 */
export async function renewLeases(db: Db, held: readonly { id: number; fence: number }[], leaseSeconds: number): Promise<number> {
  if (held.length === 0) return 0;
  const result = await db.execute(sql`
    UPDATE deliveries d SET lease_until = now() + make_interval(secs => ${leaseSeconds})
    FROM unnest(${sql.param(held.map((h) => h.id))}::bigint[], ${sql.param(held.map((h) => h.fence))}::int[]) AS x(id, fence)
    WHERE d.id = x.id AND d.status = 'sending' AND d.attempts = x.fence`);
  return result.rowCount ?? 0;
}

/**
 * Records outcomes in one statement. Fenced: a row is updated only while still `sending` under the same claim.
 * A device that confirmed delivery (or a click) before the send was recorded keeps that later state; so does a
 * provider's callback that reported a failure first (the delivery stays failed, with the callback's reason, code and
 * words).
 * The same statement adds the rows it changed to their messages' counters (`message_stats`): the fence makes each
 * sent, failed or suppressed outcome count once, whatever the workers and retries. Returns the rows recorded.
 */
// A send the provider accepted whose failure its callback reported first (only a `failed` event sets failed_at on a
// row still `sending`).
const failedFirst = sql.raw(`x.status = 'sent' AND d.failed_at IS NOT NULL`);

export async function recordOutcomes(db: Db, updates: readonly DeliveryUpdate[]): Promise<number> {
  if (updates.length === 0) return 0;
  const column = <T>(pick: (u: DeliveryUpdate) => T) => sql.param(updates.map(pick));
  const { rows } = await db.execute<{ recorded: number }>(sql`
    WITH changed AS (
      UPDATE deliveries d SET
        status = (CASE
          WHEN x.status <> 'sent' THEN x.status
          WHEN ${failedFirst} THEN 'failed'
          WHEN d.clicked_at IS NOT NULL THEN 'clicked'
          WHEN d.dismissed_at IS NOT NULL THEN 'dismissed'
          WHEN d.opened_at IS NOT NULL THEN 'opened'
          WHEN d.delivered_at IS NOT NULL THEN 'delivered'
          ELSE 'sent' END)::delivery_status,
        attempts = x.attempts,
        reason = CASE WHEN ${failedFirst} THEN d.reason ELSE x.reason END,
        provider_code = CASE WHEN ${failedFirst} THEN d.provider_code ELSE x.code END,
        provider_error = CASE WHEN ${failedFirst} THEN d.provider_error ELSE x.error END,
        provider_message_id = coalesce(x.message_ref, d.provider_message_id),
        lease_until = NULL,
        updated_at = now(),
        next_attempt_at = CASE WHEN x.status = 'queued' THEN now() + x.delay_ms * interval '1 millisecond' ELSE d.next_attempt_at END,
        sent_at = CASE WHEN x.status = 'sent' THEN now() ELSE d.sent_at END,
        failed_at = CASE WHEN x.status IN ('failed', 'suppressed') THEN now() ELSE d.failed_at END
      FROM unnest(
        ${column((u) => u.id)}::bigint[], ${column((u) => u.fence)}::int[], ${column((u) => u.attempts)}::int[],
        ${column((u) => u.status)}::text[], ${column((u) => u.reason)}::text[], ${column((u) => u.providerCode)}::text[],
        ${column((u) => u.delayMs)}::bigint[], ${column((u) => u.providerMessageId ?? null)}::text[],
        ${column((u) => u.providerError ?? null)}::text[]
      ) AS x(id, fence, attempts, status, reason, code, delay_ms, message_ref, error)
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

/** What one batch showed of a campaign message's provider: a delivery went through, or the latest retryable failure. */
export type SendingIssueChange =
  | { projectId: string; messageId: string; cleared: true }
  | { projectId: string; messageId: string; cleared: false; reason: DeliveryReason; providerCode: string | null; detail: string | null; at: Date };

/**
 * Records `messages.sending_issue` for a batch's messages in one statement: a failure replaces the issue and keeps its
 * `since` (the streak's start), a delivery that went through clears it — written only where one is set, so batches
 * that go through write nothing. Message rows are locked in id order, as two workers may record the same messages.
 */
export async function recordSendingIssues(db: Db, changes: readonly SendingIssueChange[]): Promise<void> {
  if (changes.length === 0) return;
  const column = <T>(pick: (c: SendingIssueChange) => T) => sql.param(changes.map(pick));
  const failure = <T>(pick: (c: Extract<SendingIssueChange, { cleared: false }>) => T) => (c: SendingIssueChange) => (c.cleared ? null : pick(c));
  await db.execute(sql`
    WITH x AS (
      SELECT * FROM unnest(
        ${column((c) => c.projectId)}::text[], ${column((c) => c.messageId)}::text[], ${column((c) => c.cleared)}::boolean[],
        ${column(failure((c) => c.reason))}::text[], ${column(failure((c) => c.providerCode))}::text[],
        ${column(failure((c) => c.detail))}::text[], ${column(failure((c) => c.at.toISOString()))}::text[]
      ) AS x(project_id, message_id, cleared, reason, code, detail, at)
    ), locked AS (
      SELECT m.id FROM messages m JOIN x ON m.project_id = x.project_id AND m.id = x.message_id
      WHERE NOT x.cleared OR m.sending_issue IS NOT NULL
      ORDER BY m.id FOR NO KEY UPDATE OF m
    )
    UPDATE messages m SET sending_issue = CASE WHEN x.cleared THEN NULL ELSE jsonb_build_object(
        'reason', x.reason, 'providerCode', x.code, 'detail', x.detail, 'at', x.at,
        'since', coalesce(m.sending_issue ->> 'since', x.at)) END
    FROM x JOIN locked ON locked.id = x.message_id
    WHERE m.id = x.message_id AND m.project_id = x.project_id`);
}

/** Recipients a provider found dead, by what is dead: a push device (its subscriber), or an address on a channel. */
export interface DeadRecipients {
  devices: Record<Exclude<DeadRecipient, 'opted_out'>, string[]>;
  addresses: AddressState[];
}

/**
 * Deactivates what is dead, and only that. A push subscription gone (404/410): its subscriber `unsubscribed`, until
 * the browser registers again; refused by the endpoint guard: `inactive` — Herald's decision, so neither a campaign
 * nor a re-registration of the same endpoint offers it again. An address: `unreachable` (or `opted_out`) on its channel
 * (`recordAddressStates`), for every subscriber carrying it and no other channel (a subscriber's push status is its
 * device's, never an address's).
 */
export async function deactivateDeadRecipients(db: Db, dead: DeadRecipients): Promise<void> {
  const { gone, refused } = dead.devices;
  const ids = [...gone, ...refused];
  if (ids.length > 0) {
    await db.execute(sql`
      UPDATE subscribers
      SET status = CASE WHEN id = ANY(${sql.param([...refused])}) THEN 'inactive'::subscriber_status ELSE 'unsubscribed'::subscriber_status END,
          status_reason = CASE WHEN id = ANY(${sql.param([...refused])}) THEN 'push_endpoint_refused' ELSE 'push_subscription_gone' END,
          updated_at = now()
      WHERE id = ANY(${sql.param(ids)}) AND status = 'active'`);
  }
  await recordAddressStates(db, dead.addresses);
}
