// The event condition of the filters tree: its schema and its SQL, a subquery over `events` or the per-person totals
// `event_totals` (kept apart so that its query plan can be tuned — indexes, roll-ups — without touching the rest of the
// compiler).
import { sql, type SQL } from 'drizzle-orm';
import { z } from 'zod';
import { subscribers } from '../../db/schema.js';
import { checkShape } from './attribute-condition.js';
import { dateRangeSchema, isDateOnly, rangeAfter, rangeEnd, rangeStart, type DateRange } from './date-range.js';
import { compareSql, daysAgoSql, misfit, testSql, typeOfTest, VALUE_OPERATORS } from './filter-values.js';

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
 * The predicate of an event condition over `subscribers` (docs/TARGETING.md, "Storage"). Each subquery is tied to the
 * person's project and environment by equality with the outer row: at the top of a filter PostgreSQL turns it into a
 * semi- or anti-join whose project is known, so its rows are one range of an index; under `any` it hashes the set.
 * Without a window or `where` the person's row of event_totals answers (count, first and last over all time); else the
 * raw events: EXISTS for "at least once", one aggregate over the person's matching events otherwise (never NULL).
 * `first` / `last` hold only for people who performed it.
 */
export function eventConditionSql(condition: EventCondition, now: Date | undefined): SQL {
  const count = condition.count ?? { operator: 'gte' as const, value: 1 };
  const operator = sql.raw(count.operator === 'gte' ? '>=' : count.operator === 'lte' ? '<=' : '=');
  const raw = condition.withinLastDays !== undefined || condition.between !== undefined || condition.where !== undefined;
  const holds = raw ? rawEventsSql(condition, count, operator, now) : totalsSql(condition, count, operator, now);
  return condition.performed === false ? sql`(NOT ${holds})` : holds;
}

type Count = NonNullable<EventCondition['count']>;

function totalsSql(condition: EventCondition, count: Count, operator: SQL, now: Date | undefined): SQL {
  const person = sql`t.project_id = ${subscribers.projectId} AND t.sandbox = ${subscribers.sandbox} AND t.name = ${condition.event}::text AND t.subscriber_id = ${subscribers.id}`;
  const times: SQL[] = [];
  if (condition.first) times.push(compareSql('date', sql`t.first_at`, condition.first, now));
  if (condition.last) times.push(compareSql('date', sql`t.last_at`, condition.last, now));
  // A person without a row performed it 0 times: when the count takes 0 (and no first/last is asked, which need a
  // time), the condition fails only on a row whose count it does not take.
  if (times.length === 0 && (count.operator === 'lte' || count.value === 0)) {
    return sql`NOT EXISTS (SELECT 1 FROM event_totals t WHERE ${person} AND NOT (t.count ${operator} ${count.value}::int))`;
  }
  return sql`EXISTS (SELECT 1 FROM event_totals t WHERE ${sql.join([person, sql`t.count ${operator} ${count.value}::int`, ...times], sql` AND `)})`;
}

function rawEventsSql(condition: EventCondition, count: Count, operator: SQL, now: Date | undefined): SQL {
  const matching = sql.join(
    [
      sql`e.project_id = ${subscribers.projectId} AND e.sandbox = ${subscribers.sandbox}`,
      sql`e.name = ${condition.event}::text`,
      ...windowSql(condition, now),
      ...(condition.where ?? []).map((test) => testSql(typeOfTest(test), sql`(e.properties #> ${sql.param(test.property.split('.'))}::text[])`, test, now)),
      sql`e.subscriber_id = ${subscribers.id}`,
    ],
    sql` AND `,
  );
  const checks: SQL[] = [sql`count(*) ${operator} ${count.value}::int`];
  if (condition.first) checks.push(compareSql('date', sql`min(e.occurred_at)`, condition.first, now));
  if (condition.last) checks.push(compareSql('date', sql`max(e.occurred_at)`, condition.last, now));
  return checks.length === 1 && count.operator === 'gte' && count.value === 1
    ? sql`EXISTS (SELECT 1 FROM events e WHERE ${matching})`
    : sql`coalesce((SELECT ${sql.join(checks, sql` AND `)} FROM events e WHERE ${matching}), false)`;
}
