// Saved segments and audience queries; every function is confined to the caller's project(s).
import { allowAudienceSets } from '../../db/audience-memory.js';
import { and, asc, count, desc, eq, gt, inArray, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/database.js';
import { isForeignKeyViolation } from '../../db/pg-errors.js';
import { channelPreference, segments, subscribers, type Channel } from '../../db/schema.js';
import { reachableRows } from '../../db/tenant-scope.js';
import type { ProjectScope, Reach } from '../tenancy.js';
import { activePerson, reachableAtSomeAddress, reachableOn } from './reachability.js';

export type SegmentRow = typeof segments.$inferSelect;

/**
 * The saved segments a caller may see and change, by the sandbox rule of subscribers (docs/CONTEXT.md, "Sandbox vs
 * live"): a test key its project's sandbox segments, a live key its project's segments of both environments, a
 * dashboard user its organization's.
 */
const segmentsOf = (db: Db, reach: Reach): SQL => reachableRows(db, reach, segments);

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
 * The subscribers of a reach estimate or an export from this scope: the project's active people (`activePerson`) of
 * the same environment (live for dashboard users and live keys, sandbox for test keys), narrowed by the compiled filter.
 */
export function audience(scope: ProjectScope, filter: SQL | undefined): SQL {
  return and(eq(subscribers.projectId, scope.projectId), eq(subscribers.sandbox, scope.sandbox), activePerson(), filter)!;
}

/** Whether the person kept `channel` on (`preferences.channels.<channel>` not false). */
const channelAllowed = (channel: Channel) => channelPreference.keptOn(subscribers.preferences, channel);

/**
 * No subscriber of the same environment carrying this address turned `channel` off in its preferences: what one
 * device's person says of an address holds for the address (its unsubscribes, bounces and complaints are the
 * address's own, in `channel_addresses`: `reachableOn`).
 */
function keptOnByEveryHolder(channel: Exclude<Channel, 'push'>): SQL {
  const [column, address] = channel === 'email' ? ['email', sql`lower(o.email) = lower(${subscribers.email})`] : ['phone', sql`o.phone = ${subscribers.phone}`];
  return sql`NOT EXISTS (
    SELECT 1 FROM subscribers o
    WHERE o.project_id = ${subscribers.projectId} AND o.sandbox = ${subscribers.sandbox} AND o.${sql.raw(column)} IS NOT NULL AND ${address}
      AND ${channelPreference.turnedOff(sql.raw('o.preferences'), channel)})`;
}

/**
 * Who a send on `channel` reaches, and the address that makes one recipient of several rows: those reachable for
 * marketing on it (`reachableOn`) that kept the channel on. Push reaches devices, each `active` subscription. Email
 * reaches addresses, once per address (case-insensitive), whatever its devices' push status; SMS and WhatsApp reach
 * phone numbers (E.164), once each. An address is left out when any subscriber carrying it stopped the channel
 * (`keptOnByEveryHolder`): these are marketing audiences.
 */
export function channelAudience(scope: ProjectScope, channel: Channel, filter: SQL | undefined): { where: SQL; address: SQL | undefined } {
  const environment = and(eq(subscribers.projectId, scope.projectId), eq(subscribers.sandbox, scope.sandbox), filter)!;
  const reachable = reachableOn(channel, { marketing: true });
  switch (channel) {
    case 'push':
      return { where: and(environment, channelAllowed(channel), reachable)!, address: undefined };
    case 'email':
      return { where: and(environment, reachable, keptOnByEveryHolder(channel))!, address: sql`lower(${subscribers.email})` };
    case 'sms':
    case 'whatsapp':
      return { where: and(environment, reachable, keptOnByEveryHolder(channel))!, address: sql`${subscribers.phone}` };
  }
}

/** The size of the `audience`, or of a channel's send audience (its recipients) when one is named. */
export async function countAudience(db: Db, scope: ProjectScope, filter: SQL | undefined, channel?: Channel): Promise<number> {
  const counted = (where: SQL, total: SQL<number> = count()) =>
    db.transaction(async (tx) => {
      await allowAudienceSets(tx);
      const [row] = await tx.select({ total }).from(subscribers).where(where);
      return row?.total ?? 0;
    });
  if (!channel) {
    // `activePerson` as two disjoint counts run side by side: the active rows, from the covering indexes alone as
    // before (docs/PERFORMANCE.md), plus the few retired devices whose person an address still reaches (a retired row
    // has no push, so its address channels alone: subscribers_project_retired_idx serves it without the table).
    const environment = and(eq(subscribers.projectId, scope.projectId), eq(subscribers.sandbox, scope.sandbox), filter);
    const [active, elsewhere] = await Promise.all([
      counted(and(environment, eq(subscribers.status, 'active'))!),
      counted(and(environment, inArray(subscribers.status, ['inactive', 'unsubscribed']), reachableAtSomeAddress())!),
    ]);
    return active + elsewhere;
  }
  const { where, address } = channelAudience(scope, channel, filter);
  return counted(where, address ? sql<number>`count(DISTINCT ${address})::int` : count());
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

/** The stored filters of the named segments of one project and environment (those that exist). */
export async function findSegmentFilters(db: Db, scope: Pick<ProjectScope, 'projectId' | 'sandbox'>, ids: readonly string[]): Promise<Map<string, unknown>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .select({ id: segments.id, filters: segments.filters })
    .from(segments)
    .where(and(eq(segments.projectId, scope.projectId), eq(segments.sandbox, scope.sandbox), inArray(segments.id, [...ids])));
  return new Map(rows.map((row) => [row.id, row.filters]));
}

/** The segments of the same project and environment whose filters name `id` (inSegment / notInSegment, at any depth). */
export async function segmentsNaming(db: Db, scope: ProjectScope, id: string): Promise<string[]> {
  const rows = await db
    .select({ id: segments.id })
    .from(segments)
    .where(
      and(
        eq(segments.projectId, scope.projectId),
        eq(segments.sandbox, scope.sandbox),
        sql`jsonb_path_exists(${segments.filters}, '$.** ? (@.inSegment == $id || @.notInSegment == $id)', jsonb_build_object('id', ${id}::text))`,
      ),
    );
  return rows.map((row) => row.id);
}

/** Of these attribute names, those of which some person of the environment holds a text too long for `attribute_values.text`. */
export async function attributesWithLongTexts(db: Db, scope: Pick<ProjectScope, 'projectId' | 'sandbox'>, names: readonly string[]): Promise<Set<string>> {
  if (names.length === 0) return new Set();
  const { rows } = await db.execute<{ name: string }>(sql`
    SELECT DISTINCT name FROM attribute_values
    WHERE project_id = ${scope.projectId} AND sandbox = ${scope.sandbox} AND long AND name = ANY(${sql.param([...names])}::text[])`);
  return new Set(rows.map((row) => row.name));
}

/** Whether the subscriber (by id) satisfies a compiled predicate. */
export async function subscriberMatches(db: Db, subscriberId: string, predicate: SQL | undefined): Promise<boolean> {
  const [row] = await db.select({ id: subscribers.id }).from(subscribers).where(and(eq(subscribers.id, subscriberId), predicate));
  return row !== undefined;
}

/** The ids of the scope's subscribers satisfying a compiled predicate, as a subquery (for `… IN (…)`). */
export function membersOf(scope: Pick<ProjectScope, 'projectId' | 'sandbox'>, predicate: SQL | undefined): SQL {
  return sql`(SELECT ${subscribers.id} FROM ${subscribers} WHERE ${and(eq(subscribers.projectId, scope.projectId), eq(subscribers.sandbox, scope.sandbox), predicate)})`;
}
