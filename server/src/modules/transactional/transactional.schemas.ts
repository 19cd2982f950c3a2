// Zod schemas of the transactional routes: the push and email requests, their envelopes, and the send log.
import { z } from 'zod';
import { CHANNELS, DELIVERY_STATUSES } from '../../db/schema.js';
import { DEFAULT_PUSH_TTL_SECONDS } from '../../delivery/index.js';
import { instant, pushActions, timestamp, webUrl } from '../../http/schemas.js';
import { email, phone } from '../subscribers/index.js';

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

/** Every reason an email send may answer: spec 7.4's email codes, and Herald's (docs/CONTEXT.md, "Transactional email"). */
export const EMAIL_REASONS = [
  'recipient_bounced',
  'recipient_complained',
  'recipient_unsubscribed',
  'recipient_suppressed',
  'template_not_found',
  'template_variables_missing',
  'template_render_failed',
  'quiet_hours',
  'frequency_capped',
  'monthly_cap_reached',
  'sandbox_limit_reached',
  'provider_error',
  'provider_not_configured',
  'sandbox',
] as const;

export const EMAIL_STATUSES = ['sent', 'queued', 'failed', 'refused', 'sandbox'] as const;

const KIB = 1024;
const HTML_MAX_BYTES = 512 * KIB;
const TEXT_MAX_BYTES = 256 * KIB;
/** The largest html and text, JSON-escaped, with room for the rest: as for templates. */
export const EMAIL_BODY_LIMIT = 2 * 1024 * KIB;

const withinBytes = (limit: number) => (value: string) => Buffer.byteLength(value, 'utf8') <= limit;
const oneLine = (value: string) => !/[\r\n]/.test(value);

export const emailBody = z
  .strictObject({
    to: email.describe('The recipient address (compared lower-cased); malformed → 422'),
    subject: z
      .string()
      .trim()
      .min(1)
      .max(998)
      .refine(oneLine, 'must be one line')
      .optional()
      .describe("Subject line, with merge tags. Required with htmlContent; with templateId it replaces the template's subject"),
    htmlContent: z
      .string()
      .min(1)
      .refine(withinBytes(HTML_MAX_BYTES), 'must be at most 512 KiB of UTF-8')
      .optional()
      .describe('The HTML body, up to 512 KiB: rendered with `variables` like a template (values HTML-escaped). Exactly one of htmlContent and templateId'),
    textContent: z
      .string()
      .min(1)
      .refine(withinBytes(TEXT_MAX_BYTES), 'must be at most 256 KiB of UTF-8')
      .optional()
      .describe('The plain-text part with htmlContent only, up to 256 KiB, merge tags written as given; absent: generated from the rendered HTML'),
    templateId: z.string().min(1).max(100).optional().describe("A saved email template of the key's project and environment (POST /email-templates)"),
    variables: z
      .record(z.string(), z.unknown())
      .optional()
      .describe('Values of the merge tags of the template (or of subject, htmlContent and textContent): any JSON, read when the request is processed'),
    senderEmail: email.describe('The From address: on a verified sending domain of the project, or a subdomain of one; never rewritten'),
    senderName: z.string().trim().min(1).max(255).refine(oneLine, 'must be one line').optional().describe('The From display name'),
    replyTo: email.optional().describe('The Reply-To address: on a verified sending domain of the project too'),
    essential: z
      .boolean()
      .optional()
      .describe(
        'Herald extra (default false): mail the person needs whatever they unsubscribed from — a password reset, a receipt. It then ' +
          'goes to an address unsubscribed from campaigns (or with email turned off in its preferences); never to one that bounced, ' +
          'complained, or that the project suppressed itself',
      ),
  })
  .superRefine((value, ctx) => {
    if ((value.htmlContent === undefined) === (value.templateId === undefined)) {
      const both = value.htmlContent !== undefined;
      ctx.addIssue({ code: 'custom', path: [both ? 'templateId' : 'htmlContent'], message: both ? 'give htmlContent or templateId, not both' : 'htmlContent or templateId is required' });
    }
    if (value.templateId === undefined && value.subject === undefined) {
      ctx.addIssue({ code: 'custom', path: ['subject'], message: 'is required with htmlContent' });
    }
    if (value.templateId !== undefined && value.textContent !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['textContent'], message: "goes with htmlContent: a template's text part is its own" });
    }
  })
  .describe('Either htmlContent (with subject), or templateId with variables; senderEmail always');

export const emailEnvelope = z
  .object({
    success: z.boolean().describe('The request was processed: true on every 200'),
    status: z
      .enum(EMAIL_STATUSES)
      .describe(
        '`sent`: the provider accepted it (not yet delivered: delivery, opens and bounces come later); `queued`: the provider ' +
          'failed for now, Herald keeps trying; `failed`: it will not be sent; `refused`: kept back before sending, nothing written ' +
          'but the send log; `sandbox`: a test key\'s send, rendered and recorded, never sent',
      ),
    messageId: z.string().nullable().describe('The message written (sent, queued, failed, sandbox); null when refused'),
    reason: z.enum(EMAIL_REASONS).nullable().describe('null when sent; otherwise why not (queued: the last failure)'),
    missing: z.array(z.string()).optional().describe('template_variables_missing: every variable the render needed and did not get'),
    field: z.string().optional().describe('template_render_failed: the part that could not be rendered'),
    error: z.string().optional().describe('template_render_failed: what stopped it'),
  })
  .meta({ id: 'TransactionalEmailResult' });

/** Every reason an SMS send may answer: spec 7.4's SMS codes first, then Herald's. */
export const SMS_REASONS = [
  'invalid_phone',
  'carrier_rejected',
  'unverified_sender_id',
  'recipient_opted_out',
  'recipient_unsubscribed',
  'quiet_hours',
  'frequency_capped',
  'provider_not_configured',
  'provider_error',
  'sandbox',
] as const;

export const SMS_STATUSES = ['sent', 'queued', 'failed', 'refused', 'sandbox'] as const;

export const smsBody = z
  .strictObject({
    to: z
      .string()
      .trim()
      .min(1)
      .max(32)
      .describe('The recipient number in E.164 (+14155550123). A string that is not a valid number is answered 200 `invalid_phone`'),
    message: z
      .string()
      .min(1)
      .max(1600)
      .describe('The text, sent as given: GSM-7 (160 characters, 153 per part) or UCS-2 (70, 67 per part); at most 10 parts, else 422'),
    senderId: z
      .string()
      .regex(/^(?=.*[A-Za-z])[A-Za-z0-9 ]{1,11}$/, 'must be 1–11 letters, digits or spaces with at least one letter')
      .optional()
      .describe(
        'An alphanumeric sender provisioned for the destination country (else `unverified_sender_id`); ignored where carriers ' +
          'show none (the US, Canada …): a number provisioned for the country sends instead',
      ),
  })
  .describe('One SMS to one number');

export const smsEnvelope = z
  .object({
    success: z.boolean().describe('The request was processed: true on every 200'),
    status: z
      .enum(SMS_STATUSES)
      .describe(
        '`sent`: Twilio accepted it (queued there: whether the carrier delivers it is known later, on the delivery); `queued`: ' +
          "waiting for its sender's rate or a retry, Herald's workers send it; `failed`: it will not be sent; `refused`: kept back " +
          "before sending; `sandbox`: a test key's send, checked and recorded, never sent",
      ),
    messageId: z.string().nullable().describe('The message written (sent, queued, failed, sandbox); null when refused'),
    reason: z.enum(SMS_REASONS).nullable().describe('null when sent; otherwise why not (queued: the last failure, null when only waiting for the rate)'),
    segments: z.number().int().describe('The SMS parts the message takes (what carriers bill)'),
    encoding: z.enum(['GSM-7', 'UCS-2']).describe('GSM-7 when every character is in the GSM alphabet, else UCS-2'),
    from: z.string().nullable().describe('The sender chosen for the destination country (null: the Messaging Service picks, or refused)'),
  })
  .meta({ id: 'TransactionalSmsResult' });

/** Every reason a WhatsApp send may answer: spec 7.4's WhatsApp codes, and Herald's (docs/CONTEXT.md, "WhatsApp"). */
export const WHATSAPP_REASONS = [
  'template_not_approved',
  'outside_service_window',
  'recipient_opted_out',
  'template_not_found',
  'recipient_unsubscribed',
  'quiet_hours',
  'frequency_capped',
  'provider_error',
  'provider_not_configured',
  'sandbox',
] as const;

export const WHATSAPP_STATUSES = EMAIL_STATUSES;

export const templateComponent = z
  .object({
    type: z.enum(['header', 'body', 'button']).describe('Which part of the template the parameters fill'),
    sub_type: z.enum(['quick_reply', 'url', 'copy_code', 'flow']).optional().describe('For a button: its kind'),
    index: z.string().regex(/^\d{1,2}$/).optional().describe('For a button: its position, from "0"'),
    parameters: z
      .array(z.record(z.string(), z.unknown()))
      .max(100)
      .optional()
      .describe('As the Cloud API takes them, e.g. `{"type": "text", "text": "Ada"}`, `{"type": "currency", …}`, `{"type": "image", "image": {"link": …}}`'),
  })
  .describe("One of the Cloud API's template components, passed to Meta as given");

export const whatsappBody = z
  .strictObject({
    to: phone.describe('The recipient, an international number (E.164, e.g. +14155550123); a number that is not a valid one → 422 naming `to`'),
    message: z
      .string()
      .min(1)
      .max(4096)
      .refine((value) => value.trim() !== '', 'must not be blank')
      .optional()
      .describe('Free-form text, up to 4096 characters: sent only inside the 24-hour customer-service window. Required unless templateName'),
    templateName: z
      .string()
      .regex(/^[a-z0-9_]{1,512}$/, 'must be a template name: lower-case letters, digits and underscores')
      .optional()
      .describe(
        "An APPROVED template of the project's registry (GET /projects/{id}/whatsapp-templates). Required outside the window; " +
          'with message too, the template goes only when the window is closed',
      ),
    templateLanguage: z
      .string()
      .regex(/^[a-z]{2,3}(_[A-Za-z0-9]{2,8})?$/, 'must be a Meta language code such as en or en_US')
      .optional()
      .describe("The template's language code (Cloud API `template.language.code`); absent: the name's approved template in the registry"),
    templateComponents: z
      .array(templateComponent)
      .max(20)
      .optional()
      .describe(
        'The template\'s parameters as Cloud API `template.components`, e.g. `[{"type": "body", "parameters": [{"type": "text", "text": "Ada"}]}]`. ' +
          "Through Twilio, without templateVariables, the body's text parameters become its ContentVariables, numbered from 1",
      ),
    templateVariables: z
      .record(z.string().regex(/^[A-Za-z0-9_]{1,16}$/, 'must be a Twilio content variable name: letters, digits, underscores, at most 16'), z.string().max(1600))
      .refine((variables) => Object.keys(variables).length <= 100, 'at most 100 variables')
      .optional()
      .describe('For a project sending through Twilio: the template\'s ContentVariables, e.g. `{"1": "Ada", "2": "A-17"}` (ignored by Meta\'s Cloud API)'),
  })
  .superRefine((value, ctx) => {
    if (value.message === undefined && value.templateName === undefined) ctx.addIssue({ code: 'custom', path: ['message'], message: 'message or templateName is required' });
    const templateOnly = (['templateLanguage', 'templateComponents', 'templateVariables'] as const).find((field) => value[field] !== undefined);
    if (value.templateName === undefined && templateOnly !== undefined) ctx.addIssue({ code: 'custom', path: [templateOnly], message: 'goes with templateName' });
  })
  .describe('to, and message (free-form, inside the window) and/or templateName (an approved template, with its language and parameters)');

export const whatsappEnvelope = z
  .object({
    success: z.boolean().describe('The request was processed: true on every 200'),
    status: z
      .enum(WHATSAPP_STATUSES)
      .describe(
        "`sent`: Meta accepted it (delivery and reads come later through the webhook); `queued`: Meta failed for now, Herald " +
          "keeps trying; `failed`: it will not be sent; `refused`: kept back before sending, nothing written but the send log; " +
          "`sandbox`: a test key's send, checked and recorded, never sent",
      ),
    messageId: z.string().nullable().describe('The message written (sent, queued, failed, sandbox); null when refused'),
    reason: z.enum(WHATSAPP_REASONS).nullable().describe('null when sent; otherwise why not (queued: the last failure)'),
    messageType: z.enum(['text', 'template']).nullable().describe('What went, or would have: the free-form text or the template'),
  })
  .meta({ id: 'TransactionalWhatsAppResult' });

const loggedReason = z.union([z.enum(SEND_REASONS), z.enum(EMAIL_REASONS), z.enum(SMS_REASONS), z.enum(WHATSAPP_REASONS)]);

export const sendsQuery = {
  channel: z
    .enum(['push', 'email', 'sms', 'whatsapp'])
    .optional()
    .describe('Sends of this route: push (/transactional/send), email (/transactional/email), sms (/transactional/sms) or whatsapp (/transactional/whatsapp)'),
  reason: loggedReason.optional().describe('Sends answered with this reason'),
  delivered: z
    .enum(['true', 'false'])
    .transform((v) => v === 'true')
    .optional()
    .describe('true: sends answered without a reason (a push delivered, an email sent); false: the others'),
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
      .describe('The recipient as the request named it: {externalId} or {token} (push), {to} (email, SMS, WhatsApp); {} once that subscriber was deleted'),
    messageId: z.string().nullable().describe('The message created, when one was'),
    idempotencyKey: z.string().nullable(),
    // The union keeps the first envelope that parses and strips what it does not name: the envelopes with fields of
    // their own (an SMS's segments, a WhatsApp message's messageType) come before the email one that would parse them.
    outcome: z.union([smsEnvelope, whatsappEnvelope, sendEnvelope, emailEnvelope]).describe('The response envelope, as answered'),
    reason: loggedReason.nullable(),
    delivery: z
      .object({
        status: z.enum(DELIVERY_STATUSES).describe('Where the delivery is now: a status callback may have moved it since the answer'),
        reason: z
          .string()
          .nullable()
          .describe(
            'The delivery\'s reason now, a section 7.4 code: why it is `failed` — as answered, or as a status callback reported it after the send ' +
              "was answered `sent` (Twilio's `carrier_rejected`, Meta's `outside_service_window` …) — or why it waits; null when nothing went wrong",
          ),
        providerCode: z
          .string()
          .nullable()
          .describe('What the provider answered last, e.g. `twilio_queued`, `twilio_21211`, `meta_accepted`, `meta_131047` (Meta\'s error code, at the send or in a failed status)'),
        providerError: z
          .string()
          .nullable()
          .describe(
            "The provider's words with a refusal — at the send (Twilio's or Meta's error message) or in a status callback (Twilio's ChannelStatusMessage, " +
              "Meta's error title, message and details)",
          ),
      })
      .nullable()
      .describe('SMS and WhatsApp: the send\'s delivery as it is now; null for push and email, and for a send refused before anything was written'),
    createdAt: timestamp,
  })
  .meta({ id: 'TransactionalSend' });
