// The segment filter: its JSON shape (Zod, documented in OpenAPI), the compiler to one parameterised SQL predicate
// over subscribers, and an in-memory evaluator of the same semantics (used by the property test).
import { and, eq, gte, inArray, lt, lte, not, or, sql, type SQL } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import { z } from 'zod';
import { EMAIL_STATUSES, MARKETING_CONSENTS, type EmailStatus, SUBSCRIBER_BROWSERS, SUBSCRIBER_OSES, SUBSCRIBER_PLATFORMS, subscribers } from '../../db/schema.js';
import { attributeConditionSchema, attributeConditionSql, type AttributeCondition, type AttributeContext } from './attribute-condition.js';
import { dateRangeSchema, isDateOnly, rangeAfter, rangeEnd, rangeStart } from './date-range.js';
import { eventConditionSchema, eventConditionSql, type EventCondition } from './event-condition.js';
import type { AudienceScope } from './filter-values.js';

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

/** The spec's fields (spec §2.4) and Herald's consent fields: their shape and meaning are fixed. */
const fieldsShape = {
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
  subscriptionDate: dateRangeSchema
    .optional()
    .describe('subscribedAt within [from, to], both inclusive; a date (YYYY-MM-DD) covers its whole UTC day'),
};

type FieldFilter = z.output<z.ZodObject<typeof fieldsShape>>;
export type SegmentMembership = { inSegment: string } | { notInSegment: string };
/** One member of an `all` / `any` list. */
export type FilterCondition = SegmentFilter | AttributeCondition | EventCondition | SegmentMembership;
/** The filters object: the fixed fields, and the `all` / `any` lists of conditions (docs/TARGETING.md). */
export type SegmentFilter = FieldFilter & { all?: FilterCondition[] | undefined; any?: FilterCondition[] | undefined };

/** Groups nest at most this deep; the top-level object is level 1. */
export const MAX_GROUP_DEPTH = 3;
/** The key that makes a condition of each kind; a condition with none of them is a group. */
const RECOGNISING_KEYS = ['attribute', 'event', 'inSegment', 'notInSegment'] as const;
type ConditionKind = (typeof RECOGNISING_KEYS)[number] | 'group';

const kindOf = (condition: unknown): ConditionKind =>
  condition !== null && typeof condition === 'object' && !Array.isArray(condition)
    ? (RECOGNISING_KEYS.find((key) => key in condition) ?? 'group')
    : 'group';

const segmentId = z.string().min(1).max(100);
const kinds: Record<ConditionKind, z.ZodType> = {
  attribute: attributeConditionSchema,
  event: eventConditionSchema,
  inSegment: z.strictObject({ inSegment: segmentId.describe('Holds for the people of this saved segment (same project and environment)') }),
  notInSegment: z.strictObject({ notInSegment: segmentId.describe('Holds for the people not in this saved segment') }),
  get group() {
    return filterObject;
  },
};

/**
 * A condition is validated as the kind its recognising key names, so a mistake is reported on its own field rather than
 * as "matches none of five shapes"; the union after it only documents the kinds (and re-reads what already passed).
 */
const condition: z.ZodType<FilterCondition> = z.lazy(() =>
  z.preprocess(
    (input, ctx) => {
      const checked = kinds[kindOf(input)].safeParse(input);
      if (!checked.success) for (const issue of checked.error.issues) ctx.addIssue({ ...issue } as Parameters<typeof ctx.addIssue>[0]);
      return input;
    },
    z.union([kinds.group, kinds.attribute, kinds.event, kinds.inSegment, kinds.notInSegment]),
  ),
) as z.ZodType<FilterCondition>;

const conditionList = z.array(condition).min(1).max(50);

const filterObject = z
  .strictObject({
    ...fieldsShape,
    all: conditionList.optional().describe('Conditions (groups, attribute, event, segment membership) that all hold'),
    any: conditionList.optional().describe('Conditions of which at least one holds'),
  })
  .meta({
    id: 'SegmentFilters',
    description:
      'Subscriber filters keyed by field, all combined with AND. Array values mean "any of". `all` and `any` hold ' +
      'conditions: a nested filters object (a group, at most 3 levels deep), an attribute, an event, or membership of a ' +
      'saved segment (docs/TARGETING.md).',
  });

/** Where groups nest deeper than MAX_GROUP_DEPTH, read from the raw input before anything recurses into it. */
function tooDeep(value: unknown, level: number, path: (string | number)[], found: (string | number)[][]): void {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return;
  for (const key of ['all', 'any'] as const) {
    const list = (value as Record<string, unknown>)[key];
    if (!Array.isArray(list)) continue;
    list.forEach((item, i) => {
      if (kindOf(item) !== 'group' || item === null || typeof item !== 'object') return;
      if (level + 1 > MAX_GROUP_DEPTH) found.push([...path, key, i]);
      else tooDeep(item, level + 1, [...path, key, i], found);
    });
  }
}

export const segmentFilterSchema: z.ZodType<SegmentFilter> = z.preprocess((input, ctx) => {
  const found: (string | number)[][] = [];
  tooDeep(input, 1, [], found);
  for (const path of found) ctx.addIssue({ code: 'custom', path, message: `groups nest at most ${MAX_GROUP_DEPTH} levels deep` });
  return input;
}, filterObject) as z.ZodType<SegmentFilter>;



const DAY_MS = 86_400_000;

const lessThan = (column: PgColumn, bound: Date | undefined) => (bound === undefined ? undefined : lt(column, bound));

export const asArray = <T>(value: T | T[]): T[] => (Array.isArray(value) ? value : [value]);

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

/** What a filters tree refers to, resolved before it is compiled (`SegmentService.resolveContext`). */
export interface FilterContext extends AttributeContext {
  /** The saved segments the tree names, directly or through others; one not here matches nobody. */
  segments: ReadonlyMap<string, SegmentFilter>;
}

export const EMPTY_CONTEXT: FilterContext = { attributeTypes: new Map(), longTexts: new Set(), segments: new Map() };

export interface CompileOptions {
  /** The reference time for lastSeenDays and every "days" condition; default: the database's now(). */
  now?: Date | undefined;
  /** Attribute types, long texts and named segments; default: none known. */
  context?: FilterContext | undefined;
  /**
   * The project and environment of a whole audience (a count, a campaign's snapshot): attribute and event conditions
   * then compile to sets of that environment's people, read from indexes. Without it, to a test of each person on its
   * own (one person's check).
   */
  audience?: AudienceScope | undefined;
}

interface Compilation {
  context: FilterContext;
  now: Date | undefined;
  audience: AudienceScope | undefined;
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

/**
 * Turns a parsed filters tree into one SQL predicate over `subscribers` (undefined = everyone). Every user value is a
 * bound parameter; a condition on a segment that is not in the context, or that names itself, holds for nobody.
 */
export function compileSegmentFilter(filter: SegmentFilter, options: CompileOptions = {}): SQL | undefined {
  return compileGroup(filter, { context: options.context ?? EMPTY_CONTEXT, now: options.now, audience: options.audience }, new Set());
}

// A predicate may be NULL where the evaluator says false (an absent attribute). Under AND and OR that changes nothing a
// WHERE selects (both are monotone, and NULL selects no row as false does), so the tree is left as is there — which
// keeps its subqueries where PostgreSQL can turn them into joins. Only a NOT must see a definite value.
const definite = (predicate: SQL | undefined): SQL => (predicate === undefined ? sql`true` : sql`coalesce((${predicate}), false)`);

function compileCondition(condition: FilterCondition, compilation: Compilation, inside: ReadonlySet<string>): SQL {
  const { context, now, audience } = compilation;
  if ('attribute' in condition) return attributeConditionSql(condition, context, now, audience);
  if ('event' in condition) return eventConditionSql(condition, now, audience);
  if ('inSegment' in condition || 'notInSegment' in condition) {
    const id = 'inSegment' in condition ? condition.inSegment : condition.notInSegment;
    const saved = context.segments.get(id);
    const member = saved === undefined || inside.has(id) ? sql`false` : (compileGroup(saved, compilation, new Set([...inside, id])) ?? sql`true`);
    return 'inSegment' in condition ? member : sql`(NOT ${definite(member)})`;
  }
  return compileGroup(condition, compilation, inside) ?? sql`true`;
}

function compileGroup(filter: SegmentFilter, compilation: Compilation, inside: ReadonlySet<string>): SQL | undefined {
  const options = { now: compilation.now };
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

  if (filter.all !== undefined) parts.push(...filter.all.map((c) => compileCondition(c, compilation, inside)));
  if (filter.any !== undefined) parts.push(sql`(${sql.join(filter.any.map((c) => compileCondition(c, compilation, inside)), sql` OR `)})`);

  const defined = parts.filter((part): part is SQL => part !== undefined);
  return defined.length === 0 ? undefined : and(...defined);
}

/** Calls `visit` on every condition of the tree (not into the segments it names), with its path from the top. */
export function eachCondition(filter: SegmentFilter, visit: (condition: FilterCondition, path: (string | number)[]) => void, path: (string | number)[] = []): void {
  for (const key of ['all', 'any'] as const) {
    filter[key]?.forEach((condition, i) => {
      const at = [...path, key, i];
      visit(condition, at);
      if (!('attribute' in condition || 'event' in condition || 'inSegment' in condition || 'notInSegment' in condition)) eachCondition(condition, visit, at);
    });
  }
}

/** The saved segments a tree names directly. */
export function namedSegments(filter: SegmentFilter): Set<string> {
  const ids = new Set<string>();
  eachCondition(filter, (condition) => {
    if ('inSegment' in condition) ids.add(condition.inSegment);
    if ('notInSegment' in condition) ids.add(condition.notInSegment);
  });
  return ids;
}

/** Whether a tree holds anything beyond the fixed fields (conditions in all / any lists). */
export const hasConditions = (filter: SegmentFilter) => filter.all !== undefined || filter.any !== undefined;

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
