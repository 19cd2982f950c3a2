// The event condition of the filters tree: its schema and its SQL, a subquery over `events` (kept apart so that its
// query plan can be tuned — indexes, roll-ups — without touching the rest of the compiler).
import { sql, type SQL } from 'drizzle-orm';
import { z } from 'zod';
import { subscribers } from '../../db/schema.js';
import { checkShape } from './attribute-condition.js';
import { dateRangeSchema, isDateOnly, rangeAfter, rangeEnd, rangeStart, type DateRange } from './date-range.js';
import { compareSql, daysAgoSql, misfit, testSql, typeOfTest, VALUE_OPERATORS, type ValueTest } from './filter-values.js';

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
 * The predicate of an event condition over `subscribers`: one aggregate over the person's matching events (never NULL).
 * `first` / `last` read min / max(occurred_at), so they hold only for people who performed it.
 */
export function eventConditionSql(condition: EventCondition, now: Date | undefined): SQL {
  const matching = sql.join(
    [
      sql`e.subscriber_id = ${subscribers.id}`,
      sql`e.name = ${condition.event}::text`,
      ...windowSql(condition, now),
      ...(condition.where ?? []).map((test) => testSql(typeOfTest(test), sql`(e.properties #> ${sql.param(test.property.split('.'))}::text[])`, test, now)),
    ],
    sql` AND `,
  );
  const count = condition.count ?? { operator: 'gte' as const, value: 1 };
  const checks: SQL[] = [sql`count(*) ${sql.raw(count.operator === 'gte' ? '>=' : count.operator === 'lte' ? '<=' : '=')} ${count.value}::int`];
  const time = (aggregate: SQL, test: ValueTest | undefined) => {
    if (test) checks.push(compareSql('date', aggregate, test, now));
  };
  time(sql`min(e.occurred_at)`, condition.first);
  time(sql`max(e.occurred_at)`, condition.last);
  const holds =
    checks.length === 1 && count.operator === 'gte' && count.value === 1
      ? sql`EXISTS (SELECT 1 FROM events e WHERE ${matching})`
      : sql`coalesce((SELECT ${sql.join(checks, sql` AND `)} FROM events e WHERE ${matching}), false)`;
  return condition.performed === false ? sql`(NOT ${holds})` : holds;
}
