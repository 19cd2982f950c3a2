// The SQL the targeting benchmark counts with, written by hand after docs/TARGETING.md until the filters tree's
// compiler exists: one predicate over `subscribers` per measured filters object, in the shapes the compiler is to emit.
import type { ProjectScope } from '../../server/src/modules/tenancy.js';

type Scope = Pick<ProjectScope, 'projectId' | 'sandbox'>;

/** A bench-made literal (names, paths, numbers of this file only: nothing from outside reaches the SQL). */
const literal = (value: string) => `'${value.replace(/'/g, "''")}'`;

/** An attribute read as text: a string, or a number or boolean as its JSON text; anything else is absent (null). */
export const textAttribute = (name: string) =>
  `(CASE WHEN jsonb_typeof(subscribers.attributes -> ${literal(name)}) IN ('string', 'number', 'boolean') THEN subscribers.attributes ->> ${literal(name)} END)`;

/** A JSON value at `path` read as a number: a JSON number, or a string holding a decimal number; else null. */
const numberAt = (json: string) =>
  `(CASE jsonb_typeof(${json}) WHEN 'number' THEN (${json} #>> '{}')::numeric
     WHEN 'string' THEN CASE WHEN ${json} #>> '{}' ~ '^\\s*[-+]?(\\d+\\.?\\d*|\\.\\d+)([eE][-+]?\\d+)?\\s*$' THEN (${json} #>> '{}')::numeric END END)`;

export interface EventCondition {
  name: string;
  withinLastDays?: number;
  /** `where` on a property, read as a number. */
  where?: { path: string[]; operator: '>' | '<' | '='; value: number };
  count?: { operator: '>=' | '<=' | '='; value: number };
}

/**
 * The event rows of a condition: its project and environment as bound values (not correlated with the outer row, so
 * PostgreSQL can hash the set once), the name, the window on occurred_at, and the property tests.
 */
function eventRows(scope: Scope, c: EventCondition): string {
  return [
    `e.project_id = ${literal(scope.projectId)} AND e.sandbox = ${scope.sandbox} AND e.name = ${literal(c.name)} AND e.subscriber_id IS NOT NULL`,
    c.withinLastDays === undefined ? '' : ` AND e.occurred_at >= now() - make_interval(days => ${c.withinLastDays})`,
    c.where === undefined ? '' : ` AND ${numberAt(`(e.properties #> '{${c.where.path.join(',')}}')`)} ${c.where.operator} ${c.where.value}`,
  ].join('');
}

/**
 * "Performed": the person is among the subscriber ids of the matching events, grouped when a count is asked. A count
 * that zero satisfies (≤ N, = 0) is the complement of the count that it fails, so it reaches the people without events.
 * Without a window or `where`, the per-person totals (event_totals) answer it instead of the raw events.
 */
export function performed(scope: Scope, c: EventCondition, did = true): string {
  const count = c.count ?? { operator: '>=', value: 1 };
  const zeroHolds = count.operator === '<=' || (count.operator === '=' && count.value === 0);
  const test = zeroHolds ? `NOT (count(*) ${count.operator} ${count.value})` : `count(*) ${count.operator} ${count.value}`;
  const ids =
    c.withinLastDays === undefined && c.where === undefined
      ? `SELECT t.subscriber_id FROM event_totals t WHERE t.project_id = ${literal(scope.projectId)} AND t.sandbox = ${scope.sandbox}
           AND t.name = ${literal(c.name)} AND ${test.replace('count(*)', 't.count')}`
      : count.operator === '>=' && count.value === 1
        ? `SELECT e.subscriber_id FROM events e WHERE ${eventRows(scope, c)}`
        : `SELECT e.subscriber_id FROM events e WHERE ${eventRows(scope, c)} GROUP BY e.subscriber_id HAVING ${test}`;
  // Negated as NOT EXISTS, an anti-join that spills to disk when large: a NOT IN whose set PostgreSQL guesses to exceed
  // hash_mem is tested row by row instead.
  return did !== zeroHolds ? `subscribers.id IN (${ids})` : `NOT EXISTS (SELECT 1 FROM (${ids}) x WHERE x.subscriber_id = subscribers.id)`;
}
