// A range of days or instants, `{ from?, to? }` (a date covers its whole UTC day), as subscriptionDate and event windows take it.
import { z } from 'zod';
import { dateOrDateTime, MAX_INSTANT_MS } from '../../shared/instants.js';

const DAY_MS = 86_400_000;
export const isDateOnly = (value: string) => /^\d{4}-\d{2}-\d{2}$/.test(value);
/** First instant of a `from` bound. */
export const rangeStart = (value: string) => new Date(isDateOnly(value) ? `${value}T00:00:00.000Z` : value).getTime();
/** Last instant (inclusive) of a `to` bound: a date covers its whole UTC day. */
export const rangeEnd = (value: string) =>
  isDateOnly(value) ? new Date(`${value}T00:00:00.000Z`).getTime() + DAY_MS - 1 : new Date(value).getTime();

/** The first instant after a `to` bound, its exclusive end; none after 9999-12-31, where nothing can lie beyond. */
export const rangeAfter = (value: string): Date | undefined => {
  const next = rangeEnd(value) + 1;
  return next > MAX_INSTANT_MS ? undefined : new Date(next);
};

export const dateRangeSchema = z
  .strictObject({ from: dateOrDateTime.optional(), to: dateOrDateTime.optional() })
  .refine((v) => v.from !== undefined || v.to !== undefined, 'must name from, to or both')
  .refine((v) => !v.from || !v.to || rangeStart(v.from) <= rangeEnd(v.to), 'from must not be after to');

export type DateRange = z.output<typeof dateRangeSchema>;

/** Whether an instant (ms) lies in the range, both bounds inclusive. */
export const inRange = (range: DateRange, at: number) =>
  (range.from === undefined || at >= rangeStart(range.from)) && (range.to === undefined || at <= rangeEnd(range.to));
