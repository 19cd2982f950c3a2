// Schemas shared by every route: the error envelope, pagination and common path parameters.
import { z } from 'zod';
import { dateOrDateTime } from '../shared/instants.js';

export { dateOrDateTime, isoDate, isoDateTime } from '../shared/instants.js';

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

/** Who a row of another list is about, for a reader to recognise the person without opening them. */
export const subscriberSummary = z
  .object({
    id: z.string(),
    name: z.string().nullable().describe('From the attributes: name, else first and last name'),
    email: z.string().nullable(),
    phone: z.string().nullable(),
    externalId: z.string().nullable(),
    browser: z.string().nullable().describe('For a person known only by a device: its browser'),
    os: z.string().nullable().describe('… and its operating system'),
  })
  .meta({
    id: 'SubscriberSummary',
    description: 'The subscriber a row names, as a person reads it (name, email, phone, external id, else the device); null once deleted',
  });

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

/** A domain name, lower-cased: a project's email domain, a sending domain. */
export const domainName = z
  .string()
  .trim()
  .toLowerCase()
  // Labels of 1-63 letters, digits and inner hyphens (so IDN A-labels such as xn--bcher-kva pass), then a TLD.
  .regex(/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+([a-z]{2,63}|xn--[a-z0-9-]{1,59})$/, 'must be a domain name such as example.com');

/**
 * A query parameter holding JSON (`?mapping={"E-mail":"email"}`), read and then checked by `schema`; the document
 * shows it as the string it is on the wire.
 */
export const jsonQueryParam = <T extends z.ZodType>(schema: T) =>
  z
    .string()
    .transform((text, ctx) => {
      try {
        return JSON.parse(text) as unknown;
      } catch {
        ctx.addIssue({ code: 'custom', message: 'must be JSON (URL-encoded)' });
        return z.NEVER;
      }
    })
    .pipe(schema);

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
