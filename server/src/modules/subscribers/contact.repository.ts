// Contact fields of subscribers: targeted updates, contact creation and set-based bulk upserts. Every query is
// confined to what the caller may see (visibleTo) or to one project and environment (sandbox or live).
import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/database.js';
import { subscribers } from '../../db/schema.js';
import type { ProjectScope, Reach } from '../tenancy.js';
import type { UpsertKey } from './contact.schemas.js';
import { mergeTags, subscriberRow, visibleTo, type NewSubscriberRow, type SubscriberRow } from './subscriber.repository.js';

export interface ContactPatch {
  email?: string | null | undefined;
  phone?: string | null | undefined;
  timezone?: string | null | undefined;
  language?: string | null | undefined;
  /** Keys to set (non-null values) and keys to remove. */
  attributesSet?: Record<string, unknown> | undefined;
  attributesRemove?: string[] | undefined;
  channels?: Record<string, boolean> | undefined;
}

/** Applies a patch to one subscriber (by id or token) the caller may see; undefined when there is none. */
export async function updateContact(
  db: Db,
  reach: Reach,
  target: { id: string } | { token: string },
  patch: ContactPatch,
): Promise<SubscriberRow | undefined> {
  const set: Partial<Record<keyof NewSubscriberRow, unknown>> = { updatedAt: new Date() };
  if (patch.email !== undefined) set.email = patch.email;
  if (patch.phone !== undefined) set.phone = patch.phone;
  if (patch.timezone !== undefined) set.timezone = patch.timezone;
  if (patch.language !== undefined) set.language = patch.language;
  if (patch.attributesSet || patch.attributesRemove) {
    set.attributes = sql`(${subscribers.attributes} || ${JSON.stringify(patch.attributesSet ?? {})}::jsonb) - ${sql.param(
      patch.attributesRemove ?? [],
    )}::text[]`;
  }
  if (patch.channels) {
    set.preferences = sql`jsonb_set(${subscribers.preferences}, '{channels}',
      coalesce(${subscribers.preferences} -> 'channels', '{}'::jsonb) || ${JSON.stringify(patch.channels)}::jsonb)`;
  }
  const match = 'id' in target ? eq(subscribers.id, target.id) : eq(subscribers.token, target.token);
  const [row] = await db
    .update(subscribers)
    .set(set as Partial<NewSubscriberRow>)
    .where(and(visibleTo(db, reach), match))
    .returning(subscriberRow);
  return row;
}

export async function insertContact(db: Db, row: NewSubscriberRow): Promise<SubscriberRow> {
  const [inserted] = await db.insert(subscribers).values(row).returning(subscriberRow);
  return inserted!;
}

const ADDRESS_LOCK = 7_305_004; // pg_advisory_xact_lock class: one contact created at a time per address and environment

/** What the subscribers of one environment carrying an email address say of it, and the row a send goes through. */
export interface EmailHolders {
  /** The row seen last (a snapshot picks the same one), or the contact just created. */
  subscriberId: string;
  timezone: string | null;
  /** One of them turned email off (`preferences.channels.email` false). */
  emailOff: boolean;
  /** The contact was created for this send. */
  created: boolean;
}

/** An address (lower-cased) of a project and environment, and the contact to insert if none carries it. */
export interface WantedEmailHolder {
  scope: ProjectScope;
  address: string;
  contact: { id: string; token: string; at: Date };
}

/**
 * For each address, the subscribers of its project and environment carrying it, or, when there are none, its
 * `contact` inserted (an active contact with only that address; one per address however often it is wanted).
 * Under a lock per address until the caller's transaction ends — run it in one — so concurrent sends to a new
 * address create one contact. Answers in the order given.
 */
export async function findOrInsertEmailHolders(tx: Db, wanted: readonly WantedEmailHolder[]): Promise<EmailHolders[]> {
  if (wanted.length === 0) return [];
  // Locked in one order (unnest keeps the array's), so two transactions wanting overlapping addresses never wait in a cycle.
  const keys = [...new Set(wanted.map((w) => `${w.scope.projectId}:${w.scope.sandbox}:${w.address}`))].sort();
  await tx.execute(sql`select count(pg_advisory_xact_lock(${ADDRESS_LOCK}, hashtext(k))) from unnest(${sql.param(keys)}::text[]) as k`);
  const column = <T>(pick: (w: WantedEmailHolder) => T) => sql.param(wanted.map(pick));
  const { rows } = await tx.execute<{ id: string; timezone: string | null; email_off: boolean; created: boolean }>(sql`
    with given as (
      select * from unnest(
        ${column((w) => w.scope.projectId)}::text[], ${column((w) => w.scope.sandbox)}::boolean[], ${column((w) => w.address)}::text[],
        ${column((w) => w.contact.id)}::text[], ${column((w) => w.contact.token)}::text[], ${column((w) => w.contact.at.toISOString())}::timestamptz[]
      ) with ordinality as g(project_id, sandbox, address, id, token, at, i)
    ), found as (
      -- Per address, so each is one probe of subscribers_project_email_idx whatever the planner guesses of the list.
      select g.i, x.* from given g cross join lateral (
        select (array_agg(s.id order by s.last_seen_at desc, s.id))[1] as id,
          (array_agg(s.timezone order by s.last_seen_at desc, s.id))[1] as timezone,
          coalesce(bool_or((s.preferences -> 'channels' -> 'email') = 'false'::jsonb), false) as email_off
        from subscribers s where s.project_id = g.project_id and s.sandbox = g.sandbox and lower(s.email) = g.address
      ) x
      where x.id is not null
    ), inserted as (
      insert into subscribers (id, project_id, token, email, status, sandbox, created_at, subscribed_at, updated_at, last_seen_at)
      select distinct on (g.project_id, g.sandbox, g.address) g.id, g.project_id, g.token, g.address, 'active', g.sandbox, g.at, g.at, g.at, g.at
      from given g where not exists (select 1 from found f where f.i = g.i)
      order by g.project_id, g.sandbox, g.address, g.i
      returning id, project_id, sandbox, email, timezone
    )
    select coalesce(f.id, n.id) as id, coalesce(f.timezone, n.timezone) as timezone,
      coalesce(f.email_off, false) as email_off, f.i is null as created
    from given g
    left join found f on f.i = g.i
    left join inserted n on f.i is null and n.project_id = g.project_id and n.sandbox = g.sandbox and n.email = g.address
    order by g.i`);
  return rows.map((r) => ({ subscriberId: r.id, timezone: r.timezone, emailOff: r.email_off, created: r.created }));
}

/** What the subscribers of one environment carrying a phone number say of a channel, and the row a send goes through. */
export interface PhoneHolders {
  /** The row seen last, or the contact just created. */
  subscriberId: string;
  timezone: string | null;
  created: boolean;
  /** One of them turned the channel off (`preferences.channels.<channel>` false). */
  channelOff: boolean;
}

/**
 * The subscribers of the scope's project and environment carrying the E.164 `phone`, or, when there are none,
 * `contact` inserted, and `onCreated` run in the same transaction: under a lock per number, so concurrent sends to a
 * new number create one contact.
 */
export async function findOrInsertPhoneHolder(
  db: Db,
  scope: ProjectScope,
  phone: string,
  channel: 'sms' | 'whatsapp',
  contact: NewSubscriberRow,
  onCreated: (tx: Db) => Promise<void>,
): Promise<PhoneHolders> {
  return db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(${ADDRESS_LOCK}, hashtext(${`${scope.projectId}:${scope.sandbox}:${phone}`}))`);
    const { rows } = await tx.execute<{ id: string | null; timezone: string | null; channel_off: boolean | null }>(sql`
      select (array_agg(id order by last_seen_at desc, id))[1] as id,
        (array_agg(timezone order by last_seen_at desc, id))[1] as timezone,
        bool_or((preferences -> 'channels' -> ${channel}) = 'false'::jsonb) as channel_off
      from subscribers
      where project_id = ${scope.projectId} and sandbox = ${scope.sandbox} and phone = ${phone}`);
    const found = rows[0];
    if (found?.id) return { subscriberId: found.id, timezone: found.timezone, created: false, channelOff: found.channel_off === true };
    const row = await insertContact(tx, contact);
    await onCreated(tx);
    return { subscriberId: row.id, timezone: row.timezone, created: true, channelOff: false };
  });
}

/** One import row as sent to PostgreSQL (jsonb_to_recordset): the ids are used only if the row is inserted. */
export interface ImportRow {
  idx: number;
  key: string;
  id: string;
  token: string;
  external_id: string | null;
  email: string | null;
  phone: string | null;
  timezone: string | null;
  language: string | null;
  tags: string[] | null;
  attributes: Record<string, unknown> | null;
  channels: Record<string, boolean> | null;
}

const IMPORT_LOCK = 7_305_002; // pg_advisory_xact_lock class: one import at a time per project and environment

/**
 * Upserts contacts in one transaction with two set-based statements: UPDATE … FROM jsonb_to_recordset for rows
 * whose key matches (every matching subscriber of the project and environment is updated), then INSERT … SELECT
 * for the rest. Returns the updated row indexes' count, the inserted count and the rows whose merged attributes
 * exceed `maxAttributeBytes` (the caller then rolls back by throwing inside `tx`).
 */
export async function upsertContacts(
  tx: Db,
  scope: ProjectScope,
  by: UpsertKey,
  rows: ImportRow[],
  maxAttributeBytes: number,
): Promise<{ updated: number; created: number; oversized: number[] }> {
  await tx.execute(sql`select pg_advisory_xact_lock(${IMPORT_LOCK}, hashtext(${`${scope.projectId}:${scope.sandbox}`}))`);
  const input = sql`jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as i(idx int, key text, id text, token text,
      external_id text, email text, phone text, timezone text, language text, tags text[], attributes jsonb, channels jsonb)`;
  const matches = by === 'email' ? sql`lower(s.email) = i.key` : sql`s.external_id = i.key`;
  const environment = sql`s.project_id = ${scope.projectId} and s.sandbox = ${scope.sandbox}`;

  const updated = await tx.execute<{ idx: number; bytes: number }>(sql`
    update subscribers s set
      external_id = coalesce(i.external_id, s.external_id),
      email = coalesce(i.email, s.email),
      phone = coalesce(i.phone, s.phone),
      timezone = coalesce(i.timezone, s.timezone),
      language = coalesce(i.language, s.language),
      tags = case when i.tags is null then s.tags
        else ${mergeTags(sql`s.tags`, sql`i.tags`)} end,
      attributes = case when i.attributes is null then s.attributes
        else (s.attributes || (select coalesce(jsonb_object_agg(key, value), '{}'::jsonb)
                               from jsonb_each(i.attributes) where value <> 'null'::jsonb))
             - array(select key from jsonb_each(i.attributes) where value = 'null'::jsonb) end,
      preferences = case when i.channels is null then s.preferences
        else jsonb_set(s.preferences, '{channels}', coalesce(s.preferences -> 'channels', '{}'::jsonb) || i.channels) end,
      updated_at = now()
    from ${input}
    where ${environment} and ${matches}
    returning i.idx, octet_length(s.attributes::text) as bytes`);

  const inserted = await tx.execute<{ id: string }>(sql`
    insert into subscribers (id, project_id, token, external_id, email, phone, timezone, language, tags,
                             attributes, preferences, status, sandbox, created_at, subscribed_at, updated_at, last_seen_at)
    select i.id, ${scope.projectId}, i.token, i.external_id, i.email,
           i.phone, i.timezone, i.language, coalesce(i.tags, '{}'::text[]),
           (select coalesce(jsonb_object_agg(key, value), '{}'::jsonb)
            from jsonb_each(coalesce(i.attributes, '{}'::jsonb)) where value <> 'null'::jsonb),
           case when i.channels is null then '{}'::jsonb else jsonb_build_object('channels', i.channels) end,
           'active', ${scope.sandbox}, now(), now(), now(), now()
    from ${input}
    where not exists (select 1 from subscribers s where ${environment} and ${matches})
    order by i.idx
    returning id`);

  const updatedIdx = new Set(updated.rows.map((r) => r.idx));
  const oversized = [...new Set(updated.rows.filter((r) => r.bytes > maxAttributeBytes).map((r) => r.idx))].sort((a, b) => a - b);
  return { updated: updatedIdx.size, created: inserted.rows.length, oversized };
}
