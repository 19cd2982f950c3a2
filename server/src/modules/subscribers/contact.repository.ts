// Contact fields of subscribers: targeted updates, contact creation and set-based bulk upserts. Every query is
// confined to what the caller may see (visibleTo) or to one project and environment (sandbox or live).
import { and, eq, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/database.js';
import { subscribers, type EmailStatus } from '../../db/schema.js';
import type { ProjectScope, Reach } from '../tenancy.js';
import type { UpsertKey } from './contact.schemas.js';
import { mergeTags, visibleTo, type NewSubscriberRow, type SubscriberRow } from './subscriber.repository.js';

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

/**
 * The email status after a new address is written over the stored one (see docs/CONTEXT.md): the same address
 * (case-insensitive) keeps its status, so a bounced, complained or unsubscribed address stays so; a different
 * address → active. Clearing the address sets none (see updateContact). One rule for single updates and imports.
 */
const emailStatusAfter = (storedEmail: SQL, storedStatus: SQL, email: SQL) => sql`case
  when lower(${storedEmail}) = lower(${email}) and ${storedStatus} <> 'none' then ${storedStatus}
  else 'active'::email_status end`;

/** Applies a patch to one subscriber (by id or token) the caller may see; undefined when there is none. */
export async function updateContact(
  db: Db,
  reach: Reach,
  target: { id: string } | { token: string },
  patch: ContactPatch,
): Promise<SubscriberRow | undefined> {
  const set: Partial<Record<keyof NewSubscriberRow, unknown>> = { updatedAt: new Date() };
  if (patch.email !== undefined) {
    set.email = patch.email;
    set.emailStatus =
      patch.email === null
        ? 'none'
        : emailStatusAfter(sql`${subscribers.email}`, sql`${subscribers.emailStatus}`, sql`${patch.email}::text`);
  }
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
    .returning();
  return row;
}

export async function insertContact(db: Db, row: NewSubscriberRow): Promise<SubscriberRow> {
  const [inserted] = await db.insert(subscribers).values(row).returning();
  return inserted!;
}

const ADDRESS_LOCK = 7_305_004; // pg_advisory_xact_lock class: one contact created at a time per address and environment

/** What the subscribers of one environment carrying an email address say of it, and the row a send goes through. */
export interface EmailHolders {
  /** The row seen last (a snapshot picks the same one), or the contact just created. */
  subscriberId: string;
  timezone: string | null;
  created: boolean;
  /** Every `emailStatus` among them. */
  statuses: EmailStatus[];
  /** One of them turned email off (`preferences.channels.email` false). */
  emailOff: boolean;
}

/**
 * The subscribers of the scope's project and environment carrying `address` (lower-cased), or, when there are none,
 * `contact` inserted: under a lock per address, so concurrent sends to a new address create one contact.
 */
export async function findOrInsertEmailHolder(db: Db, scope: ProjectScope, address: string, contact: NewSubscriberRow): Promise<EmailHolders> {
  return db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(${ADDRESS_LOCK}, hashtext(${`${scope.projectId}:${scope.sandbox}:${address}`}))`);
    const { rows } = await tx.execute<{ id: string | null; timezone: string | null; statuses: EmailStatus[] | null; email_off: boolean | null }>(sql`
      select (array_agg(id order by last_seen_at desc, id))[1] as id,
        (array_agg(timezone order by last_seen_at desc, id))[1] as timezone,
        array_agg(distinct email_status::text) as statuses,
        bool_or((preferences -> 'channels' -> 'email') = 'false'::jsonb) as email_off
      from subscribers
      where project_id = ${scope.projectId} and sandbox = ${scope.sandbox} and lower(email) = ${address}`);
    const found = rows[0];
    if (found?.id) return { subscriberId: found.id, timezone: found.timezone, created: false, statuses: found.statuses ?? [], emailOff: found.email_off === true };
    const row = await insertContact(tx, contact);
    return { subscriberId: row.id, timezone: row.timezone, created: true, statuses: [row.emailStatus], emailOff: false };
  });
}

/** What the subscribers of one environment carrying a phone number say of SMS, and the row a send goes through. */
export interface PhoneHolders {
  /** The row seen last, or the contact just created. */
  subscriberId: string;
  timezone: string | null;
  created: boolean;
  /** One of them turned SMS off (`preferences.channels.sms` false). */
  smsOff: boolean;
}

/**
 * The subscribers of the scope's project and environment carrying `phone` (E.164), or, when there are none, `contact`
 * inserted: under the address lock, so concurrent sends to a new number create one contact.
 */
export async function findOrInsertPhoneHolder(db: Db, scope: ProjectScope, phone: string, contact: NewSubscriberRow): Promise<PhoneHolders> {
  return db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(${ADDRESS_LOCK}, hashtext(${`${scope.projectId}:${scope.sandbox}:${phone}`}))`);
    const { rows } = await tx.execute<{ id: string | null; timezone: string | null; sms_off: boolean | null }>(sql`
      select (array_agg(id order by last_seen_at desc, id))[1] as id,
        (array_agg(timezone order by last_seen_at desc, id))[1] as timezone,
        bool_or((preferences -> 'channels' -> 'sms') = 'false'::jsonb) as sms_off
      from subscribers
      where project_id = ${scope.projectId} and sandbox = ${scope.sandbox} and phone = ${phone}`);
    const found = rows[0];
    if (found?.id) return { subscriberId: found.id, timezone: found.timezone, created: false, smsOff: found.sms_off === true };
    const row = await insertContact(tx, contact);
    return { subscriberId: row.id, timezone: row.timezone, created: true, smsOff: false };
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
      email_status = case when i.email is null then s.email_status
        else ${emailStatusAfter(sql`s.email`, sql`s.email_status`, sql`i.email`)} end,
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
    insert into subscribers (id, project_id, token, external_id, email, email_status, phone, timezone, language, tags,
                             attributes, preferences, status, sandbox, created_at, subscribed_at, updated_at, last_seen_at)
    select i.id, ${scope.projectId}, i.token, i.external_id, i.email,
           case when i.email is null then 'none'::email_status else 'active'::email_status end,
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
