// Events' SQL: who the application named, the events stored once per eventId with their per-person totals, the
// dashboard's recent list and counts, and the properties seen on a name.
import { and, count, desc, eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/database.js';
import { events, subscribers } from '../../db/schema.js';
import { subscriberSummaryColumns, summaryJoin, summaryOf, type SubscriberSummary } from '../../db/subscriber-summary.js';
import type { ProjectScope } from '../tenancy.js';

export type EventRow = typeof events.$inferSelect;
/** An event with the person it names, for the list. */
export type NamedEventRow = EventRow & { subscriber: SubscriberSummary | null };

/** The subscriber each identity names in the scope's project and environment: by id, token, or externalId (seen last). */
export async function resolveSubscribers(
  db: Db,
  scope: ProjectScope,
  names: { ids: string[]; tokens: string[]; externalIds: string[] },
): Promise<{ ids: Set<string>; tokens: Map<string, string>; externalIds: Map<string, string> }> {
  const { rows } = await db.execute<{ kind: 'id' | 'token' | 'external'; name: string; id: string }>(sql`
    SELECT 'id' AS kind, id AS name, id FROM subscribers
      WHERE project_id = ${scope.projectId} AND sandbox = ${scope.sandbox} AND id = ANY(${sql.param(names.ids)}::text[])
    UNION ALL
    SELECT 'token', token, id FROM subscribers
      WHERE project_id = ${scope.projectId} AND sandbox = ${scope.sandbox} AND token = ANY(${sql.param(names.tokens)}::text[])
    UNION ALL
    (SELECT DISTINCT ON (external_id) 'external', external_id, id FROM subscribers
      WHERE project_id = ${scope.projectId} AND sandbox = ${scope.sandbox} AND external_id = ANY(${sql.param(names.externalIds)}::text[])
      ORDER BY external_id, last_seen_at DESC, id)`);
  const found = { ids: new Set<string>(), tokens: new Map<string, string>(), externalIds: new Map<string, string>() };
  for (const row of rows) {
    if (row.kind === 'id') found.ids.add(row.id);
    else if (row.kind === 'token') found.tokens.set(row.name, row.id);
    else found.externalIds.set(row.name, row.id);
  }
  return found;
}

/** An event to store, as the service builds it. */
export interface NewEvent {
  id: string;
  projectId: string;
  sandbox: boolean;
  name: string;
  subscriberId: string | null;
  identity: Record<string, string>;
  properties: Record<string, unknown>;
  occurredAt: Date;
  eventKey: string | null;
}

/**
 * Inserts the events; one whose eventId the project already has (or an earlier one of the batch has) is skipped.
 * Returns the rows inserted, and for each eventId skipped the id of the event recorded with it. The inserted events
 * that name someone are added to event_totals by the same statement: one upsert per batch, in key order so that two
 * batches naming the same people lock their rows in the same order (no deadlock).
 */
export async function insertEvents<T extends NewEvent>(db: Db, rows: readonly T[]): Promise<{ inserted: T[]; existing: Map<string, string> }> {
  if (rows.length === 0) return { inserted: [], existing: new Map() };
  const { projectId, sandbox } = rows[0]!;
  const column = <T>(pick: (row: (typeof rows)[number]) => T) => sql.param(rows.map(pick));
  // The rows go as one array per column: a statement of 9 parameters whatever the batch's size.
  const { rows: written } = await db.execute<{ id: string }>(sql`
    WITH inserted AS (
      INSERT INTO events (id, project_id, sandbox, name, subscriber_id, identity, properties, occurred_at, event_key)
      SELECT e.id, ${projectId}, ${sandbox}, e.name, e.subscriber_id, e.identity, e.properties, e.occurred_at, e.event_key
      FROM unnest(${column((r) => r.id)}::text[], ${column((r) => r.name)}::text[], ${column((r) => r.subscriberId)}::text[],
        ${column((r) => JSON.stringify(r.identity))}::jsonb[], ${column((r) => JSON.stringify(r.properties))}::jsonb[],
        ${column((r) => r.occurredAt.toISOString())}::timestamptz[], ${column((r) => r.eventKey)}::text[])
        AS e(id, name, subscriber_id, identity, properties, occurred_at, event_key)
      ON CONFLICT DO NOTHING
      RETURNING id, name, subscriber_id, occurred_at),
    totals AS (
      INSERT INTO event_totals AS t (project_id, sandbox, name, subscriber_id, count, first_at, last_at)
      SELECT ${projectId}, ${sandbox}, name, subscriber_id, count(*), min(occurred_at), max(occurred_at)
      FROM inserted WHERE subscriber_id IS NOT NULL
      GROUP BY name, subscriber_id ORDER BY name, subscriber_id
      ON CONFLICT (project_id, sandbox, name, subscriber_id) DO UPDATE SET count = t.count + excluded.count,
        first_at = least(t.first_at, excluded.first_at), last_at = greatest(t.last_at, excluded.last_at))
    SELECT id FROM inserted`);
  const ids = new Set(written.map((r) => r.id));
  const inserted = rows.filter((r) => ids.has(r.id));
  const skipped = rows.filter((r) => !ids.has(r.id) && r.eventKey);
  const existing = new Map<string, string>();
  if (skipped.length > 0) {
    const { rows: found } = await db.execute<{ id: string; event_key: string }>(sql`
      SELECT id, event_key FROM events WHERE project_id = ${projectId} AND sandbox = ${sandbox}
        AND event_key = ANY(${sql.param(skipped.map((r) => r.eventKey!))}::text[])`);
    for (const row of found) existing.set(row.event_key, row.id);
  }
  return { inserted, existing };
}

export async function listEvents(db: Db, scope: ProjectScope, page: { limit: number; offset: number; name?: string | undefined; subscriberId?: string | undefined }) {
  const where = and(
    eq(events.projectId, scope.projectId),
    eq(events.sandbox, scope.sandbox),
    page.name === undefined ? undefined : eq(events.name, page.name),
    page.subscriberId === undefined ? undefined : eq(events.subscriberId, page.subscriberId),
  );
  const [rows, [total]] = await Promise.all([
    db
      .select({ event: events, ...subscriberSummaryColumns })
      .from(events)
      .leftJoin(subscribers, summaryJoin(events.subscriberId, events.projectId))
      .where(where)
      .orderBy(desc(events.receivedAt), desc(events.id))
      .limit(page.limit)
      .offset(page.offset),
    db.select({ total: count() }).from(events).where(where),
  ]);
  return { rows: rows.map((row) => ({ ...row.event, subscriber: summaryOf(row) })), total: total?.total ?? 0 };
}

/** Events per name received over the last `days` days, most frequent first. */
export async function countByName(db: Db, scope: ProjectScope, days: number) {
  const { rows } = await db.execute<{ name: string; count: string; last_received_at: Date }>(sql`
    SELECT name, count(*) AS count, max(received_at) AS last_received_at FROM events
    WHERE project_id = ${scope.projectId} AND sandbox = ${scope.sandbox} AND received_at > now() - make_interval(days => ${days})
    GROUP BY name ORDER BY count(*) DESC, name LIMIT 200`);
  return rows.map((r) => ({ name: r.name, count: Number(r.count), lastReceivedAt: new Date(r.last_received_at).toISOString() }));
}

/** A property path seen on sampled events: its JSON types and its most frequent scalar values, with counts. */
export interface SeenProperty {
  path: string;
  seen: number;
  types: { type: 'string' | 'number' | 'boolean' | 'null' | 'array' | 'object'; count: number }[];
  values: { value: string | number | boolean | null; count: number }[];
}

/**
 * The properties of the `sample` most recently received events of a name (events_project_name_idx walked backwards):
 * every leaf under nested objects as a dotted path (to `depth` levels), its JSON types, and its `top` most frequent
 * values (scalars of at most 200 characters); at most `paths` paths, the most often seen first.
 */
export async function recentProperties(
  db: Db,
  scope: ProjectScope,
  name: string,
  limits: { sample: number; top: number; depth: number; paths: number },
): Promise<{ sampled: number; properties: SeenProperty[] }> {
  const { rows } = await db.execute<{ sampled: number; path: string | null; seen: number | null; types: SeenProperty['types'] | null; values: SeenProperty['values'] | null }>(sql`
    WITH RECURSIVE recent AS (
      SELECT properties FROM events
      WHERE project_id = ${scope.projectId} AND sandbox = ${scope.sandbox} AND name = ${name}
      ORDER BY received_at DESC LIMIT ${limits.sample}
    ), leaf (event, path, value, depth) AS (
      SELECT r.event, p.key, p.value, 1 FROM (SELECT row_number() OVER () AS event, properties FROM recent) r, jsonb_each(r.properties) p
      UNION ALL
      SELECT leaf.event, leaf.path || '.' || c.key, c.value, leaf.depth + 1 FROM leaf, jsonb_each(leaf.value) c
      WHERE jsonb_typeof(leaf.value) = 'object' AND leaf.depth < ${limits.depth}
    ), found AS (
      SELECT path, event, value, jsonb_typeof(value) AS type FROM leaf WHERE jsonb_typeof(value) <> 'object' OR depth = ${limits.depth}
    ), paths AS (
      SELECT path, count(DISTINCT event)::int AS seen FROM found GROUP BY path ORDER BY seen DESC, path LIMIT ${limits.paths}
    ), typed AS (
      SELECT path, jsonb_agg(jsonb_build_object('type', type, 'count', n) ORDER BY n DESC, type) AS types
      FROM (SELECT path, type, count(*)::int AS n FROM found GROUP BY path, type) t GROUP BY path
    ), valued AS (
      SELECT path, jsonb_agg(jsonb_build_object('value', value, 'count', n) ORDER BY n DESC, value::text) AS values
      FROM (SELECT path, value, n, row_number() OVER (PARTITION BY path ORDER BY n DESC, value::text) AS rank
            FROM (SELECT path, value, count(*)::int AS n FROM found
                  WHERE type IN ('string', 'number', 'boolean', 'null') AND length(value::text) <= 202 GROUP BY path, value) c) v
      WHERE rank <= ${limits.top} GROUP BY path
    )
    SELECT (SELECT count(*)::int FROM recent) AS sampled, p.path, p.seen, t.types, coalesce(v.values, '[]') AS values
    FROM (SELECT 1) one LEFT JOIN paths p ON true LEFT JOIN typed t ON t.path = p.path LEFT JOIN valued v ON v.path = p.path
    ORDER BY p.seen DESC, p.path`);
  const sampled = rows[0]?.sampled ?? 0;
  const properties = rows.flatMap((r) => (r.path === null ? [] : [{ path: r.path, seen: r.seen!, types: r.types!, values: r.values! }]));
  return { sampled, properties };
}
