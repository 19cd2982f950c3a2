// The monthly email cap of an organization's plan, held in one conditional upsert per reservation: however many
// workers and API processes reserve at once, the month's counter never passes the cap.
import { sql } from 'drizzle-orm';
import type { Db } from '../db/database.js';

export interface QuotaGrant {
  /** How many of the emails asked for may go. */
  granted: number;
  /** The organization's cap, null for none. */
  cap: number | null;
}

const monthOf = (now: Date) => `${now.toISOString().slice(0, 7)}-01`;

/**
 * Reserves `emails` sends of the project's organization for the calendar month (UTC) of `now`: all of them under the
 * cap, as many as fit when it is nearly reached, none once it is. One statement: the counter row is locked by the
 * upsert and every expression of its SET reads the row as it was, so `last_granted` and `sent` move together.
 */
export async function reserveEmailQuota(db: Db, projectId: string, emails: number, now: Date): Promise<QuotaGrant> {
  if (emails <= 0) return { granted: 0, cap: null };
  const { rows } = await db.execute<{ granted: number; cap: number | null }>(sql`
    WITH org AS (
      SELECT o.id, o.monthly_email_cap AS cap FROM organizations o JOIN projects p ON p.organization_id = o.id WHERE p.id = ${projectId}
    )
    INSERT INTO email_usage AS u (organization_id, month, sent, last_granted)
    SELECT id, ${monthOf(now)}::date, least(${emails}, coalesce(cap, ${emails})), least(${emails}, coalesce(cap, ${emails})) FROM org
    ON CONFLICT (organization_id, month) DO UPDATE SET
      last_granted = least(${emails}, greatest(0, coalesce((SELECT cap FROM org), u.sent + ${emails}) - u.sent)),
      sent = u.sent + least(${emails}, greatest(0, coalesce((SELECT cap FROM org), u.sent + ${emails}) - u.sent))
    RETURNING u.last_granted AS granted, (SELECT cap FROM org) AS cap`);
  return rows[0] ?? { granted: 0, cap: null };
}

/** Gives back reserved sends that did not go (the provider refused them), so a retry or another email may use them. */
export async function refundEmailQuota(db: Db, projectId: string, emails: number, now: Date): Promise<void> {
  if (emails <= 0) return;
  await db.execute(sql`
    UPDATE email_usage SET sent = greatest(0, sent - ${emails})
    WHERE month = ${monthOf(now)}::date AND organization_id = (SELECT organization_id FROM projects WHERE id = ${projectId})`);
}

/** An organization's sends this month and its cap. */
export async function emailUsage(db: Db, organizationId: string, now: Date): Promise<{ sent: number; cap: number | null; plan: string }> {
  const { rows } = await db.execute<{ sent: number; cap: number | null; plan: string }>(sql`
    SELECT coalesce(u.sent, 0)::int AS sent, o.monthly_email_cap AS cap, o.plan FROM organizations o
    LEFT JOIN email_usage u ON u.organization_id = o.id AND u.month = ${monthOf(now)}::date
    WHERE o.id = ${organizationId}`);
  return rows[0] ?? { sent: 0, cap: null, plan: 'self-hosted' };
}
