// Saved segments and audience queries; every function is confined to the caller's project(s).
import { and, asc, count, desc, eq, gt, isNotNull, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/database.js';
import { isForeignKeyViolation } from '../../db/pg-errors.js';
import { segments, subscribers } from '../../db/schema.js';
import { projectOfTenant } from '../../db/tenant-scope.js';
import type { ProjectScope, Reach } from '../tenancy.js';

export type SegmentRow = typeof segments.$inferSelect;

/**
 * The saved segments a caller may see and change, by the sandbox rule of subscribers (docs/CONTEXT.md, "Sandbox vs
 * live"): a test key its project's sandbox segments, a live key its project's segments of both environments, a
 * dashboard user its organization's.
 */
function segmentsOf(db: Db, reach: Reach): SQL {
  if ('kind' in reach && reach.kind === 'organization') return projectOfTenant(db, reach, segments.projectId);
  const scope = reach as ProjectScope;
  const project = eq(segments.projectId, scope.projectId);
  return scope.sandbox ? and(project, eq(segments.sandbox, true))! : project;
}

export async function insertSegment(db: Db, row: typeof segments.$inferInsert): Promise<SegmentRow> {
  const [inserted] = await db.insert(segments).values(row).returning();
  return inserted!;
}

export async function listSegments(db: Db, scope: ProjectScope, limit: number, offset: number) {
  const where = segmentsOf(db, scope);
  const [rows, [total]] = await Promise.all([
    db.select().from(segments).where(where).orderBy(desc(segments.createdAt), desc(segments.id)).limit(limit).offset(offset),
    db.select({ total: count() }).from(segments).where(where),
  ]);
  return { rows, total: total?.total ?? 0 };
}

export async function findSegment(db: Db, reach: Reach, id: string): Promise<SegmentRow | undefined> {
  const [row] = await db
    .select()
    .from(segments)
    .where(and(segmentsOf(db, reach), eq(segments.id, id)));
  return row;
}

/** A saved segment a send from this scope may target: of its project and of its environment (live or sandbox). */
export async function findSendableSegment(db: Db, scope: ProjectScope, id: string): Promise<SegmentRow | undefined> {
  const [row] = await db
    .select()
    .from(segments)
    .where(and(eq(segments.projectId, scope.projectId), eq(segments.sandbox, scope.sandbox), eq(segments.id, id)));
  return row;
}

export async function updateSegment(
  db: Db,
  reach: Reach,
  id: string,
  change: { name?: string | undefined; filters?: Record<string, unknown> | undefined },
): Promise<SegmentRow | undefined> {
  const [row] = await db
    .update(segments)
    .set({
      ...(change.name !== undefined && { name: change.name }),
      ...(change.filters !== undefined && { filters: change.filters }),
      updatedAt: new Date(),
    })
    .where(and(segmentsOf(db, reach), eq(segments.id, id)))
    .returning();
  return row;
}

/**
 * Deletes a segment: `in_use` while a draft or scheduled campaign still has to read it (the campaigns'
 * `pending_segment_id` foreign key decides, so a campaign saved at the same moment is never left without it).
 */
export async function deleteSegment(db: Db, reach: Reach, id: string): Promise<'deleted' | 'not_found' | 'in_use'> {
  try {
    const deleted = await db
      .delete(segments)
      .where(and(segmentsOf(db, reach), eq(segments.id, id)))
      .returning({ id: segments.id });
    return deleted.length > 0 ? 'deleted' : 'not_found';
  } catch (error) {
    if (isForeignKeyViolation(error)) return 'in_use';
    throw error;
  }
}

/**
 * The subscribers a send from this scope would reach: the project's active subscribers of the same environment
 * (live for dashboard users and live keys, sandbox for test keys), narrowed by the compiled filter.
 */
export function audience(scope: ProjectScope, filter: SQL | undefined): SQL {
  return and(
    eq(subscribers.projectId, scope.projectId),
    eq(subscribers.sandbox, scope.sandbox),
    eq(subscribers.status, 'active'),
    filter,
  )!;
}

/**
 * The audience of a push send: the `audience` with a push subscription, less those who turned push off
 * (`preferences.channels.push` false). A campaign counts and snapshots exactly this.
 */
export function pushAudience(scope: ProjectScope, filter: SQL | undefined): SQL {
  return and(
    audience(scope, filter),
    isNotNull(subscribers.endpoint),
    sql`(${subscribers.preferences} -> 'channels' -> 'push') IS DISTINCT FROM 'false'::jsonb`,
  )!;
}

/** Channels whose send audience is narrower than the `audience`: push needs a subscription. */
export type AudienceChannel = 'push';

/** The size of the `audience`, or of a channel's send audience when one is named. */
export async function countAudience(db: Db, scope: ProjectScope, filter: SQL | undefined, channel?: AudienceChannel): Promise<number> {
  const where = channel === 'push' ? pushAudience(scope, filter) : audience(scope, filter);
  const [row] = await db.select({ total: count() }).from(subscribers).where(where);
  return row?.total ?? 0;
}

/** Keyset page (by id) of the audience, with the export columns: exports stream batch by batch in constant memory. */
export function pageAudience(db: Db, scope: ProjectScope, filter: SQL | undefined, afterId: string | undefined, limit: number) {
  return db
    .select({
      id: subscribers.id,
      externalId: subscribers.externalId,
      token: subscribers.token,
      email: subscribers.email,
      country: subscribers.country,
      platform: subscribers.platform,
      tags: subscribers.tags,
      subscribedAt: subscribers.subscribedAt,
      lastSeenAt: subscribers.lastSeenAt,
    })
    .from(subscribers)
    .where(and(audience(scope, filter), afterId !== undefined ? gt(subscribers.id, afterId) : undefined))
    .orderBy(asc(subscribers.id))
    .limit(limit);
}
