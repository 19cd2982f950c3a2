// Subscribers: every query is confined to what the caller may see (a project, or the projects of an organization;
// a test key sees only sandbox subscribers).
import { and, asc, count, desc, eq, getTableColumns, gt, gte, inArray, lt, sql, type SQL } from 'drizzle-orm';
import type pg from 'pg';
import type { Db } from '../../db/database.js';
import { campaigns, deliveries, deliveryEvents, messages, recipientName, subscriberName, subscribers, subscriberSearchText, transactionalSends, type Channel, type DeliveryEvent, type EmailStatus, type MarketingConsent } from '../../db/schema.js';
import { reachableRows } from '../../db/tenant-scope.js';
import type { ProjectScope, Reach } from '../tenancy.js';
import { emailStatusOf, marketingConsentOf, reachableOn } from '../segments/index.js';

/** A subscriber's marketing consent per channel; null where it has no address (push: no browser subscription). */
export type MarketingConsents = Record<'push' | 'email' | 'sms' | 'whatsapp', MarketingConsent | null>;

/** A subscriber as read: its columns, and its email status read from its address (`emailStatusOf`). */
export type SubscriberRow = typeof subscribers.$inferSelect & { emailStatus: EmailStatus };
export const subscriberRow = { ...getTableColumns(subscribers), emailStatus: emailStatusOf() };
export type NewSubscriberRow = typeof subscribers.$inferInsert;

/** The subscribers a caller may see (`reachableRows`). */
export const visibleTo = (db: Db, reach: Reach): SQL => reachableRows(db, reach, subscribers);

/** The predicate confining an audience figure to the caller's project and environment: live and test never mix there. */
function inEnvironment(scope: ProjectScope): SQL {
  return and(eq(subscribers.projectId, scope.projectId), eq(subscribers.sandbox, scope.sandbox))!;
}

/** A push registration: the columns a new subscriber is written with; the others take their defaults. */
export interface NewRegistration {
  id: string;
  projectId: string;
  token: string;
  endpoint: string;
  p256dh: string;
  auth: string;
  userAgent: string;
  platform: SubscriberRow['platform'];
  browser: SubscriberRow['browser'];
  os: SubscriberRow['os'];
  device: string | null;
  country: string | null;
  city: string | null;
  language: string | null;
  timezone: string | null;
  sandbox: boolean;
  /** createdAt, subscribedAt, updatedAt and lastSeenAt. */
  registeredAt: Date;
}

// One statement for any number of rows (one array per column), prepared once per connection: the registration hot
// path skips both the query builder and PostgreSQL's parse and plan (docs/PERFORMANCE.md, Ingest).
const INSERT_REGISTRATIONS = {
  name: 'subscribers_insert_registrations',
  text: `insert into subscribers (id, project_id, token, endpoint, p256dh, auth, user_agent, platform, browser, os, device,
                           country, city, language, timezone, sandbox, created_at, subscribed_at, updated_at, last_seen_at)
         select id, project_id, token, endpoint, p256dh, auth, user_agent, platform, browser, os, device,
                country, city, language, timezone, sandbox, at, at, at, at
         from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
                     $8::subscriber_platform[], $9::subscriber_browser[], $10::subscriber_os[], $11::text[], $12::text[],
                     $13::text[], $14::text[], $15::text[], $16::boolean[], $17::timestamptz[])
           as r(id, project_id, token, endpoint, p256dh, auth, user_agent, platform, browser, os, device,
                country, city, language, timezone, sandbox, at)
         on conflict (project_id, endpoint) do nothing
         returning id, project_id, sandbox`,
} as const;

/** A subscriber just registered, as its registration's transaction hands it over. */
export interface Registered {
  id: string;
  projectId: string;
  sandbox: boolean;
}

/**
 * What else a registration writes, on its connection and in its transaction (the composition root enrolls the new
 * subscribers in their `subscriber_added` automations), so that no registration commits without it.
 */
export type OnRegistered = (client: pg.ClientBase, registered: readonly Registered[]) => Promise<void>;

/**
 * Inserts the registrations (each names its own project) in one statement, with `onRegistered` in the same commit;
 * returns the ids of the rows inserted — a row whose project already has its endpoint is skipped, as is a later
 * duplicate in the batch. Runs on a pg connection: Drizzle's query builder has no named prepared raw statements.
 */
export async function insertRegistrations(pool: pg.Pool, rows: readonly NewRegistration[], onRegistered?: OnRegistered): Promise<Set<string>> {
  if (!onRegistered) return new Set((await pool.query<{ id: string }>(registrationsQuery(rows))).rows.map((row) => row.id));
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    const { rows: inserted } = await client.query<{ id: string; project_id: string; sandbox: boolean }>(registrationsQuery(rows));
    await onRegistered(client, inserted.map((r) => ({ id: r.id, projectId: r.project_id, sandbox: r.sandbox })));
    await client.query('COMMIT');
    return new Set(inserted.map((row) => row.id));
  } catch (error) {
    // A connection that cannot even roll back is dropped rather than handed to the next caller mid-transaction.
    await client.query('ROLLBACK').catch((rollback: Error) => (broken = rollback));
    throw error;
  } finally {
    client.release(broken);
  }
}

function registrationsQuery(rows: readonly NewRegistration[]) {
  const column = <T>(pick: (row: NewRegistration) => T) => rows.map(pick);
  return {
    ...INSERT_REGISTRATIONS,
    values: [
      column((r) => r.id),
      column((r) => r.projectId),
      column((r) => r.token),
      column((r) => r.endpoint),
      column((r) => r.p256dh),
      column((r) => r.auth),
      column((r) => r.userAgent),
      column((r) => r.platform),
      column((r) => r.browser),
      column((r) => r.os),
      column((r) => r.device),
      column((r) => r.country),
      column((r) => r.city),
      column((r) => r.language),
      column((r) => r.timezone),
      column((r) => r.sandbox),
      column((r) => r.registeredAt),
    ],
  };
}

export async function findByEndpoint(db: Db, projectId: string, endpoint: string): Promise<SubscriberRow | undefined> {
  const [row] = await db
    .select(subscriberRow)
    .from(subscribers)
    .where(and(eq(subscribers.projectId, projectId), eq(subscribers.endpoint, endpoint)));
  return row;
}

/**
 * Brings an `unsubscribed` subscriber back when its browser registers the same endpoint again, with the keys and user
 * agent it holds now; undefined when the row is not (or no longer) `unsubscribed` in the caller's environment.
 */
export async function resubscribe(db: Db, scope: ProjectScope, id: string, registration: NewRegistration): Promise<SubscriberRow | undefined> {
  const { p256dh, auth, userAgent, platform, browser, os, device, registeredAt: at } = registration;
  const [row] = await db
    .update(subscribers)
    .set({ status: 'active', statusReason: null, p256dh, auth, userAgent, platform, browser, os, device, subscribedAt: at, updatedAt: at, lastSeenAt: at })
    .where(and(inEnvironment(scope), eq(subscribers.id, id), eq(subscribers.status, 'unsubscribed')))
    .returning(subscriberRow);
  return row;
}

/** A subscriber's new push subscription: endpoint, keys and the user agent of the browser that holds it. */
export type PushSubscriptionUpdate = Pick<NewRegistration, 'endpoint' | 'p256dh' | 'auth' | 'userAgent' | 'platform' | 'browser' | 'os' | 'device'>;

/**
 * Replaces a subscriber's push subscription. A fresh subscription is its browser's consent, so an `unsubscribed`
 * subscriber is `active` again; an `inactive` one stays so (Herald or an operator decided it). Rejects with a unique
 * violation when another subscriber of the project holds the endpoint.
 */
export async function replacePushSubscription(db: Db, reach: Reach, token: string, update: PushSubscriptionUpdate): Promise<SubscriberRow | undefined> {
  const now = new Date();
  const revived = eq(subscribers.status, 'unsubscribed');
  const [row] = await db
    .update(subscribers)
    .set({
      ...update,
      status: sql`case when ${revived} then 'active'::subscriber_status else ${subscribers.status} end`,
      statusReason: sql`case when ${revived} then null else ${subscribers.statusReason} end`,
      subscribedAt: sql`case when ${revived} then ${now} else ${subscribers.subscribedAt} end`,
      updatedAt: now,
      lastSeenAt: now,
    })
    .where(and(visibleTo(db, reach), eq(subscribers.token, token)))
    .returning(subscriberRow);
  return row;
}

/** The person turned push off in the SDK: an `active` subscriber becomes `unsubscribed`; any other status is kept. */
export async function unsubscribeByToken(db: Db, reach: Reach, token: string): Promise<SubscriberRow | undefined> {
  const active = eq(subscribers.status, 'active');
  const [row] = await db
    .update(subscribers)
    .set({
      status: sql`case when ${active} then 'unsubscribed'::subscriber_status else ${subscribers.status} end`,
      statusReason: sql`case when ${active} then 'unsubscribed_by_subscriber' else ${subscribers.statusReason} end`,
      updatedAt: sql`case when ${active} then now() else ${subscribers.updatedAt} end`,
    })
    .where(and(visibleTo(db, reach), eq(subscribers.token, token)))
    .returning(subscriberRow);
  return row;
}

export async function findById(db: Db, reach: Reach, id: string): Promise<SubscriberRow | undefined> {
  const [row] = await db
    .select(subscriberRow)
    .from(subscribers)
    .where(and(visibleTo(db, reach), eq(subscribers.id, id)));
  return row;
}

/** One subscriber as the detail shows it (`personRow`: with its name and the channels reaching it). */
export async function findPerson(db: Db, reach: Reach, id: string): Promise<PersonRow | undefined> {
  const [row] = await db
    .select(personRow)
    .from(subscribers)
    .where(and(visibleTo(db, reach), eq(subscribers.id, id)));
  return row as PersonRow | undefined;
}

/** Marketing consent per channel of each subscriber named that the caller may see (`marketingConsentOf`). */
export async function findConsents(db: Db, reach: Reach, ids: readonly string[]): Promise<Map<string, MarketingConsents>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .select({
      id: subscribers.id,
      push: sql<string | null>`CASE WHEN ${subscribers.endpoint} IS NULL THEN NULL ELSE 'subscribed' END`,
      email: marketingConsentOf('email'),
      sms: marketingConsentOf('sms'),
      whatsapp: marketingConsentOf('whatsapp'),
    })
    .from(subscribers)
    .where(and(visibleTo(db, reach), inArray(subscribers.id, [...ids])));
  return new Map(rows.map(({ id, ...consent }) => [id, consent as MarketingConsents]));
}

export async function findByToken(db: Db, reach: Reach, token: string): Promise<SubscriberRow | undefined> {
  const [row] = await db
    .select(subscriberRow)
    .from(subscribers)
    .where(and(visibleTo(db, reach), eq(subscribers.token, token)));
  return row;
}

/** Every device linked to an externalId, newest first (bounded: a user has a handful of devices). */
export function findByExternalId(db: Db, scope: ProjectScope, externalId: string, limit: number): Promise<SubscriberRow[]> {
  return db
    .select(subscriberRow)
    .from(subscribers)
    .where(and(visibleTo(db, scope), eq(subscribers.externalId, externalId)))
    .orderBy(desc(subscribers.createdAt), desc(subscribers.id))
    .limit(limit);
}

/**
 * Deletes a subscriber, its deliveries (by cascade) and its name in the transactional send log: a send that named it
 * by its token, or by its externalId or email address once no other subscriber of the project carries it, keeps its
 * outcome and shows `recipient` `{}`.
 */
export function deleteById(db: Db, reach: Reach, id: string): Promise<boolean> {
  return db.transaction(async (tx) => {
    const [gone] = await tx
      .delete(subscribers)
      .where(and(visibleTo(tx, reach), eq(subscribers.id, id)))
      .returning({ projectId: subscribers.projectId, token: subscribers.token, externalId: subscribers.externalId, email: subscribers.email });
    if (!gone) return false;
    if (gone.email !== null) {
      const address = gone.email.toLowerCase();
      const [kept] = await tx
        .select({ id: subscribers.id })
        .from(subscribers)
        .where(and(eq(subscribers.projectId, gone.projectId), sql`lower(${subscribers.email}) = ${address}`))
        .limit(1);
      // Email sends name their recipient {to}, which transactional_sends_recipient_idx does not cover: the project's
      // email sends are read (a deletion is rare; the index's expression would take a migration).
      if (!kept) {
        await tx
          .update(transactionalSends)
          .set({ recipient: {} })
          .where(and(eq(transactionalSends.projectId, gone.projectId), eq(transactionalSends.channel, 'email'), sql`lower(${transactionalSends.recipient} ->> 'to') = ${address}`));
      }
    }
    const names = [gone.token];
    if (gone.externalId !== null) {
      const [kept] = await tx
        .select({ id: subscribers.id })
        .from(subscribers)
        .where(and(eq(subscribers.projectId, gone.projectId), eq(subscribers.externalId, gone.externalId)))
        .limit(1);
      if (!kept) names.push(gone.externalId);
    }
    await tx
      .update(transactionalSends)
      .set({ recipient: {} })
      .where(and(eq(transactionalSends.projectId, gone.projectId), inArray(recipientName(transactionalSends.recipient), names)));
    return true;
  });
}

/** Applies `set` to the subscriber with this token, if the caller may see it; lastSeenAt and updatedAt move too. */
export async function updateByToken(
  db: Db,
  reach: Reach,
  token: string,
  set: Partial<Record<keyof NewSubscriberRow, unknown>>,
): Promise<SubscriberRow | undefined> {
  const now = new Date();
  const [row] = await db
    .update(subscribers)
    .set({ updatedAt: now, lastSeenAt: now, ...(set as Partial<NewSubscriberRow>) })
    .where(and(visibleTo(db, reach), eq(subscribers.token, token)))
    .returning(subscriberRow);
  return row;
}

/** `stored` with the `added` tags not yet present appended, keeping the existing order (no duplicates). */
export const mergeTags = (stored: SQL, added: SQL) =>
  sql`array(select t from unnest(${stored} || ${added}) with ordinality as u(t, n) group by t order by min(n))`;

export const appendTags = (tags: string[]) => mergeTags(sql`${subscribers.tags}`, sql`${sql.param(tags)}::text[]`);

export const removeTags = (tags: string[]) =>
  sql`array(select t from unnest(${subscribers.tags}) as u(t) where t <> all(${sql.param(tags)}::text[]))`;

/** Marks a subscriber as seen, without touching updatedAt. */
export async function touchByToken(db: Db, reach: Reach, token: string) {
  const [row] = await db
    .update(subscribers)
    .set({ lastSeenAt: new Date() })
    .where(and(visibleTo(db, reach), eq(subscribers.token, token)))
    .returning({ id: subscribers.id, lastSeenAt: subscribers.lastSeenAt });
  return row;
}

export interface ListFilters {
  /** Partial, case-insensitive: any part of the email, external id, phone or name. */
  q?: string | undefined;
  platform?: NonNullable<SubscriberRow['platform']> | undefined;
  country?: string | undefined;
  browser?: NonNullable<SubscriberRow['browser']> | undefined;
  os?: NonNullable<SubscriberRow['os']> | undefined;
  tag?: string | undefined;
  email?: string | undefined;
  status?: SubscriberRow['status'] | undefined;
  createdAfter?: Date | undefined;
  createdBefore?: Date | undefined;
}

export const LIST_SORTS = ['createdAt', 'lastSeenAt', 'email', 'name'] as const;
export type ListSort = (typeof LIST_SORTS)[number];
export interface ListOrder {
  sort: ListSort;
  order: 'asc' | 'desc';
}

/** `text` as a LIKE pattern matching itself anywhere: its own `%`, `_` and `\` are taken literally. */
export const containsPattern = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/**
 * `q` anywhere in the search text; a query that reads as a phone number written for people (`+44 20 7946-0958`) also
 * matches the E.164 form stored: its spaces, dashes, dots and brackets left out.
 */
function searched(q: string): SQL {
  const text = subscriberSearchText(subscribers);
  const bare = q.replace(/[\s().-]/g, '');
  const phoneLike = /^\+?[\d\s().-]+$/.test(q) && bare !== q && bare.length >= 3;
  const exact = sql`${text} LIKE ${containsPattern(q.toLowerCase())}`;
  return phoneLike ? sql`(${exact} OR ${text} LIKE ${containsPattern(bare)})` : exact;
}

/** The rows of the caller's project the list's filters select (`visibleTo`: a test key its sandbox rows only). */
export function listed(db: Db, scope: ProjectScope, filters: ListFilters): SQL {
  return and(
    visibleTo(db, scope),
    // The expression of subscribers_search_idx, lower-cased like the pattern, so trigrams narrow the rows.
    filters.q !== undefined ? searched(filters.q) : undefined,
    filters.platform !== undefined ? eq(subscribers.platform, filters.platform) : undefined,
    filters.country !== undefined ? eq(subscribers.country, filters.country) : undefined,
    filters.browser !== undefined ? eq(subscribers.browser, filters.browser) : undefined,
    filters.os !== undefined ? eq(subscribers.os, filters.os) : undefined,
    filters.tag !== undefined ? sql`${subscribers.tags} @> ${sql.param([filters.tag])}::text[]` : undefined,
    // The form of subscribers_project_email_idx, so the lookup is an index scan.
    filters.email !== undefined ? sql`lower(${subscribers.email}) = lower(${filters.email})` : undefined,
    filters.status !== undefined ? eq(subscribers.status, filters.status) : undefined,
    filters.createdAfter === undefined ? undefined : gte(subscribers.createdAt, filters.createdAfter),
    filters.createdBefore === undefined ? undefined : lt(subscribers.createdAt, filters.createdBefore),
  )!;
}

const PEOPLE_CHANNELS = ['push', 'email', 'sms', 'whatsapp'] as const satisfies readonly Channel[];
export type PersonChannel = (typeof PEOPLE_CHANNELS)[number];

/**
 * The channels that reach this row now (`reachableOn`, not for marketing), less those its own preferences turned off:
 * what the people list shows, not an audience.
 */
const reachingChannels = sql<PersonChannel[]>`array_remove(array[${sql.join(
  PEOPLE_CHANNELS.map(
    (channel) =>
      sql`case when ${reachableOn(channel)} and (${subscribers.preferences} -> 'channels' -> ${channel}) is distinct from 'false'::jsonb then ${channel} end`,
  ),
  sql`, `,
)}], null)`;

/** A subscriber as the list and the detail show it: its columns, its readable name and the channels reaching it. */
export const personRow = { ...subscriberRow, name: subscriberName(subscribers), channels: reachingChannels };
export type PersonRow = SubscriberRow & { name: string | null; channels: PersonChannel[] };

function orderOf({ sort, order }: ListOrder): SQL[] {
  // Nulls last only where there may be nulls (email, name): on the NOT NULL columns the clause changes no order, yet
  // it keeps the planner from walking subscribers_project_created_idx backwards, a sort of the whole project instead
  // (first page at 1M: 2.5 s against ~60 ms, docs/PERFORMANCE.md "Dashboard").
  const direction = (value: SQL | typeof subscribers.id, nullable: boolean) =>
    sql`${value} ${sql.raw(order === 'asc' ? 'asc' : 'desc')}${sql.raw(nullable ? ' nulls last' : '')}`;
  const [key, nullable] = {
    createdAt: [sql`${subscribers.createdAt}`, false],
    lastSeenAt: [sql`${subscribers.lastSeenAt}`, false],
    // The forms of subscribers_project_email_idx and subscribers_project_name_idx.
    email: [sql`lower(${subscribers.email})`, true],
    name: [subscriberName(subscribers), true],
  }[sort] as [SQL, boolean];
  return [direction(key, nullable), direction(subscribers.id, false)];
}

export async function listSubscribers(db: Db, scope: ProjectScope, filters: ListFilters, order: ListOrder, limit: number, offset: number) {
  const where = listed(db, scope, filters);
  const [rows, [total]] = await Promise.all([
    db
      .select(personRow)
      .from(subscribers)
      .where(where)
      .orderBy(...orderOf(order))
      .limit(limit)
      .offset(offset),
    db.select({ total: count() }).from(subscribers).where(where),
  ]);
  return { rows: rows as PersonRow[], total: total?.total ?? 0 };
}

/** A selection of the people list: rows named by id, or every row its filters select. */
export type Selection = { ids: readonly string[] } | { filter: ListFilters };

const selected = (db: Db, scope: ProjectScope, selection: Selection): SQL =>
  'ids' in selection ? and(visibleTo(db, scope), inArray(subscribers.id, [...selection.ids]))! : listed(db, scope, selection.filter);

/**
 * Adds (`tag`) or removes (`untag`) tags on every selected row, in one transaction: `matched` rows were selected,
 * `changed` of them did not already carry (or lacked) the tags.
 */
export function tagSelection(db: Db, scope: ProjectScope, selection: Selection, action: 'tag' | 'untag', tags: string[]) {
  return db.transaction(async (tx) => {
    const where = selected(tx, scope, selection);
    const [matched] = await tx.select({ total: count() }).from(subscribers).where(where);
    const tagged = sql`${subscribers.tags} @> ${sql.param(tags)}::text[]`;
    const anyTagged = sql`${subscribers.tags} && ${sql.param(tags)}::text[]`;
    const changed = await tx
      .update(subscribers)
      .set({ tags: action === 'tag' ? appendTags(tags) : removeTags(tags), updatedAt: new Date() })
      .where(and(where, action === 'tag' ? sql`not ${tagged}` : anyTagged))
      .returning({ id: subscribers.id });
    return { matched: matched?.total ?? 0, changed: changed.length };
  });
}

/**
 * Merges `set` into the attributes of every selected row and removes the keys `remove`, in the caller's transaction:
 * `matched` rows were selected, `changed` of them got other attributes; `largest` is the biggest result in bytes of
 * JSON text (for the caller's cap, which rolls the transaction back).
 */
export async function setAttributesOfSelection(
  tx: Db,
  scope: ProjectScope,
  selection: Selection,
  set: Record<string, unknown>,
  remove: string[],
) {
  const where = selected(tx, scope, selection);
  const [matched] = await tx.select({ total: count() }).from(subscribers).where(where);
  const merged = sql`(${subscribers.attributes} || ${JSON.stringify(set)}::jsonb) - ${sql.param(remove)}::text[]`;
  const changed = await tx
    .update(subscribers)
    .set({ attributes: merged, updatedAt: new Date() })
    .where(and(where, sql`${subscribers.attributes} is distinct from ${merged}`))
    .returning({ bytes: sql<number>`octet_length(${subscribers.attributes}::text)` });
  return { matched: matched?.total ?? 0, changed: changed.length, largest: Math.max(0, ...changed.map((row) => Number(row.bytes))) };
}

/**
 * Deletes every selected row as `deleteById` deletes one, in one transaction: the rows, their deliveries (by cascade)
 * and their names in the transactional send log once no remaining row of the project carries them.
 */
export function deleteSelection(db: Db, scope: ProjectScope, selection: Selection) {
  return db.transaction(async (tx) => {
    const gone = await tx
      .delete(subscribers)
      .where(selected(tx, scope, selection))
      .returning({ token: subscribers.token, externalId: subscribers.externalId, email: subscribers.email });
    if (gone.length === 0) return { matched: 0, changed: 0 };
    const project = eq(subscribers.projectId, scope.projectId);
    const addresses = [...new Set(gone.flatMap((row) => (row.email === null ? [] : [row.email.toLowerCase()])))];
    if (addresses.length > 0) {
      const kept = await tx
        .selectDistinct({ address: sql<string>`lower(${subscribers.email})` })
        .from(subscribers)
        .where(and(project, sql`lower(${subscribers.email}) = any(${sql.param(addresses)}::text[])`));
      const keptSet = new Set(kept.map((row) => row.address));
      const freed = addresses.filter((address) => !keptSet.has(address));
      if (freed.length > 0) {
        await tx
          .update(transactionalSends)
          .set({ recipient: {} })
          .where(
            and(
              eq(transactionalSends.projectId, scope.projectId),
              eq(transactionalSends.channel, 'email'),
              sql`lower(${transactionalSends.recipient} ->> 'to') = any(${sql.param(freed)}::text[])`,
            ),
          );
      }
    }
    const externalIds = [...new Set(gone.flatMap((row) => (row.externalId === null ? [] : [row.externalId])))];
    const keptIds = new Set(
      externalIds.length === 0
        ? []
        : (
            await tx
              .selectDistinct({ externalId: subscribers.externalId })
              .from(subscribers)
              .where(and(project, inArray(subscribers.externalId, externalIds)))
          ).map((row) => row.externalId),
    );
    const names = [...gone.map((row) => row.token), ...externalIds.filter((id) => !keptIds.has(id))];
    await tx
      .update(transactionalSends)
      .set({ recipient: {} })
      .where(and(eq(transactionalSends.projectId, scope.projectId), inArray(recipientName(transactionalSends.recipient), names)));
    return { matched: gone.length, changed: gone.length };
  });
}

/** Keyset page (by id) of a selection with the export's columns: an export streams batch by batch in constant memory. */
export async function pageSelection(db: Db, scope: ProjectScope, selection: Selection, afterId: string | undefined, limit: number) {
  const rows = await db
    .select({
      id: subscribers.id,
      name: personRow.name,
      email: subscribers.email,
      phone: subscribers.phone,
      externalId: subscribers.externalId,
      channels: personRow.channels,
      status: subscribers.status,
      tags: subscribers.tags,
      lastSeenAt: subscribers.lastSeenAt,
      createdAt: subscribers.createdAt,
    })
    .from(subscribers)
    .where(and(selected(db, scope, selection), afterId !== undefined ? gt(subscribers.id, afterId) : undefined))
    .orderBy(asc(subscribers.id))
    .limit(limit);
  return rows as (Omit<(typeof rows)[number], 'channels'> & { channels: PersonChannel[] })[];
}

export const ANALYTICS_DIMENSIONS = ['country', 'platform', 'browser', 'os', 'device', 'city'] as const;
export type AnalyticsDimension = (typeof ANALYTICS_DIMENSIONS)[number];

/**
 * Active subscribers of the caller's environment counted by each dimension, live and exact; null values are left out.
 * Two index-only scans run in parallel, each read in group order (see docs/PERFORMANCE.md): (country, city) on
 * subscribers_project_country_city_idx and (platform, browser, os, device) on subscribers_project_device_mix_idx.
 * They return at most a few thousand combinations, rolled up here into the six dimensions.
 */
export async function countByDimensions(db: Db, scope: ProjectScope, limitPerDimension = Infinity) {
  const where = and(inEnvironment(scope), eq(subscribers.status, 'active'));
  const total = sql<number>`count(*)::int`;
  const [places, devices] = await Promise.all([
    db
      .select({ country: subscribers.country, city: subscribers.city, count: total })
      .from(subscribers)
      .where(where)
      .groupBy(subscribers.country, subscribers.city),
    db
      .select({ platform: subscribers.platform, browser: subscribers.browser, os: subscribers.os, device: subscribers.device, count: total })
      .from(subscribers)
      .where(where)
      .groupBy(subscribers.platform, subscribers.browser, subscribers.os, subscribers.device),
  ]);
  const tallies = new Map<AnalyticsDimension, Map<string, number>>(ANALYTICS_DIMENSIONS.map((d) => [d, new Map()]));
  const add = (dimension: AnalyticsDimension, key: string | null, count: number) => {
    if (key === null) return;
    const tally = tallies.get(dimension)!;
    tally.set(key, (tally.get(key) ?? 0) + Number(count));
  };
  for (const row of places) {
    add('country', row.country, row.count);
    add('city', row.city, row.count);
  }
  for (const row of devices) {
    add('platform', row.platform, row.count);
    add('browser', row.browser, row.count);
    add('os', row.os, row.count);
    add('device', row.device, row.count);
  }
  const rows: { dimension: AnalyticsDimension; key: string; count: number }[] = [];
  for (const [dimension, tally] of tallies) {
    const ranked = [...tally].sort(([ka, a], [kb, b]) => b - a || (ka < kb ? -1 : ka > kb ? 1 : 0)).slice(0, limitPerDimension);
    for (const [key, count] of ranked) rows.push({ dimension, key, count });
  }
  return rows;
}

/** One subscriber's deliveries, newest first, with the campaign each belongs to; the caller has checked the subscriber is visible. */
export async function deliveryHistory(db: Db, subscriber: Pick<SubscriberRow, 'id' | 'projectId'>, limit: number, offset: number) {
  const where = and(eq(deliveries.projectId, subscriber.projectId), eq(deliveries.subscriberId, subscriber.id));
  const [rows, [total]] = await Promise.all([
    db
      .select({
        messageId: deliveries.messageId,
        source: messages.source,
        channel: messages.channel,
        campaignId: messages.campaignId,
        campaignName: campaigns.name,
        status: deliveries.status,
        reason: deliveries.reason,
        createdAt: deliveries.createdAt,
        sentAt: deliveries.sentAt,
        deliveredAt: deliveries.deliveredAt,
        clickedAt: deliveries.clickedAt,
        dismissedAt: deliveries.dismissedAt,
        failedAt: deliveries.failedAt,
      })
      .from(deliveries)
      .innerJoin(messages, eq(messages.id, deliveries.messageId))
      .leftJoin(campaigns, eq(campaigns.id, messages.campaignId))
      .where(where)
      .orderBy(desc(deliveries.createdAt), desc(deliveries.id))
      .limit(limit)
      .offset(offset),
    db.select({ total: count() }).from(deliveries).where(where),
  ]);
  return { rows, total: total?.total ?? 0 };
}

export interface EventFilters {
  channel?: Channel | undefined;
  type?: DeliveryEvent | undefined;
}

/**
 * The events logged on one subscriber's deliveries, newest first, with the message and campaign each belongs to; the
 * caller has checked the subscriber is visible. The subscriber's deliveries lead (`deliveries_subscriber_idx`, then
 * each delivery's events by `delivery_events_source_key`): the events' own project index is left unused on purpose, as
 * walking a project's events newest first to find one subscriber's reads the whole project for a quiet subscriber. The
 * page is cut before its messages and campaigns are joined.
 */
export async function eventHistory(
  db: Db,
  subscriber: Pick<SubscriberRow, 'id' | 'projectId'>,
  filters: EventFilters,
  limit: number,
  offset: number,
) {
  const where = and(
    eq(deliveries.projectId, subscriber.projectId),
    eq(deliveries.subscriberId, subscriber.id),
    filters.channel !== undefined ? eq(deliveries.channel, filters.channel) : undefined,
    filters.type !== undefined ? eq(deliveryEvents.type, filters.type) : undefined,
  );
  const page = db
    .select({
      id: deliveryEvents.id,
      type: deliveryEvents.type,
      occurredAt: deliveryEvents.occurredAt,
      repeat: deliveryEvents.repeat,
      detail: deliveryEvents.detail,
      channel: deliveries.channel,
      messageId: deliveries.messageId,
    })
    .from(deliveryEvents)
    .innerJoin(deliveries, eq(deliveries.id, deliveryEvents.deliveryId))
    .where(where)
    .orderBy(desc(deliveryEvents.occurredAt), desc(deliveryEvents.id))
    .limit(limit)
    .offset(offset)
    .as('page');
  const [rows, [total]] = await Promise.all([
    db
      .select({
        type: page.type,
        occurredAt: page.occurredAt,
        channel: page.channel,
        messageId: page.messageId,
        source: messages.source,
        campaignId: messages.campaignId,
        campaignName: campaigns.name,
        repeat: page.repeat,
        detail: page.detail,
      })
      .from(page)
      .innerJoin(messages, eq(messages.id, page.messageId))
      .leftJoin(campaigns, eq(campaigns.id, messages.campaignId))
      .orderBy(desc(page.occurredAt), desc(page.id)),
    db.select({ total: count() }).from(deliveryEvents).innerJoin(deliveries, eq(deliveries.id, deliveryEvents.deliveryId)).where(where),
  ]);
  return { rows, total: total?.total ?? 0 };
}

export type EventRow = Awaited<ReturnType<typeof eventHistory>>['rows'][number];
