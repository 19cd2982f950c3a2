// The instants Herald accepts: years 0001 to 9999 (UTC), the ISO 8601 years PostgreSQL reads back from ISO text,
// and the Zod schemas of dates and timestamps that hold every input to them.
import { z } from 'zod';

const MIN_INSTANT_MS = Date.parse('0001-01-01T00:00:00.000Z');
export const MAX_INSTANT_MS = Date.parse('9999-12-31T23:59:59.999Z');

export const INSTANT_RANGE_ERROR = 'must be between 0001-01-01 and 9999-12-31 (UTC)';

/** Whether an instant (ms since the epoch) lies within the accepted range. */
export const isStorableInstant = (ms: number): boolean => ms >= MIN_INSTANT_MS && ms <= MAX_INSTANT_MS;

/**
 * The instant an ISO date or timestamp names as written: a date is its UTC midnight, a local time is read as UTC
 * (its zone, applied later, moves it by less than a day).
 */
export function writtenInstant(value: string): number {
  if (/^\d{4}-\d{2}-\d{2}$/.test(value)) return Date.parse(`${value}T00:00:00Z`);
  return Date.parse(/(Z|[+-]\d{2}:\d{2})$/i.test(value) ? value : `${value}Z`);
}

/** Every date and instant input goes through this bound: PostgreSQL refuses year 0000 and years past 9999 as ISO text. */
const inRange = <T extends z.ZodType<string>>(schema: T) =>
  schema.refine((value) => isStorableInstant(writtenInstant(value)), {
    error: INSTANT_RANGE_ERROR,
    when: (payload) => payload.issues.length === 0, // a malformed value has its own error already
  });

/** A calendar day, YYYY-MM-DD, from 0001-01-01 to 9999-12-31. */
export const isoDate = inRange(z.iso.date());

/** A timestamp with an offset (or Z); `local: true` also takes a wall-clock time without one (e.g. a zoned sendAt). */
export const isoDateTime = (options: { local?: boolean } = {}) => inRange(z.iso.datetime({ offset: true, local: options.local ?? false }));

/** A range bound: a date (YYYY-MM-DD) or a timestamp with an offset, kept as written. */
export const dateOrDateTime = inRange(
  z.union([z.iso.date(), z.iso.datetime({ offset: true })], { error: 'must be an ISO 8601 date (YYYY-MM-DD) or timestamp with an offset' }),
);

