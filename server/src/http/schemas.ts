// Schemas shared by every route: the error envelope, pagination and common path parameters.
import { z } from 'zod';
import { INSTANT_RANGE_ERROR, isStorableInstant } from '../shared/instants.js';

export const errorEnvelope = z
  .object({
    statusCode: z.number().int().describe('Equals the HTTP status'),
    code: z.string().describe('Stable machine-readable error code'),
    message: z.string().describe('Human-readable message'),
    requestId: z.string().describe('Id of the request; quote it to support'),
    details: z
      .array(z.object({ field: z.string(), error: z.string() }))
      .optional()
      .describe('Only on 422: one entry per failing field'),
  })
  .meta({ id: 'Error' });

export const paginationQuery = {
  page: z.coerce.number().int().min(1).default(1).describe('1-based page number'),
  pageSize: z.coerce.number().int().min(1).max(100).default(20).describe('Items per page (max 100)'),
};

export const paginated = <T extends z.ZodType>(item: T) =>
  z.object({ data: z.array(item), page: z.number().int(), pageSize: z.number().int(), total: z.number().int() });

export const timestamp = z.string().describe('ISO 8601 timestamp');

/** An absolute http(s) URL as a browser will open it: no whitespace or control characters, at most 2048 characters. */
export const webUrl = z
  .string()
  .max(2048)
  .refine((value) => {
    if (/[\s\p{Cc}]/u.test(value)) return false;
    try {
      return ['http:', 'https:'].includes(new URL(value).protocol);
    } catch {
      return false;
    }
  }, 'must be an absolute http or https URL without spaces');

/**
 * The buttons of a web push (spec 2.2: `[{action, title}]`, `action` carries the URL). The service worker shows each
 * with `title` and, on a click on it (`event.action`), opens `action`.
 */
export const pushActions = z
  .array(
    z.strictObject({
      action: webUrl.describe('Required. The URL this button opens (what the service worker receives as event.action)'),
      title: z.string().trim().min(1).max(64).describe('Required. Button label'),
    }),
  )
  .max(2);

/**
 * The instant an ISO date or timestamp names as written: a date is its UTC midnight, a local time is read as UTC
 * (its zone, applied later, moves it by less than a day).
 */
function writtenInstant(value: string): number {
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

/** A range bound read as its first instant (a date is its UTC midnight). */
export const instant = dateOrDateTime.transform((value) => new Date(value));

export const timezone = z
  .string()
  .max(64)
  .refine((zone) => {
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: zone });
      return true;
    } catch {
      return false;
    }
  }, 'must be an IANA time zone such as Europe/Paris');

/** Error responses every authenticated route can produce, for the OpenAPI document. */
export const commonErrors = {
  400: errorEnvelope,
  401: errorEnvelope,
  403: errorEnvelope,
  404: errorEnvelope,
  422: errorEnvelope,
  429: errorEnvelope,
} as const;
