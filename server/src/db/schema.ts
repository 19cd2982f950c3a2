// The Drizzle schema: every table Herald owns. drizzle-kit generates the SQL migrations in server/migrations from it.
import { sql, type SQL } from 'drizzle-orm';
import { type AnyPgColumn, bigint, boolean, check, date, index, integer, jsonb, numeric, pgEnum, pgTable, primaryKey, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';

const timestamps = {
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
};

export const roleEnum = pgEnum('member_role', ['OWNER', 'ADMIN', 'MEMBER', 'VIEWER']);
export const keyModeEnum = pgEnum('api_key_mode', ['live', 'test']);
/** `server`: every project route; `publishable`: only the routes a browser SDK calls (`publishable` in their access). */
export const keyScopeEnum = pgEnum('api_key_scope', ['server', 'publishable']);

export const users = pgTable(
  'users',
  {
    id: text('id').primaryKey(),
    email: text('email').notNull(),
    name: text('name').notNull(),
    passwordHash: text('password_hash').notNull(),
    ...timestamps,
  },
  (t) => [uniqueIndex('users_email_key').on(sql`lower(${t.email})`)],
);

export const organizations = pgTable('organizations', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  /** The operator's name for what the organization may do (`herald admin set-plan`). */
  plan: text('plan').notNull().default('self-hosted'),
  /** Emails its projects may send per calendar month (UTC), sandbox aside; null: no cap. */
  monthlyEmailCap: integer('monthly_email_cap'),
  ...timestamps,
});

/** Emails an organization's projects sent (handed to a provider) per calendar month, UTC: its monthly cap's counter. */
export const emailUsage = pgTable(
  'email_usage',
  {
    organizationId: text('organization_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    /** The first day of the month. */
    month: date('month').notNull(),
    sent: integer('sent').notNull().default(0),
    /** What the last reservation granted: the upsert reports it (RETURNING sees only the new row). */
    lastGranted: integer('last_granted').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.organizationId, t.month] })],
);

export const memberships = pgTable(
  'memberships',
  {
    organizationId: text('organization_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    role: roleEnum('role').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.organizationId, t.userId] }), index('memberships_user_idx').on(t.userId)],
);

export interface ProjectSettings {
  /** Per-project raises of the per-IP rate limits (requests per window), granted on request. */
  rateLimits?: { default?: number; ingest?: number; transactional?: number };
  /** Default time zone for subscribers whose own is unknown (quiet hours, schedules). */
  timezone?: string;
  /** Limits every push to a subscriber obeys, transactional or campaign. */
  deliveryPolicy?: DeliveryPolicy;
  /** VAPID `sub` claim: a mailto: or https: contact for push services. */
  vapidSubject?: string;
  /** identify with a publishable key must carry externalIdHash, the HMAC of the externalId under the identity secret. */
  identityVerification?: boolean;
  /** Origins (scheme://host[:port]) a browser may call the publishable routes from; empty or absent: any origin. */
  allowedOrigins?: string[];
  [key: string]: unknown;
}

/** Limits one channel's sends obey, per recipient: a device for push, an address for email, SMS and WhatsApp. */
export interface ChannelDeliveryPolicy {
  /** At most `max` messages of the channel per recipient in any `windowSeconds`. */
  frequencyCap?: { max: number; windowSeconds: number } | null;
  /** Local times `HH:mm` in the subscriber's time zone; the window may wrap midnight (22:00–07:00). */
  quietHours?: { start: string; end: string } | null;
}

/** Push's policy (the fields it has always had), and each other channel's own under `channels`. */
export interface DeliveryPolicy extends ChannelDeliveryPolicy {
  channels?: { [C in Exclude<Channel, 'push'>]?: ChannelDeliveryPolicy | null } | undefined;
}

/** The policy `channel` obeys under a project's delivery policy. */
export function channelPolicy(policy: DeliveryPolicy | undefined, channel: Channel): ChannelDeliveryPolicy | undefined {
  if (channel === 'push') return policy;
  return policy?.channels?.[channel] ?? undefined;
}

export const projects = pgTable(
  'projects',
  {
    id: text('id').primaryKey(),
    organizationId: text('organization_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    settings: jsonb('settings').$type<ProjectSettings>().notNull().default({}),
    /** Key of the identity verification HMAC; generated on first read for projects made before it existed. */
    identitySecret: text('identity_secret'),
    ...timestamps,
  },
  (t) => [index('projects_organization_idx').on(t.organizationId)],
);

/** The channels Herald sends on; a message has one. */
export const CHANNELS = ['push', 'email', 'sms', 'whatsapp'] as const;
export type Channel = (typeof CHANNELS)[number];
export const channelEnum = pgEnum('channel', CHANNELS);

/**
 * A project's provider of one channel: the provider's name, its settings (readable, e.g. the VAPID public key) and
 * its credentials, a JSON object sealed with HERALD_SECRET_KEY (`shared/secret-box.ts`), never returned by the API.
 */
export const channelConfigs = pgTable(
  'channel_configs',
  {
    projectId: text('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    channel: channelEnum('channel').notNull(),
    provider: text('provider').notNull(),
    settings: jsonb('settings').$type<Record<string, unknown>>().notNull().default({}),
    credentials: text('credentials').notNull(),
    ...timestamps,
  },
  (t) => [primaryKey({ columns: [t.projectId, t.channel] })],
);

/** What an SMS sender is: an alphanumeric id (one-way), or a number — long code, toll-free, short code. */
export const SMS_SENDER_KINDS = ['alphanumeric', 'long_code', 'toll_free', 'short_code'] as const;
export type SmsSenderKind = (typeof SMS_SENDER_KINDS)[number];

/**
 * The SMS senders provisioned for a project, per destination country (ISO 3166-1 alpha-2): a transactional SMS goes
 * from one provisioned for its recipient's country, and a `senderId` not provisioned there is refused.
 */
export const smsSenders = pgTable(
  'sms_senders',
  {
    id: text('id').primaryKey(),
    projectId: text('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    country: text('country').notNull(),
    kind: text('kind', { enum: SMS_SENDER_KINDS }).notNull(),
    /** The alphanumeric id as shown, or the number in E.164 (a short code as its digits). */
    sender: text('sender').notNull(),
    /** Sends per second held for this sender across every worker; null: the kind's usual rate. */
    ratePerSecond: integer('rate_per_second'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('sms_senders_project_country_sender_key').on(t.projectId, t.country, t.sender)],
);

/**
 * A sending domain's state (docs/CONTEXT.md, "Sending domains"): `pending` until its ownership and DKIM records are
 * found, `verified`, or `failing` — verified once, its records since found missing or changed. Only `verified` sends.
 */
export const EMAIL_DOMAIN_STATUSES = ['pending', 'verified', 'failing'] as const;
export type EmailDomainStatus = (typeof EMAIL_DOMAIN_STATUSES)[number];
export const emailDomainStatusEnum = pgEnum('email_domain_status', EMAIL_DOMAIN_STATUSES);

/** The records a verification checks; the SPF and DMARC records are advice and never checked. */
export const CHECKED_RECORDS = ['ownership', 'dkim', 'dkim_ed25519'] as const;
export type CheckedRecord = (typeof CHECKED_RECORDS)[number];
export const RECORD_PROBLEMS = ['missing', 'wrong_value', 'lookup_failed'] as const;

/** What the last check found wrong with one record, at `name`. */
export interface DomainRecordProblem {
  record: CheckedRecord;
  name: string;
  problem: (typeof RECORD_PROBLEMS)[number];
}

/**
 * A domain a project sends email from, with its DKIM keys: the public halves as published (base64), the private
 * ones PEM in one JSON object `{rsa, ed25519?}` sealed with HERALD_SECRET_KEY like channel credentials.
 */
export const emailDomains = pgTable(
  'email_domains',
  {
    id: text('id').primaryKey(),
    projectId: text('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    /** Lower-case, IDN in A-labels (xn--…). */
    domain: text('domain').notNull(),
    status: emailDomainStatusEnum('status').notNull().default('pending'),
    /** Published as `herald-verification=<token>` at `_herald.<domain>`. */
    ownershipToken: text('ownership_token').notNull(),
    dkimSelector: text('dkim_selector').notNull(),
    /** RSA 2048, base64 SubjectPublicKeyInfo DER: the record's `p=`. */
    dkimPublicKey: text('dkim_public_key').notNull(),
    ed25519Selector: text('ed25519_selector'),
    /** The raw 32-byte Ed25519 key, base64 (RFC 8463). */
    ed25519PublicKey: text('ed25519_public_key'),
    privateKeys: text('private_keys').notNull(),
    problems: jsonb('problems').$type<DomainRecordProblem[]>().notNull().default([]),
    /** When it last became verified. */
    verifiedAt: timestamp('verified_at', { withTimezone: true }),
    lastCheckedAt: timestamp('last_checked_at', { withTimezone: true }),
    ...timestamps,
  },
  (t) => [uniqueIndex('email_domains_project_domain_key').on(t.projectId, t.domain)],
);

export const apiKeys = pgTable(
  'api_keys',
  {
    id: text('id').primaryKey(),
    projectId: text('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    mode: keyModeEnum('mode').notNull(),
    scope: keyScopeEnum('scope').notNull().default('server'),
    prefix: text('prefix').notNull(),
    lastFour: text('last_four').notNull(),
    secretHash: text('secret_hash').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true }),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
  },
  (t) => [uniqueIndex('api_keys_secret_hash_key').on(t.secretHash), index('api_keys_project_idx').on(t.projectId)],
);

/** Secrets Herald generates for itself (the JWT signing key when JWT_SECRET is unset), shared by every instance. */
export const instanceSecrets = pgTable('instance_secrets', {
  name: text('name').primaryKey(),
  value: text('value').notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});

/**
 * An invitation to join an organization: pending until the invitee accepts it with the secret of its link (stored as
 * its SHA-256 digest), or until it expires, is revoked, or is replaced by a newer invitation of the same address.
 */
export const invitations = pgTable(
  'invitations',
  {
    id: text('id').primaryKey(),
    organizationId: text('organization_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    email: text('email').notNull(),
    role: roleEnum('role').notNull(),
    tokenHash: text('token_hash').notNull(),
    invitedBy: text('invited_by').references(() => users.id, { onDelete: 'set null' }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    acceptedAt: timestamp('accepted_at', { withTimezone: true }),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
  },
  (t) => [
    uniqueIndex('invitations_token_hash_key').on(t.tokenHash),
    // One open invitation per address and organization: inviting again replaces it.
    uniqueIndex('invitations_open_email_key')
      .on(t.organizationId, sql`lower(${t.email})`)
      .where(sql`${t.acceptedAt} IS NULL AND ${t.revokedAt} IS NULL`),
  ],
);

/**
 * A password reset asked for by email: the link's secret stored as its SHA-256 digest, good once for an hour. A newer
 * request of the same user closes the older ones (`usedAt` set without a password change).
 */
export const passwordResets = pgTable(
  'password_resets',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    tokenHash: text('token_hash').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    usedAt: timestamp('used_at', { withTimezone: true }),
  },
  (t) => [uniqueIndex('password_resets_token_hash_key').on(t.tokenHash), index('password_resets_user_idx').on(t.userId, t.createdAt)],
);

// ---- Audience: subscribers and saved segments (issue 3). Sized for a million subscribers per project. ----

export const SUBSCRIBER_PLATFORMS = ['desktop', 'mobile', 'tablet'] as const;
export const SUBSCRIBER_BROWSERS = ['Chrome', 'Safari', 'Firefox', 'Edge'] as const;
export const SUBSCRIBER_OSES = ['macOS', 'Windows', 'iOS', 'Android'] as const;
/**
 * Push reachability of a subscriber:
 * - `active`: registered and deliverable (every registration starts here);
 * - `unsubscribed`: the browser revoked permission or the push service answered 404/410 (gone); a new
 *   registration of the same endpoint brings it back;
 * - `inactive`: deactivated by Herald or an operator (e.g. repeated non-engagement where the push service
 *   still answers 200), kept for history and reactivatable.
 */
export const SUBSCRIBER_STATUSES = ['active', 'inactive', 'unsubscribed'] as const;
/**
 * A subscriber's email status, read (never stored) from its address's state in `channel_addresses`: none (no
 * address), active, unsubscribed, bounced, complained; `verified` is a filter value the spec names that no address has.
 */
export const EMAIL_STATUSES = ['none', 'active', 'verified', 'unsubscribed', 'bounced', 'complained'] as const;
export type EmailStatus = (typeof EMAIL_STATUSES)[number];

export const subscriberPlatformEnum = pgEnum('subscriber_platform', SUBSCRIBER_PLATFORMS);
export const subscriberBrowserEnum = pgEnum('subscriber_browser', SUBSCRIBER_BROWSERS);
export const subscriberOsEnum = pgEnum('subscriber_os', SUBSCRIBER_OSES);
export const subscriberStatusEnum = pgEnum('subscriber_status', SUBSCRIBER_STATUSES);

export interface SubscriberPreferences {
  channels?: { email?: boolean; push?: boolean; sms?: boolean; whatsapp?: boolean };
  [key: string]: unknown;
}

/**
 * Whether a subscriber turned `channel` off in its preferences (`turnedOff`) or kept it on (`keptOn`), as the audience
 * queries and the partial indexes that serve them both spell it: a partial index serves a query only when the two
 * forms are the same expression, the channel a literal.
 */
export const channelPreference = {
  turnedOff: (preferences: AnyPgColumn | SQL, channel: Channel) => sql`(${preferences} -> 'channels' -> ${sql.raw(`'${channel}'`)}) = 'false'::jsonb`,
  keptOn: (preferences: AnyPgColumn | SQL, channel: Channel) => sql`(${preferences} -> 'channels' -> ${sql.raw(`'${channel}'`)}) IS DISTINCT FROM 'false'::jsonb`,
};

/** The columns a subscriber's name and search text are read from: the table's, or those of its index builder. */
interface NamedColumns {
  attributes: AnyPgColumn;
  email: AnyPgColumn;
  externalId: AnyPgColumn;
  phone: AnyPgColumn;
}

/**
 * A subscriber's readable name, from its attributes: `name`, else `first_name`/`firstName` and `last_name`/`lastName`
 * joined; null when none is set. One expression for the answer, the sort and subscribers_project_name_idx.
 */
export function subscriberName(t: Pick<NamedColumns, 'attributes'>): SQL<string | null> {
  const a = t.attributes;
  return sql<string | null>`nullif(btrim(coalesce(nullif(btrim(${a} ->> 'name'), ''), coalesce(${a} ->> 'first_name', ${a} ->> 'firstName', '') || ' ' || coalesce(${a} ->> 'last_name', ${a} ->> 'lastName', ''))), '')`;
}

/**
 * What the list's partial search (`q`) reads, lower-cased: email, external id, phone and name. The trigram index
 * subscribers_search_idx is built on exactly this expression, so a query must spell it the same way to use it.
 */
export function subscriberSearchText(t: NamedColumns): SQL<string> {
  return sql<string>`lower(coalesce(${t.email}, '') || ' ' || coalesce(${t.externalId}, '') || ' ' || coalesce(${t.phone}, '') || ' ' || coalesce(${subscriberName(t)}, ''))`;
}

export const subscribers = pgTable(
  'subscribers',
  {
    id: text('id').primaryKey(),
    projectId: text('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    /** Opaque handle the SDK keeps; unique across every project. */
    token: text('token').notNull(),
    /** Push subscription; null for email- or phone-only contacts. */
    endpoint: text('endpoint'),
    p256dh: text('p256dh'),
    auth: text('auth'),
    userAgent: text('user_agent'),
    platform: subscriberPlatformEnum('platform'),
    browser: subscriberBrowserEnum('browser'),
    os: subscriberOsEnum('os'),
    device: text('device'),
    country: text('country'),
    city: text('city'),
    language: text('language'),
    timezone: text('timezone'),
    externalId: text('external_id'),
    email: text('email'),
    phone: text('phone'),
    status: subscriberStatusEnum('status').notNull().default('active'),
    /** Why the status last left `active`, e.g. `push_subscription_gone` after a 404/410 from the push service. */
    statusReason: text('status_reason'),
    /** Registered with a test key: reachable only from the sandbox. */
    sandbox: boolean('sandbox').notNull().default(false),
    tags: text('tags').array().notNull().default(sql`'{}'::text[]`),
    attributes: jsonb('attributes').$type<Record<string, unknown>>().notNull().default({}),
    preferences: jsonb('preferences').$type<SubscriberPreferences>().notNull().default({}),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    subscribedAt: timestamp('subscribed_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
    lastSeenAt: timestamp('last_seen_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('subscribers_token_key').on(t.token),
    uniqueIndex('subscribers_project_endpoint_key').on(t.projectId, t.endpoint),
    // Several devices may share one externalId: not unique.
    index('subscribers_project_external_id_idx').on(t.projectId, t.externalId),
    // sandbox and email as trailing key columns: the email reach count (distinct addresses) reads this index alone, in
    // address order (docs/PERFORMANCE.md, Dashboard); key columns rather than INCLUDE keep the deduplication of the
    // rows without an address.
    index('subscribers_project_email_idx').on(t.projectId, sql`lower(${t.email})`, t.sandbox, t.email),
    // SMS and WhatsApp sends find the subscribers carrying a number.
    index('subscribers_project_phone_idx').on(t.projectId, t.phone),
    // The few who turned a channel off, for the audiences' "no holder of this address turned it off" anti-join.
    index('subscribers_project_email_off_idx')
      .on(t.projectId, t.sandbox, sql`lower(${t.email})`)
      .where(channelPreference.turnedOff(t.preferences, 'email')),
    index('subscribers_project_sms_off_idx').on(t.projectId, t.sandbox, t.phone).where(channelPreference.turnedOff(t.preferences, 'sms')),
    index('subscribers_project_whatsapp_off_idx').on(t.projectId, t.sandbox, t.phone).where(channelPreference.turnedOff(t.preferences, 'whatsapp')),
    // The push audience (`channelAudience`): its count reads this index alone.
    index('subscribers_project_push_audience_idx')
      .on(t.projectId, t.sandbox)
      .where(sql`${t.status} = 'active' AND ${t.endpoint} IS NOT NULL AND ${channelPreference.keptOn(t.preferences, 'push')}`),
    // Retired devices with an address, which may still reach their person (`activePerson`'s second half): read alone.
    index('subscribers_project_retired_idx')
      .on(t.projectId, t.sandbox, t.email, t.phone)
      .where(sql`${t.status} IN ('inactive', 'unsubscribed') AND (${t.email} IS NOT NULL OR ${t.phone} IS NOT NULL)`),
    index('subscribers_project_created_idx').on(t.projectId, t.createdAt, t.id),
    // lastSeenDays usually matches a large part of a project: status, sandbox, os and platform as key columns let its
    // reach count read the index alone (docs/PERFORMANCE.md, Reach).
    index('subscribers_project_last_seen_idx').on(t.projectId, t.lastSeenAt, t.status, t.sandbox, t.os, t.platform),
    // sandbox as a key column: the overview's growth per day reads the index alone.
    index('subscribers_project_subscribed_idx').on(t.projectId, t.subscribedAt, t.sandbox),
    // Analytics reads two index-only scans, each already in group order: (country, city) and the device mix.
    // status and sandbox are key columns so the scans filter without touching the table; the prefixes also
    // serve list and segment filters on country and on platform.
    index('subscribers_project_country_city_idx').on(t.projectId, t.country, t.city, t.status, t.sandbox),
    index('subscribers_project_city_idx').on(t.projectId, t.city),
    index('subscribers_project_device_mix_idx').on(t.projectId, t.platform, t.browser, t.os, t.device, t.status, t.sandbox),
    index('subscribers_project_browser_idx').on(t.projectId, t.browser),
    index('subscribers_project_os_idx').on(t.projectId, t.os),
    index('subscribers_project_device_idx').on(t.projectId, t.device),
    index('subscribers_project_status_idx').on(t.projectId, t.status),
    // The ids of an environment's active people without the table: what an event condition's set of ids is matched
    // (or, negated, anti-joined) against (docs/PERFORMANCE.md, "Targeting").
    index('subscribers_project_people_idx').on(t.projectId, t.sandbox, t.status, t.id),
    index('subscribers_tags_idx').using('gin', t.tags),
    // The list's partial search (a LIKE '%…%' on any part) and its sort by name (docs/PERFORMANCE.md, Search).
    index('subscribers_search_idx').using('gin', sql`${subscriberSearchText(t)} gin_trgm_ops`),
    index('subscribers_project_name_idx').on(t.projectId, subscriberName(t), t.id),
  ],
);

/**
 * What Herald knows of an address as a person's way in on a channel, whatever the devices carrying it:
 * - `reachable`: nothing stops a send (an address without a row is reachable too);
 * - `opted_out`: the person asked for no more (an SMS STOP, a WhatsApp block, an email unsubscribe or complaint);
 * - `unreachable`: the provider says the address cannot be reached (a hard bounce, a number that does not exist).
 */
export const ADDRESS_STATUSES = ['reachable', 'opted_out', 'unreachable'] as const;
export type AddressStatus = (typeof ADDRESS_STATUSES)[number];
export const addressStatusEnum = pgEnum('address_status', ADDRESS_STATUSES);

/**
 * Whether an address may receive marketing (campaigns and automations) on a channel; transactional sends ignore it:
 * - `subscribed`: the person or the project said so (the SDK, an API call, an import, the preference center) — and
 *   every address Herald has no word on (no row), so the project's own contacts stay its list;
 * - `transactional`: Herald created the contact for a transactional send: a receipt is not consent to marketing;
 * - `unsubscribed`: the person asked for no more marketing (an unsubscribe, a complaint, an SMS STOP).
 */
export const MARKETING_CONSENTS = ['subscribed', 'transactional', 'unsubscribed'] as const;
export type MarketingConsent = (typeof MARKETING_CONSENTS)[number];
export const marketingConsentEnum = pgEnum('marketing_consent', MARKETING_CONSENTS);

/**
 * Reachability per address (email lower-cased, phone numbers E.164) and channel: email, SMS and WhatsApp reach
 * people by address, so what one address says holds for every subscriber carrying it. A push device's own
 * reachability stays on its subscriber row (`status`).
 */
export const channelAddresses = pgTable(
  'channel_addresses',
  {
    projectId: text('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    /** Addresses of sandbox subscribers are apart from live ones, as their subscribers are. */
    sandbox: boolean('sandbox').notNull(),
    channel: channelEnum('channel').notNull(),
    address: text('address').notNull(),
    status: addressStatusEnum('status').notNull().default('reachable'),
    /** Why the status last changed, e.g. `sms_stop`, `hard_bounce`, or the provider's code. */
    statusReason: text('status_reason'),
    /** Who said so: the provider (`provider`), the person (`recipient`), a member or key (`api`), an `import`. */
    source: text('source'),
    /** WhatsApp: when the person last wrote to the business (it opens the 24-hour customer-service window). */
    lastInboundAt: timestamp('last_inbound_at', { withTimezone: true }),
    /** Marketing consent on this channel (`MARKETING_CONSENTS`); a row written for another reason starts `subscribed`. */
    consent: marketingConsentEnum('consent').notNull().default('subscribed'),
    /** Who last set the consent (`transactional`, `api`, `import`, `preference_center`, `recipient` …); null: never said. */
    consentSource: text('consent_source'),
    consentAt: timestamp('consent_at', { withTimezone: true }),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.sandbox, t.channel, t.address] })],
);

export const segments = pgTable(
  'segments',
  {
    id: text('id').primaryKey(),
    projectId: text('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    filters: jsonb('filters').$type<Record<string, unknown>>().notNull().default({}),
    /** Saved with a test key: a test key sees and changes only these, and only sandbox campaigns send to them. */
    sandbox: boolean('sandbox').notNull().default(false),
    ...timestamps,
  },
  (t) => [index('segments_project_idx').on(t.projectId, t.createdAt)],
);

/** The types of the project's attribute list (docs/TARGETING.md): how a condition reads a stored attribute. */
export const ATTRIBUTE_TYPES = ['text', 'number', 'boolean', 'date'] as const;
export type AttributeType = (typeof ATTRIBUTE_TYPES)[number];
export const attributeTypeEnum = pgEnum('attribute_type', ATTRIBUTE_TYPES);
/** `inferred` from the first value seen; `declared` by a user (PUT /projects/:projectId/attributes/:name). */
export const attributeSourceEnum = pgEnum('attribute_source', ['inferred', 'declared']);

/** The project's attribute list, per environment: every top-level attribute name its people have, and its type. */
export const subscriberAttributes = pgTable(
  'subscriber_attributes',
  {
    projectId: text('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    sandbox: boolean('sandbox').notNull(),
    name: text('name').notNull(),
    type: attributeTypeEnum('type').notNull(),
    source: attributeSourceEnum('source').notNull(),
    /** When a value of it was first written; null for an attribute declared before any person had it. */
    firstSeenAt: timestamp('first_seen_at', { withTimezone: true }),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.sandbox, t.name] })],
);

/**
 * Each person's scalar attributes read every way a condition may read them (docs/TARGETING.md, "Storage"), so that an
 * audience's attribute condition is a range of an index rather than a read of every person's `attributes`. Written only
 * by the triggers on `subscribers` (migration 0043), in the statement that changes the attributes.
 */
export const attributeValues = pgTable(
  'attribute_values',
  {
    subscriberId: text('subscriber_id').notNull(),
    projectId: text('project_id').notNull(),
    sandbox: boolean('sandbox').notNull(),
    name: text('name').notNull(),
    /** The text reading, when at most 1000 bytes (an index entry's bound). */
    text: text('text'),
    /** The text reading is longer: conditions on it read `subscribers.attributes`. */
    long: boolean('long').notNull(),
    number: numeric('number'),
    at: timestamp('at', { withTimezone: true }),
  },
  (t) => [
    primaryKey({ columns: [t.subscriberId, t.name] }),
    index('attribute_values_text_idx').on(t.projectId, t.sandbox, t.name, t.text, t.subscriberId).where(sql`${t.text} IS NOT NULL`),
    index('attribute_values_number_idx').on(t.projectId, t.sandbox, t.name, t.number, t.subscriberId).where(sql`${t.number} IS NOT NULL`),
    index('attribute_values_at_idx').on(t.projectId, t.sandbox, t.name, t.at, t.subscriberId).where(sql`${t.at} IS NOT NULL`),
    index('attribute_values_long_idx').on(t.projectId, t.sandbox, t.name, t.subscriberId).where(sql`${t.long}`),
  ],
);

/** The visual editor's block document, validated by the email-templates module's `emailDesign` schema. */
export type EmailDesignDocument = Record<string, unknown>;

/** A top-level name an email template reads from a send's variables; `hasDefault`: it renders without it. */
export interface EmailTemplateVariable {
  name: string;
  hasDefault: boolean;
}

export const emailTemplates = pgTable(
  'email_templates',
  {
    id: text('id').primaryKey(),
    projectId: text('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    /** Saved with a test key: a test key sees and changes only these, and only sandbox sends render them. */
    sandbox: boolean('sandbox').notNull().default(false),
    name: text('name').notNull(),
    subject: text('subject').notNull(),
    html: text('html').notNull(),
    /** The plain-text part; null: generated from the rendered HTML at each render. */
    text: text('text'),
    preheader: text('preheader'),
    /** What subject, preheader, html and text read, computed when saved. */
    variables: jsonb('variables').$type<EmailTemplateVariable[]>().notNull().default([]),
    /** The visual editor's document `html` was rendered from (email-design.schemas.ts); null: HTML written by hand. */
    design: jsonb('design').$type<EmailDesignDocument>(),
    ...timestamps,
  },
  (t) => [index('email_templates_project_idx').on(t.projectId, t.createdAt)],
);

// ---- Delivery (issue 4): messages, one delivery row per recipient, the transactional send log. ----

/**
 * A delivery's state; docs/CONTEXT.md defines each. `queued → sending → sent` (`queued ⇄ paused` with its campaign), then what the recipient or the provider
 * reported, furthest first: `delivered → opened → dismissed → clicked`, or `unsubscribed`, `complained`, `bounced`;
 * `failed` (the reason says why) and `suppressed` (policy or sandbox rules kept it back) are final.
 */
export const DELIVERY_STATUSES = [
  'queued',
  /** Its campaign is paused: no worker claims it until the campaign resumes, when it is `queued` again, due as it was. */
  'paused',
  'sending',
  'sent',
  'delivered',
  'opened',
  'clicked',
  'dismissed',
  'unsubscribed',
  'complained',
  'bounced',
  'failed',
  'suppressed',
] as const;
/**
 * What a recipient's device, the tracking links or a provider's callback report about a sent delivery. `soft_bounced`
 * (a transient failure the provider reported: a full mailbox, a deferral) is logged and counted per address, and
 * moves neither the delivery's status nor a counter. `failed` (an SMS the carrier refused after the provider accepted
 * it) moves the delivery to `failed` with the reason and provider code its detail names.
 */
export const DELIVERY_EVENTS = ['delivered', 'opened', 'clicked', 'dismissed', 'unsubscribed', 'complained', 'bounced', 'soft_bounced', 'failed'] as const;
export type DeliveryEvent = (typeof DELIVERY_EVENTS)[number];
/** What a recipient may do again to the same delivery: open it, click in it. Every other event happens once. */
export const REPEATABLE_EVENTS = ['opened', 'clicked'] as const satisfies readonly DeliveryEvent[];

export const deliveryStatusEnum = pgEnum('delivery_status', DELIVERY_STATUSES);

/** A button of a web push (spec 2.2): `action` is the URL it opens, `title` its label. */
export interface PushAction {
  action: string;
  title: string;
}

/** What a push shows; the service worker renders it. */
export interface PushContent {
  title: string;
  body: string;
  url?: string | undefined;
  iconUrl?: string | undefined;
  imageUrl?: string | undefined;
  badge?: string | undefined;
  actions?: PushAction[] | undefined;
}

/** RFC 8030 delivery options of a push message. */
export interface PushOptions {
  ttlSeconds: number;
  urgency: 'very-low' | 'low' | 'normal' | 'high';
  topic?: string | undefined;
}

/** A mailbox: an address and the display name shown with it. */
export interface EmailMailbox {
  email: string;
  name?: string | undefined;
}

/**
 * What an email says. Every email is also given, per recipient, when it is sent: tracked links, an open pixel, an
 * unsubscribe footer and the List-Unsubscribe headers (delivery/channels/email/email-render.ts).
 */
export interface EmailContent {
  subject: string;
  /** The HTML body; at least one of `html` and `text`. */
  html?: string | undefined;
  /** The plain-text part; generated from `html` when absent. */
  text?: string | undefined;
  /** The inbox preview line, hidden at the top of the HTML body. */
  preheader?: string | undefined;
  from: EmailMailbox;
  replyTo?: EmailMailbox | undefined;
}

/** How an email message goes (a push's TTL and urgency have no email counterpart). */
export interface EmailOptions {
  /**
   * Essential mail (a password reset, a receipt; transactional only): it still goes to an address unsubscribed from
   * campaigns, never to one that bounced or complained, nor one the project suppressed itself.
   */
  essential?: boolean | undefined;
  /**
   * The content's merge tags (`{{ first_name }}`) are rendered for each recipient from its subscriber when it is sent
   * (a campaign's; a transactional email is rendered once, when it is asked for).
   */
  personalized?: boolean | undefined;
}

/** A WhatsApp template's parameters as the Cloud API takes them (`components`: header, body, button … parameters). */
export interface WhatsAppTemplateComponent {
  type: string;
  sub_type?: string | undefined;
  index?: string | undefined;
  parameters?: Record<string, unknown>[] | undefined;
}

/** What a WhatsApp message says: free-form text (inside the customer-service window), or an approved template. */
export type WhatsAppContent =
  | { type: 'text'; text: string }
  | {
      type: 'template';
      template: {
        name: string;
        language: string;
        components?: WhatsAppTemplateComponent[] | undefined;
        /** Through Twilio: the template's Content SID (HX…) from the registry. */
        contentSid?: string | undefined;
        /** Through Twilio: its ContentVariables as given (`{"1": "Ada"}`); unset, the body's text parameters numbered from 1. */
        variables?: Record<string, string> | undefined;
      };
    };

/** What an SMS says: its text, sent as given (its segments counted by delivery/channels/sms/sms-segments.ts). */
export interface SmsContent {
  body: string;
}

/** Who an SMS goes from, chosen per destination country when it was asked for (an alphanumeric id, a number, or Twilio's choice). */
export interface SmsOptions {
  /** Twilio's `From`: an alphanumeric sender id or a provisioned number; absent with a Messaging Service. */
  from?: string | undefined;
  /** Twilio's `MessagingServiceSid`, when the project's provider names one and no sender was provisioned for the country. */
  messagingServiceSid?: string | undefined;
  /** The sender's sends per second, held across every worker. */
  ratePerSecond: number;
}

/**
 * What a message carries on each channel (`messages.content`, `messages.options`).
 */
export interface ChannelMessages {
  push: { content: PushContent; options: PushOptions };
  email: { content: EmailContent; options: EmailOptions };
  sms: { content: SmsContent; options: SmsOptions };
  whatsapp: { content: WhatsAppContent; options: Record<string, never> };
}

export type MessageContent<C extends Channel = Channel> = ChannelMessages[C]['content'];

/** A message's channel with its content and options, discriminated by the channel. */
export type ChannelMessage<C extends Channel = Channel> = { [K in C]: { channel: K } & ChannelMessages[K] }[C];

/**
 * Why a message's sending is held up: its latest retryable provider failure while no delivery of it is accepted. The
 * engine sets it per batch and clears it when a later batch has a delivery the provider accepted.
 */
export interface SendingIssue {
  /** The delivery reason code (`provider_error` …). */
  reason: string;
  /** What the provider answered: `smtp_451`, `http_503`, `esocket`, `throttling` … */
  providerCode: string | null;
  /** The provider's words, shortened, addresses and URLs taken out. */
  detail: string | null;
  /** ISO 8601: the latest failure. */
  at: string;
  /** ISO 8601: the first failure of this streak. */
  since: string;
}

export const messages = pgTable(
  'messages',
  {
    id: text('id').primaryKey(),
    projectId: text('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    channel: channelEnum('channel').notNull(),
    /** `transactional` messages are sent by the API call that made them; others wait for the engine's workers. */
    source: text('source', { enum: ['transactional', 'campaign', 'automation'] }).notNull(),
    campaignId: text('campaign_id'),
    /** Withdrawn by its sender (a cancelled campaign): the engine suppresses any delivery of it it claims afterwards. */
    cancelledAt: timestamp('cancelled_at', { withTimezone: true }),
    /** Held by its sender (a paused campaign): the engine puts back any delivery of it it claims meanwhile, unsent. */
    pausedAt: timestamp('paused_at', { withTimezone: true }),
    /** Made with a test key: every delivery goes to the sandbox provider. */
    sandbox: boolean('sandbox').notNull(),
    /** Its channel's content (`ChannelMessages`). */
    content: jsonb('content').$type<MessageContent>().notNull(),
    options: jsonb('options').$type<ChannelMessage['options']>().notNull(),
    /** Set while its provider keeps failing (`SendingIssue`), null once a delivery goes through again. */
    sendingIssue: jsonb('sending_issue').$type<SendingIssue>(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index('messages_project_idx').on(t.projectId, t.createdAt),
    index('messages_campaign_idx').on(t.campaignId),
    // The few test-key messages of a project, which the overview's sends leave out.
    index('messages_project_sandbox_idx').on(t.projectId).where(sql`${t.sandbox}`),
  ],
);

export const deliveries = pgTable(
  'deliveries',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    projectId: text('project_id').notNull(),
    messageId: text('message_id')
      .notNull()
      .references(() => messages.id, { onDelete: 'cascade' }),
    subscriberId: text('subscriber_id')
      .notNull()
      .references(() => subscribers.id, { onDelete: 'cascade' }),
    /** Its message's channel, on the row: claims and lanes select by it. */
    channel: channelEnum('channel').notNull().default('push'),
    /** The address a person is reached at on email (lower-case), SMS or WhatsApp (E.164); null for push (the device). */
    destination: text('destination'),
    status: deliveryStatusEnum('status').notNull().default('queued'),
    /** Why it was not sent (a 7.4 reason code), or the last retryable failure while it waits for a retry. */
    reason: text('reason'),
    /** What the provider answered last, e.g. the push service's HTTP status. */
    providerCode: text('provider_code'),
    /** What the provider said with a refusal (Twilio's or Meta's error message), beside its code; null once sent. */
    providerError: text('provider_error'),
    /** The provider's id of the message it accepted, when it gives one: its callbacks name the delivery by it. */
    providerMessageId: text('provider_message_id'),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true }).notNull().defaultNow(),
    /** While `sending`: the claim expires then, and another worker may take the row over. */
    leaseUntil: timestamp('lease_until', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
    sentAt: timestamp('sent_at', { withTimezone: true }),
    deliveredAt: timestamp('delivered_at', { withTimezone: true }),
    openedAt: timestamp('opened_at', { withTimezone: true }),
    clickedAt: timestamp('clicked_at', { withTimezone: true }),
    dismissedAt: timestamp('dismissed_at', { withTimezone: true }),
    failedAt: timestamp('failed_at', { withTimezone: true }),
  },
  (t) => [
    // A recipient is snapshotted once per message, so a re-run snapshot cannot double anybody.
    uniqueIndex('deliveries_message_subscriber_key').on(t.messageId, t.subscriberId),
    // …and an address once, however many subscribers (devices) share it.
    uniqueIndex('deliveries_message_destination_key').on(t.messageId, t.destination).where(sql`${t.destination} IS NOT NULL`),
    // Each lane reads its channel's due rows in order, never sorted.
    index('deliveries_due_idx').on(t.channel, t.nextAttemptAt).where(sql`${t.status} = 'queued'`),
    index('deliveries_lease_idx').on(t.leaseUntil).where(sql`${t.status} = 'sending'`),
    // Frequency caps count a device's recent pushes, or an address's recent sends; deleting a subscriber cascades here.
    index('deliveries_subscriber_idx').on(t.subscriberId, t.sentAt),
    index('deliveries_destination_idx').on(t.destination, t.sentAt).where(sql`${t.destination} IS NOT NULL`),
    // Provider callbacks (delivered, bounced …) find their delivery by the provider's message id.
    index('deliveries_provider_message_idx').on(t.providerMessageId).where(sql`${t.providerMessageId} IS NOT NULL`),
    // A project's sends per day and channel (the overview), read from the index alone over the window.
    index('deliveries_project_sent_idx').on(t.projectId, t.sentAt, t.channel, t.messageId).where(sql`${t.sentAt} IS NOT NULL`),
  ],
);

/**
 * Exact counters of one message's deliveries, kept by the statements that change them (the audience snapshot,
 * `recordOutcomes`, the tracking endpoints, a cancel), each transition counted once. Only messages that have a row
 * are counted (campaigns create theirs); `sent` counts every delivery the provider accepted, including those later
 * delivered, clicked or dismissed.
 */
export const messageStats = pgTable('message_stats', {
  messageId: text('message_id')
    .primaryKey()
    .references(() => messages.id, { onDelete: 'cascade' }),
  /** Deliveries created (the audience snapshot). */
  queued: integer('queued').notNull().default(0),
  sent: integer('sent').notNull().default(0),
  delivered: integer('delivered').notNull().default(0),
  opened: integer('opened').notNull().default(0),
  clicked: integer('clicked').notNull().default(0),
  dismissed: integer('dismissed').notNull().default(0),
  unsubscribed: integer('unsubscribed').notNull().default(0),
  complained: integer('complained').notNull().default(0),
  bounced: integer('bounced').notNull().default(0),
  failed: integer('failed').notNull().default(0),
  suppressed: integer('suppressed').notNull().default(0),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});

export const deliveryEventEnum = pgEnum('delivery_event', DELIVERY_EVENTS);

/**
 * The events log of every channel, with when each event happened and what the reporter said (a provider's payload,
 * summarised). A delivery's first event of each type is its one row that is not a `repeat`: the row that moved its
 * status, timestamp and counter. Opens and clicks may come again (a mail opened twice, a second link followed): each is
 * a `repeat` row of its own, moving nothing. A replay never adds a row: a retried report of a type that happens once
 * meets the first row's key, and a provider's event meets its own `source_event_id`. The per-campaign charts read it.
 */
export const deliveryEvents = pgTable(
  'delivery_events',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    deliveryId: bigint('delivery_id', { mode: 'number' })
      .notNull()
      .references(() => deliveries.id, { onDelete: 'cascade' }),
    projectId: text('project_id').notNull(),
    /** The delivery's message, copied like its project: a campaign's events are read without a pass over its deliveries. */
    messageId: text('message_id').notNull(),
    type: deliveryEventEnum('type').notNull(),
    occurredAt: timestamp('occurred_at', { withTimezone: true }).notNull(),
    receivedAt: timestamp('received_at', { withTimezone: true }).notNull().defaultNow(),
    detail: jsonb('detail').$type<Record<string, unknown>>(),
    /** A later open or click of the delivery: logged, and counted nowhere. */
    repeat: boolean('repeat').notNull().default(false),
    /** The reporter's id of the event (an SNS message id, a provider's event id); null for Herald's own tracking links. */
    sourceEventId: text('source_event_id'),
  },
  (t) => [
    // Nulls are distinct: every tracking-link hit is a row; a provider's event, replayed, is not. Leading with the
    // delivery, it also serves lookups by delivery and the cascade of a delivery's deletion.
    uniqueIndex('delivery_events_source_key').on(t.deliveryId, t.type, t.sourceEventId),
    uniqueIndex('delivery_events_first_key').on(t.deliveryId, t.type).where(sql`NOT ${t.repeat}`),
    index('delivery_events_project_idx').on(t.projectId, t.occurredAt),
    // A campaign's analytics: its chart by type and time, its links (clicks), without visiting its deliveries.
    index('delivery_events_message_idx').on(t.messageId, t.type, t.occurredAt),
    check('delivery_events_repeat_check', sql`NOT ${t.repeat} OR ${t.type} IN (${sql.raw(REPEATABLE_EVENTS.map((type) => `'${type}'`).join(', '))})`),
  ],
);

/**
 * Provider send rates shared by every worker (`delivery/send-rate.ts`, when REDIS_URL is unset): per rate key (a
 * provider and its sender, e.g. `twilio:+15551234567`), the instant of its first slot nobody has booked — GCRA's
 * theoretical arrival time, moved past the slots each reservation books in one statement — and the end of its line:
 * the turns given to deliveries held back for want of a slot.
 */
export const sendRates = pgTable('send_rates', {
  key: text('key').primaryKey(),
  nextFreeAt: timestamp('next_free_at', { withTimezone: true }).notNull(),
  /** Slots the latest reservation granted: it reads this back, as RETURNING sees only the row it wrote. */
  lastGranted: integer('last_granted').notNull(),
  /** The turn after the last one given to a held delivery (null: nobody waits). */
  lineUntil: timestamp('line_until', { withTimezone: true }),
});

/**
 * Sends per minute of a rate key with a 24-hour quota (a provider sandbox account: 200 per 24 hours, spec 8), the
 * rolling window `delivery/send-window.repository.ts` reserves from. A minute's row is kept until it leaves the window.
 */
export const sendWindows = pgTable(
  'send_windows',
  {
    key: text('key').notNull(),
    minute: timestamp('minute', { withTimezone: true }).notNull(),
    sends: integer('sends').notNull(),
  },
  (t) => [primaryKey({ columns: [t.key, t.minute] })],
);

/** The transactional send log: who asked (which key), what, and what happened. */
export const transactionalSends = pgTable(
  'transactional_sends',
  {
    id: text('id').primaryKey(),
    projectId: text('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    channel: channelEnum('channel').notNull(),
    apiKeyId: text('api_key_id'),
    sandbox: boolean('sandbox').notNull(),
    /** The recipient as the caller named it: {externalId} or {token} on push, {to} on email. */
    recipient: jsonb('recipient').$type<Record<string, string>>().notNull(),
    messageId: text('message_id').references(() => messages.id, { onDelete: 'set null' }),
    idempotencyKey: text('idempotency_key'),
    /** The response envelope exactly as answered. */
    outcome: jsonb('outcome').$type<Record<string, unknown>>().notNull(),
    reason: text('reason'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index('transactional_sends_project_idx').on(t.projectId, t.createdAt, t.id),
    // Finds the sends naming a subscriber that is deleted (its personal data goes with it).
    index('transactional_sends_recipient_idx').on(t.projectId, recipientName(t.recipient)),
  ],
);

/** The externalId or token a transactional send named its recipient by: one expression for the index and its queries. */
export function recipientName(recipient: AnyPgColumn): SQL {
  return sql`coalesce(${recipient} ->> 'externalId', ${recipient} ->> 'token')`;
}

/** First responses of requests sent with an Idempotency-Key, kept 24 h. */
export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    projectId: text('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    route: text('route').notNull(),
    key: text('key').notNull(),
    requestHash: text('request_hash').notNull(),
    /** Null while the first request is still being processed. */
    statusCode: integer('status_code'),
    response: jsonb('response'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.route, t.key] }), index('idempotency_keys_created_idx').on(t.createdAt)],
);

// ---- Push campaigns (issue 5): a broadcast to a segment, sent now, at a scheduled time, or kept as a draft. ----

/**
 * `draft → sending | scheduled`, `scheduled → sending | cancelled | failed` (its time passed beyond the grace
 * window while Herald was down), `sending → sent | cancelled`, `sent → archived`. docs/CONTEXT.md defines each.
 */
export const CAMPAIGN_STATUSES = ['draft', 'scheduled', 'sending', 'paused', 'sent', 'cancelled', 'failed', 'archived'] as const;
export const CAMPAIGN_MODES = ['immediate', 'scheduled', 'draft'] as const;
/** The channels a campaign broadcasts on: `/campaigns` are push's, `/email-campaigns` email's. */
export const CAMPAIGN_CHANNELS = ['push', 'email'] as const;
export type CampaignChannel = (typeof CAMPAIGN_CHANNELS)[number];
export const campaignStatusEnum = pgEnum('campaign_status', CAMPAIGN_STATUSES);

/** What a campaign's push shows, as the API takes it (UTM parameters are applied when it is dispatched). */
export interface CampaignContent {
  title: string;
  body: string;
  iconUrl?: string | undefined;
  imageUrl?: string | undefined;
  clickUrl?: string | undefined;
  actions?: PushAction[] | undefined;
}

/** What an email campaign sends, as the API takes it: merge tags rendered per recipient, UTM applied when dispatched. */
export interface EmailCampaignContent {
  subject: string;
  preheader?: string | undefined;
  html: string;
  /** The plain part as written; absent, each recipient's is generated from the HTML. */
  text?: string | undefined;
  from: EmailMailbox;
  replyTo?: EmailMailbox | undefined;
  /** The saved template the campaign started from (its parts were copied when the campaign was written). */
  templateId?: string | undefined;
  /** The visual editor's document `html` was rendered from; absent: HTML written by hand. */
  design?: EmailDesignDocument | undefined;
}

/** Inline filters (the segment compiler's object) or a saved segment of the same project, read at send time. */
export type CampaignSegment = { filters: Record<string, unknown> } | { savedSegmentId: string };

export interface CampaignUtm {
  source?: string | undefined;
  medium?: string | undefined;
  campaign?: string | undefined;
  /** utm_content: email campaigns' (spec 2.3). */
  content?: string | undefined;
}

export const campaigns = pgTable(
  'campaigns',
  {
    id: text('id').primaryKey(),
    projectId: text('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    channel: text('channel', { enum: CAMPAIGN_CHANNELS }).notNull().default('push'),
    status: campaignStatusEnum('status').notNull(),
    mode: text('mode', { enum: CAMPAIGN_MODES }).notNull(),
    /** Created with a test key: its audience is the sandbox subscribers, and nothing reaches a push service. */
    sandbox: boolean('sandbox').notNull(),
    /** `CampaignContent` on push, `EmailCampaignContent` on email. */
    content: jsonb('content').$type<CampaignContent | EmailCampaignContent>().notNull(),
    segment: jsonb('segment').$type<CampaignSegment>().notNull(),
    /**
     * The saved segment while the campaign is a draft or scheduled, cleared when it leaves those states: the foreign
     * key keeps the segment from being deleted before the campaign reads it (`segment` keeps the reference).
     */
    pendingSegmentId: text('pending_segment_id').references(() => segments.id),
    /** When a scheduled campaign is due (the local time of `timezone` already resolved). */
    sendAt: timestamp('send_at', { withTimezone: true }),
    timezone: text('timezone'),
    /** Email: sent at sendAt's wall-clock time in each recipient's zone (the project's for those without one). */
    localTime: boolean('local_time').notNull().default(false),
    utm: jsonb('utm').$type<CampaignUtm>(),
    /** The push message made at dispatch; its deliveries are the audience snapshot. */
    messageId: text('message_id').references(() => messages.id, { onDelete: 'set null' }),
    /** stats.queued: the audience counted when dispatched, replaced by the snapshot size when it lands. */
    audienceSize: integer('audience_size').notNull().default(0),
    /**
     * When the dispatch that snapshotted the audience began; set in the transaction that writes the delivery rows, so it
     * is visible exactly when they are. Until then the campaign cannot be complete.
     */
    snapshotAt: timestamp('snapshot_at', { withTimezone: true }),
    /** Why the campaign is `failed`, e.g. `schedule_missed`. */
    failureReason: text('failure_reason'),
    /** The campaign this one re-sends. */
    resentFrom: text('resent_from'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
    /** When sending started. */
    sentAt: timestamp('sent_at', { withTimezone: true }),
    /** When every delivery reached a final state. */
    completedAt: timestamp('completed_at', { withTimezone: true }),
    cancelledAt: timestamp('cancelled_at', { withTimezone: true }),
    /** When it was last paused (status `paused`); kept after it resumes. */
    pausedAt: timestamp('paused_at', { withTimezone: true }),
    /** Why it is paused: `manual` (its sender), or `monthly_cap_reached` (resumed on the first of next month, UTC). */
    pauseReason: text('pause_reason', { enum: ['manual', 'monthly_cap_reached'] }),
    archivedAt: timestamp('archived_at', { withTimezone: true }),
  },
  (t) => [
    index('campaigns_project_created_idx').on(t.projectId, t.channel, t.createdAt, t.id),
    index('campaigns_pending_segment_idx').on(t.pendingSegmentId),
    index('campaigns_message_idx').on(t.messageId),
    // The sweep's work: campaigns still due to dispatch or to finish.
    index('campaigns_open_idx').on(t.status).where(sql`${t.status} IN ('scheduled', 'sending')`),
  ],
);

/** Meta's template categories and review statuses; only `APPROVED` templates may be sent. */
export const WHATSAPP_TEMPLATE_CATEGORIES = ['MARKETING', 'UTILITY', 'AUTHENTICATION'] as const;
export const WHATSAPP_TEMPLATE_STATUSES = ['APPROVED', 'PENDING', 'REJECTED', 'PAUSED', 'DISABLED'] as const;

/**
 * A project's WhatsApp message templates, one per name and language: synchronised from its WhatsApp Business Account
 * (`source` `provider`) or written through the API (`manual`, for self-hosted setups that track them by hand).
 */
export const whatsappTemplates = pgTable(
  'whatsapp_templates',
  {
    id: text('id').primaryKey(),
    projectId: text('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    /** Meta's language code, e.g. `en_US`. */
    language: text('language').notNull(),
    category: text('category', { enum: WHATSAPP_TEMPLATE_CATEGORIES }).notNull(),
    status: text('status', { enum: WHATSAPP_TEMPLATE_STATUSES }).notNull(),
    /** The template's components as Meta describes them (header, body, footer, buttons), for reference. */
    components: jsonb('components').$type<Record<string, unknown>[]>().notNull().default([]),
    source: text('source', { enum: ['provider', 'manual'] }).notNull(),
    /** Meta's id of the template, when synchronised; for a project sending through Twilio, the template's Content SID (HX…). */
    providerTemplateId: text('provider_template_id'),
    ...timestamps,
  },
  (t) => [uniqueIndex('whatsapp_templates_project_name_language_key').on(t.projectId, t.name, t.language)],
);

// ---- Events and automations (issue 20): what applications report, flows of steps per subscriber, enrollments. ----

/**
 * What an application reported about a person (`POST /events`): stored per project and environment, queryable, and
 * what `event` triggers and conditions read. `subscriberId` is null when no subscriber matched the identity given.
 */
export const events = pgTable(
  'events',
  {
    id: text('id').primaryKey(),
    projectId: text('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    /** Sent with a test key: it enrolls sandbox subscribers only, in sandbox automations. */
    sandbox: boolean('sandbox').notNull(),
    name: text('name').notNull(),
    subscriberId: text('subscriber_id').references(() => subscribers.id, { onDelete: 'set null' }),
    /** The identity the application named the person by: {externalId} or {token}. */
    identity: jsonb('identity').$type<Record<string, string>>().notNull(),
    properties: jsonb('properties').$type<Record<string, unknown>>().notNull().default({}),
    occurredAt: timestamp('occurred_at', { withTimezone: true }).notNull(),
    receivedAt: timestamp('received_at', { withTimezone: true }).notNull().defaultNow(),
    /** The application's own id of the event: a second event with the same one is ignored. */
    eventKey: text('event_key'),
  },
  (t) => [
    uniqueIndex('events_project_key').on(t.projectId, t.sandbox, t.eventKey).where(sql`${t.eventKey} IS NOT NULL`),
    index('events_project_received_idx').on(t.projectId, t.sandbox, t.receivedAt),
    index('events_project_name_idx').on(t.projectId, t.sandbox, t.name, t.receivedAt),
    // Event conditions of segments (docs/TARGETING.md, "Storage"): a name's events in a window of occurred_at, and who
    // performed them, from the index alone.
    index('events_project_name_occurred_idx').on(t.projectId, t.sandbox, t.name, t.occurredAt, t.subscriberId),
    index('events_subscriber_idx').on(t.subscriberId, t.receivedAt),
  ],
);

/**
 * Per person and event name: how many events of the name name them, the first and last occurredAt. Kept in the same
 * transaction as the events it counts (modules/events), so it always equals an aggregate over `events`; what event
 * conditions without a window or `where` read (docs/TARGETING.md, "Storage"). Events naming nobody are not counted.
 */
export const eventTotals = pgTable(
  'event_totals',
  {
    projectId: text('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    sandbox: boolean('sandbox').notNull(),
    name: text('name').notNull(),
    subscriberId: text('subscriber_id')
      .notNull()
      .references(() => subscribers.id, { onDelete: 'cascade' }),
    count: integer('count').notNull(),
    firstAt: timestamp('first_at', { withTimezone: true }).notNull(),
    lastAt: timestamp('last_at', { withTimezone: true }).notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.projectId, t.sandbox, t.name, t.subscriberId] }),
    // "At least N times": the people of a name over a count, from the index alone.
    index('event_totals_project_name_count_idx').on(t.projectId, t.sandbox, t.name, t.count, t.subscriberId),
    index('event_totals_subscriber_idx').on(t.subscriberId),
  ],
);

/** `draft → active ⇄ paused`, `draft | active | paused → archived` (docs/CONTEXT.md, "Automations"). */
export const AUTOMATION_STATES = ['draft', 'active', 'paused', 'archived'] as const;
export type AutomationState = (typeof AUTOMATION_STATES)[number];
export const TRIGGER_TYPES = ['subscriber_added', 'subscriber_inactive', 'event', 'schedule'] as const;
export type TriggerType = (typeof TRIGGER_TYPES)[number];

/** A test of one property (`path`, dotted) of the triggering event or of the subscriber's attributes. */
export interface PropertyCondition {
  path: string;
  operator: 'eq' | 'neq' | 'gt' | 'gte' | 'lt' | 'lte' | 'contains' | 'in' | 'exists' | 'not_exists';
  value?: unknown;
}

/** What starts an automation for a subscriber (spec 6.2). */
/** Who may enter an automation (docs/TARGETING.md): people matching inline filters, or a saved segment's members. */
export type EntryRule = { filters: Record<string, unknown> } | { savedSegmentId: string };

export type AutomationTrigger =
  | { type: 'subscriber_added'; segment?: EntryRule | undefined }
  | { type: 'subscriber_inactive'; inactiveDays: number; segment?: EntryRule | undefined }
  | { type: 'event'; eventName: string; conditions?: PropertyCondition[] | undefined; segment?: EntryRule | undefined }
  | { type: 'schedule'; cron: string; defaultTimezone?: string | undefined; segment?: EntryRule | undefined };

/** A condition step's criteria, all combined with AND (docs/CONTEXT.md, "Automations"). */
export interface ConditionCriteria {
  /** Subscriber fields, as a segment filter. */
  subscriber?: Record<string, unknown> | undefined;
  /** Membership of a saved segment of the project. */
  segmentId?: string | undefined;
  attributes?: PropertyCondition[] | undefined;
  event?: PropertyCondition[] | undefined;
}

interface StepBase {
  id: string;
  next: string | null;
}

/** One step of a flow (spec 2.5); a condition has branches instead of `next`. */
export type AutomationStep =
  | (StepBase & { type: 'send_push'; content: { title: string; body: string; clickUrl?: string | undefined; iconUrl?: string | undefined; imageUrl?: string | undefined; actions?: PushAction[] | undefined } })
  | (StepBase & { type: 'send_email'; content: EmailCampaignContent })
  | (StepBase & { type: 'send_sms'; content: SmsContent })
  | (StepBase & { type: 'send_whatsapp'; content: { text?: string | undefined; templateName?: string | undefined; language?: string | undefined; components?: WhatsAppTemplateComponent[] | undefined } })
  | (StepBase & { type: 'delay'; duration: string })
  | { id: string; type: 'condition'; criteria: ConditionCriteria; trueBranch: string | null; falseBranch: string | null }
  | { id: string; type: 'wait_until'; event: string; conditions?: PropertyCondition[] | undefined; timeout: string; matchedBranch: string | null; timeoutBranch: string | null }
  | { id: string; type: 'exit' };
export type StepType = AutomationStep['type'];

/** What counts as an automation's success: a person enrolled who performs this event leaves the flow `converted`. */
export interface AutomationGoal {
  event: string;
  conditions?: PropertyCondition[] | undefined;
}

export const automations = pgTable(
  'automations',
  {
    id: text('id').primaryKey(),
    projectId: text('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    /** Made with a test key: it enrolls sandbox subscribers only, and its messages go to the sandbox provider. */
    sandbox: boolean('sandbox').notNull().default(false),
    name: text('name').notNull(),
    state: text('state', { enum: AUTOMATION_STATES }).notNull().default('draft'),
    /** The flow new enrollments start on (`automation_versions`). */
    version: integer('version').notNull().default(1),
    /** The current version's trigger type and event name, on the row: triggers find their automations by them. */
    triggerType: text('trigger_type', { enum: TRIGGER_TYPES }).notNull(),
    eventName: text('event_name'),
    /** Which starter it was cloned from, if any. */
    starter: text('starter'),
    /** `schedule` and `subscriber_inactive`: the instant up to which the trigger has been evaluated. */
    evaluatedUntil: timestamp('evaluated_until', { withTimezone: true }),
    activatedAt: timestamp('activated_at', { withTimezone: true }),
    ...timestamps,
  },
  (t) => [
    index('automations_project_idx').on(t.projectId, t.createdAt),
    index('automations_trigger_idx').on(t.projectId, t.triggerType, t.eventName).where(sql`${t.state} = 'active'`),
  ],
);

/** Each version of a flow: never changed once an enrollment may run on it, so an enrollment keeps the flow it started on. */
export const automationVersions = pgTable(
  'automation_versions',
  {
    automationId: text('automation_id')
      .notNull()
      .references(() => automations.id, { onDelete: 'cascade' }),
    version: integer('version').notNull(),
    trigger: jsonb('trigger').$type<AutomationTrigger>().notNull(),
    steps: jsonb('steps').$type<AutomationStep[]>().notNull(),
    /** Versioned with the flow: an enrollment converts on the goal of the version it runs. */
    goal: jsonb('goal').$type<AutomationGoal>(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.automationId, t.version] })],
);

/**
 * `active` (a step is due), `waiting` (in a delay or a wait-until step), then `completed` (its flow ended),
 * `converted` (the person performed the automation's goal), `exited` (an exit step, or its automation archived) or
 * `failed` (a step could not run: the reason says why).
 */
export const ENROLLMENT_STATES = ['active', 'waiting', 'completed', 'converted', 'exited', 'failed'] as const;
export type EnrollmentState = (typeof ENROLLMENT_STATES)[number];

/** One subscriber going through one automation: at most one per automation and subscriber (spec 3.3). */
export const automationEnrollments = pgTable(
  'automation_enrollments',
  {
    // Made by the database, as set-based enrollments insert many at once: time-ordered (index-friendly), then random.
    id: text('id')
      .primaryKey()
      .default(sql`'enr_' || lpad(to_hex((extract(epoch from clock_timestamp()) * 1000)::bigint), 12, '0') || substr(md5(random()::text), 1, 16)`),
    projectId: text('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    automationId: text('automation_id')
      .notNull()
      .references(() => automations.id, { onDelete: 'cascade' }),
    version: integer('version').notNull(),
    subscriberId: text('subscriber_id')
      .notNull()
      .references(() => subscribers.id, { onDelete: 'cascade' }),
    state: text('state', { enum: ENROLLMENT_STATES }).notNull().default('active'),
    /** The step to run when due; null once the enrollment ended. */
    stepId: text('step_id'),
    dueAt: timestamp('due_at', { withTimezone: true }).notNull().defaultNow(),
    /** The executor holding it, until `lockedUntil` (5 minutes); `lockVersion` fences a taken-over executor's writes. */
    lockedBy: text('locked_by'),
    lockedUntil: timestamp('locked_until', { withTimezone: true }),
    lockVersion: integer('lock_version').notNull().default(0),
    /** The event that enrolled it (`event` triggers): its properties are what conditions and email merge tags read. */
    eventId: text('event_id'),
    eventProperties: jsonb('event_properties').$type<Record<string, unknown>>(),
    /**
     * At a wait-until step: the event it waits for and since when (events that occurred earlier do not count), and
     * the event that came in time (null: none yet — when due, the timeout branch is taken).
     */
    waitEvent: text('wait_event'),
    waitSince: timestamp('wait_since', { withTimezone: true }),
    waitMatchedEventId: text('wait_matched_event_id'),
    reason: text('reason'),
    enrolledAt: timestamp('enrolled_at', { withTimezone: true }).notNull().defaultNow(),
    endedAt: timestamp('ended_at', { withTimezone: true }),
  },
  (t) => [
    // At most once per automation: a duplicate enrollment meets this and is ignored (ON CONFLICT DO NOTHING).
    uniqueIndex('automation_enrollments_automation_subscriber_key').on(t.automationId, t.subscriberId),
    // Per automation, so that a claim reads the due rows of active automations only: a paused one's backlog is not in its way.
    index('automation_enrollments_due_idx').on(t.automationId, t.dueAt).where(sql`${t.state} IN ('active', 'waiting')`),
    index('automation_enrollments_automation_idx').on(t.automationId, t.state, t.enrolledAt),
    // A person's enrollments (their timeline, the automation of a message sent to them) and the cascade of their deletion.
    index('automation_enrollments_subscriber_idx').on(t.subscriberId, t.enrolledAt),
  ],
);

/** Each step an enrollment entered: when, when it completed, what it did (a message sent, a branch taken). */
export const automationStepRuns = pgTable(
  'automation_step_runs',
  {
    enrollmentId: text('enrollment_id')
      .notNull()
      .references(() => automationEnrollments.id, { onDelete: 'cascade' }),
    automationId: text('automation_id').notNull(),
    stepId: text('step_id').notNull(),
    stepType: text('step_type').notNull(),
    enteredAt: timestamp('entered_at', { withTimezone: true }).notNull(),
    completedAt: timestamp('completed_at', { withTimezone: true }),
    /** `sent`, `skipped`, `true` / `false` (a condition), `waited`, `exited`, or why the step failed. */
    outcome: text('outcome'),
    messageId: text('message_id'),
  },
  (t) => [primaryKey({ columns: [t.enrollmentId, t.stepId] }), index('automation_step_runs_automation_idx').on(t.automationId, t.stepId)],
);
