// What an email campaign's message did, read from its deliveries and the events log (`delivery_events`, located by
// `delivery_events_message_idx`): the chart's counts per time bucket, the clicked links, and each recipient's outcome.
// The campaign is found within the caller's reach; every later read names its project and message.
import { and, eq, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/database.js';
import { campaigns, type DeliveryEvent } from '../../db/schema.js';
import type { Reach } from '../tenancy.js';
import { visibleTo } from './campaign.repository.js';

/** A campaign as its analytics need it: where its events are, and when it started. */
export interface AnalyticsCampaign {
  id: string;
  projectId: string;
  /** Null until the campaign is dispatched: nothing was sent, nothing is logged. */
  messageId: string | null;
  sentAt: Date | null;
  createdAt: Date;
}

/** A campaign of `channel` the caller reaches (a push campaign's chart reads the same log as an email campaign's). */
export async function findCampaignOf(db: Db, reach: Reach, channel: 'email' | 'push', id: string): Promise<AnalyticsCampaign | undefined> {
  const [row] = await db
    .select({ id: campaigns.id, projectId: campaigns.projectId, messageId: campaigns.messageId, sentAt: campaigns.sentAt, createdAt: campaigns.createdAt })
    .from(campaigns)
    .where(and(visibleTo(db, reach, channel), eq(campaigns.id, id)));
  return row;
}

/** A campaign's message, within its project. */
export interface MessageOf {
  projectId: string;
  messageId: string;
}

/** [from, to) cut into buckets of `seconds`, aligned on BUCKET_ORIGIN. */
export interface BucketWindow {
  from: Date;
  to: Date;
  seconds: number;
}

/** Buckets start at whole multiples of their size after this instant: midnights UTC, and Mondays for weeks. */
export const BUCKET_ORIGIN = new Date('2000-01-03T00:00:00Z');

// Raw queries get timestamps as PostgreSQL's text (Drizzle's parsers): they are read as milliseconds since the epoch.
const epochMs = (instant: SQL) => sql`(extract(epoch FROM ${instant}) * 1000)::float8`;

const bucketOf = (instant: SQL, window: BucketWindow) =>
  epochMs(sql`date_bin(make_interval(secs => ${window.seconds}), ${instant}, ${BUCKET_ORIGIN.toISOString()}::timestamptz)`);

/** Events of one type in one bucket: every row, and the rows that are a delivery's first of the type. */
export type EventBucket = {
  start: number;
  type: DeliveryEvent;
  all: number;
  unique: number;
};

export async function eventBuckets(db: Db, message: MessageOf, window: BucketWindow): Promise<EventBucket[]> {
  const { rows } = await db.execute<EventBucket>(sql`
    SELECT ${bucketOf(sql`occurred_at`, window)} AS start, type, count(*)::int AS "all", (count(*) FILTER (WHERE NOT repeat))::int AS "unique"
    FROM delivery_events
    WHERE message_id = ${message.messageId} AND project_id = ${message.projectId}
      AND occurred_at >= ${window.from.toISOString()}::timestamptz AND occurred_at < ${window.to.toISOString()}::timestamptz
    GROUP BY 1, 2`);
  return rows;
}

/** Deliveries whose first open (click) without machine signals falls in a bucket. */
export type HumanBucket = {
  start: number;
  type: 'opened' | 'clicked';
  human: number;
};

/**
 * A delivery is opened (clicked) by a person at its first such event without `detail.machine`, repeat or not: a
 * person's open after Apple's proxy counts at the person's. Counted in the bucket of that first event only, so the
 * buckets sum to the distinct human openers (clickers) of the window.
 */
export async function humanBuckets(db: Db, message: MessageOf, window: BucketWindow): Promise<HumanBucket[]> {
  const { rows } = await db.execute<HumanBucket>(sql`
    SELECT ${bucketOf(sql`first_at`, window)} AS start, type, count(*)::int AS human
    FROM (
      SELECT type, min(occurred_at) AS first_at FROM delivery_events
      WHERE message_id = ${message.messageId} AND project_id = ${message.projectId} AND type IN ('opened', 'clicked')
        AND detail -> 'machine' IS NULL AND occurred_at < ${window.to.toISOString()}::timestamptz
      GROUP BY delivery_id, type
    ) firsts
    WHERE first_at >= ${window.from.toISOString()}::timestamptz
    GROUP BY 1, 2`);
  return rows;
}

/** Deliveries the provider accepted in each bucket (the log has no send event: a delivery's `sent_at` is it). */
export async function sentBuckets(db: Db, message: MessageOf, window: BucketWindow): Promise<{ start: number; sent: number }[]> {
  const { rows } = await db.execute<{ start: number; sent: number }>(sql`
    SELECT ${bucketOf(sql`sent_at`, window)} AS start, count(*)::int AS sent
    FROM deliveries
    WHERE message_id = ${message.messageId} AND project_id = ${message.projectId}
      AND sent_at >= ${window.from.toISOString()}::timestamptz AND sent_at < ${window.to.toISOString()}::timestamptz
    GROUP BY 1`);
  return rows;
}

export type ClickedLink = {
  url: string;
  clicks: number;
  uniqueClickers: number;
  humanClickers: number;
};

/**
 * The message's clicked links, most clicked by distinct deliveries first. Herald's click events name their target
 * `detail.url`, SES's `detail.link`.
 */
export async function topLinks(db: Db, message: MessageOf, limit: number): Promise<ClickedLink[]> {
  const { rows } = await db.execute<ClickedLink>(sql`
    SELECT url, count(*)::int AS clicks, count(DISTINCT delivery_id)::int AS "uniqueClickers",
      (count(DISTINCT delivery_id) FILTER (WHERE human))::int AS "humanClickers"
    FROM (
      SELECT coalesce(detail ->> 'url', detail ->> 'link') AS url, delivery_id, detail -> 'machine' IS NULL AS human
      FROM delivery_events
      WHERE message_id = ${message.messageId} AND project_id = ${message.projectId} AND type = 'clicked'
    ) clicks
    WHERE url IS NOT NULL
    GROUP BY url
    ORDER BY 3 DESC, 2 DESC, url
    LIMIT ${limit}`);
  return rows;
}

/** One recipient's outcome: its delivery, and what the log holds of it. */
export type RecipientOutcome = {
  subscriberId: string;
  address: string | null;
  status: string;
  reason: string | null;
  sentAt: Date | null;
  deliveredAt: Date | null;
  openedAt: Date | null;
  clickedAt: Date | null;
  bounced: boolean;
  complained: boolean;
  unsubscribed: boolean;
  opens: number;
  clicks: number;
  humanOpened: boolean;
  humanClicked: boolean;
};

type Stamp = 'sentAt' | 'deliveredAt' | 'openedAt' | 'clickedAt';

/**
 * A keyset page of the message's recipients in subscriber id order — the order of `deliveries_message_subscriber_key`,
 * so each page is one index range however the message's rows lie in the table — each with its events aggregated
 * (`delivery_events_source_key` leads with the delivery).
 */
export async function recipientPage(db: Db, message: MessageOf, after: string | undefined, limit: number): Promise<RecipientOutcome[]> {
  const { rows } = await db.execute<Omit<RecipientOutcome, Stamp> & Record<Stamp, number | null>>(sql`
    SELECT d.subscriber_id AS "subscriberId", d.destination AS address, d.status, d.reason,
      ${epochMs(sql`d.sent_at`)} AS "sentAt", ${epochMs(sql`d.delivered_at`)} AS "deliveredAt",
      ${epochMs(sql`d.opened_at`)} AS "openedAt", ${epochMs(sql`d.clicked_at`)} AS "clickedAt",
      e.bounced, e.complained, e.unsubscribed, e.opens, e.clicks, e.human_opened AS "humanOpened", e.human_clicked AS "humanClicked"
    FROM deliveries d
    CROSS JOIN LATERAL (
      SELECT
        coalesce(bool_or(type = 'bounced'), false) AS bounced,
        coalesce(bool_or(type = 'complained'), false) AS complained,
        coalesce(bool_or(type = 'unsubscribed'), false) AS unsubscribed,
        (count(*) FILTER (WHERE type = 'opened'))::int AS opens,
        (count(*) FILTER (WHERE type = 'clicked'))::int AS clicks,
        coalesce(bool_or(type = 'opened' AND detail -> 'machine' IS NULL), false) AS human_opened,
        coalesce(bool_or(type = 'clicked' AND detail -> 'machine' IS NULL), false) AS human_clicked
      FROM delivery_events WHERE delivery_id = d.id
    ) e
    WHERE d.message_id = ${message.messageId} AND d.project_id = ${message.projectId}
      ${after === undefined ? sql`` : sql`AND d.subscriber_id > ${after}`}
    ORDER BY d.subscriber_id
    LIMIT ${limit}`);
  const date = (ms: number | null) => (ms === null ? null : new Date(ms));
  return rows.map((row) => ({
    ...row,
    sentAt: date(row.sentAt),
    deliveredAt: date(row.deliveredAt),
    openedAt: date(row.openedAt),
    clickedAt: date(row.clickedAt),
  }));
}
