// The segment compiler against an in-memory evaluation of the same filters, on random data and random filters.
import { and, eq, sql } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant } from '../../../test/fixtures.js';
import { startTestApp, type TestApp } from '../../../test/harness.js';
import { channelAddresses, EMAIL_STATUSES, MARKETING_CONSENTS, SUBSCRIBER_BROWSERS, SUBSCRIBER_OSES, SUBSCRIBER_PLATFORMS, subscribers } from '../../db/schema.js';
import { newId } from '../../shared/ids.js';
import {
  compileSegmentFilter,
  CONSENT_CHANNELS,
  filterKey,
  segmentFilterSchema,
  type FilterableSubscriber,
  type SegmentFilter,
} from './segment-filter.js';
import { matchesSegmentFilter } from './filter-evaluator.js';
import { prng } from '../../../test/seeded-random.js';


const DAY = 86_400_000;
const NOW = new Date('2025-06-15T12:00:00.000Z');
const COUNTRIES = ['FR', 'US', 'DE', 'BR'] as const;
const CITIES = ['Paris', 'Austin', 'Berlin', "O'Brien; DROP TABLE subscribers"] as const;
const DEVICES = ['Apple iPhone', 'Apple iPad', 'Google Pixel'] as const;
const LANGUAGES = ['en', 'en-US', 'en-GB', 'fr', 'fr-CA', 'pt-BR', 'de'] as const;
const TAGS = ['a', 'b', 'c', 'd', 'e'] as const;
const YEAR_START = Date.parse('2024-01-01T00:00:00.000Z');
/** subscribedAt spans 40 days, so random date bounds often fall on a subscriber's day. */
const SPAN_DAYS = 40;

let t: TestApp;
let projectId: string;
const rows: (FilterableSubscriber & { id: string; email: string | null; phone: string | null })[] = [];
/** Shared addresses, so several subscribers read one address's consent; an address without a row is `subscribed`. */
const EMAILS = Array.from({ length: 30 }, (_, i) => `person${i}@example.com`);
const PHONES = Array.from({ length: 30 }, (_, i) => `+1415555${String(1000 + i)}`);
/** `<channel>:<address>` → the consent stored in channel_addresses. */
const consentRows = new Map<string, string>();
/** An email address → why it is out (the status_reason of its channel_addresses row); absent: reachable. */
const emailStates = new Map<string, string>();
const EMAIL_STATES = ['unsubscribed', 'bounced', 'complained', 'manual'] as const;

beforeAll(async () => {
  t = await startTestApp();
  const tenant = await createTenant(t);
  projectId = tenant.projectId;
  const rnd = prng(20250615);
  const maybe = <T>(value: T) => (rnd.chance(0.15) ? null : value);
  const consentOf = consentRows;
  for (const channel of CONSENT_CHANNELS) {
    for (const address of channel === 'email' ? EMAILS : PHONES) {
      if (rnd.chance(0.6)) consentOf.set(`${channel}:${address}`, rnd.pick(MARKETING_CONSENTS));
    }
  }
  for (const address of EMAILS) if (rnd.chance(0.5)) emailStates.set(address, rnd.pick(EMAIL_STATES));
  const emailStatusOf = (email: string | null) => {
    if (email === null) return 'none';
    const state = emailStates.get(email.toLowerCase());
    return state === undefined || state === 'manual' ? 'active' : state;
  };
  for (let i = 0; i < 400; i++) {
    const email = rnd.chance(0.3) ? null : rnd.pick(EMAILS);
    const phone = rnd.chance(0.4) ? null : rnd.pick(PHONES);
    const consent = (channel: (typeof CONSENT_CHANNELS)[number], address: string | null) =>
      address === null ? null : (consentOf.get(`${channel}:${address}`) ?? 'subscribed');
    rows.push({
      id: newId('sub'),
      // An upper-cased email now and then: consent is per address, case-insensitively.
      email: email && rnd.chance(0.2) ? email.toUpperCase() : email,
      phone,
      consent: { email: consent('email', email), sms: consent('sms', phone), whatsapp: consent('whatsapp', phone) },
      platform: maybe(rnd.pick(SUBSCRIBER_PLATFORMS)),
      browser: maybe(rnd.pick(SUBSCRIBER_BROWSERS)),
      os: maybe(rnd.pick(SUBSCRIBER_OSES)),
      country: maybe(rnd.pick(COUNTRIES)),
      city: maybe(rnd.pick(CITIES)),
      device: maybe(rnd.pick(DEVICES)),
      language: maybe(rnd.pick(LANGUAGES)),
      tags: rnd.subset(TAGS),
      emailStatus: emailStatusOf(email),
      // Whole milliseconds within SPAN_DAYS; exactly midnight or the last millisecond of a day now and then, for the bounds.
      subscribedAt: new Date(
        rnd.chance(0.1)
          ? YEAR_START + rnd.int(0, SPAN_DAYS) * DAY
          : rnd.chance(0.15)
            ? YEAR_START + rnd.int(1, SPAN_DAYS) * DAY - 1
            : YEAR_START + rnd.int(0, SPAN_DAYS * DAY),
      ),
      // Never on a whole-day boundary from NOW, so lastSeenDays has no ties.
      lastSeenAt: new Date(NOW.getTime() - (rnd.int(0, 60) + 0.5) * DAY),
    });
  }
  const keys = new Set([...consentOf.keys(), ...[...emailStates.keys()].map((address) => `email:${address}`)]);
  await t.database.db.insert(channelAddresses).values(
    [...keys].map((key) => {
      const [channel, address] = key.split(':') as [(typeof CONSENT_CHANNELS)[number], string];
      const state = channel === 'email' ? emailStates.get(address) : undefined;
      const status = state === undefined ? ('reachable' as const) : state === 'bounced' ? ('unreachable' as const) : ('opted_out' as const);
      return { projectId, sandbox: false, channel, address, status, statusReason: state ?? null, consent: (consentOf.get(key) ?? 'subscribed') as (typeof MARKETING_CONSENTS)[number] };
    }),
  );
  await t.database.db.insert(subscribers).values(
    rows.map(({ consent: _consent, emailStatus: _emailStatus, ...row }, i) => ({
      ...row,
      projectId,
      token: `st_prop_${i}`,
      endpoint: `https://push.example.com/${i}`,
      platform: row.platform as (typeof SUBSCRIBER_PLATFORMS)[number] | null,
      browser: row.browser as (typeof SUBSCRIBER_BROWSERS)[number] | null,
      os: row.os as (typeof SUBSCRIBER_OSES)[number] | null,
    })),
  );
});
afterAll(() => t.close());

function randomFilter(rnd: ReturnType<typeof prng>): Record<string, unknown> {
  const filter: Record<string, unknown> = {};
  const oneOrMany = <T>(items: readonly T[]) => (rnd.chance(0.5) ? rnd.pick(items) : rnd.subset(items, 1));
  if (rnd.chance(0.25)) filter.platform = oneOrMany(SUBSCRIBER_PLATFORMS);
  if (rnd.chance(0.25)) filter.browser = oneOrMany(SUBSCRIBER_BROWSERS);
  if (rnd.chance(0.25)) filter.os = oneOrMany(SUBSCRIBER_OSES);
  if (rnd.chance(0.25)) filter.country = oneOrMany([...COUNTRIES, 'fr', 'JP']);
  if (rnd.chance(0.2)) filter.city = oneOrMany(CITIES);
  if (rnd.chance(0.2)) filter.device = oneOrMany(DEVICES);
  if (rnd.chance(0.25)) filter.language = oneOrMany([...LANGUAGES, 'en-us', 'pt', 'es']);
  if (rnd.chance(0.35)) {
    if (rnd.chance(0.4)) filter.tags = rnd.subset(TAGS, 1);
    else {
      const tags: Record<string, string[]> = {};
      if (rnd.chance(0.5)) tags.any = rnd.subset(TAGS, 1);
      if (rnd.chance(0.5)) tags.all = rnd.subset(TAGS, 1);
      if (rnd.chance(0.5) || Object.keys(tags).length === 0) tags.none = rnd.subset(TAGS, 1);
      filter.tags = tags;
    }
  }
  if (rnd.chance(0.25)) filter.lastSeenDays = rnd.int(1, 70);
  if (rnd.chance(0.25)) filter.emailStatus = oneOrMany(EMAIL_STATUSES);
  for (const channel of CONSENT_CHANNELS) if (rnd.chance(0.2)) filter[`${channel}Consent`] = oneOrMany(MARKETING_CONSENTS);
  if (rnd.chance(0.3)) {
    const a = YEAR_START + rnd.int(-3, SPAN_DAYS + 3) * DAY + (rnd.chance(0.5) ? rnd.int(0, DAY) : 0);
    const b = YEAR_START + rnd.int(-3, SPAN_DAYS + 3) * DAY + (rnd.chance(0.5) ? rnd.int(0, DAY) : 0);
    const format = (ms: number) => (rnd.chance(0.5) ? new Date(ms).toISOString().slice(0, 10) : new Date(ms).toISOString());
    const [from, to] = a <= b ? [a, b] : [b, a];
    const range: Record<string, string> = {};
    if (rnd.chance(0.7)) range.from = format(from);
    if (rnd.chance(0.7) || !range.from) range.to = format(to);
    filter.subscriptionDate = range;
  }
  return filter;
}

async function sqlIds(filter: SegmentFilter): Promise<string[]> {
  const found = await t.database.db
    .select({ id: subscribers.id })
    .from(subscribers)
    .where(and(eq(subscribers.projectId, projectId), compileSegmentFilter(filter, { now: NOW })));
  return found.map((r) => r.id).sort();
}

const memoryIds = (filter: SegmentFilter) =>
  rows
    .filter((row) => matchesSegmentFilter(filter, row, NOW))
    .map((r) => r.id)
    .sort();

describe('segment compiler', () => {
  it('matches the in-memory evaluation on 500 random filters', async () => {
    const seed = Number(process.env.SEGMENT_PROPERTY_SEED ?? Date.now() % 1_000_000);
    const rnd = prng(seed);
    let nonTrivial = 0;
    for (let i = 0; i < 500; i++) {
      const input = randomFilter(rnd);
      const parsed = segmentFilterSchema.safeParse(input);
      expect(parsed.success, `seed ${seed} case ${i}: ${JSON.stringify(input)} ${parsed.error?.message}`).toBe(true);
      const filter = parsed.data!;
      const expected = memoryIds(filter);
      if (expected.length > 0 && expected.length < rows.length) nonTrivial++;
      expect(await sqlIds(filter), `seed ${seed} case ${i}: ${JSON.stringify(input)}`).toEqual(expected);
    }
    expect(nonTrivial).toBeGreaterThan(150);
  });

  it.each<[string, Record<string, unknown>, (row: (typeof rows)[number]) => boolean]>([
    ['platform value', { platform: 'mobile' }, (r) => r.platform === 'mobile'],
    ['browser array', { browser: ['Chrome', 'Edge'] }, (r) => r.browser === 'Chrome' || r.browser === 'Edge'],
    ['os', { os: 'iOS' }, (r) => r.os === 'iOS'],
    ['country lower case', { country: ['fr', 'de'] }, (r) => r.country === 'FR' || r.country === 'DE'],
    ['city with quotes', { city: "O'Brien; DROP TABLE subscribers" }, (r) => r.city === "O'Brien; DROP TABLE subscribers"],
    ['device', { device: 'Apple iPad' }, (r) => r.device === 'Apple iPad'],
    ['language prefix', { language: 'en' }, (r) => r.language === 'en' || !!r.language?.startsWith('en-')],
    ['language region', { language: 'en-us' }, (r) => r.language === 'en-US'],
    ['tags array = any', { tags: ['a', 'b'] }, (r) => r.tags.includes('a') || r.tags.includes('b')],
    ['tags all', { tags: { all: ['a', 'b'] } }, (r) => r.tags.includes('a') && r.tags.includes('b')],
    ['tags none', { tags: { none: ['a'] } }, (r) => !r.tags.includes('a')],
    ['lastSeenDays', { lastSeenDays: 7 }, (r) => r.lastSeenAt.getTime() >= NOW.getTime() - 7 * DAY],
    ['emailStatus (the address’s; a manual suppression is active)', { emailStatus: ['bounced', 'none', 'active'] }, (r) => ['bounced', 'none', 'active'].includes(r.emailStatus)],
    [
      'emailConsent (no row: subscribed; case-insensitive address)',
      { emailConsent: 'subscribed' },
      (r) => r.email !== null && (consentRows.get(`email:${r.email.toLowerCase()}`) ?? 'subscribed') === 'subscribed',
    ],
    ['smsConsent', { smsConsent: ['transactional', 'unsubscribed'] }, (r) => r.phone !== null && (consentRows.get(`sms:${r.phone}`) ?? 'subscribed') !== 'subscribed'],
    [
      'subscriptionDate dates (inclusive)',
      { subscriptionDate: { from: '2024-01-10', to: '2024-01-20' } },
      (r) => r.subscribedAt.getTime() >= Date.parse('2024-01-10') && r.subscribedAt.getTime() < Date.parse('2024-01-21'),
    ],
    ['subscriptionDate from only', { subscriptionDate: { from: '2024-01-30T00:00:00Z' } }, (r) => r.subscribedAt >= new Date('2024-01-30')],
    ['subscriptionDate to only', { subscriptionDate: { to: '2024-01-05' } }, (r) => r.subscribedAt < new Date('2024-01-06')],
    ['empty filter', {}, () => true],
  ])('%s', async (_name, input, predicate) => {
    const filter = segmentFilterSchema.parse(input);
    const expected = rows
      .filter(predicate)
      .map((r) => r.id)
      .sort();
    expect(expected.length).toBeGreaterThan(0);
    expect(await sqlIds(filter)).toEqual(expected);
    expect(memoryIds(filter)).toEqual(expected);
  });

  it('uses the database clock for lastSeenDays when no time is given', async () => {
    await t.database.db.insert(subscribers).values({
      id: newId('sub'),
      projectId,
      token: 'st_recent',
      endpoint: 'https://push.example.com/recent',
      lastSeenAt: new Date(Date.now() - 2 * DAY),
      tags: ['recent-only'],
    });
    const found = await t.database.db
      .select({ token: subscribers.token })
      .from(subscribers)
      .where(and(eq(subscribers.projectId, projectId), compileSegmentFilter(segmentFilterSchema.parse({ lastSeenDays: 3 }))));
    expect(found.map((r) => r.token)).toEqual(['st_recent']);
    await t.database.db.delete(subscribers).where(eq(subscribers.token, 'st_recent'));
  });

  it('binds every value as a parameter', () => {
    const filter = segmentFilterSchema.parse({
      city: "x'; DROP TABLE subscribers; --",
      tags: { any: ["t'1"], none: ['t2'] },
      language: 'pt-BR',
      subscriptionDate: { from: '2024-01-01', to: '2024-02-01' },
      lastSeenDays: 3,
    });
    const query = new PgDialect().sqlToQuery(compileSegmentFilter(filter)!);
    expect(query.sql).not.toContain('DROP');
    expect(query.sql).not.toContain("t'1");
    expect(query.sql).not.toContain('pt-BR');
    expect(query.params).toContain("x'; DROP TABLE subscribers; --");
    expect(query.params).toContainEqual(["t'1"]);
    expect(query.params).toContain(3);
  });

  it('returns no predicate for an empty filter', () => {
    expect(compileSegmentFilter(segmentFilterSchema.parse({}))).toBeUndefined();
    expect(sql`x`).toBeDefined();
  });
});

describe('segment filter schema', () => {
  it.each<[Record<string, unknown>, string]>([
    [{ colour: 'red' }, 'colour'],
    [{ platform: 'tv' }, 'platform'],
    [{ browser: ['Chrome', 'Opera'] }, 'browser'],
    [{ country: 'FRA' }, 'country'],
    [{ language: 'en_US' }, 'language'],
    [{ tags: [] }, 'tags'],
    [{ tags: { some: ['a'] } }, 'tags'],
    [{ tags: {} }, 'tags'],
    [{ lastSeenDays: 0 }, 'lastSeenDays'],
    [{ lastSeenDays: 1.5 }, 'lastSeenDays'],
    [{ emailStatus: 'pending' }, 'emailStatus'],
    [{ subscriptionDate: { from: '2024-13-01' } }, 'subscriptionDate'],
    [{ subscriptionDate: { from: '2024-02-01', to: '2024-01-01' } }, 'subscriptionDate'],
    [{ subscriptionDate: {} }, 'subscriptionDate'],
    [{ subscriptionDate: { since: '2024-01-01' } }, 'subscriptionDate'],
  ])('rejects %j naming %s', (input, field) => {
    const result = segmentFilterSchema.safeParse(input);
    expect(result.success).toBe(false);
    const named = result.error!.issues.flatMap((issue) => [
      String(issue.path[0] ?? ''),
      ...((issue as { keys?: string[] }).keys ?? []),
    ]);
    expect(named).toContain(field);
  });

  it('gives the same cache key whatever the key order', () => {
    const a = segmentFilterSchema.parse({ country: 'fr', tags: { none: ['x'], any: ['y'] } });
    const b = segmentFilterSchema.parse({ tags: { any: ['y'], none: ['x'] }, country: 'FR' });
    expect(filterKey(a)).toBe(filterKey(b));
  });
});
