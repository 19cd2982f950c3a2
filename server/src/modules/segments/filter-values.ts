// Typed reading and comparison of JSON values (attributes, event properties) for the filters tree, in SQL and in memory.
import { sql, type SQL } from 'drizzle-orm';
import { z } from 'zod';
import type { AttributeType } from '../../db/schema.js';

export type { AttributeType };


export const VALUE_OPERATORS = [
  'eq',
  'neq',
  'in',
  'contains',
  'starts_with',
  'gt',
  'gte',
  'lt',
  'lte',
  'between',
  'within_last_days',
  'more_than_days_ago',
  'exists',
  'not_exists',
] as const;
export type ValueOperator = (typeof VALUE_OPERATORS)[number];

/** The operators each type takes (docs/TARGETING.md, "Attribute conditions"). */
export const OPERATORS_OF: Record<AttributeType, readonly ValueOperator[]> = {
  text: ['eq', 'neq', 'in', 'contains', 'starts_with', 'exists', 'not_exists'],
  number: ['eq', 'neq', 'in', 'gt', 'gte', 'lt', 'lte', 'between', 'exists', 'not_exists'],
  boolean: ['eq', 'neq', 'exists', 'not_exists'],
  date: ['gt', 'gte', 'lt', 'lte', 'between', 'within_last_days', 'more_than_days_ago', 'exists', 'not_exists'],
};

/** One test of a value: `value` is absent for exists / not_exists. */
export interface ValueTest {
  operator: ValueOperator;
  value?: unknown;
}

const DAY_MS = 86_400_000;
// The one grammar of a stored date, shared by SQL (POSIX regex) and memory: a date, or a date-time to the millisecond
// with an optional Z or ±hh:mm offset, of a real day (no 02-30, no year 0000): herald_attribute_at in SQL (migration 0043).
const DAY = '[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])';
const TIME = 'T([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\\.[0-9]{1,3})?)?';
const OFFSET = '(Z|[+-](0[0-9]|1[0-4]):[0-5][0-9])';
const DATE_ONLY = `^${DAY}$`;
const WITH_OFFSET = `^${DAY}${TIME}${OFFSET}$`;
const LOCAL = `^${DAY}${TIME}$`;
const DECIMAL = '^-?[0-9]{1,30}(\\.[0-9]{1,30})?$';

/** A string read as a date: its instant (ms, UTC), or undefined when it is not an ISO 8601 date of a real day. */
export function readDate(value: string): number | undefined {
  let text: string;
  if (new RegExp(DATE_ONLY).test(value)) text = `${value}T00:00:00Z`;
  else if (new RegExp(WITH_OFFSET).test(value)) text = value;
  else if (new RegExp(LOCAL).test(value)) text = `${value}Z`;
  else return undefined;
  const [year, month, day] = value.slice(0, 10).split('-').map(Number) as [number, number, number];
  const calendar = new Date(Date.UTC(2000, month - 1, day));
  // Year 0000 does not exist for PostgreSQL; a day past its month's end (02-30) is no date.
  if (year === 0 || calendar.getUTCMonth() !== month - 1 || (month === 2 && day === 29 && !isLeap(year))) return undefined;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : ms;
}
const isLeap = (year: number) => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;

/** A stored JSON value read as `type`; undefined when it cannot be (it then counts as absent). Dates read as ms. */
export function readAs(type: AttributeType, value: unknown): string | number | boolean | undefined {
  switch (type) {
    case 'text':
      return typeof value === 'string' ? value : typeof value === 'number' || typeof value === 'boolean' ? JSON.stringify(value) : undefined;
    case 'number':
      if (typeof value === 'number') return value;
      return typeof value === 'string' && new RegExp(DECIMAL).test(value) ? Number(value) : undefined;
    case 'boolean':
      return value === true || value === 'true' ? true : value === false || value === 'false' ? false : undefined;
    case 'date':
      return typeof value === 'string' ? readDate(value) : undefined;
  }
}

/**
 * The same reading in SQL, of a jsonb expression: NULL when it cannot be read; never a cast that can throw. The
 * grammar's SQL side is in the database (migration 0043), shared with the readings `attribute_values` keeps.
 */
export function readAsSql(type: AttributeType, json: SQL): SQL {
  switch (type) {
    case 'text':
      return sql`herald_attribute_text(${json})`;
    case 'number':
      return sql`herald_attribute_number(${json})`;
    case 'boolean':
      return sql`(CASE WHEN ${json} IN ('true'::jsonb, '"true"'::jsonb) THEN true WHEN ${json} IN ('false'::jsonb, '"false"'::jsonb) THEN false END)`;
    case 'date':
      return sql`herald_attribute_at(${json})`;
  }
}

/** The project and environment of a whole audience (a count, a campaign's snapshot), whose conditions compile to sets. */
export interface AudienceScope {
  projectId: string;
  sandbox: boolean;
}

const isDateText = (value: unknown) => typeof value === 'string' && readDate(value) !== undefined;
const isFiniteNumber = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);
const daysSchema = z.number().int().min(1).max(36500);

/**
 * What is wrong with a test's value for its operator, whatever the type (undefined: nothing). The type-specific check
 * (`misfit`) comes after, once the type is known.
 */
export function shapeProblem(test: ValueTest): { field: 'value' | 'operator'; error: string } | undefined {
  const { operator, value } = test;
  const bad = (error: string) => ({ field: 'value' as const, error });
  switch (operator) {
    case 'exists':
    case 'not_exists':
      return value === undefined ? undefined : bad(`must be left out with ${operator}`);
    case 'in': {
      if (!Array.isArray(value) || value.length < 1 || value.length > 500) return bad('must be a list of 1 to 500 values');
      const texts = value.every((v) => typeof v === 'string' && v.length <= 1000);
      return texts || value.every(isFiniteNumber) ? undefined : bad('must be a list of strings or a list of numbers');
    }
    case 'between': {
      if (!Array.isArray(value) || value.length !== 2) return bad('must be [low, high]');
      const [low, high] = value as [unknown, unknown];
      if (isFiniteNumber(low) && isFiniteNumber(high)) return low <= high ? undefined : bad('low must not be above high');
      if (isDateText(low) && isDateText(high)) return readDate(low as string)! <= readDate(high as string)! ? undefined : bad('from must not be after to');
      return bad('must be two numbers or two ISO 8601 dates');
    }
    case 'within_last_days':
    case 'more_than_days_ago':
      return daysSchema.safeParse(value).success ? undefined : bad('must be a whole number of days from 1 to 36500');
    case 'contains':
    case 'starts_with':
      return typeof value === 'string' && value.length >= 1 && value.length <= 1000 ? undefined : bad('must be a string of 1 to 1000 characters');
    case 'eq':
    case 'neq':
      if (typeof value === 'string') return value.length <= 1000 ? undefined : bad('must be at most 1000 characters');
      return isFiniteNumber(value) || typeof value === 'boolean' ? undefined : bad('must be a string, a number or true / false');
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      return isFiniteNumber(value) || isDateText(value) ? undefined : bad('must be a number or an ISO 8601 date');
  }
}

/** The type a test reads its value as when nothing declares one: the first type that takes its operator and value. */
export function typeOfTest(test: ValueTest): AttributeType {
  const sample = Array.isArray(test.value) ? test.value[0] : test.value;
  if (test.operator === 'within_last_days' || test.operator === 'more_than_days_ago') return 'date';
  if (typeof sample === 'number') return 'number';
  if (typeof sample === 'boolean') return 'boolean';
  if (typeof sample === 'string' && ['gt', 'gte', 'lt', 'lte', 'between'].includes(test.operator)) return 'date';
  return 'text';
}

/** Why a (well-shaped) test does not fit `type`: its operator, or its value; undefined when it fits. */
export function misfit(type: AttributeType, test: ValueTest): { field: 'value' | 'operator'; error: string } | undefined {
  if (!OPERATORS_OF[type].includes(test.operator)) {
    return { field: 'operator', error: `is not an operator of ${type} attributes (${OPERATORS_OF[type].join(', ')})` };
  }
  if (test.value === undefined || test.operator === 'within_last_days' || test.operator === 'more_than_days_ago') return undefined;
  const values = Array.isArray(test.value) ? test.value : [test.value];
  const fits = values.every((v) =>
    type === 'text' ? typeof v === 'string' : type === 'number' ? typeof v === 'number' : type === 'boolean' ? typeof v === 'boolean' : isDateText(v),
  );
  const expected = { text: 'a string', number: 'a number', boolean: 'true or false', date: 'an ISO 8601 date' }[type];
  return fits ? undefined : { field: 'value', error: `must be ${expected}: the attribute is ${type}` };
}

/** `now − days`, as a bound parameter when the reference time is given, else from the database's clock. */
export function daysAgoSql(days: number, now: Date | undefined): SQL {
  return now ? sql`${new Date(now.getTime() - days * DAY_MS).toISOString()}::timestamptz` : sql`(now() - make_interval(days => ${days}::int))`;
}

const literal = (type: AttributeType, value: unknown): SQL => {
  switch (type) {
    case 'text':
      return sql`${value}::text`;
    case 'number':
      return sql`${value}::numeric`;
    case 'boolean':
      return sql`${value}::boolean`;
    case 'date':
      return sql`${new Date(readDate(value as string)!).toISOString()}::timestamptz`;
  }
};

/** The SQL of a test that fits `type`, on a jsonb expression; a NULL result (absent value) means it does not hold. */
export function testSql(type: AttributeType, json: SQL, test: ValueTest, now: Date | undefined): SQL {
  return compareSql(type, readAsSql(type, json), test, now);
}

/** The SQL of a test on a value already read as `type` (NULL: absent). */
export function compareSql(type: AttributeType, read: SQL, test: ValueTest, now: Date | undefined): SQL {
  const { value } = test;
  switch (test.operator) {
    case 'exists':
      return sql`(${read} IS NOT NULL)`;
    case 'not_exists':
      return sql`(${read} IS NULL)`;
    case 'eq':
      return sql`(${read} = ${literal(type, value)})`;
    case 'neq':
      return sql`(${read} IS DISTINCT FROM ${literal(type, value)})`;
    case 'in':
      return sql`(${read} = ANY(${sql.param(value)}::${sql.raw(type === 'number' ? 'numeric' : 'text')}[]))`;
    case 'contains':
      return sql`(strpos(${read}, ${value}::text) > 0)`;
    case 'starts_with':
      return sql`starts_with(${read}, ${value}::text)`;
    case 'gt':
      return sql`(${read} > ${literal(type, value)})`;
    case 'gte':
      return sql`(${read} >= ${literal(type, value)})`;
    case 'lt':
      return sql`(${read} < ${literal(type, value)})`;
    case 'lte':
      return sql`(${read} <= ${literal(type, value)})`;
    case 'between': {
      const [low, high] = value as [unknown, unknown];
      return sql`(${read} BETWEEN ${literal(type, low)} AND ${literal(type, high)})`;
    }
    case 'within_last_days':
      return sql`(${read} >= ${daysAgoSql(value as number, now)})`;
    case 'more_than_days_ago':
      return sql`(${read} < ${daysAgoSql(value as number, now)})`;
  }
}

/** The same test in memory, on a stored JSON value (undefined: absent). */
export function testHolds(type: AttributeType, stored: unknown, test: ValueTest, now: Date): boolean {
  return compareHolds(type, readAs(type, stored), test, now);
}

/** The same test in memory on a value already read as `type` (dates as ms; undefined: absent). */
export function compareHolds(type: AttributeType, read: string | number | boolean | undefined, test: ValueTest, now: Date): boolean {
  const as = (value: unknown) => (type === 'date' ? readDate(value as string) : value);
  const { value } = test;
  switch (test.operator) {
    case 'exists':
      return read !== undefined;
    case 'not_exists':
      return read === undefined;
    case 'eq':
      return read !== undefined && read === as(value);
    case 'neq':
      return read === undefined || read !== as(value);
    case 'in':
      return read !== undefined && (value as unknown[]).includes(read);
    case 'contains':
      return typeof read === 'string' && read.includes(value as string);
    case 'starts_with':
      return typeof read === 'string' && read.startsWith(value as string);
    case 'within_last_days':
      return read !== undefined && (read as number) >= now.getTime() - (value as number) * DAY_MS;
    case 'more_than_days_ago':
      return read !== undefined && (read as number) < now.getTime() - (value as number) * DAY_MS;
    case 'between': {
      const [low, high] = (value as [unknown, unknown]).map(as) as [number, number];
      return read !== undefined && (read as number) >= low && (read as number) <= high;
    }
    default: {
      if (read === undefined) return false;
      const bound = as(value) as number;
      const r = read as number;
      return test.operator === 'gt' ? r > bound : test.operator === 'gte' ? r >= bound : test.operator === 'lt' ? r < bound : r <= bound;
    }
  }
}
