// Zod schemas of the campaign routes: the family every channel's campaigns take (campaignSchemasOf), push's (spec 2.2) from it.
import { z } from 'zod';
import { CAMPAIGN_MODES, CAMPAIGN_STATUSES } from '../../db/schema.js';
import { dateOrDateTime, isoDate, isoDateTime, paginationQuery, pushActions, timestamp, timezone, webUrl } from '../../http/schemas.js';
import { segmentFilterSchema } from '../segments/index.js';
import type { CampaignStatus } from './campaign.repository.js';

/** A push campaign is never paused (email campaigns are). */
const pushStatuses = z.enum(CAMPAIGN_STATUSES).exclude(['paused']);

export const pushContent = z
  .strictObject({
    title: z.string().trim().min(1).max(250).describe('Required. Notification title'),
    body: z.string().trim().min(1).max(2000).describe('Required. Notification text'),
    iconUrl: webUrl.optional().describe('Optional. Icon image URL'),
    imageUrl: webUrl.optional().describe('Optional. Large image URL'),
    clickUrl: webUrl.optional().describe('Optional. Opened when the notification is clicked; UTM parameters are appended to it'),
    actions: pushActions
      .optional()
      .describe('Optional. Up to two notification buttons (what browsers show); UTM parameters are appended to each `action` URL'),
  })
  .describe('What the push shows. The whole push (with its tracking link) must fit in 4 KB, or the campaign is refused with 422.');

export const campaignSegment = z
  .union([
    z.strictObject({ filters: segmentFilterSchema }),
    z.strictObject({ savedSegmentId: z.string().min(1).describe('A saved segment of the same project and environment: a sandbox segment for a test key\'s campaign, a live one otherwise') }),
  ])
  .describe(
    'Who receives it: inline `filters`, or a `savedSegmentId` of the same project and environment (422 otherwise: a live campaign never reads a segment a test key may rewrite). Evaluated when the campaign is ' +
      'sent: the active subscribers of the campaign\'s environment that have a push subscription and have not turned push off.',
  );

export const campaignSchedule = z
  .strictObject({
    mode: z.enum(CAMPAIGN_MODES).describe('Required. immediate: sent now; scheduled: sent at sendAt; draft: saved, never sent. On a draft (PATCH) it is ' +
        'stored without sending anything: POST /campaigns/{id}/send then sends it now (immediate or draft) or schedules it (scheduled)'),
    sendAt: isoDateTime({ local: true })
      .nullish()
      .describe(
        'Required when mode is scheduled, and then in the future. ISO 8601; without an offset it is a wall-clock time in `timezone`. ' +
          'A local time the clocks skip (spring forward) moves forward by the gap; one that happens twice (fall back) takes the earlier ' +
          'offset, i.e. the first occurrence. Answered as the instant with the offset of `timezone`.',
      ),
    timezone: timezone.nullish().describe("Optional. IANA zone of sendAt (default: the project's settings.timezone, else UTC)"),
  })
  .describe('When it is sent');

/** A channel's UTM parameters: the body's (at least one named; each a trimmed 1-200 characters) and the answer's. */
function utmSchemasOf<Key extends string>(keys: readonly Key[], description: string) {
  const named = `${keys.slice(0, -1).join(', ')} or ${keys.at(-1)}`;
  const body = z
    .strictObject(Object.fromEntries(keys.map((key) => [key, z.string().trim().min(1).max(200).optional()])) as Record<Key, z.ZodOptional<z.ZodString>>)
    .refine((utm) => Object.values(utm).some((value) => value !== undefined), `must name ${named}`)
    .describe(description);
  const view = z.object(Object.fromEntries(keys.map((key) => [key, z.string().optional()])) as Record<Key, z.ZodOptional<z.ZodString>>);
  return { body, view };
}

/** A channel's stats: its counters (whole numbers) then its rates, each with what it counts. */
export function statsSchemaOf<Counter extends string, Rate extends string>(counters: Record<Counter, string>, rates: Record<Rate, string>) {
  return z.object({
    ...(Object.fromEntries(Object.entries<string>(counters).map(([key, counts]) => [key, z.number().int().describe(counts)])) as Record<Counter, z.ZodNumber>),
    ...(Object.fromEntries(Object.entries<string>(rates).map(([key, counts]) => [key, z.number().describe(counts)])) as Record<Rate, z.ZodNumber>),
  });
}

export const campaignName = z.string().trim().min(1).max(200);

export const resendBody = z
  .strictObject({ segment: campaignSegment.optional().describe('Override: send to this segment instead of the original one') })
  .nullish()
  .describe('Optional');

export const campaignStats = statsSchemaOf(
  {
    queued: 'Recipients: the audience counted when the campaign was dispatched, replaced by the snapshot size (the delivery rows) once written',
    sent: 'Accepted by the push service (including those later delivered, clicked or dismissed)',
    delivered: 'Confirmed received by the device (the service worker reported it; a click implies it)',
    clicked: 'Clicked (the notification or one of its buttons), once per recipient',
    dismissed: 'Closed without a click',
    failed: 'Will not be sent: refused by the push service, gone subscription, retries exhausted',
    suppressed: 'Kept back on purpose: frequency cap, or the campaign was cancelled',
  },
  {
    ctr: 'Click-through rate: clicked / sent, from 0 to 1 (4 decimals); 0 while nothing was sent',
    deliveryRate: 'delivered / sent, from 0 to 1 (4 decimals); 0 while nothing was sent',
  },
)
  .meta({
    id: 'CampaignStats',
    description: 'Counted from the delivery rows and the tracking reports, each transition once. queued − sent − failed − suppressed is still to go.',
  });

export const sendingIssue = z
  .object({
    reason: z.string().describe('The delivery reason code of the latest failure: `provider_error` (the provider failed for now)'),
    providerCode: z
      .string()
      .nullable()
      .describe(
        'What the provider answered: an SMTP reply (`smtp_451`); a connection that failed (`esocket`, `econnection`, `etimedout`: ' +
          "the SMTP server could not be reached; the Node.js code for a push service, e.g. `ECONNREFUSED`, or `timeout`); a push service's " +
          'HTTP status (`http_503`, `http_429`); an SES error (`ses_throttling`, `ses_too_many_requests`, `ses_sending_paused` …)',
      ),
    detail: z.string().nullable().describe("The provider's own words, at most 200 characters, with addresses and URLs taken out"),
    at: timestamp.describe('When the latest failure was recorded'),
    since: timestamp.describe('When the first failure of this streak was recorded: no delivery of the campaign went through since'),
  })
  .meta({
    id: 'SendingIssue',
    description:
      "Why a campaign's sending is held up: each batch of its deliveries the provider failed, with a failure Herald retries and none " +
      'accepted, records its latest failure here; the next delivery the provider accepts clears it. The deliveries wait for their ' +
      'retries meanwhile (backoff up to DELIVERY_RETRY_MAX, at most DELIVERY_MAX_ATTEMPTS attempts), so the counters stop moving.',
  });

/** The campaign's `sendingIssue` field (the same on email campaigns). */
export const sendingIssueField = sendingIssue
  .nullable()
  .describe(
    'While the campaign is sending (or paused): the provider failing every delivery lately, and since when (null when the latest ' +
      'batch went through, and always once the campaign is no longer sending or paused). The progress stream carries it too.',
  );

/** A channel's campaign schemas (create and edit bodies, the campaign, the list query): one family for every channel. */
export function campaignSchemasOf<
  Content extends z.ZodType,
  Stored extends z.ZodType,
  Schedule extends z.ZodType,
  ScheduleView extends z.ZodRawShape,
  UtmKey extends string,
  Statuses extends z.ZodType<CampaignStatus>,
  Stats extends z.ZodType,
  ViewFields extends z.ZodRawShape,
>(
  /** What a channel gives: its content, schedule, UTM, statuses and stats, and how they are named. */
  parts: {
    /** The OpenAPI component names of the create body and the campaign, and the create body's description. */
    names: { create: string; campaign: string; createDescription: string };
    content: Content;
    /** The content as stored and answered. */
    storedContent: Stored;
    schedule: Schedule;
    /** What the answered schedule carries beyond mode, sendAt and timezone. */
    scheduleView: ScheduleView;
    /** Its UTM parameters and what they are appended to. */
    utm: { keys: readonly UtmKey[]; description: string };
    statuses: Statuses;
    statusDescription: string;
    sandboxDescription: string;
    stats: Stats;
    /** What the answered campaign carries after its stats, for this channel only. */
    viewFields: ViewFields;
  },
) {
  const utm = utmSchemasOf(parts.utm.keys, parts.utm.description);
  const create = z
    .strictObject({
      name: campaignName.describe('Required'),
      projectId: z.string().min(1).describe('Required'),
      content: parts.content,
      segment: campaignSegment,
      schedule: parts.schedule,
      utm: utm.body.optional(),
    })
    .meta({ id: parts.names.create, description: parts.names.createDescription });
  const update = z
    .strictObject({
      name: campaignName.optional(),
      projectId: z.string().min(1).optional().describe("The campaign's own project (a campaign cannot move)"),
      content: parts.content.optional(),
      segment: campaignSegment.optional(),
      schedule: parts.schedule.optional(),
      utm: utm.body.nullable().optional().describe('null removes the UTM parameters'),
    })
    .describe('Any field of the create body; each one given replaces the stored one whole (content, segment, schedule, utm).');
  const campaign = z
    .object({
      id: z.string(),
      projectId: z.string(),
      name: z.string(),
      status: parts.statuses.describe(parts.statusDescription),
      sandbox: z.boolean().describe(parts.sandboxDescription),
      content: parts.storedContent,
      segment: campaignSegment,
      schedule: z.object({
        mode: z.enum(CAMPAIGN_MODES),
        sendAt: timestamp.nullable().describe('The resolved instant, with the offset of timezone'),
        timezone: z.string().nullable(),
        ...parts.scheduleView,
      }),
      utm: utm.view.nullable(),
      stats: parts.stats,
      ...parts.viewFields,
      sendingIssue: sendingIssueField,
      failureReason: z.string().nullable(),
      resentFrom: z.string().nullable().describe('The campaign this one re-sends'),
      createdAt: timestamp,
      updatedAt: timestamp,
      sentAt: timestamp.nullable().describe('When sending started'),
      completedAt: timestamp.nullable().describe('When every delivery reached a final state (status sent)'),
      cancelledAt: timestamp.nullable(),
      archivedAt: timestamp.nullable(),
    })
    .meta({ id: parts.names.campaign });
  return { create, update, campaign, listQuery: listQueryOf(parts.statuses) };
}

export type CampaignSchemas = ReturnType<typeof campaignSchemasOf>;

const day = isoDate.describe('YYYY-MM-DD (UTC day, inclusive)');

/** A channel's campaign list query: `statuses` are those its campaigns can be in. */
export const listQueryOf = <Statuses extends z.ZodType<CampaignStatus>>(statuses: Statuses) =>
  z.strictObject({
    ...paginationQuery,
    status: statuses.optional().describe('Only this status; without it, every campaign except archived ones'),
    from: dateOrDateTime.optional().describe('Created at or after (a date covers its whole UTC day)'),
    to: dateOrDateTime.optional().describe('Created at or before (a date covers its whole UTC day)'),
    q: z.string().trim().min(1).max(200).optional().describe('Name contains (case-insensitive)'),
  });

export const exportQuery = z.strictObject({ from: day.optional(), to: day.optional() });

export const streamQuery = z.strictObject({
  token: z.string().min(1).optional().describe('A dashboard access token (JWT); without it, the Authorization header is read'),
  orgId: z.string().min(1).optional().describe('With `token`: the organization to act in (the x-org-id header is then not read)'),
});

export const pushCampaignSchemas = campaignSchemasOf({
  names: {
    create: 'NewCampaign',
    campaign: 'Campaign',
    createDescription: 'Required: name, projectId, content (title, body), segment, schedule.mode. The rest is optional.',
  },
  content: pushContent,
  storedContent: pushContent,
  schedule: campaignSchedule,
  scheduleView: {},
  utm: {
    keys: ['source', 'medium', 'campaign'],
    description:
      'Optional. Appended as utm_source, utm_medium and utm_campaign to content.clickUrl and every action URL when the campaign is sent: ' +
      'a parameter of the same name already in the URL is replaced, every other parameter and the fragment are kept exactly as written.',
  },
  statuses: pushStatuses,
  statusDescription:
    'draft; scheduled (waits for sendAt); sending; sent (every delivery reached a final state); cancelled; failed (see failureReason: ' +
    'schedule_missed: its time passed beyond the grace window while Herald was down); archived (a sent campaign ' +
    'hidden from lists)',
  sandboxDescription: 'Made with a test key: sent to sandbox subscribers only, and nothing reaches a push service',
  stats: campaignStats,
  viewFields: {},
});
