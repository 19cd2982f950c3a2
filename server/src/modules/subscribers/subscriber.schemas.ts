// Zod schemas of the subscriber routes: request validation, response shapes and their OpenAPI documentation.
import { z } from 'zod';
import { CHANNELS, DELIVERY_EVENTS, DELIVERY_STATUSES, EMAIL_STATUSES, MARKETING_CONSENTS, SUBSCRIBER_BROWSERS, SUBSCRIBER_OSES, SUBSCRIBER_PLATFORMS, SUBSCRIBER_STATUSES } from '../../db/schema.js';
import { createOutboundGuard } from '../../delivery/index.js';
import { errorEnvelope, instant, paginationQuery, timestamp, timezone } from '../../http/schemas.js';
import { attributes, ATTRIBUTES_MAX_BYTES } from './attributes.schemas.js';
import { authSecretProblem, endpointProblem, p256dhProblem } from './push-keys.js';
import { LIST_SORTS } from './subscriber.repository.js';
import { canonicalLanguage } from './user-agent.js';

export const language = z
  .string()
  .max(35)
  .refine((tag) => canonicalLanguage(tag) !== null, 'must be a BCP 47 language tag such as en-US');

export const tag = z.string().trim().min(1).max(64);

const PERSON_CHANNELS = ['push', 'email', 'sms', 'whatsapp'] as const;

/** Problems reported through Zod so they join the other fields in one 422. */
const check = (problem: (value: string) => string | undefined) => (value: string, ctx: z.core.$RefinementCtx<string>) => {
  const message = problem(value);
  if (message) ctx.addIssue({ code: 'custom', message });
};

export const tokenBody = z.strictObject({ token: z.string().min(1).max(100) });

/** A browser's push subscription as PushSubscription.toJSON() gives it, flattened, and its user agent. */
const pushSubscriptionFields = (allowInsecureEndpoints: boolean) => {
  const guard = createOutboundGuard({ allowInsecure: allowInsecureEndpoints });
  return {
    endpoint: z
      .string()
      .max(2048)
      .superRefine(check((v) => endpointProblem(v, guard)))
      .describe(
        'Push subscription endpoint from PushSubscription.endpoint: an https URL whose host is not a loopback, private, ' +
          'link-local, unique-local or otherwise non-public address literal, nor localhost or a name under it (422 ' +
          'naming `endpoint`). With ALLOW_INSECURE_PUSH_ENDPOINTS (testing only) http and loopback are admitted.',
      ),
    p256dh: z
      .string()
      .max(200)
      .superRefine(check(p256dhProblem))
      .describe('base64url uncompressed P-256 public key (PushSubscription.getKey("p256dh"))'),
    auth: z.string().max(100).superRefine(check(authSecretProblem)).describe('base64url 16-byte auth secret'),
    userAgent: z.string().max(1024).describe('navigator.userAgent; platform, browser, os and device are derived from it'),
  };
};

/** A browser's push subscription as PushSubscription.toJSON() gives it (a test push's target), checked as a registration's. */
export const pushSubscriptionJson = (allowInsecureEndpoints: boolean) => {
  const { endpoint, p256dh, auth } = pushSubscriptionFields(allowInsecureEndpoints);
  return z.object({
    endpoint,
    expirationTime: z.number().nullable().optional().describe('Ignored'),
    keys: z.strictObject({ p256dh, auth }),
  });
};

export const registrationBody = (allowInsecureEndpoints: boolean) =>
  z.strictObject({
    projectId: z.string().min(1).describe('The project the device subscribes to'),
    ...pushSubscriptionFields(allowInsecureEndpoints),
    timezone: timezone.optional().describe('IANA time zone of the device'),
    language: language.optional().describe('BCP 47 language; defaults to the Accept-Language header'),
  });

/** A new push subscription for a known subscriber (its browser's keys changed, or it subscribed again). */
export const pushSubscriptionBody = (allowInsecureEndpoints: boolean) =>
  tokenBody.extend(pushSubscriptionFields(allowInsecureEndpoints));

export const registered = z
  .object({
    id: z.string(),
    token: z.string().describe('Opaque subscriber token: keep it in the SDK for identify, tag, untag and seen'),
    projectId: z.string(),
    status: z.enum(SUBSCRIBER_STATUSES),
  })
  .meta({ id: 'SubscriberRegistration' });

export const subscriber = z
  .object({
    id: z.string(),
    token: z.string(),
    projectId: z.string(),
    externalId: z.string().nullable(),
    endpoint: z.string().nullable(),
    userAgent: z.string().nullable(),
    platform: z.enum(SUBSCRIBER_PLATFORMS).nullable(),
    browser: z.enum(SUBSCRIBER_BROWSERS).nullable(),
    os: z.enum(SUBSCRIBER_OSES).nullable(),
    device: z.string().nullable(),
    country: z.string().nullable().describe('ISO 3166-1 alpha-2'),
    city: z.string().nullable(),
    language: z.string().nullable().describe('BCP 47'),
    timezone: z.string().nullable(),
    email: z.string().nullable(),
    phone: z.string().nullable(),
    emailStatus: z
      .enum(EMAIL_STATUSES)
      .describe(
        "The email address's state, the same on every subscriber carrying it: none (no address), active, unsubscribed, " +
          'bounced, complained (docs/CONTEXT.md, "emailStatus"). A manual suppression leaves it active.',
      ),
    status: z
      .enum(SUBSCRIBER_STATUSES)
      .describe(
        'active: deliverable; unsubscribed: permission revoked or the push service reported the subscription gone; ' +
          'inactive: deactivated by Herald or an operator',
      ),
    sandbox: z.boolean().describe('Registered with a test key: reachable only from the sandbox'),
    tags: z.array(z.string()),
    attributes: z.record(z.string(), z.unknown()),
    preferences: z.record(z.string(), z.unknown()),
    createdAt: timestamp,
    updatedAt: timestamp,
    subscribedAt: timestamp,
    lastSeenAt: timestamp,
    marketingConsent: z
      .object({
        push: z.enum(MARKETING_CONSENTS).nullable().describe('subscribed for a browser subscription (the permission prompt is the opt-in)'),
        email: z.enum(MARKETING_CONSENTS).nullable(),
        sms: z.enum(MARKETING_CONSENTS).nullable(),
        whatsapp: z.enum(MARKETING_CONSENTS).nullable(),
      })
      .optional()
      .describe(
        'Marketing consent per channel, null where the subscriber has no address on it: subscribed (campaigns and ' +
          'automations reach it), transactional (only transactional sends: Herald created the contact for one) or ' +
          'unsubscribed. In the detail, list and contact create/update answers',
      ),
    name: z
      .string()
      .nullable()
      .optional()
      .describe(
        'A readable name from the attributes: `name`, else `first_name`/`firstName` and `last_name`/`lastName` joined; ' +
          'null when none is set. In the detail and list answers',
      ),
    channels: z
      .array(z.enum(PERSON_CHANNELS))
      .optional()
      .describe(
        'The channels that reach this subscriber now: push (an active device with a subscription), email, sms, whatsapp ' +
          '(an address not suppressed, opted out or unreachable on it), less those its preferences turned off. Marketing ' +
          'consent is not read here (see marketingConsent). In the detail and list answers',
      ),
  })
  .meta({ id: 'Subscriber', description: 'A subscriber; the push keys p256dh and auth are write-only and never returned' });

export const duplicateSubscriber = errorEnvelope
  .extend({
    subscriber: subscriber
      .optional()
      .describe('The subscriber already registered with this endpoint (left out when the caller may not see it)'),
  })
  .meta({ id: 'DuplicateSubscriber' });

export const tagsBody = tokenBody.extend({ tags: z.array(tag).min(1).max(100) });

const search = z
  .string()
  .trim()
  .min(1)
  .max(200)
  .describe(
    'Partial, case-insensitive search: subscribers whose email, externalId, phone or name (see `name`) contains this ' +
      'text anywhere; % and _ are matched literally. A phone number may be written with spaces, dashes, dots or brackets',
  );

/** The list's filters: also what a bulk action or an export selects with (`filter`). */
export const listFilters = {
  q: search.optional(),
  platform: z.enum(SUBSCRIBER_PLATFORMS).optional(),
  country: z
    .string()
    .regex(/^[A-Za-z]{2}$/, 'must be an ISO 3166-1 alpha-2 code')
    .transform((v) => v.toUpperCase())
    .optional(),
  browser: z.enum(SUBSCRIBER_BROWSERS).optional(),
  os: z.enum(SUBSCRIBER_OSES).optional(),
  tag: tag.optional().describe('Subscribers carrying this tag'),
  email: z.string().trim().min(1).max(320).optional().describe('Subscribers with this email address (case-insensitive)'),
  status: z.enum(SUBSCRIBER_STATUSES).optional(),
  createdAfter: instant.optional().describe('ISO date or timestamp; createdAt at or after it'),
  createdBefore: instant.optional().describe('ISO date or timestamp; createdAt strictly before it'),
};

export const listQuery = {
  ...listFilters,
  sort: z
    .enum(LIST_SORTS)
    .default('createdAt')
    .describe('Sort key (default createdAt); rows with the same value are ordered by id, in the same direction'),
  order: z.enum(['asc', 'desc']).default('desc').describe('Sort direction (default desc); rows without an email or a name come last either way'),
};

/** Which rows a bulk action or an export takes: listed by id, or every row the list's filters select. */
const selectionFields = {
  ids: z
    .array(z.string().min(1).max(100))
    .min(1)
    .max(1000)
    .optional()
    .describe('The subscribers to act on, at most 1000; ids the caller cannot see (another project, a live row for a test key) are not matched'),
  filter: z
    .strictObject(listFilters)
    .optional()
    .describe('Every subscriber the list would show with these filters (`{}`: all of them); instead of ids'),
};

const oneSelection = (value: { ids?: unknown; filter?: unknown }, ctx: z.core.$RefinementCtx) => {
  if ((value.ids === undefined) === (value.filter === undefined)) {
    ctx.addIssue({ code: 'custom', path: ['ids'], message: 'give either ids or filter (one of the two)' });
  }
};

export const bulkBody = z
  .strictObject({
    action: z
      .enum(['tag', 'untag', 'delete', 'set_attributes'])
      .describe(
        'tag: add the tags; untag: remove them; delete: delete the subscribers and their personal data; set_attributes: ' +
          'merge `attributes` into each one',
      ),
    tags: z.array(tag).min(1).max(100).optional().describe('The tags to add or remove: required for tag and untag, refused otherwise'),
    attributes: attributes
      .refine((value) => Object.keys(value).length > 0, 'must set or remove at least one attribute')
      .optional()
      .describe(
        'set_attributes only (required there): merged key by key into each selected subscriber\'s attributes, a null ' +
          `value removing the key, as PATCH /subscribers/{id} does; each result is capped at ${ATTRIBUTES_MAX_BYTES} bytes of JSON`,
      ),
    ...selectionFields,
  })
  .superRefine((value, ctx) => {
    oneSelection(value, ctx);
    const takesTags = value.action === 'tag' || value.action === 'untag';
    if (takesTags && value.tags === undefined) {
      ctx.addIssue({ code: 'custom', path: ['tags'], message: `required to ${value.action}` });
    }
    if (!takesTags && value.tags !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['tags'], message: `not taken by ${value.action}` });
    }
    if (value.action === 'set_attributes' && value.attributes === undefined) {
      ctx.addIssue({ code: 'custom', path: ['attributes'], message: 'required to set_attributes' });
    }
    if (value.action !== 'set_attributes' && value.attributes !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['attributes'], message: `not taken by ${value.action}` });
    }
  });

export const bulkResult = z
  .object({
    matched: z.number().int().describe('Subscribers the selection matched (among those the caller can see)'),
    changed: z
      .number()
      .int()
      .describe('Of them, those changed: tagged or untagged (a row already so is not), deleted, or whose attributes the merge changed'),
  })
  .meta({ id: 'SubscriberBulkResult' });

export const exportBody = z.strictObject(selectionFields).superRefine(oneSelection);

const count = z.object({ key: z.string(), count: z.number().int() });
export const analytics = z
  .object({
    country: z.array(count),
    platform: z.array(count),
    browser: z.array(count),
    os: z.array(count),
    device: z.array(count),
    city: z.array(count),
  })
  .meta({
    id: 'SubscriberAnalytics',
    description: 'Active subscribers by value, largest count first (every value, or the top `limit` per key); unknown values left out',
  });

export const analyticsQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(10_000).optional().describe('Keep only the largest `limit` values of each key (default: all)'),
});

/** One message sent (or being sent) to a subscriber, as its detail page lists them. */
export const subscriberDelivery = z
  .object({
    messageId: z.string(),
    source: z.enum(['campaign', 'transactional', 'automation']),
    channel: z.enum(CHANNELS),
    campaignId: z.string().nullable().describe('The campaign, when source is campaign'),
    campaignName: z.string().nullable().describe('Its name; null for a transactional send or a deleted campaign'),
    status: z.enum(DELIVERY_STATUSES).describe('Where the delivery is now (docs/CONTEXT.md, "Deliveries")'),
    reason: z.string().nullable().describe('Why it was not sent (a reason code of spec 7.4), or the last retryable failure'),
    createdAt: timestamp,
    sentAt: timestamp.nullable(),
    deliveredAt: timestamp.nullable(),
    clickedAt: timestamp.nullable(),
    dismissedAt: timestamp.nullable(),
    failedAt: timestamp.nullable(),
  })
  .meta({ id: 'SubscriberDelivery' });

export const eventsQuery = z.strictObject({
  ...paginationQuery,
  channel: z.enum(CHANNELS).optional().describe("Only the events of this channel's deliveries"),
  type: z.enum(DELIVERY_EVENTS).optional().describe('Only events of this type'),
});

/** One event logged on a delivery to a subscriber (`delivery_events`), as its detail page lists them. */
export const subscriberEvent = z
  .object({
    type: z
      .enum(DELIVERY_EVENTS)
      .describe(
        'What happened: delivered, opened, clicked, dismissed (a push closed without a click), unsubscribed, complained ' +
          '(marked as spam), bounced (hard: the address is suppressed), soft_bounced (a temporary failure)',
      ),
    occurredAt: timestamp.describe('When it happened, as its reporter said'),
    channel: z.enum(CHANNELS),
    messageId: z.string().describe('The message whose delivery it happened to'),
    source: z.enum(['campaign', 'transactional', 'automation']),
    campaignId: z.string().nullable().describe('The campaign, when source is campaign'),
    campaignName: z.string().nullable().describe('Its name; null for a transactional send or a deleted campaign'),
    repeat: z
      .boolean()
      .describe('A later open or click of the same delivery: logged, counted nowhere (the first of each moved the delivery and its counters)'),
    machine: z
      .boolean()
      .describe(
        'Likely made by a machine rather than the person: a privacy proxy fetching images as mail arrives (Apple Mail ' +
          'Privacy Protection) or a security scanner following links (docs/CONTEXT.md, "Machine events")',
      ),
    url: z
      .string()
      .nullable()
      .describe("For a click: the URL followed (the target of Herald's tracked link, or the link SES reports); null otherwise or when not reported"),
    bounceCode: z
      .string()
      .nullable()
      .describe(
        "For a bounce or soft bounce: the reporter's code — a delivery status notification's enhanced status code " +
          "(RFC 3463, e.g. `5.1.1`), or SES's bounce type and subtype (e.g. `Permanent/NoEmail`); null otherwise or when not reported",
      ),
    diagnostic: z
      .string()
      .nullable()
      .describe("For a bounce or soft bounce: the receiving server's diagnostic, e.g. `smtp; 550 5.1.1 user unknown`; null otherwise or when not reported"),
  })
  .meta({ id: 'SubscriberEvent' });
