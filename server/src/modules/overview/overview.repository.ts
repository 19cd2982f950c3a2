// The overview's figures: one statement per family (growth, sends, engagement, set-up state, recent work), each bounded
// by the window and read from the project's own indexes; every function takes the project explicitly.
import { sql } from 'drizzle-orm';
import type { Db } from '../../db/database.js';

const utcDay = (column: ReturnType<typeof sql.raw>) => sql`to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD')`;

/**
 * Live subscribers registered per UTC day since `from` (days without any are absent): from
 * `subscribers_project_subscribed_idx` alone, grouped by date and only the few days formatted.
 */
export async function growthPerDay(db: Db, projectId: string, from: Date): Promise<{ day: string; subscribed: number }[]> {
  const { rows } = await db.execute<{ day: string; subscribed: number }>(sql`
    SELECT to_char(day, 'YYYY-MM-DD') AS day, subscribed::int AS subscribed
    FROM (
      SELECT (subscribed_at AT TIME ZONE 'UTC')::date AS day, count(*) AS subscribed
      FROM subscribers
      WHERE project_id = ${projectId} AND subscribed_at >= ${from} AND NOT sandbox
      GROUP BY 1
    ) g`);
  return rows;
}

/**
 * Deliveries the providers accepted per UTC day and channel since `from`, live messages only: from
 * `deliveries_project_sent_idx` alone, sandbox messages (a partial index of their own) left out by a hashed anti-join.
 */
export async function sendsPerDay(db: Db, projectId: string, from: Date): Promise<{ day: string; channel: string; sent: number }[]> {
  const { rows } = await db.execute<{ day: string; channel: string; sent: number }>(sql`
    SELECT ${utcDay(sql.raw('d.sent_at'))} AS day, d.channel::text AS channel, count(*)::int AS sent
    FROM deliveries d
    WHERE d.project_id = ${projectId} AND d.sent_at >= ${from} AND d.sent_at IS NOT NULL
      AND d.message_id NOT IN (SELECT m.id FROM messages m WHERE m.project_id = ${projectId} AND m.sandbox)
    GROUP BY 1, 2`);
  return rows;
}

/**
 * First events of each type (never a `repeat`) of live email and push deliveries since `from`, counted per message
 * from `delivery_events_project_idx` before the few messages are joined for their channel and environment.
 */
export async function engagement(db: Db, projectId: string, from: Date): Promise<{ channel: 'email' | 'push'; type: string; total: number }[]> {
  const { rows } = await db.execute<{ channel: 'email' | 'push'; type: string; total: number }>(sql`
    SELECT m.channel::text AS channel, e.type::text AS type, sum(e.n)::int AS total
    FROM (
      SELECT message_id, type, count(*) AS n
      FROM delivery_events
      WHERE project_id = ${projectId} AND occurred_at >= ${from} AND NOT repeat
        AND type IN ('delivered', 'opened', 'clicked', 'bounced', 'complained')
      GROUP BY message_id, type
    ) e
    JOIN messages m ON m.id = e.message_id AND NOT m.sandbox AND m.channel IN ('email', 'push')
    GROUP BY 1, 2`);
  return rows;
}

/** What the health warnings and the getting-started checklist are read from. */
export interface ProjectState {
  vapidSubject: string | null;
  emailProvider: boolean;
  anyProvider: boolean;
  domains: number;
  verifiedDomains: number;
  failingDomains: number;
  emailCampaigns: boolean;
  campaignSent: boolean;
  pushSubscriber: boolean;
  anySubscriber: boolean;
}

/** The project's set-up in one statement: each part an index probe (`EXISTS` stops at the first row). */
export async function projectState(db: Db, projectId: string): Promise<ProjectState> {
  const { rows } = await db.execute<{
    vapid_subject: string | null;
    email_provider: boolean;
    any_provider: boolean;
    domains: number;
    verified_domains: number;
    failing_domains: number;
    email_campaigns: boolean;
    campaign_sent: boolean;
    push_subscriber: boolean;
    any_subscriber: boolean;
  }>(sql`
    SELECT
      (SELECT p.settings->>'vapidSubject' FROM projects p WHERE p.id = ${projectId}) AS vapid_subject,
      EXISTS (SELECT 1 FROM channel_configs c WHERE c.project_id = ${projectId} AND c.channel = 'email' AND c.provider <> 'none') AS email_provider,
      EXISTS (SELECT 1 FROM channel_configs c WHERE c.project_id = ${projectId} AND c.channel <> 'push' AND c.provider <> 'none') AS any_provider,
      (SELECT count(*)::int FROM email_domains d WHERE d.project_id = ${projectId}) AS domains,
      (SELECT count(*)::int FROM email_domains d WHERE d.project_id = ${projectId} AND d.status = 'verified') AS verified_domains,
      (SELECT count(*)::int FROM email_domains d WHERE d.project_id = ${projectId} AND d.status = 'failing') AS failing_domains,
      EXISTS (SELECT 1 FROM campaigns c WHERE c.project_id = ${projectId} AND c.channel = 'email' AND NOT c.sandbox) AS email_campaigns,
      EXISTS (SELECT 1 FROM campaigns c WHERE c.project_id = ${projectId} AND c.sent_at IS NOT NULL AND NOT c.sandbox) AS campaign_sent,
      EXISTS (SELECT 1 FROM subscribers s WHERE s.project_id = ${projectId} AND s.endpoint IS NOT NULL AND NOT s.sandbox) AS push_subscriber,
      EXISTS (SELECT 1 FROM subscribers s WHERE s.project_id = ${projectId} AND NOT s.sandbox) AS any_subscriber`);
  const row = rows[0]!;
  return {
    vapidSubject: row.vapid_subject,
    emailProvider: row.email_provider,
    anyProvider: row.any_provider,
    domains: row.domains,
    verifiedDomains: row.verified_domains,
    failingDomains: row.failing_domains,
    emailCampaigns: row.email_campaigns,
    campaignSent: row.campaign_sent,
    pushSubscriber: row.push_subscriber,
    anySubscriber: row.any_subscriber,
  };
}

export interface RecentItem {
  kind: 'campaign' | 'automation';
  id: string;
  channel: 'push' | 'email' | null;
  name: string;
  status: string;
  at: Date;
}

/**
 * The newest live campaigns (push and email) and automations, `limit` of each, archived ones left out: each half
 * read newest first from its project index.
 */
export async function recentWork(db: Db, projectId: string, limit: number): Promise<RecentItem[]> {
  const { rows } = await db.execute<{ kind: 'campaign' | 'automation'; id: string; channel: 'push' | 'email' | null; name: string; status: string; at: Date | string }>(sql`
    (SELECT 'campaign' AS kind, c.id, c.channel, c.name, c.status::text AS status, coalesce(c.sent_at, c.send_at, c.created_at) AS at
     FROM campaigns c
     WHERE c.project_id = ${projectId} AND NOT c.sandbox AND c.status <> 'archived'
     ORDER BY c.created_at DESC, c.id DESC LIMIT ${limit})
    UNION ALL
    (SELECT 'automation' AS kind, a.id, NULL AS channel, a.name, a.state AS status, a.updated_at AS at
     FROM automations a
     WHERE a.project_id = ${projectId} AND NOT a.sandbox AND a.state <> 'archived'
     ORDER BY a.created_at DESC, a.id DESC LIMIT ${limit})`);
  return rows.map((row) => ({ ...row, at: new Date(row.at) }));
}
