// The project's attribute list (`subscriber_attributes`): names, types, and the frequent values of one attribute.
import { and, asc, eq, inArray, sql } from 'drizzle-orm';
import type { Db } from '../../db/database.js';
import { subscriberAttributes, subscribers, type AttributeType } from '../../db/schema.js';

/** One project and environment: the attribute list is kept per environment, like the people it describes. */
export interface AttributeScope {
  projectId: string;
  sandbox: boolean;
}

export type AttributeRow = typeof subscriberAttributes.$inferSelect;

const ofScope = (scope: AttributeScope) => and(eq(subscriberAttributes.projectId, scope.projectId), eq(subscriberAttributes.sandbox, scope.sandbox));

export function listAttributes(db: Db, scope: AttributeScope): Promise<AttributeRow[]> {
  return db.select().from(subscriberAttributes).where(ofScope(scope)).orderBy(asc(subscriberAttributes.name));
}

/** The types of the named attributes the list holds (the others are unknown). */
export async function attributeTypes(db: Db, scope: AttributeScope, names: readonly string[]): Promise<Map<string, AttributeType>> {
  if (names.length === 0) return new Map();
  const rows = await db
    .select({ name: subscriberAttributes.name, type: subscriberAttributes.type })
    .from(subscriberAttributes)
    .where(and(ofScope(scope), inArray(subscriberAttributes.name, [...names])));
  return new Map(rows.map((row) => [row.name, row.type]));
}

/**
 * Records attributes seen in writes, one multi-row statement: a new name gets its inferred type; a name declared
 * before any person had it gets its first-seen time; anything else is left as it is.
 */
export async function recordSeen(db: Db, seen: readonly (AttributeScope & { name: string; type: AttributeType })[], at: Date): Promise<void> {
  if (seen.length === 0) return;
  await db
    .insert(subscriberAttributes)
    .values(seen.map((s) => ({ ...s, source: 'inferred' as const, firstSeenAt: at, updatedAt: at })))
    .onConflictDoUpdate({
      target: [subscriberAttributes.projectId, subscriberAttributes.sandbox, subscriberAttributes.name],
      set: { firstSeenAt: sql`excluded.first_seen_at` },
      setWhere: sql`${subscriberAttributes.firstSeenAt} IS NULL`,
    });
}

export async function declareAttribute(db: Db, scope: AttributeScope, name: string, type: AttributeType, at: Date): Promise<AttributeRow> {
  const [row] = await db
    .insert(subscriberAttributes)
    .values({ ...scope, name, type, source: 'declared', firstSeenAt: null, updatedAt: at })
    .onConflictDoUpdate({
      target: [subscriberAttributes.projectId, subscriberAttributes.sandbox, subscriberAttributes.name],
      set: { type, source: 'declared', updatedAt: at },
    })
    .returning();
  return row!;
}

/** The most frequent values (as text) of a top-level attribute among the environment's people, optionally by prefix. */
export async function frequentValues(db: Db, scope: AttributeScope, name: string, prefix: string | undefined, limit: number) {
  const value = sql<string>`(CASE jsonb_typeof(${subscribers.attributes} -> ${name}::text)
    WHEN 'string' THEN ${subscribers.attributes} ->> ${name}::text WHEN 'number' THEN (${subscribers.attributes} -> ${name}::text)::text
    WHEN 'boolean' THEN (${subscribers.attributes} -> ${name}::text)::text END)`;
  return db
    .select({ value: sql<string>`${value}`.as('value'), count: sql<number>`count(*)::int`.as('count') })
    .from(subscribers)
    .where(
      and(
        eq(subscribers.projectId, scope.projectId),
        eq(subscribers.sandbox, scope.sandbox),
        sql`${subscribers.attributes} ? ${name}::text`,
        sql`${value} IS NOT NULL`,
        prefix ? sql`starts_with(${value}, ${prefix}::text)` : undefined,
      ),
    )
    .groupBy(sql`1`)
    .orderBy(sql`2 DESC`, sql`1`)
    .limit(limit);
}
