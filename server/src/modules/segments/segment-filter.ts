// The segment filter: its JSON shape (Zod, documented in OpenAPI), the compiler to one parameterised SQL predicate
// over subscribers, and an in-memory evaluator of the same semantics (used by the property test).
import { and, eq, gte, inArray, lt, lte, not, or, sql, type SQL } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import { z } from 'zod';
import { EMAIL_STATUSES, MARKETING_CONSENTS, type EmailStatus, SUBSCRIBER_BROWSERS, SUBSCRIBER_OSES, SUBSCRIBER_PLATFORMS, subscribers } from '../../db/schema.js';
import { dateOrDateTime, MAX_INSTANT_MS } from '../../shared/instants.js';

/** A value, or a non-empty array meaning "any of". */
const oneOrMany = <T extends z.ZodType>(item: T) => z.union([item, z.array(item).min(1).max(500)]);

const countryCode = z
  .string()
  .regex(/^[A-Za-z]{2}$/, 'must be an ISO 3166-1 alpha-2 code')
  .overwrite((v) => v.toUpperCase());

const languageTag = z
  .string()
  .regex(/^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$/, 'must be a BCP 47 language tag such as en or pt-BR')
  // Checks go on after a failed regex, so canonicalisation must not throw on a malformed tag.
  .overwrite((tag) => {
    try {
      return Intl.getCanonicalLocales(tag)[0] ?? tag;
    } catch {
      return tag;
    }
  });

const text = z.string().min(1).max(200);
const tag = z.string().trim().min(1).max(64);
const tagList = z.array(tag).min(1).max(500);

export const segmentFilterSchema = z
  .strictObject({
    platform: oneOrMany(z.enum(SUBSCRIBER_PLATFORMS)).optional(),
    browser: oneOrMany(z.enum(SUBSCRIBER_BROWSERS)).optional(),
    os: oneOrMany(z.enum(SUBSCRIBER_OSES)).optional(),
    country: oneOrMany(countryCode).optional().describe('ISO 3166-1 alpha-2 code(s), case-insensitive'),
    city: oneOrMany(text).optional().describe('Exact city name(s)'),
    device: oneOrMany(text).optional().describe('Exact device name(s), e.g. "Apple iPhone"'),
    language: oneOrMany(languageTag)
      .optional()
      .describe('BCP 47 tag(s); "en" also matches "en-US" and every other "en-…" tag'),
    tags: z
      .union([
        tagList,
        z
          .strictObject({ any: tagList.optional(), all: tagList.optional(), none: tagList.optional() })
          .refine((v) => v.any || v.all || v.none, 'must name at least one of any, all, none'),
      ])
      .optional()
      .describe('An array (has any of these tags), or {any?, all?, none?} arrays combined with AND'),
    lastSeenDays: z.number().int().min(1).max(36500).optional().describe('Seen within the last N days'),
    emailStatus: oneOrMany(z.enum(EMAIL_STATUSES)).optional(),
    emailConsent: oneOrMany(z.enum(MARKETING_CONSENTS))
      .optional()
      .describe('Marketing consent of the email address: subscribed, transactional (only ever sent transactional email), unsubscribed'),
    smsConsent: oneOrMany(z.enum(MARKETING_CONSENTS)).optional().describe('Marketing consent of the phone number on SMS'),
    whatsappConsent: oneOrMany(z.enum(MARKETING_CONSENTS)).optional().describe('Marketing consent of the phone number on WhatsApp'),
    subscriptionDate: z
      .strictObject({ from: dateOrDateTime.optional(), to: dateOrDateTime.optional() })
      .refine((v) => v.from !== undefined || v.to !== undefined, 'must name from, to or both')
      .refine((v) => !v.from || !v.to || rangeStart(v.from) <= rangeEnd(v.to), 'from must not be after to')
      .optional()
      .describe('subscribedAt within [from, to], both inclusive; a date (YYYY-MM-DD) covers its whole UTC day'),
  })
  .meta({
    id: 'SegmentFilters',
    description: 'Subscriber filters keyed by field, all combined with AND. Array values mean "any of".',
  });

export type SegmentFilter = z.output<typeof segmentFilterSchema>;

const DAY_MS = 86_400_000;
const isDateOnly = (value: string) => /^\d{4}-\d{2}-\d{2}$/.test(value);
/** First instant of a `from` bound. */
export const rangeStart = (value: string) => new Date(isDateOnly(value) ? `${value}T00:00:00.000Z` : value).getTime();
/** Last instant (inclusive) of a `to` bound: a date covers its whole UTC day. */
const rangeEnd = (value: string) =>
  isDateOnly(value) ? new Date(`${value}T00:00:00.000Z`).getTime() + DAY_MS - 1 : new Date(value).getTime();

/** The first instant after a `to` bound, its exclusive end; none after 9999-12-31, where nothing can lie beyond. */
export const rangeAfter = (value: string): Date | undefined => {
  const next = rangeEnd(value) + 1;
  return next > MAX_INSTANT_MS ? undefined : new Date(next);
};

const lessThan = (column: PgColumn, bound: Date | undefined) => (bound === undefined ? undefined : lt(column, bound));

const asArray = <T>(value: T | T[]): T[] => (Array.isArray(value) ? value : [value]);

/** The channels whose marketing consent is kept per address (push: a browser subscription is the opt-in). */
export const CONSENT_CHANNELS = ['email', 'sms', 'whatsapp'] as const;
export type ConsentChannel = (typeof CONSENT_CHANNELS)[number];

/** `subscribers`, or an alias of it (`alias(subscribers, 's')`) in a statement that names it so. */
type SubscriberColumns = Record<'projectId' | 'sandbox' | 'email' | 'phone' | 'endpoint', PgColumn>;

/**
 * Drizzle writes the bare columns of a one-table selection or RETURNING unqualified (`"project_id"`), which inside
 * a subquery over `channel_addresses a` would name a's own: nested, they keep their table's name.
 */
const qualified = <T>(expression: SQL): SQL<T> => sql<T>`${expression}`;

/**
 * A subscriber's marketing consent on `channel` (docs/CONTEXT.md, "Marketing consent"): what `channel_addresses` says
 * of its address (email lower-cased, the E.164 phone) in its environment, `subscribed` when it says nothing, null
 * without an address. The one reading of consent in SQL over `subscribers`.
 */
export function marketingConsentOf(channel: ConsentChannel, s: SubscriberColumns = subscribers): SQL<string | null> {
  const address = channel === 'email' ? sql`lower(${s.email})` : sql`${s.phone}`;
  return qualified(sql`CASE WHEN ${address} IS NULL THEN NULL ELSE coalesce((SELECT a.consent::text FROM channel_addresses a
    WHERE a.project_id = ${s.projectId} AND a.sandbox = ${s.sandbox} AND a.channel = ${channel} AND a.address = ${address}),
    'subscribed') END`);
}


/** The fields the compiler and evaluator read from a subscriber. */
export interface FilterableSubscriber {
  platform: string | null;
  browser: string | null;
  os: string | null;
  country: string | null;
  city: string | null;
  device: string | null;
  language: string | null;
  tags: string[];
  emailStatus: string;
  /** Marketing consent per channel; null: no address on it. */
  consent: Record<ConsentChannel, string | null>;
  subscribedAt: Date;
  lastSeenAt: Date;
}

export interface CompileOptions {
  /** The reference time for lastSeenDays; default: the database's now(). */
  now?: Date;
}

/**
 * A subscriber's email status (docs/CONTEXT.md, "Email status"): `none` without an address; else what
 * `channel_addresses` says of the address (lower-cased) in its environment when a person or a provider stopped it
 * (`unsubscribed`, `bounced`, `complained`; an unreachable address with a provider's code reads `bounced`), `active`
 * otherwise: a project's manual suppression keeps its subscribers `active` (they are still left out of every send).
 * The one reading of it in SQL over `subscribers`.
 */
export function emailStatusOf(s: SubscriberColumns = subscribers): SQL<EmailStatus> {
  return qualified(sql`CASE WHEN ${s.email} IS NULL THEN 'none' ELSE coalesce((SELECT CASE
      WHEN a.status_reason IN ('unsubscribed', 'bounced', 'complained') THEN a.status_reason WHEN a.status = 'unreachable' THEN 'bounced' END
    FROM channel_addresses a
    WHERE a.project_id = ${s.projectId} AND a.sandbox = ${s.sandbox} AND a.channel = 'email' AND a.address = lower(${s.email})
      AND a.status <> 'reachable'), 'active') END`);
}

/** Turns a parsed filter into one SQL predicate (undefined = everyone). Every user value is a bound parameter. */
export function compileSegmentFilter(filter: SegmentFilter, options: CompileOptions = {}): SQL | undefined {
  const parts: (SQL | undefined)[] = [];
  const anyOf = (column: PgColumn, value: string | string[] | undefined) => {
    if (value === undefined) return;
    const values = asArray(value);
    parts.push(values.length === 1 ? eq(column, values[0]) : inArray(column, values));
  };
  anyOf(subscribers.platform, filter.platform);
  anyOf(subscribers.browser, filter.browser);
  anyOf(subscribers.os, filter.os);
  anyOf(subscribers.country, filter.country);
  anyOf(subscribers.city, filter.city);
  anyOf(subscribers.device, filter.device);
  if (filter.emailStatus !== undefined) parts.push(inArray(emailStatusOf(), asArray(filter.emailStatus)));
  for (const channel of CONSENT_CHANNELS) {
    const wanted = filter[`${channel}Consent`];
    if (wanted !== undefined) parts.push(inArray(marketingConsentOf(channel), asArray(wanted)));
  }

  if (filter.language !== undefined) {
    // Tags are validated to [A-Za-z0-9-], so no LIKE wildcard can come from the caller.
    parts.push(
      or(
        ...asArray(filter.language).map((language) =>
          or(eq(subscribers.language, language), sql`${subscribers.language} like ${`${language}-%`}`),
        ),
      ),
    );
  }

  if (filter.tags !== undefined) {
    const tags = Array.isArray(filter.tags) ? { any: filter.tags } : filter.tags;
    if (tags.any) parts.push(sql`${subscribers.tags} && ${sql.param(tags.any)}::text[]`);
    if (tags.all) parts.push(sql`${subscribers.tags} @> ${sql.param(tags.all)}::text[]`);
    if (tags.none) parts.push(not(sql`${subscribers.tags} && ${sql.param(tags.none)}::text[]`));
  }

  if (filter.lastSeenDays !== undefined) {
    parts.push(
      options.now
        ? gte(subscribers.lastSeenAt, new Date(options.now.getTime() - filter.lastSeenDays * DAY_MS))
        : sql`${subscribers.lastSeenAt} >= now() - make_interval(days => ${filter.lastSeenDays}::int)`,
    );
  }

  if (filter.subscriptionDate !== undefined) {
    const { from, to } = filter.subscriptionDate;
    if (from !== undefined) parts.push(gte(subscribers.subscribedAt, new Date(rangeStart(from))));
    if (to !== undefined) {
      // A date's day ends before the next midnight: compare with < next day so sub-millisecond times are covered.
      parts.push(isDateOnly(to) ? lessThan(subscribers.subscribedAt, rangeAfter(to)) : lte(subscribers.subscribedAt, new Date(rangeEnd(to))));
    }
  }

  const defined = parts.filter((part): part is SQL => part !== undefined);
  return defined.length === 0 ? undefined : and(...defined);
}

/** The same semantics as compileSegmentFilter, on one subscriber in memory. */
export function matchesSegmentFilter(filter: SegmentFilter, subscriber: FilterableSubscriber, now: Date): boolean {
  const anyOf = (value: string | string[] | undefined, actual: string | null) =>
    value === undefined || (actual !== null && asArray(value).includes(actual));
  if (!anyOf(filter.platform, subscriber.platform)) return false;
  if (!anyOf(filter.browser, subscriber.browser)) return false;
  if (!anyOf(filter.os, subscriber.os)) return false;
  if (!anyOf(filter.country, subscriber.country)) return false;
  if (!anyOf(filter.city, subscriber.city)) return false;
  if (!anyOf(filter.device, subscriber.device)) return false;
  if (!anyOf(filter.emailStatus, subscriber.emailStatus)) return false;
  if (!CONSENT_CHANNELS.every((channel) => anyOf(filter[`${channel}Consent`], subscriber.consent[channel]))) return false;
  if (filter.language !== undefined) {
    const language = subscriber.language;
    if (language === null || !asArray(filter.language).some((l) => language === l || language.startsWith(`${l}-`))) return false;
  }
  if (filter.tags !== undefined) {
    const tags = Array.isArray(filter.tags) ? { any: filter.tags } : filter.tags;
    const has = (t: string) => subscriber.tags.includes(t);
    if (tags.any && !tags.any.some(has)) return false;
    if (tags.all && !tags.all.every(has)) return false;
    if (tags.none && tags.none.some(has)) return false;
  }
  if (filter.lastSeenDays !== undefined && subscriber.lastSeenAt.getTime() < now.getTime() - filter.lastSeenDays * DAY_MS) {
    return false;
  }
  if (filter.subscriptionDate !== undefined) {
    const at = subscriber.subscribedAt.getTime();
    const { from, to } = filter.subscriptionDate;
    if (from !== undefined && at < rangeStart(from)) return false;
    if (to !== undefined && at > rangeEnd(to)) return false;
  }
  return true;
}

/** A stable key for a parsed filter (object keys sorted), for caches. */
export function filterKey(filter: SegmentFilter): string {
  const sort = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(sort)
      : value && typeof value === 'object'
        ? Object.fromEntries(
            Object.entries(value as Record<string, unknown>)
              .filter(([, v]) => v !== undefined)
              .sort(([a], [b]) => (a < b ? -1 : 1))
              .map(([k, v]) => [k, sort(v)]),
          )
        : value;
  return JSON.stringify(sort(filter));
}
