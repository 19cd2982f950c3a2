// The Drizzle schema: every table Herald owns. drizzle-kit generates the SQL migrations in server/migrations from it.
import { sql } from 'drizzle-orm';
import { boolean, index, jsonb, pgEnum, pgTable, primaryKey, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';

const timestamps = {
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
};

export const roleEnum = pgEnum('member_role', ['OWNER', 'ADMIN', 'MEMBER', 'VIEWER']);
export const keyModeEnum = pgEnum('api_key_mode', ['live', 'test']);

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
  [key: string]: unknown;
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

// ---- Audience: subscribers and saved segments (issue 3). Sized for a million subscribers per project. ----

export const SUBSCRIBER_PLATFORMS = ['desktop', 'mobile', 'tablet'] as const;
export const SUBSCRIBER_BROWSERS = ['Chrome', 'Safari', 'Firefox', 'Edge'] as const;
export const SUBSCRIBER_OSES = ['macOS', 'Windows', 'iOS', 'Android'] as const;
/**
 * Push reachability of a subscriber:
 * - `active`: registered and deliverable (every registration starts here);
 * - `unsubscribed`: the browser revoked permission or the push service answered 404/410 (gone); a new
 *   registration of the same endpoint is needed to come back;
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
    index('subscribers_project_last_seen_idx').on(t.projectId, t.lastSeenAt),
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
    ...timestamps,
  },
  (t) => [index('segments_project_idx').on(t.projectId, t.createdAt)],
);
