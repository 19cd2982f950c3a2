// The one writer of what an address is on a channel (channel_addresses): provider verdicts, the person's own word, the
// project's suppression list, and the address's marketing consent.
import { sql } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import type { AddressStatus, Channel, MarketingConsent } from '../db/schema.js';

/** Why an email address is suppressed; each maps to its `channel_addresses` status (and its subscribers' `emailStatus`). */
export const SUPPRESSION_REASONS = ['bounced', 'complained', 'unsubscribed', 'manual'] as const;
export type SuppressionReason = (typeof SUPPRESSION_REASONS)[number];

export interface AddressState {
  projectId: string;
  sandbox: boolean;
  channel: Channel;
  /** Lower-cased email, or E.164. */
  address: string;
  status: Exclude<AddressStatus, 'reachable'>;
  /** A suppression reason on email (`bounced` …), else the channel's own word (`sms_stop`) or the provider's code. */
  reason: string;
  /** `provider`, `recipient`, `api`, `import`. */
  source: string;
}

/** The status an email suppression reason puts its address in. */
export const suppressionStatus = (reason: SuppressionReason): AddressState['status'] => (reason === 'bounced' ? 'unreachable' : 'opted_out');

// Email's reasons, weakest first: a project's own suppression (it may lift it), the person's unsubscribe, a dead
// address, a complaint (permanent). A later, stronger word replaces a weaker one; a weaker one never replaces.
const EMAIL_RANK = sql`ARRAY['manual', 'unsubscribed', 'bounced', 'complained']`;

/**
 * Records that addresses stopped being reachable on their channel. An address already out stays as it is — the first
 * word stands — except that a complaint replaces any other state (it is permanent) and, on email, a stronger reason a
 * weaker one (`EMAIL_RANK`: an essential email still goes to an unsubscribed address; once it bounces, the address is
 * dead). Returns the addresses changed.
 */
export async function recordAddressStates(db: Db, states: readonly AddressState[]): Promise<number> {
  if (states.length === 0) return 0;
  const column = <T>(pick: (s: AddressState) => T) => sql.param(states.map(pick));
  const { rows } = await db.execute<{ changed: number }>(sql`
    WITH given AS (
      SELECT DISTINCT ON (project_id, sandbox, channel, address) * FROM unnest(
        ${column((s) => s.projectId)}::text[], ${column((s) => s.sandbox)}::boolean[], ${column((s) => s.channel)}::channel[],
        ${column((s) => s.address)}::text[], ${column((s) => s.status)}::address_status[], ${column((s) => s.reason)}::text[],
        ${column((s) => s.source)}::text[]
      ) AS x(project_id, sandbox, channel, address, status, reason, source)
      ORDER BY project_id, sandbox, channel, address, (reason = 'complained') DESC
    ), written AS (
      INSERT INTO channel_addresses AS a (project_id, sandbox, channel, address, status, status_reason, source)
      SELECT project_id, sandbox, channel, address, status, reason, source FROM given
      ON CONFLICT (project_id, sandbox, channel, address) DO UPDATE
      SET status = excluded.status, status_reason = excluded.status_reason, source = excluded.source, updated_at = now()
      WHERE a.status = 'reachable' OR (excluded.status_reason = 'complained' AND a.status_reason IS DISTINCT FROM 'complained')
        OR (a.channel = 'email' AND array_position(${EMAIL_RANK}, excluded.status_reason) > coalesce(array_position(${EMAIL_RANK}, a.status_reason), 0))
      RETURNING 1
    )
    SELECT count(*)::int AS changed FROM written`);
  // The person's own opt-out (not a project's manual suppression, not a bounce) withdraws marketing consent too.
  await recordConsents(
    db,
    states.filter((s) => s.status === 'opted_out' && s.reason !== 'manual').map((s) => ({ ...s, consent: 'unsubscribed' })),
  );
  return rows[0]?.changed ?? 0;
}

/** A marketing consent said of one address on one channel, and who said it (`transactional`, `api`, `import` …). */
export interface ConsentChange extends AddressKey {
  consent: MarketingConsent;
  source: string;
}

/**
 * Sets the marketing consent of addresses on their channels: the one writer of `channel_addresses.consent`. With
 * `unlessSaid`, an address whose consent someone already stated keeps it — a transactional send creating a contact
 * never overrides (nor upgrades) what the person or the project said.
 */
export async function recordConsents(db: Db, changes: readonly ConsentChange[], options: { unlessSaid?: boolean } = {}): Promise<void> {
  if (changes.length === 0) return;
  const column = <T>(pick: (c: ConsentChange) => T) => sql.param(changes.map(pick));
  await db.execute(sql`
    INSERT INTO channel_addresses AS a (project_id, sandbox, channel, address, consent, consent_source, consent_at)
    SELECT DISTINCT ON (project_id, sandbox, channel, address) project_id, sandbox, channel, address, consent, source, now() FROM unnest(
      ${column((c) => c.projectId)}::text[], ${column((c) => c.sandbox)}::boolean[], ${column((c) => c.channel)}::channel[],
      ${column((c) => c.address)}::text[], ${column((c) => c.consent)}::marketing_consent[], ${column((c) => c.source)}::text[]
    ) AS x(project_id, sandbox, channel, address, consent, source)
    ORDER BY project_id, sandbox, channel, address
    ON CONFLICT (project_id, sandbox, channel, address) DO UPDATE
    SET consent = excluded.consent, consent_source = excluded.consent_source, consent_at = excluded.consent_at, updated_at = now()
    WHERE (a.consent, a.consent_source) IS DISTINCT FROM (excluded.consent, excluded.consent_source)
      AND (${options.unlessSaid === true} = false OR a.consent_source IS NULL)`);
}

/**
 * Makes an address reachable on its channel again (the project lifts a suppression, or the person re-subscribes). A
 * complaint is permanent and is not lifted: `false`; with `onlyReason`, neither is a state of any other reason (a
 * person may undo their own unsubscribe, not a bounce). Lifting the person's opt-out gives back the marketing consent it took
 * (`subscribed`); lifting a bounce or a manual suppression leaves the consent as it was. A row left saying only what
 * no row says (reachable, subscribed, never wrote) is deleted; one with more to say stays, `reachable`. Returns whether
 * a state was lifted, `false` when it was kept, undefined when the address had none.
 */
export async function liftAddressState(
  db: Db,
  key: { projectId: string; sandbox: boolean; channel: Channel; address: string },
  onlyReason?: SuppressionReason,
): Promise<boolean | undefined> {
  const { rows } = await db.execute<{ lifted: boolean }>(sql`
    WITH found AS (
      SELECT status_reason FROM channel_addresses
      WHERE project_id = ${key.projectId} AND sandbox = ${key.sandbox} AND channel = ${key.channel} AND address = ${key.address}
        AND status <> 'reachable'
    ), liftable AS (
      SELECT a.address, a.status_reason,
        -- The person's own opt-out took the marketing consent: lifting it gives it back.
        (a.status = 'opted_out' AND a.status_reason IS DISTINCT FROM 'manual') AS gives_back,
        (a.consent = 'subscribed' OR (a.status = 'opted_out' AND a.status_reason IS DISTINCT FROM 'manual')) AND a.last_inbound_at IS NULL AS plain
      FROM channel_addresses a
      WHERE a.project_id = ${key.projectId} AND a.sandbox = ${key.sandbox} AND a.channel = ${key.channel} AND a.address = ${key.address}
        AND a.status <> 'reachable' AND a.status_reason IS DISTINCT FROM 'complained'
        AND (${onlyReason ?? null}::text IS NULL OR a.status_reason = ${onlyReason ?? null})
    ), dropped AS (
      -- A row that would say only what no row says (reachable, subscribed) goes.
      DELETE FROM channel_addresses a USING liftable l
      WHERE l.plain AND a.project_id = ${key.projectId} AND a.sandbox = ${key.sandbox} AND a.channel = ${key.channel} AND a.address = l.address
      RETURNING l.status_reason
    ), kept AS (
      UPDATE channel_addresses a SET status = 'reachable', status_reason = NULL, source = NULL, updated_at = now(),
        consent = CASE WHEN l.gives_back THEN 'subscribed' ELSE a.consent END,
        consent_source = CASE WHEN l.gives_back THEN 'lifted' ELSE a.consent_source END,
        consent_at = CASE WHEN l.gives_back THEN now() ELSE a.consent_at END
      FROM liftable l
      WHERE NOT l.plain AND a.project_id = ${key.projectId} AND a.sandbox = ${key.sandbox} AND a.channel = ${key.channel} AND a.address = l.address
      RETURNING l.status_reason
    ), lifted AS (
      SELECT status_reason FROM dropped UNION ALL SELECT status_reason FROM kept
    )
    SELECT EXISTS (SELECT 1 FROM lifted) AS lifted FROM found`);
  return rows[0]?.lifted;
}

/** One address on one channel, in a project's environment. */
export interface AddressKey {
  projectId: string;
  sandbox: boolean;
  channel: Channel;
  address: string;
}

/**
 * Records that the person at an address wrote to the business at `at` (WhatsApp: it opens the 24-hour customer-service
 * window). The latest instant stands, so a replayed or late callback never moves it back; the address's status stays.
 */
export async function recordInbound(db: Db, key: AddressKey, at: Date): Promise<void> {
  await db.execute(sql`
    INSERT INTO channel_addresses AS a (project_id, sandbox, channel, address, last_inbound_at)
    VALUES (${key.projectId}, ${key.sandbox}, ${key.channel}, ${key.address}, ${at.toISOString()}::timestamptz)
    ON CONFLICT (project_id, sandbox, channel, address) DO UPDATE
    SET last_inbound_at = greatest(a.last_inbound_at, excluded.last_inbound_at), updated_at = now()`);
}

/** What Herald knows of an address on a channel; an address without a row is reachable and never wrote. */
export async function findAddressState(
  db: Db,
  key: AddressKey,
): Promise<{ status: AddressStatus; reason: string | null; lastInboundAt: Date | null }> {
  const { rows } = await db.execute<{ status: AddressStatus; status_reason: string | null; last_inbound_at: string | null }>(sql`
    SELECT status, status_reason, last_inbound_at FROM channel_addresses
    WHERE project_id = ${key.projectId} AND sandbox = ${key.sandbox} AND channel = ${key.channel} AND address = ${key.address}`);
  const row = rows[0];
  return {
    status: row?.status ?? 'reachable',
    reason: row?.status_reason ?? null,
    lastInboundAt: row?.last_inbound_at ? new Date(row.last_inbound_at) : null,
  };
}
