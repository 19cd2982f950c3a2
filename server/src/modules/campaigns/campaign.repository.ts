// Campaign rows and their counters. Calls are confined to the caller's project(s) (a test key sees sandbox campaigns
// only) and to one channel's campaigns; the dispatcher and the sweep, like the delivery engine, act on the campaign a
// job or a message names.
import { and, asc, count, desc, eq, gte, inArray, lt, lte, ne, or, sql, type SQL } from 'drizzle-orm';
import type { SelectedFields } from 'drizzle-orm/pg-core';
import type { Db } from '../../db/database.js';
import { isForeignKeyViolation } from '../../db/pg-errors.js';
import { campaigns, messages, messageStats, projects, type CAMPAIGN_STATUSES, type CampaignChannel, type SendingIssue } from '../../db/schema.js';
import { reachableRows } from '../../db/tenant-scope.js';
import type { ProjectScope, Reach } from '../tenancy.js';

export type CampaignRow = typeof campaigns.$inferSelect;
export type NewCampaignRow = typeof campaigns.$inferInsert;
export type CampaignStatus = (typeof CAMPAIGN_STATUSES)[number];

/** The counters of a campaign's message (zero before it is dispatched). */
export interface Counters {
  sent: number;
  delivered: number;
  opened: number;
  clicked: number;
  dismissed: number;
  unsubscribed: number;
  complained: number;
  bounced: number;
  failed: number;
  suppressed: number;
}

/** A campaign with its message's counters and sending issue (none before it is dispatched). */
export type CampaignWithCounters = CampaignRow & { counters: Counters; sendingIssue: SendingIssue | null };

/** The campaigns of one channel a caller may reach. */
export const visibleTo = (db: Db, reach: Reach, channel: CampaignChannel): SQL => and(reachableRows(db, reach, campaigns), eq(campaigns.channel, channel))!;

const counterColumns = {
  sent: messageStats.sent,
  delivered: messageStats.delivered,
  opened: messageStats.opened,
  clicked: messageStats.clicked,
  dismissed: messageStats.dismissed,
  unsubscribed: messageStats.unsubscribed,
  complained: messageStats.complained,
  bounced: messageStats.bounced,
  failed: messageStats.failed,
  suppressed: messageStats.suppressed,
};

function selectWithCounters<Extra extends SelectedFields>(db: Db, extra: Extra = {} as Extra) {
  return db
    .select({ campaign: campaigns, counters: counterColumns, sendingIssue: messages.sendingIssue, ...extra })
    .from(campaigns)
    .leftJoin(messageStats, eq(messageStats.messageId, campaigns.messageId))
    .leftJoin(messages, eq(messages.id, campaigns.messageId));
}

const ZERO: Counters = { sent: 0, delivered: 0, opened: 0, clicked: 0, dismissed: 0, unsubscribed: 0, complained: 0, bounced: 0, failed: 0, suppressed: 0 };
const withCounters = (row: { campaign: CampaignRow; counters: Counters | null; sendingIssue: SendingIssue | null }): CampaignWithCounters => ({
  ...row.campaign,
  counters: row.counters ?? ZERO,
  sendingIssue: row.sendingIssue,
});

/** The saved segment a campaign was validated against was deleted before the campaign row referencing it was written. */
export class SavedSegmentGone extends Error {
  constructor() {
    super('the saved segment was deleted meanwhile');
  }
}

async function referencingSavedSegment<T>(write: Promise<T>): Promise<T> {
  try {
    return await write;
  } catch (error) {
    if (isForeignKeyViolation(error)) throw new SavedSegmentGone();
    throw error;
  }
}

export async function insertCampaign(db: Db, row: NewCampaignRow): Promise<CampaignRow> {
  const [inserted] = await referencingSavedSegment(db.insert(campaigns).values(row).returning());
  return inserted!;
}

export async function findCampaign(db: Db, reach: Reach, channel: CampaignChannel, id: string): Promise<CampaignWithCounters | undefined> {
  const [row] = await selectWithCounters(db).where(and(visibleTo(db, reach, channel), eq(campaigns.id, id)));
  return row && withCounters(row);
}

/** Campaigns created at or after `from` and before `before`. */
export interface CreatedRange {
  from?: Date | undefined;
  /** Exclusive: timestamps are finer than a millisecond. */
  before?: Date | undefined;
}

const createdWithin = (range: CreatedRange) =>
  and(range.from && gte(campaigns.createdAt, range.from), range.before && lt(campaigns.createdAt, range.before));

interface ListFilters extends CreatedRange {
  status?: CampaignStatus | undefined;
  nameContains?: string | undefined;
}

function listWhere(db: Db, scope: ProjectScope, channel: CampaignChannel, filters: ListFilters): SQL {
  const like = filters.nameContains?.replace(/[\\%_]/g, (c) => `\\${c}`);
  return and(
    visibleTo(db, scope, channel),
    filters.status !== undefined ? eq(campaigns.status, filters.status) : ne(campaigns.status, 'archived'),
    createdWithin(filters),
    like !== undefined ? sql`${campaigns.name} ILIKE ${`%${like}%`}` : undefined,
  )!;
}

export async function listCampaigns(db: Db, scope: ProjectScope, channel: CampaignChannel, filters: ListFilters, limit: number, offset: number) {
  const where = listWhere(db, scope, channel, filters);
  const [rows, [total]] = await Promise.all([
    selectWithCounters(db).where(where).orderBy(desc(campaigns.createdAt), desc(campaigns.id)).limit(limit).offset(offset),
    db.select({ total: count() }).from(campaigns).where(where),
  ]);
  return { rows: rows.map(withCounters), total: total?.total ?? 0 };
}

/** Where a keyset page ended: created_at as PostgreSQL wrote it (microseconds, finer than a Date), and the id. */
export interface PageCursor {
  createdAt: string;
  id: string;
}

/** Keyset page (created_at, id) of every campaign of the project created within [from, before), archived ones included. */
export async function pageCampaigns(
  db: Db,
  scope: ProjectScope,
  channel: CampaignChannel,
  range: CreatedRange,
  after: PageCursor | undefined,
  limit: number,
): Promise<{ rows: CampaignWithCounters[]; cursor: PageCursor | undefined }> {
  const rows = await selectWithCounters(db, { exactCreatedAt: sql<string>`${campaigns.createdAt}::text` })
    .where(
      and(
        visibleTo(db, scope, channel),
        createdWithin(range),
        after && sql`(${campaigns.createdAt}, ${campaigns.id}) > (${after.createdAt}::timestamptz, ${after.id})`,
      ),
    )
    .orderBy(asc(campaigns.createdAt), asc(campaigns.id))
    .limit(limit);
  const last = rows[rows.length - 1];
  return { rows: rows.map(withCounters), cursor: last && { createdAt: last.exactCreatedAt, id: last.campaign.id } };
}

/** Status, audience size, counters and sending issue of a campaign, by id alone: for polls after access was checked. */
export async function progressOf(
  db: Db,
  id: string,
): Promise<Pick<CampaignWithCounters, 'status' | 'audienceSize' | 'counters' | 'sendingIssue'> | undefined> {
  const [row] = await db
    .select({ status: campaigns.status, audienceSize: campaigns.audienceSize, counters: counterColumns, sendingIssue: messages.sendingIssue })
    .from(campaigns)
    .leftJoin(messageStats, eq(messageStats.messageId, campaigns.messageId))
    .leftJoin(messages, eq(messages.id, campaigns.messageId))
    .where(eq(campaigns.id, id));
  return row && { ...row, counters: row.counters ?? ZERO };
}

/** Applies `change` only while the campaign is in one of `from` (the state machine's guard, under the row lock). */
export async function transition(
  db: Db,
  reach: Reach,
  channel: CampaignChannel,
  id: string,
  from: readonly CampaignStatus[],
  change: Partial<NewCampaignRow>,
): Promise<CampaignRow | undefined> {
  const [row] = await referencingSavedSegment(
    db
      .update(campaigns)
      .set({ ...change, updatedAt: sql`now()` })
      .where(and(visibleTo(db, reach, channel), eq(campaigns.id, id), inArray(campaigns.status, [...from])))
      .returning(),
  );
  return row;
}

/**
 * The same guard for the system's own transitions (a job, the engine's hooks), by project and id: `pauseReason`, when
 * given, must match too.
 */
export async function transitionOwn(
  db: Db,
  projectId: string,
  id: string,
  from: readonly CampaignStatus[],
  change: Partial<NewCampaignRow>,
  pauseReason?: NonNullable<CampaignRow['pauseReason']>,
): Promise<CampaignRow | undefined> {
  const [row] = await db
    .update(campaigns)
    .set({ ...change, updatedAt: sql`now()` })
    .where(
      and(
        eq(campaigns.projectId, projectId),
        eq(campaigns.id, id),
        inArray(campaigns.status, [...from]),
        pauseReason && eq(campaigns.pauseReason, pauseReason),
      ),
    )
    .returning();
  return row;
}

export async function deleteCampaign(db: Db, reach: Reach, channel: CampaignChannel, id: string, from: readonly CampaignStatus[]): Promise<boolean> {
  const deleted = await db
    .delete(campaigns)
    .where(and(visibleTo(db, reach, channel), eq(campaigns.id, id), inArray(campaigns.status, [...from])))
    .returning({ id: campaigns.id });
  return deleted.length > 0;
}

/**
 * The campaign a dispatch job names, locked for this transaction; undefined when it is gone or another dispatcher
 * holds it (that one does the work; if it dies, the sweep queues the job again).
 */
export async function lockForDispatch(
  db: Db,
  projectId: string,
  id: string,
): Promise<{ campaign: CampaignRow; organizationId: string } | undefined> {
  const [row] = await db
    .select({ campaign: campaigns, organizationId: projects.organizationId })
    .from(campaigns)
    .innerJoin(projects, eq(projects.id, campaigns.projectId))
    .where(and(eq(campaigns.projectId, projectId), eq(campaigns.id, id)))
    .for('update', { of: campaigns, skipLocked: true });
  return row;
}

export async function updateLocked(db: Db, projectId: string, id: string, change: Partial<NewCampaignRow>): Promise<void> {
  await db
    .update(campaigns)
    .set({ ...change, updatedAt: sql`now()` })
    .where(and(eq(campaigns.projectId, projectId), eq(campaigns.id, id)));
}

/**
 * Marks `sent` the sending campaigns whose audience snapshot landed and whose every delivery reached a final state
 * (sent, failed or suppressed — delivered, clicked and dismissed come after sent). Limited to `targets` when given,
 * else every project (the sweep). Returns the ids marked.
 */
export async function completeFinished(db: Db, targets?: readonly { projectId: string; campaignId: string }[]): Promise<string[]> {
  if (targets?.length === 0) return [];
  const only = targets
    ? sql`AND (c.project_id, c.id) IN (SELECT * FROM unnest(${sql.param(targets.map((t) => t.projectId))}::text[], ${sql.param(targets.map((t) => t.campaignId))}::text[]))`
    : sql``;
  const { rows } = await db.execute<{ id: string }>(sql`
    UPDATE campaigns c SET status = 'sent', completed_at = now(), updated_at = now()
    FROM message_stats s
    WHERE s.message_id = c.message_id AND c.status = 'sending' AND c.snapshot_at IS NOT NULL
      AND s.sent + s.failed + s.suppressed >= s.queued ${only}
    RETURNING c.id`);
  return rows.map((r) => r.id);
}

/**
 * Campaigns whose dispatch job should have run by `before` and has not finished: scheduled ones past their time, and
 * sending ones without an audience snapshot (their dispatcher died holding the job). Across projects: the sweep.
 */
export async function findStalled(db: Db, before: Date): Promise<{ projectId: string; id: string; channel: CampaignChannel }[]> {
  return db
    .select({ projectId: campaigns.projectId, id: campaigns.id, channel: campaigns.channel })
    .from(campaigns)
    .where(
      or(
        and(eq(campaigns.status, 'scheduled'), lte(campaigns.sendAt, before)),
        and(eq(campaigns.status, 'sending'), sql`${campaigns.snapshotAt} IS NULL`, lte(campaigns.sentAt, before)),
      ),
    );
}

/** The project's default zone (settings.timezone), for sendAt values given without one. */
export async function projectTimezone(db: Db, projectId: string): Promise<string | undefined> {
  const [row] = await db
    .select({ timezone: sql<string | null>`${projects.settings} ->> 'timezone'` })
    .from(projects)
    .where(eq(projects.id, projectId));
  return row?.timezone ?? undefined;
}
