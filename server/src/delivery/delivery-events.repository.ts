// What happened to sent deliveries — device reports, tracking links, provider callbacks — recorded in one place: the
// events log (every open and click, each other event once, no replay twice), and the delivery's state and timestamps
// and its message's counters, moved exactly once.
import { sql, type SQL } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { REPEATABLE_EVENTS, type Channel, type DeliveryEvent } from '../db/schema.js';
import type { ProviderEvent } from './channel.js';

export interface ReportedEvent {
  deliveryId: number;
  type: DeliveryEvent;
  occurredAt: Date;
  /** What the reporter said, summarised (a bounce code, a clicked URL, why it looks like a machine …). */
  detail?: Record<string, unknown> | undefined;
  /**
   * The report is an occurrence of its own — a pixel fetched, a link followed, a provider's event — not a retry of an
   * earlier one: an open or click the delivery already had is logged again, as a repeat. Unset, a report the delivery
   * already had adds nothing (a device's report, which the SDK retries).
   */
  logRepeat?: boolean | undefined;
  /** The reporter's id of the event (an SNS message id, a provider's event id): logged once per delivery and type. */
  sourceEventId?: string | undefined;
}

/** The post-send states, least advanced first: an event moves a delivery forward only. */
const PROGRESS = ['sent', 'delivered', 'opened', 'dismissed', 'clicked', 'unsubscribed', 'complained', 'bounced', 'failed'];
const progress = sql.raw(`ARRAY[${PROGRESS.map((s) => `'${s}'`).join(', ')}]`);
const repeatable = sql.raw(REPEATABLE_EVENTS.map((type) => `'${type}'`).join(', '));
// The delivery takes a first `failed` event's reason, code and words: its status moves to `failed` in this statement
// (the furthest event a first logging brought), or it is still `sending` — the provider's callback came before its
// answer to the send was recorded, and recording the send keeps them (recordOutcomes).
const takesFailure = sql`(coalesce(array_position(${progress}, d.status::text), 0) > 0 AND f.furthest > array_position(${progress}, d.status::text)
  AND (${progress})[f.furthest] = 'failed') OR (d.status = 'sending' AND f.failed_at IS NOT NULL)`;

/**
 * Records events in one statement. Every event but a bounce (hard or soft) or a failure implies `delivered`. A delivery's first event
 * of each type is logged as such in `delivery_events` — the unique key of first events decides, under concurrency too —
 * and only a first logging moves the rest: the timestamp (`delivered_at`, `opened_at`, `clicked_at`, `dismissed_at`),
 * the status — forward only, and only from a post-send state: a row still `sending` gets its timestamps, and recording
 * the send promotes it from them — and the message's counter. A first `failed` event that moves the status (or comes
 * while the delivery is still `sending`) also sets the delivery's `reason`, `provider_code` and `provider_error` from
 * its detail (`reason`, `providerCode`, `message`). A later open or click reported with `logRepeat` is
 * logged as a repeat, moving nothing; anything else the delivery already had, and any event whose `sourceEventId` is
 * logged, adds nothing. Returns the ids of the deliveries that exist.
 */
export async function recordDeliveryEvents(db: Db, events: readonly ReportedEvent[]): Promise<Set<number>> {
  if (events.length === 0) return new Set();
  const column = <T>(pick: (e: ReportedEvent) => T) => sql.param(events.map(pick));
  const { rows } = await db.execute<{ id: number }>(sql`
    WITH reported AS (
      -- A batch naming one provider event twice logs it once.
      SELECT DISTINCT ON (delivery_id, type, source_event_id, CASE WHEN source_event_id IS NULL THEN n END) * FROM unnest(
        ${column((e) => e.deliveryId)}::bigint[], ${column((e) => e.type)}::delivery_event[],
        ${column((e) => e.occurredAt.toISOString())}::timestamptz[], ${column((e) => (e.detail ? JSON.stringify(e.detail) : null))}::jsonb[],
        ${column((e) => e.logRepeat ?? false)}::boolean[], ${column((e) => e.sourceEventId ?? null)}::text[]
      ) WITH ORDINALITY AS r(delivery_id, type, occurred_at, detail, log_repeat, source_event_id, n)
      ORDER BY delivery_id, type, source_event_id, CASE WHEN source_event_id IS NULL THEN n END, occurred_at
    ), implied AS (
      SELECT delivery_id, type, occurred_at, detail, log_repeat, source_event_id, n FROM reported
      UNION ALL
      SELECT delivery_id, 'delivered'::delivery_event, occurred_at, NULL, false, NULL, n FROM reported WHERE type NOT IN ('delivered', 'bounced', 'soft_bounced', 'failed')
    ), candidates AS (
      SELECT DISTINCT ON (i.delivery_id, i.type) i.delivery_id, d.project_id, d.message_id, i.type, i.occurred_at, i.detail, i.source_event_id, i.n
      FROM implied i JOIN deliveries d ON d.id = i.delivery_id
      ORDER BY i.delivery_id, i.type, i.occurred_at
    ), logged AS (
      INSERT INTO delivery_events (delivery_id, project_id, message_id, type, occurred_at, detail, source_event_id)
      SELECT delivery_id, project_id, message_id, type, occurred_at, detail, source_event_id FROM candidates
      ON CONFLICT DO NOTHING
      RETURNING delivery_id, type, occurred_at, detail
    ), repeated AS (
      INSERT INTO delivery_events (delivery_id, project_id, message_id, type, occurred_at, detail, source_event_id, repeat)
      SELECT i.delivery_id, d.project_id, d.message_id, i.type, i.occurred_at, i.detail, i.source_event_id, true
      FROM implied i JOIN deliveries d ON d.id = i.delivery_id
      WHERE i.log_repeat AND i.type IN (${repeatable})
        AND NOT EXISTS (SELECT FROM candidates c JOIN logged l USING (delivery_id, type) WHERE c.n = i.n AND c.type = i.type)
      ON CONFLICT DO NOTHING
    ), firsts AS (
      SELECT delivery_id,
        min(occurred_at) FILTER (WHERE type = 'delivered') AS delivered_at,
        min(occurred_at) FILTER (WHERE type = 'opened') AS opened_at,
        min(occurred_at) FILTER (WHERE type = 'clicked') AS clicked_at,
        min(occurred_at) FILTER (WHERE type = 'dismissed') AS dismissed_at,
        min(occurred_at) FILTER (WHERE type = 'failed') AS failed_at,
        (array_agg(detail) FILTER (WHERE type = 'failed'))[1] AS failed_detail,
        max(array_position(${progress}, type::text)) AS furthest,
        array_agg(type) AS types
      FROM logged GROUP BY delivery_id
    ), changed AS (
      UPDATE deliveries d SET
        delivered_at = coalesce(d.delivered_at, f.delivered_at),
        opened_at = coalesce(d.opened_at, f.opened_at),
        clicked_at = coalesce(d.clicked_at, f.clicked_at),
        dismissed_at = coalesce(d.dismissed_at, f.dismissed_at),
        failed_at = coalesce(d.failed_at, f.failed_at),
        reason = CASE WHEN ${takesFailure} THEN f.failed_detail ->> 'reason' ELSE d.reason END,
        provider_code = CASE WHEN ${takesFailure} THEN f.failed_detail ->> 'providerCode' ELSE d.provider_code END,
        provider_error = CASE WHEN ${takesFailure} THEN f.failed_detail ->> 'message' ELSE d.provider_error END,
        status = (CASE
          WHEN coalesce(array_position(${progress}, d.status::text), 0) = 0 THEN d.status::text
          WHEN f.furthest > array_position(${progress}, d.status::text) THEN (${progress})[f.furthest]
          ELSE d.status::text END)::delivery_status,
        updated_at = now()
      FROM firsts f
      WHERE d.id = f.delivery_id
      RETURNING d.message_id, f.types
    ), tallied AS (
      SELECT message_id,
        count(*) FILTER (WHERE 'delivered' = ANY(types))::int AS delivered,
        count(*) FILTER (WHERE 'opened' = ANY(types))::int AS opened,
        count(*) FILTER (WHERE 'clicked' = ANY(types))::int AS clicked,
        count(*) FILTER (WHERE 'dismissed' = ANY(types))::int AS dismissed,
        count(*) FILTER (WHERE 'unsubscribed' = ANY(types))::int AS unsubscribed,
        count(*) FILTER (WHERE 'complained' = ANY(types))::int AS complained,
        count(*) FILTER (WHERE 'bounced' = ANY(types))::int AS bounced,
        count(*) FILTER (WHERE 'failed' = ANY(types))::int AS failed
      FROM changed GROUP BY message_id
    ), locked AS (
      -- Counter rows are locked in one order, so concurrent recorders of the same messages never deadlock.
      SELECT message_id FROM message_stats WHERE message_id IN (SELECT message_id FROM tallied) ORDER BY message_id FOR UPDATE
    ), counted AS (
      UPDATE message_stats ms SET
        delivered = ms.delivered + t.delivered, opened = ms.opened + t.opened, clicked = ms.clicked + t.clicked,
        dismissed = ms.dismissed + t.dismissed, unsubscribed = ms.unsubscribed + t.unsubscribed,
        complained = ms.complained + t.complained, bounced = ms.bounced + t.bounced, failed = ms.failed + t.failed, updated_at = now()
      FROM tallied t JOIN locked USING (message_id)
      WHERE ms.message_id = t.message_id
    )
    SELECT id::float8 AS id FROM deliveries WHERE id = ANY(${column((e) => e.deliveryId)}::bigint[])`);
  return new Set(rows.map((r) => r.id));
}

/**
 * Records what a provider's callback reported (events its channel's webhook verified and read) through
 * recordDeliveryEvents: each event an occurrence of its own, identified by the provider's event id or, without one,
 * by its type and time. Deliveries are found within the project and channel the callback came for: by the delivery
 * id Herald named in the callback's URL, else by the provider's message id. Returns how many events named a delivery
 * (`applied`: a replay is applied again and changes nothing), how many named none (`unknown`), and each event with
 * its delivery (`matched`).
 */
export async function applyProviderEvents(
  db: Db,
  scope: { projectId: string; channel: Channel },
  events: readonly ProviderEvent[],
): Promise<{ applied: number; unknown: number; matched: { event: ProviderEvent; delivery: NamedDelivery }[] }> {
  if (events.length === 0) return { applied: 0, unknown: 0, matched: [] };
  const named = await namedDeliveries(
    db,
    sql`(d.provider_message_id = ANY(${sql.param([...new Set(events.map((e) => e.providerMessageId))])}::text[])
      OR d.id = ANY(${sql.param(events.flatMap((e) => (e.deliveryId === undefined ? [] : [e.deliveryId])))}::bigint[]))
      AND d.project_id = ${scope.projectId} AND d.channel = ${scope.channel}`,
  );
  const byId = new Map(named.map((d) => [d.id, d]));
  const byProviderId = new Map(named.flatMap((d) => (d.providerMessageId === null ? [] : [[d.providerMessageId, d] as const])));
  const matched = events.flatMap((event) => {
    const delivery = event.deliveryId === undefined ? byProviderId.get(event.providerMessageId) : byId.get(event.deliveryId);
    return delivery ? [{ event, delivery }] : [];
  });
  await recordDeliveryEvents(
    db,
    matched.map(({ event, delivery }) => ({
      deliveryId: delivery.id,
      type: event.type,
      occurredAt: event.occurredAt,
      detail: event.detail,
      logRepeat: true,
      sourceEventId: event.eventId ?? `${event.type}@${event.occurredAt.toISOString()}`,
    })),
  );
  return { applied: matched.length, unknown: events.length - matched.length, matched };
}

/** A delivery a provider's report names (by its message id, or by a VERP token), with what its address state needs. */
export interface NamedDelivery {
  id: number;
  projectId: string;
  sandbox: boolean;
  destination: string | null;
  providerMessageId: string | null;
}

async function namedDeliveries(db: Db, where: SQL): Promise<NamedDelivery[]> {
  const { rows } = await db.execute<{ id: number; project_id: string; sandbox: boolean; destination: string | null; provider_message_id: string | null }>(sql`
    SELECT d.id::float8 AS id, d.project_id, s.sandbox, d.destination, d.provider_message_id
    FROM deliveries d JOIN subscribers s ON s.id = d.subscriber_id WHERE ${where}`);
  return rows.map((r) => ({ id: r.id, projectId: r.project_id, sandbox: r.sandbox, destination: r.destination, providerMessageId: r.provider_message_id }));
}

/**
 * The deliveries of `channel` these provider message ids name, in any project: for callbacks verified at the
 * instance (an SNS topic of Herald's own), whose provider's message ids are unique to it. A project-scoped callback
 * uses `applyProviderEvents`.
 */
export async function findDeliveriesByProviderIds(db: Db, channel: Channel, providerMessageIds: readonly string[]): Promise<NamedDelivery[]> {
  if (providerMessageIds.length === 0) return [];
  return namedDeliveries(db, sql`d.provider_message_id = ANY(${sql.param([...new Set(providerMessageIds)])}::text[]) AND d.channel = ${channel}`);
}

/** The delivery a signed token names (a DSN's VERP address): the token's signature is the authority. */
export async function findNamedDelivery(db: Db, deliveryId: number): Promise<NamedDelivery | undefined> {
  return (await namedDeliveries(db, sql`d.id = ${deliveryId}`))[0];
}

/** Soft bounces logged for deliveries to `address` on `channel` in the project and environment since `since`. */
export async function countSoftBounces(db: Db, key: { projectId: string; sandbox: boolean; channel: Channel; address: string }, since: Date): Promise<number> {
  const { rows } = await db.execute<{ bounces: number }>(sql`
    SELECT count(*)::int AS bounces
    FROM deliveries d JOIN delivery_events e ON e.delivery_id = d.id AND e.type = 'soft_bounced'
    JOIN subscribers s ON s.id = d.subscriber_id
    WHERE d.destination = ${key.address} AND d.project_id = ${key.projectId} AND d.channel = ${key.channel} AND s.sandbox = ${key.sandbox}
      AND e.occurred_at > ${since.toISOString()}::timestamptz`);
  return rows[0]?.bounces ?? 0;
}

/**
 * The email delivery a signed tracking link names: its message — or its campaign, whose message it resolves to — and
 * its subscriber. The link's signature is the authority (the route is public), as a tracking token is for push.
 */
export async function findLinkedDelivery(db: Db, linked: { id: string; subscriberId: string }): Promise<{ id: number; projectId: string } | undefined> {
  const { rows } = await db.execute<{ id: number; project_id: string }>(sql`
    SELECT d.id::float8 AS id, d.project_id FROM messages m JOIN deliveries d ON d.message_id = m.id AND d.subscriber_id = ${linked.subscriberId}
    WHERE (m.id = ${linked.id} OR m.campaign_id = ${linked.id}) AND m.channel = 'email'
    ORDER BY d.id LIMIT 1`);
  const row = rows[0];
  return row && { id: row.id, projectId: row.project_id };
}

/**
 * When the clicks of a delivery logged within [`since`, `until`] followed at least `links` distinct URLs, adds `signal`
 * to each of their `detail.machine` (once): a burst no person clicks, whose first click looked human when it came.
 * Run after the click is logged, so that of two concurrent clicks at least the later check sees both.
 */
export async function flagClickBurst(
  db: Db,
  projectId: string,
  deliveryId: number,
  window: { since: Date; until: Date; links: number; signal: string },
): Promise<void> {
  const signal = JSON.stringify([window.signal]);
  await db.execute(sql`
    WITH recent AS (
      SELECT id, detail FROM delivery_events
      WHERE project_id = ${projectId} AND delivery_id = ${deliveryId} AND type = 'clicked'
        AND occurred_at BETWEEN ${window.since.toISOString()}::timestamptz AND ${window.until.toISOString()}::timestamptz
    )
    UPDATE delivery_events e
    SET detail = jsonb_set(coalesce(e.detail, '{}'), '{machine}', coalesce(e.detail -> 'machine', '[]') || ${signal}::jsonb)
    FROM recent r
    WHERE e.id = r.id AND (SELECT count(DISTINCT detail ->> 'url') FROM recent) >= ${window.links}
      AND NOT coalesce(e.detail -> 'machine', '[]') @> ${signal}::jsonb`);
}
