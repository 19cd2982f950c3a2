// The event condition of the filters tree: its schema and its SQL, a subquery over `events` or the per-person totals
// `event_totals` (kept apart so that its query plan can be tuned — indexes, roll-ups — without touching the rest of the
// compiler).
import { sql, type SQL } from 'drizzle-orm';
import { z } from 'zod';
import { subscribers } from '../../db/schema.js';
import { checkShape } from './attribute-condition.js';
import { dateRangeSchema, isDateOnly, rangeAfter, rangeEnd, rangeStart, type DateRange } from './date-range.js';
import { compareSql, daysAgoSql, misfit, testSql, typeOfTest, VALUE_OPERATORS, type AudienceScope } from './filter-values.js';

const propertyConditionSchema = z
  .strictObject({
    property: z
      .string()
      .min(1)
      .max(200)
      .regex(/^[^.]+(\.[^.]+)*$/, 'must be a dotted path such as cart.total')
      .describe("A dotted path into the event's properties"),
    operator: z.enum(VALUE_OPERATORS),
    value: z.union([z.string(), z.number(), z.boolean(), z.array(z.union([z.string(), z.number()]))]).optional(),
  })
  .superRefine(checkShape)
  .superRefine((test, ctx) => {
    // A property has no declared type: it is read as the type of the condition's value, which must take the operator.
    const problem = misfit(typeOfTest(test), test);
    if (problem) ctx.addIssue({ code: 'custom', path: [problem.field], message: problem.error });
  })
  .describe("A test of the event's property, read as the type of the condition's value");

const DATE_OPERATORS = ['gt', 'gte', 'lt', 'lte', 'between', 'within_last_days', 'more_than_days_ago'] as const;
const timeConditionSchema = z
  .strictObject({
    operator: z.enum(DATE_OPERATORS),
    value: z.union([z.string(), z.number(), z.array(z.string())]),
  })
  .superRefine(checkShape)
  .superRefine((test, ctx) => {
    const problem = misfit('date', test);
    if (problem) ctx.addIssue({ code: 'custom', path: [problem.field], message: problem.error });
  });

export const eventConditionSchema = z
  .strictObject({
    event: z.string().min(1).max(200).describe('The event name'),
    performed: z.boolean().optional().describe('false: holds exactly when the same condition with true does not (default true)'),
    count: z
      .strictObject({ operator: z.enum(['gte', 'lte', 'eq']), value: z.number().int().min(0).max(1_000_000) })
      .optional()
      .describe('How many times, within the window and matching where (default: at least 1)'),
    withinLastDays: z.number().int().min(1).max(36500).optional().describe('Occurred within the last N days'),
    between: dateRangeSchema.optional().describe('Occurred within [from, to], both inclusive; a date covers its whole UTC day'),
    where: z.array(propertyConditionSchema).min(1).max(20).optional().describe('Conditions on the properties, all of which hold'),
    first: timeConditionSchema.optional().describe('The first time the person performed it (within the window, matching where)'),
    last: timeConditionSchema.optional().describe('The last time the person performed it (within the window, matching where)'),
  })
  .refine((c) => c.withinLastDays === undefined || c.between === undefined, { message: 'give at most one of withinLastDays and between', path: ['between'] })
  .meta({ id: 'EventCondition', description: 'The person performed (or did not perform) the event as asked' });

export type EventCondition = z.output<typeof eventConditionSchema>;

function windowSql(condition: EventCondition, now: Date | undefined): SQL[] {
  if (condition.withinLastDays !== undefined) return [sql`e.occurred_at >= ${daysAgoSql(condition.withinLastDays, now)}`];
  const range: DateRange | undefined = condition.between;
  if (!range) return [];
  const parts: SQL[] = [];
  if (range.from !== undefined) parts.push(sql`e.occurred_at >= ${new Date(rangeStart(range.from)).toISOString()}::timestamptz`);
  if (range.to !== undefined) {
    const after = isDateOnly(range.to) ? rangeAfter(range.to) : undefined;
    if (isDateOnly(range.to)) {
      if (after) parts.push(sql`e.occurred_at < ${after.toISOString()}::timestamptz`);
    } else parts.push(sql`e.occurred_at <= ${new Date(rangeEnd(range.to)).toISOString()}::timestamptz`);
  }
  return parts;
}

/**
 * The predicate of an event condition over `subscribers` (docs/TARGETING.md, "Storage"). Without a window or `where`
 * the per-person totals answer (count, first and last over all time); else the raw events. `first` / `last` hold only
 * for people who performed it.
 *
 * For an audience (`scope` given) it is a set: `subscribers.id IN (SELECT subscriber_id …)` over one range of an
 * index of the environment, grouped per person when a count or a time is asked. At the top of a WHERE PostgreSQL
 * joins it either way round (from the set's few people or from the audience's many); under `any` or NOT it hashes
 * it once. A person's own check (no scope) is a subquery on that person's rows instead: a set would be built whole
 * for one person.
 */
export function eventConditionSql(condition: EventCondition, now: Date | undefined, scope?: AudienceScope): SQL {
  const count = condition.count ?? { operator: 'gte' as const, value: 1 };
  const operator = sql.raw(count.operator === 'gte' ? '>=' : count.operator === 'lte' ? '<=' : '=');
  const raw = condition.withinLastDays !== undefined || condition.between !== undefined || condition.where !== undefined;
  const holds = scope
    ? setSql(condition, count, operator, now, scope, raw)
    : raw
      ? rawEventsSql(condition, count, operator, now)
      : totalsSql(condition, count, operator, now);
  return condition.performed === false ? sql`(NOT ${holds})` : holds;
}

type Count = NonNullable<EventCondition['count']>;

/** Whether a person who never performed it (count 0, no time) satisfies the count: then the test is its negation's. */
const zeroHolds = (condition: EventCondition, count: Count) =>
  !condition.first && !condition.last && (count.operator === 'lte' || count.value === 0);

function timesSql(condition: EventCondition, first: SQL, last: SQL, now: Date | undefined): SQL[] {
  const times: SQL[] = [];
  if (condition.first) times.push(compareSql('date', first, condition.first, now));
  if (condition.last) times.push(compareSql('date', last, condition.last, now));
  return times;
}

function setSql(condition: EventCondition, count: Count, operator: SQL, now: Date | undefined, scope: AudienceScope, raw: boolean): SQL {
  const negated = zeroHolds(condition, count);
  const counted = sql`${raw ? sql`count(*)` : sql`t.count`} ${operator} ${count.value}::int`;
  const wanted = negated ? sql`NOT (${counted})` : sql.join([counted, ...(raw ? timesSql(condition, sql`min(e.occurred_at)`, sql`max(e.occurred_at)`, now) : [])], sql` AND `);
  let members: SQL;
  if (!raw) {
    const times = negated ? [] : timesSql(condition, sql`t.first_at`, sql`t.last_at`, now);
    members = sql`SELECT t.subscriber_id FROM event_totals t
      WHERE ${sql.join([sql`t.project_id = ${scope.projectId} AND t.sandbox = ${scope.sandbox} AND t.name = ${condition.event}::text`, wanted, ...times], sql` AND `)}`;
  } else {
    const matching = sql.join([sql`e.project_id = ${scope.projectId} AND e.sandbox = ${scope.sandbox}`, ...eventRowsSql(condition, now), sql`e.subscriber_id IS NOT NULL`], sql` AND `);
    const once = !negated && count.operator === 'gte' && count.value === 1 && !condition.first && !condition.last;
    members = once
      ? sql`SELECT e.subscriber_id FROM events e WHERE ${matching}`
      : sql`SELECT e.subscriber_id FROM events e WHERE ${matching} GROUP BY e.subscriber_id HAVING ${wanted}`;
  }
  const member = sql`${subscribers.id} IN (${members})`;
  return negated ? sql`(NOT ${member})` : member;
}

/** The name, window and property tests of the events a condition counts (`e` rows). */
function eventRowsSql(condition: EventCondition, now: Date | undefined): SQL[] {
  return [
    sql`e.name = ${condition.event}::text`,
    ...windowSql(condition, now),
    ...(condition.where ?? []).map((test) => testSql(typeOfTest(test), sql`(e.properties #> ${sql.param(test.property.split('.'))}::text[])`, test, now)),
  ];
}

function totalsSql(condition: EventCondition, count: Count, operator: SQL, now: Date | undefined): SQL {
  const person = sql`t.project_id = ${subscribers.projectId} AND t.sandbox = ${subscribers.sandbox} AND t.name = ${condition.event}::text AND t.subscriber_id = ${subscribers.id}`;
  // A person without a row performed it 0 times: when the count takes 0 (and no first/last is asked, which need a
  // time), the condition fails only on a row whose count it does not take.
  if (zeroHolds(condition, count)) {
    return sql`NOT EXISTS (SELECT 1 FROM event_totals t WHERE ${person} AND NOT (t.count ${operator} ${count.value}::int))`;
  }
  const times = timesSql(condition, sql`t.first_at`, sql`t.last_at`, now);
  return sql`EXISTS (SELECT 1 FROM event_totals t WHERE ${sql.join([person, sql`t.count ${operator} ${count.value}::int`, ...times], sql` AND `)})`;
}

function rawEventsSql(condition: EventCondition, count: Count, operator: SQL, now: Date | undefined): SQL {
  const matching = sql.join(
    [sql`e.project_id = ${subscribers.projectId} AND e.sandbox = ${subscribers.sandbox}`, ...eventRowsSql(condition, now), sql`e.subscriber_id = ${subscribers.id}`],
    sql` AND `,
  );
  const checks: SQL[] = [sql`count(*) ${operator} ${count.value}::int`, ...timesSql(condition, sql`min(e.occurred_at)`, sql`max(e.occurred_at)`, now)];
  return checks.length === 1 && count.operator === 'gte' && count.value === 1
    ? sql`EXISTS (SELECT 1 FROM events e WHERE ${matching})`
    : sql`coalesce((SELECT ${sql.join(checks, sql` AND `)} FROM events e WHERE ${matching}), false)`;
}
