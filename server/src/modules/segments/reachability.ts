// Who can be reached on each channel: the one reading of a person's reachability, per channel, that every audience asks.
import { sql, type SQL } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import { subscribers, type Channel } from '../../db/schema.js';

/** `subscribers`, or an alias of it (`alias(subscribers, 's')`) in a statement that names it so. */
export type ReachableColumns = Record<'projectId' | 'sandbox' | 'email' | 'phone' | 'endpoint' | 'status', PgColumn>;

const ADDRESS_CHANNELS = ['email', 'sms', 'whatsapp'] as const satisfies readonly Channel[];

export interface ReachOptions {
  /**
   * Reachable for marketing: the address's marketing consent is `subscribed` too (an address without a row is). On
   * push the browser subscription is the opt-in, so it changes nothing there.
   */
  marketing?: boolean;
}

/**
 * No `channel_addresses` row says the address is out on `channel` (opted out or unreachable) — nor, for marketing,
 * that its consent is other than `subscribed`. One anti-join either way.
 */
function addressOpen(channel: Exclude<Channel, 'push'>, address: SQL, s: ReachableColumns, marketing: boolean): SQL {
  return sql`NOT EXISTS (
  SELECT 1 FROM channel_addresses a
  WHERE a.project_id = ${s.projectId} AND a.sandbox = ${s.sandbox} AND a.channel = ${channel} AND a.address = ${address}
    AND (a.status <> 'reachable'${marketing ? sql` OR a.consent <> 'subscribed'` : sql``}))`;
}

/**
 * Whether a subscriber can be reached on `channel`. Push: its device — the row's `status` is its browser
 * subscription's, so a push service's 404/410 retires the device and nothing else. Email, SMS and WhatsApp: an
 * address not opted out or unreachable on the channel in `channel_addresses` (on email, an `active` `emailStatus`
 * and no manual suppression).
 */
export function reachableOn(channel: Channel, options: ReachOptions = {}, s: ReachableColumns = subscribers): SQL {
  const marketing = options.marketing === true;
  switch (channel) {
    case 'push':
      return sql`(${s.status} = 'active' AND ${s.endpoint} IS NOT NULL)`;
    case 'email':
      return sql`(${s.email} IS NOT NULL AND ${addressOpen(channel, sql`lower(${s.email})`, s, marketing)})`;
    case 'sms':
    case 'whatsapp':
      return sql`(${s.phone} IS NOT NULL AND ${addressOpen(channel, sql`${s.phone}`, s, marketing)})`;
  }
}

/** Reachable on at least one channel: a person whose every channel is gone is in no audience. */
export function reachableOnSome(options: ReachOptions = {}, s: ReachableColumns = subscribers): SQL {
  return sql`(${reachableOn('push', options, s)} OR ${reachableAtSomeAddress(options, s)})`;
}

/**
 * Reachable at an address (email, SMS or WhatsApp): for a retired device, whose push is gone, the same as
 * `reachableOnSome`, and readable without its endpoint.
 */
export function reachableAtSomeAddress(options: ReachOptions = {}, s: ReachableColumns = subscribers): SQL {
  return sql`(${sql.join(
    ADDRESS_CHANNELS.map((channel) => reachableOn(channel, options, s)),
    sql` OR `,
  )})`;
}

/**
 * A person counted by a reach estimate without a channel and by an export: any subscriber whose row was never retired
 * (`status` active, with or without a channel yet), or that some channel still reaches — a dead push device retires
 * the device, not a person an address still reaches.
 */
export function activePerson(s: ReachableColumns = subscribers): SQL {
  return sql`(${s.status} = 'active' OR ${reachableOnSome({}, s)})`;
}
