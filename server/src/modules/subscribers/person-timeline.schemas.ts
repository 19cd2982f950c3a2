// Zod schemas of a person's timeline (GET /subscribers/:id/timeline): its query, its items and their OpenAPI words.
import { z } from 'zod';
import { CHANNELS, DELIVERY_STATUSES } from '../../db/schema.js';
import { timestamp } from '../../http/schemas.js';

export const TIMELINE_KINDS = [
  'message',
  'delivered',
  'opened',
  'clicked',
  'dismissed',
  'unsubscribed',
  'complained',
  'bounced',
  'soft_bounced',
  'failed',
  'event',
  'enrolled',
  'enrollment_completed',
  'enrollment_exited',
  'enrollment_failed',
] as const;
export type TimelineKind = (typeof TIMELINE_KINDS)[number];

export const timelineQuery = z.strictObject({
  cursor: z.string().max(200).optional().describe("The previous page's `nextCursor`; absent for the newest items"),
  limit: z.coerce.number().int().min(1).max(100).default(25).describe('Items per page (max 100)'),
});

const named = (what: string) => z.object({ id: z.string(), name: z.string().nullable().describe(`Its name; null once the ${what} is deleted`) });

export const timelineItem = z
  .object({
    at: timestamp.describe('When it happened: a message when it was sent (or failed, or was queued), an event as its reporter said'),
    kind: z
      .enum(TIMELINE_KINDS)
      .describe(
        'message: a message sent (or held back) to the person; delivered … failed: what its device, its tracked links or ' +
          'its provider reported (docs/CONTEXT.md, "Delivery events"); event: an event the application sent ' +
          '(`POST /events`); enrolled, enrollment_completed, enrollment_exited, enrollment_failed: an automation run',
      ),
    channel: z.enum(CHANNELS).nullable().describe('The channel of a message and of its events; null for events and enrollments'),
    title: z.string().describe('What happened, in words: "Push sent", "Email opened", "Event signed_up", "Entered automation Welcome"'),
    detail: z
      .string()
      .nullable()
      .describe("More in words: why a message was not sent, a bounce's diagnostic, a click's link, an event's properties, why an enrollment ended"),
    status: z.enum(DELIVERY_STATUSES).nullable().describe("A message's delivery status now"),
    reason: z.string().nullable().describe("A message's reason code (spec 7.4) or an enrollment's, when it has one"),
    source: z.enum(['campaign', 'automation', 'transactional']).nullable().describe("What sent a message and its events"),
    messageTitle: z.string().nullable().describe("The message's title (push), subject (email) or template name"),
    campaign: named('campaign').nullable().describe('The campaign a message belongs to'),
    automation: named('automation').nullable().describe('The automation that sent a message, or that the person entered'),
    url: z.string().nullable().describe('The link a click followed'),
    repeat: z.boolean().describe('A later open or click of the same message: only the first is counted'),
    machine: z.boolean().describe('An open or click likely made by a privacy proxy or a link scanner rather than the person'),
    eventName: z.string().nullable().describe("An application event's name"),
  })
  .meta({ id: 'TimelineItem' });

export const timelinePage = z.object({
  data: z.array(timelineItem),
  nextCursor: z.string().nullable().describe('Pass it as `cursor` for the next (older) page; null on the last page'),
});
