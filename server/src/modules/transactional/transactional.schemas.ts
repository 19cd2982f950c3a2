// Zod schemas of the transactional push routes: the send request, its envelope, and the send log.
import { z } from 'zod';
import { CHANNELS } from '../../db/schema.js';
import { DEFAULT_PUSH_TTL_SECONDS } from '../../delivery/channel.js';
import { instant, pushActions, timestamp, webUrl } from '../../http/schemas.js';

/** Every reason a send may answer: spec 7.4's push codes, plus Herald's `sandbox`. */
export const SEND_REASONS = [
  'subscriber_not_found',
  'subscriber_unsubscribed',
  'subscriber_inactive',
  'frequency_capped',
  'quiet_hours',
  'provider_error',
  'payload_too_large',
  'sandbox',
] as const;

/** Four weeks: the longest push services keep a message. */
const MAX_TTL_SECONDS = 28 * 24 * 60 * 60;

const text = z.string().trim().min(1);

export const sendBody = z
  .strictObject({
    externalId: z
      .string()
      .trim()
      .min(1)
      .max(255)
      .optional()
      .describe('Your user id (POST /subscribers/identify): every device of that user. Preferred: used when token is also given'),
    token: z.string().min(1).max(100).optional().describe('A subscriber token: that one device. The alternative to externalId, ignored when externalId is given'),
    title: text.describe('Notification title'),
    body: text.describe('Notification text'),
    url: webUrl.optional().describe('Opened when the notification is clicked'),
    iconUrl: webUrl.optional(),
    imageUrl: webUrl.optional(),
    badge: webUrl.optional().describe('Monochrome badge image URL'),
    ttl: z
      .number()
      .int()
      .min(0)
      .max(MAX_TTL_SECONDS)
      .optional()
      .describe(
        `Herald extra: seconds the push service keeps the message for an offline device ` +
          `(default ${DEFAULT_PUSH_TTL_SECONDS}, max ${MAX_TTL_SECONDS}; 0 = now or never)`,
      ),
    urgency: z
      .enum(['very-low', 'low', 'normal', 'high'])
      .optional()
      .describe('Herald extra: RFC 8030 urgency (default normal); devices saving battery may deliver only high'),
    topic: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,32}$/, 'must be 1 to 32 characters of A-Z, a-z, 0-9, _ and -')
      .optional()
      .describe('Herald extra: RFC 8030 topic; a newer push with the same topic replaces one not yet delivered'),
    actions: pushActions.optional().describe('Herald extra: up to two notification buttons, as on campaigns: `action` is the URL each opens'),
  })
  .superRefine((value, ctx) => {
    if (value.externalId === undefined && value.token === undefined) {
      ctx.addIssue({ code: 'custom', path: ['externalId'], message: 'externalId or token is required' });
    }
  })
  .describe('externalId (preferred) or token names the recipient; when both are given, externalId is used and token ignored');

export const sendEnvelope = z
  .object({
    success: z.boolean().describe('The request was processed: true on every 200'),
    subscriberFound: z.boolean(),
    delivered: z.boolean().describe('At least one device accepted the push (never with a test key)'),
    deactivated: z
      .boolean()
      .describe('A device was deactivated by this send: found gone (push service 404/410: unsubscribed) or its endpoint refused (not a public address: inactive)'),
    reason: z.enum(SEND_REASONS).nullable().describe('null when delivered; otherwise why not'),
  })
  .meta({ id: 'TransactionalSendResult' });

export const sendsQuery = {
  reason: z.enum(SEND_REASONS).optional().describe('Sends answered with this reason'),
  delivered: z
    .enum(['true', 'false'])
    .transform((v) => v === 'true')
    .optional()
    .describe('true: delivered sends (reason null); false: the others'),
  from: instant.optional().describe('ISO date or timestamp; sent at or after it'),
  to: instant.optional().describe('ISO date or timestamp; sent strictly before it'),
};

export const sendRecord = z
  .object({
    id: z.string(),
    channel: z.enum(CHANNELS),
    apiKeyId: z.string().nullable().describe('The API key that sent it'),
    sandbox: z.boolean().describe('Sent with a test key'),
    recipient: z
      .record(z.string(), z.string())
      .describe('The recipient as the request named it: {externalId} or {token}; {} once that subscriber was deleted'),
    messageId: z.string().nullable().describe('The message created, when any device was sent to'),
    idempotencyKey: z.string().nullable(),
    outcome: sendEnvelope.describe('The response envelope, as answered'),
    reason: z.enum(SEND_REASONS).nullable(),
    createdAt: timestamp,
  })
  .meta({ id: 'TransactionalSend' });
