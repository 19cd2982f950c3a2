// Zod schemas of the campaign routes: the body of spec 2.2 (required vs optional), the campaign, its stats and lists.
import { z } from 'zod';
import { CAMPAIGN_MODES, CAMPAIGN_STATUSES } from '../../db/schema.js';
import { dateOrDateTime, isoDate, isoDateTime, paginationQuery, pushActions, timestamp, timezone, webUrl } from '../../http/schemas.js';
import { segmentFilterSchema } from '../segments/index.js';

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

const campaignUtm = z
  .strictObject({
    source: z.string().trim().min(1).max(200).optional(),
    medium: z.string().trim().min(1).max(200).optional(),
    campaign: z.string().trim().min(1).max(200).optional(),
  })
  .refine((utm) => utm.source !== undefined || utm.medium !== undefined || utm.campaign !== undefined, 'must name source, medium or campaign')
  .describe(
    'Optional. Appended as utm_source, utm_medium and utm_campaign to content.clickUrl and every action URL when the campaign is sent: ' +
      'a parameter of the same name already in the URL is replaced, every other parameter and the fragment are kept exactly as written.',
  );

export const campaignName = z.string().trim().min(1).max(200);

export const createCampaignBody = z
  .strictObject({
    name: campaignName.describe('Required'),
    projectId: z.string().min(1).describe('Required'),
    content: pushContent,
    segment: campaignSegment,
    schedule: campaignSchedule,
    utm: campaignUtm.optional(),
  })
  .meta({ id: 'NewCampaign', description: 'Required: name, projectId, content (title, body), segment, schedule.mode. The rest is optional.' });

export const updateCampaignBody = z
  .strictObject({
    name: campaignName.optional(),
    projectId: z.string().min(1).optional().describe("The campaign's own project (a campaign cannot move)"),
    content: pushContent.optional(),
    segment: campaignSegment.optional(),
    schedule: campaignSchedule.optional(),
    utm: campaignUtm.nullable().optional().describe('null removes the UTM parameters'),
  })
  .describe('Any field of the create body; each one given replaces the stored one whole (content, segment, schedule, utm).');

export const resendBody = z
  .strictObject({ segment: campaignSegment.optional().describe('Override: send to this segment instead of the original one') })
  .nullish()
  .describe('Optional');

export const campaignStats = z
  .object({
    queued: z
      .number()
      .int()
      .describe('Recipients: the audience counted when the campaign was dispatched, replaced by the snapshot size (the delivery rows) once written'),
    sent: z.number().int().describe('Accepted by the push service (including those later delivered, clicked or dismissed)'),
    delivered: z.number().int().describe('Confirmed received by the device (the service worker reported it; a click implies it)'),
    clicked: z.number().int().describe('Clicked (the notification or one of its buttons), once per recipient'),
    dismissed: z.number().int().describe('Closed without a click'),
    failed: z.number().int().describe('Will not be sent: refused by the push service, gone subscription, retries exhausted'),
    suppressed: z.number().int().describe('Kept back on purpose: frequency cap, or the campaign was cancelled'),
    ctr: z.number().describe('Click-through rate: clicked / sent, from 0 to 1 (4 decimals); 0 while nothing was sent'),
    deliveryRate: z.number().describe('delivered / sent, from 0 to 1 (4 decimals); 0 while nothing was sent'),
  })
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

export const campaign = z
  .object({
    id: z.string(),
    projectId: z.string(),
    name: z.string(),
    status: pushStatuses.describe(
        'draft; scheduled (waits for sendAt); sending; sent (every delivery reached a final state); cancelled; failed (see failureReason: ' +
          'schedule_missed: its time passed beyond the grace window while Herald was down); archived (a sent campaign ' +
          'hidden from lists)',
      ),
    sandbox: z.boolean().describe('Made with a test key: sent to sandbox subscribers only, and nothing reaches a push service'),
    content: pushContent,
    segment: campaignSegment,
    schedule: z.object({
      mode: z.enum(CAMPAIGN_MODES),
      sendAt: timestamp.nullable().describe('The resolved instant, with the offset of timezone'),
      timezone: z.string().nullable(),
    }),
    utm: z.object({ source: z.string().optional(), medium: z.string().optional(), campaign: z.string().optional() }).nullable(),
    stats: campaignStats,
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
  .meta({ id: 'Campaign' });

const day = isoDate.describe('YYYY-MM-DD (UTC day, inclusive)');

/** A channel's campaign list query: `statuses` are those its campaigns can be in. */
export const listQueryOf = <Status extends string>(statuses: z.ZodType<Status>) =>
  z.strictObject({
    ...paginationQuery,
    status: statuses.optional().describe('Only this status; without it, every campaign except archived ones'),
    from: dateOrDateTime.optional().describe('Created at or after (a date covers its whole UTC day)'),
    to: dateOrDateTime.optional().describe('Created at or before (a date covers its whole UTC day)'),
    q: z.string().trim().min(1).max(200).optional().describe('Name contains (case-insensitive)'),
  });

export const listQuery = listQueryOf(pushStatuses);

export const exportQuery = z.strictObject({ from: day.optional(), to: day.optional() });

export const streamQuery = z.strictObject({
  token: z.string().min(1).optional().describe('A dashboard access token (JWT); without it, the Authorization header is read'),
  orgId: z.string().min(1).optional().describe('With `token`: the organization to act in (the x-org-id header is then not read)'),
});
