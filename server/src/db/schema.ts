// The Drizzle schema: every table Herald owns. drizzle-kit generates the SQL migrations in server/migrations from it.
import { sql, type SQL } from 'drizzle-orm';
import { type AnyPgColumn, bigint, boolean, index, integer, jsonb, pgEnum, pgTable, primaryKey, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';

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
  ...timestamps,
});

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

export interface DeliveryPolicy {
  /** At most `max` pushes per subscriber in any `windowSeconds`. */
  frequencyCap?: { max: number; windowSeconds: number } | null;
  /** Local times `HH:mm` in the subscriber's time zone; the window may wrap midnight (22:00–07:00). */
  quietHours?: { start: string; end: string } | null;
}

export const projects = pgTable(
  'projects',
  {
    id: text('id').primaryKey(),
    organizationId: text('organization_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    emailDomain: text('email_domain'),
    settings: jsonb('settings').$type<ProjectSettings>().notNull().default({}),
    vapidPublicKey: text('vapid_public_key').notNull(),
    vapidPrivateKey: text('vapid_private_key').notNull(),
    /** Key of the identity verification HMAC; generated on first read for projects made before it existed. */
    identitySecret: text('identity_secret'),
    ...timestamps,
  },
  (t) => [index('projects_organization_idx').on(t.organizationId)],
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
/** One email state: none (no address), active, verified, unsubscribed, bounced, complained. */
export const EMAIL_STATUSES = ['none', 'active', 'verified', 'unsubscribed', 'bounced', 'complained'] as const;

export const subscriberPlatformEnum = pgEnum('subscriber_platform', SUBSCRIBER_PLATFORMS);
export const subscriberBrowserEnum = pgEnum('subscriber_browser', SUBSCRIBER_BROWSERS);
export const subscriberOsEnum = pgEnum('subscriber_os', SUBSCRIBER_OSES);
export const subscriberStatusEnum = pgEnum('subscriber_status', SUBSCRIBER_STATUSES);
export const emailStatusEnum = pgEnum('email_status', EMAIL_STATUSES);

export interface SubscriberPreferences {
  channels?: { email?: boolean; push?: boolean; sms?: boolean; whatsapp?: boolean };
  [key: string]: unknown;
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
    emailStatus: emailStatusEnum('email_status').notNull().default('none'),
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
    index('subscribers_project_email_idx').on(t.projectId, sql`lower(${t.email})`),
    index('subscribers_project_created_idx').on(t.projectId, t.createdAt, t.id),
    // lastSeenDays usually matches a large part of a project: status, sandbox, os and platform as key columns let its
    // reach count read the index alone (docs/PERFORMANCE.md, Reach).
    index('subscribers_project_last_seen_idx').on(t.projectId, t.lastSeenAt, t.status, t.sandbox, t.os, t.platform),
    index('subscribers_project_subscribed_idx').on(t.projectId, t.subscribedAt),
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
    index('subscribers_tags_idx').using('gin', t.tags),
  ],
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

// ---- Delivery (issue 4): messages, one delivery row per recipient, the transactional send log. ----

export const CHANNELS = ['push', 'email', 'sms', 'whatsapp'] as const;
/**
 * A delivery's state; docs/CONTEXT.md defines each. `queued → sending → sent → delivered`, then `clicked` or
 * `dismissed`; `failed` (the reason says why) and `suppressed` (policy or sandbox rules kept it back) are final.
 */
export const DELIVERY_STATUSES = ['queued', 'sending', 'sent', 'delivered', 'clicked', 'dismissed', 'failed', 'suppressed'] as const;

export const channelEnum = pgEnum('channel', CHANNELS);
export const deliveryStatusEnum = pgEnum('delivery_status', DELIVERY_STATUSES);

/** What a push shows; the service worker renders it. */
/** A button of a web push (spec 2.2): `action` is the URL it opens, `title` its label. */
export interface PushAction {
  action: string;
  title: string;
}

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

export const messages = pgTable(
  'messages',
  {
    id: text('id').primaryKey(),
    projectId: text('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    channel: channelEnum('channel').notNull(),
    /** `transactional` messages are sent by the API call that made them; others wait for the engine's workers. */
    source: text('source', { enum: ['transactional', 'campaign'] }).notNull(),
    campaignId: text('campaign_id'),
    /** Withdrawn by its sender (a cancelled campaign): the engine suppresses any delivery of it it claims afterwards. */
    cancelledAt: timestamp('cancelled_at', { withTimezone: true }),
    /** Made with a test key: every delivery goes to the sandbox provider. */
    sandbox: boolean('sandbox').notNull(),
    content: jsonb('content').$type<PushContent>().notNull(),
    options: jsonb('options').$type<PushOptions>().notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('messages_project_idx').on(t.projectId, t.createdAt), index('messages_campaign_idx').on(t.campaignId)],
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
    status: deliveryStatusEnum('status').notNull().default('queued'),
    /** Why it was not sent (a 7.4 reason code), or the last retryable failure while it waits for a retry. */
    reason: text('reason'),
    /** What the provider answered last, e.g. the push service's HTTP status. */
    providerCode: text('provider_code'),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true }).notNull().defaultNow(),
    /** While `sending`: the claim expires then, and another worker may take the row over. */
    leaseUntil: timestamp('lease_until', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
    sentAt: timestamp('sent_at', { withTimezone: true }),
    deliveredAt: timestamp('delivered_at', { withTimezone: true }),
    clickedAt: timestamp('clicked_at', { withTimezone: true }),
    dismissedAt: timestamp('dismissed_at', { withTimezone: true }),
    failedAt: timestamp('failed_at', { withTimezone: true }),
  },
  (t) => [
    // A recipient is snapshotted once per message, so a re-run snapshot cannot double anybody.
    uniqueIndex('deliveries_message_subscriber_key').on(t.messageId, t.subscriberId),
    index('deliveries_due_idx').on(t.nextAttemptAt).where(sql`${t.status} = 'queued'`),
    index('deliveries_lease_idx').on(t.leaseUntil).where(sql`${t.status} = 'sending'`),
    // Frequency caps count a subscriber's recent sends; deleting a subscriber cascades here.
    index('deliveries_subscriber_idx').on(t.subscriberId, t.sentAt),
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
  clicked: integer('clicked').notNull().default(0),
  dismissed: integer('dismissed').notNull().default(0),
  failed: integer('failed').notNull().default(0),
  suppressed: integer('suppressed').notNull().default(0),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});

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
    /** The recipient as the caller named it ({externalId} or {token}). */
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
export const CAMPAIGN_STATUSES = ['draft', 'scheduled', 'sending', 'sent', 'cancelled', 'failed', 'archived'] as const;
export const CAMPAIGN_MODES = ['immediate', 'scheduled', 'draft'] as const;
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

/** Inline filters (the segment compiler's object) or a saved segment of the same project, read at send time. */
export type CampaignSegment = { filters: Record<string, unknown> } | { savedSegmentId: string };

export interface CampaignUtm {
  source?: string | undefined;
  medium?: string | undefined;
  campaign?: string | undefined;
}

export const campaigns = pgTable(
  'campaigns',
  {
    id: text('id').primaryKey(),
    projectId: text('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    status: campaignStatusEnum('status').notNull(),
    mode: text('mode', { enum: CAMPAIGN_MODES }).notNull(),
    /** Created with a test key: its audience is the sandbox subscribers, and nothing reaches a push service. */
    sandbox: boolean('sandbox').notNull(),
    content: jsonb('content').$type<CampaignContent>().notNull(),
    segment: jsonb('segment').$type<CampaignSegment>().notNull(),
    /**
     * The saved segment while the campaign is a draft or scheduled, cleared when it leaves those states: the foreign
     * key keeps the segment from being deleted before the campaign reads it (`segment` keeps the reference).
     */
    pendingSegmentId: text('pending_segment_id').references(() => segments.id),
    /** When a scheduled campaign is due (the local time of `timezone` already resolved). */
    sendAt: timestamp('send_at', { withTimezone: true }),
    timezone: text('timezone'),
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
    archivedAt: timestamp('archived_at', { withTimezone: true }),
  },
  (t) => [
    index('campaigns_project_created_idx').on(t.projectId, t.createdAt, t.id),
    index('campaigns_pending_segment_idx').on(t.pendingSegmentId),
    index('campaigns_message_idx').on(t.messageId),
    // The sweep's work: campaigns still due to dispatch or to finish.
    index('campaigns_open_idx').on(t.status).where(sql`${t.status} IN ('scheduled', 'sending')`),
  ],
);
