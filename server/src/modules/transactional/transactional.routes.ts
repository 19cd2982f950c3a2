// Transactional routes (spec 4.8): POST /transactional/send (push) and /transactional/email with an API key, and the send log.
import { z } from 'zod';
import { projectOf, tenantOf } from '../../http/access.js';
import { idempotencyHeaders, idempotent, type IdempotencyStore } from '../../http/idempotency.js';
import { commonErrors, errorEnvelope, paginated, paginationQuery } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import type { TransactionalEmailService } from './transactional-email.service.js';
import type { TransactionalSmsService } from './transactional-sms.service.js';
import type { TransactionalWhatsAppService } from './transactional-whatsapp.service.js';
import * as s from './transactional.schemas.js';
import type { TransactionalService } from './transactional.service.js';

const tags = ['Transactional'];

const SEND_DESCRIPTION = `
Sends one push now to the recipient named by \`externalId\` (every device linked to that user id, at most 100) or
\`token\` (one device). \`externalId\` is preferred: when both are given, \`externalId\` names the recipient and
\`token\` is ignored; neither → 422. API key only. A processed request answers 200 with the envelope; malformed input → 422 and
bad credentials → 401, with the error envelope.

**Which devices.** Subscribers of the key's environment only: a live key reaches live subscribers, a test key sandbox
ones. Every device that is \`active\` and has a push subscription is sent to, unless the project's delivery policy
holds it (quiet hours in the device's time zone — else the project's \`settings.timezone\`, else UTC — or the
frequency cap, counted per device). Retryable push service failures are retried inline for a few seconds
(\`TRANSACTIONAL_RETRY_BUDGET_MS\`), then answered \`provider_error\`.

**The envelope** summarizes every device: \`delivered\` is true when at least one device accepted the push (then
\`reason\` is null, even if other devices did not); \`deactivated\` is true when this send deactivated a device:
found gone (push service 404/410: now \`unsubscribed\`) or its endpoint refused as not public (\`provider_error\`; now
\`inactive\`). When no device got it, \`reason\` is the reason of the device that came closest, in this order: \`payload_too_large\` (the encrypted push exceeds 4 KB), \`provider_error\`,
\`quiet_hours\`, \`frequency_capped\`, \`subscriber_unsubscribed\` (permission revoked, subscription gone, or no push
subscription), \`subscriber_inactive\` (deactivated). Before any device: \`subscriber_not_found\` (nothing matches,
\`subscriberFound\` false) and \`subscriber_inactive\` (only subscribers of the other environment match).

**Test keys** are accepted and recorded (message, delivery rows, send log) and never delivered: the answer is
\`{success: true, subscriberFound: true, delivered: false, deactivated: false, reason: "sandbox"}\` when a device
would have been sent to (\`sandbox\` is a Herald reason beyond spec 7.4); policy and device reasons apply as for a
live key.

**Defaults** of the Herald extras: \`ttl\` 86400 seconds (one day), \`urgency\` normal, no \`topic\`, no \`actions\`.
Every send, whatever its outcome, is logged (GET /transactional/sends/project/{projectId}).`.trim();

const EMAIL_DESCRIPTION = `
Sends one email now to \`to\`. API key only. A processed request answers 200 with the envelope; malformed input → 422,
bad credentials → 401, a publishable key → 403, with the error envelope.

**Content.** Either \`htmlContent\` with \`subject\` (and optionally \`textContent\`), or \`templateId\` — a saved
template of the key's project and environment — with \`variables\`; both, or neither → 422. \`subject\` with a
template replaces the template's. Everything is rendered when the request is processed, with liquid merge tags and the
\`variables\` given (spec 4.8: the template as it is now, the values of this request): \`htmlContent\` too, so
\`{{ name }}\` works without a template (values HTML-escaped; write a literal \`{{\` as \`{% raw %}{{{% endraw %}\`). Without
\`textContent\` (or a template text part) the plain part is generated from the rendered HTML. Sizes as for templates:
subject 998 characters, html 512 KiB, text 256 KiB. Every email carries tracked links, an open pixel, an unsubscribe
footer and List-Unsubscribe, and is DKIM-signed with the key of its sending domain.

**Sender.** \`senderEmail\` is required: Herald has no default sender and never rewrites one. It and \`replyTo\` must
each be on a \`verified\` sending domain of the project or a subdomain of it (\`news@mail.example.com\` with
\`example.com\` verified; not \`badexample.com\`), else **422 \`sender_domain_not_verified\`**, \`details\` naming
the field; nothing is sent or logged.

**Recipient.** The address (compared lower-cased) in the key's environment. An address the project does not know
becomes a contact (an active subscriber with only that address), as every delivery belongs to a subscriber. Refused
(200, \`status: refused\`, nothing sent): \`recipient_complained\` (permanent), \`recipient_bounced\`,
\`recipient_suppressed\` (on the project's suppression list by its own hand, reason \`manual\`),
\`recipient_unsubscribed\` (unsubscribed from campaigns, or email turned off in its preferences, on any subscriber
carrying the address) — unless \`essential: true\` (password resets, receipts), which never overrides the others.

**Then, in order:** \`template_not_found\` (no template with that id in the key's project and environment),
\`template_variables_missing\` (\`missing\` names them), \`template_render_failed\` (\`field\`, \`error\`: a render
limit, or a rendered part that cannot go as an email), the recipient's refusals above, the project's email delivery
policy (\`quiet_hours\`, \`frequency_capped\`, counted per address), and the organization's monthly email cap
(\`monthly_cap_reached\`: nothing is sent until the next month, UTC).

**The envelope**: \`status\` \`sent\` — the provider accepted it (\`reason\` null; delivery, opens and bounces are
known later); \`queued\` — the provider failed for now and the inline retries (\`TRANSACTIONAL_RETRY_BUDGET_MS\`) ran
out: Herald's workers keep trying (\`reason\` the last failure, null when only waiting for the provider's rate);
\`failed\` — it will not be sent (\`recipient_bounced\`: the server refused the address, now suppressed;
\`provider_error\`; \`provider_not_configured\`: no PUT /projects/{id}/channels/email;
\`sandbox_limit_reached\`: the project's provider account is in its sandbox and has sent its 200 messages of the
last 24 hours — spec 8; it also sends at most 1 per second, so a burst waits and may come back \`queued\`); \`refused\` — see above
(\`messageId\` null); \`sandbox\` — a test key's email, rendered, checked and recorded like a live one, never sent
(\`reason\` \`sandbox\`). Every send is logged (GET /transactional/sends/project/{projectId}, \`recipient\` \`{to}\`).`.trim();

const SMS_DESCRIPTION = `
Sends one SMS now to \`to\` through the project's Twilio account. API key only. A processed request answers 200 with
the envelope; malformed input → 422 (a missing or empty field, a \`senderId\` that is not 1–11 letters, digits or
spaces with a letter, a \`message\` longer than **10 parts** — 1,530 GSM-7 characters, 670 UCS-2 units), bad
credentials → 401, a publishable key → 403, with the error envelope.

**Segments.** The answer gives \`segments\` and \`encoding\`: GSM-7 when every character is in the GSM alphabet
(160 characters in one part, 153 per part beyond; \`^ { } \\ [ ~ ] | €\` and form feed count two), else UCS-2 (70,
67 per part; emoji and other characters outside the BMP count two). A character is never split across parts.

**Sender.** Chosen per destination country from the senders provisioned for the project (POST
/projects/{id}/channels/sms/senders): \`senderId\` where the country shows alphanumeric senders (it must be provisioned
for the country); otherwise — no \`senderId\`, or a country that shows none, such as the US, where it is ignored — a
number provisioned for the country (short code, then toll-free, then long code), else the project's Messaging Service.
Each sender's rate (a long code 1 per second unless configured) holds across every worker: a burst waits its turn.

**Refused** (200, \`status: refused\`, nothing sent), in this order: \`invalid_phone\` (not a valid E.164 number, or
one Twilio called invalid before: 21211), \`unverified_sender_id\` (the \`senderId\` is not provisioned for the
destination country, or nothing is provisioned to send there from), \`recipient_opted_out\` (the number sent STOP, or
Twilio answered 21610 — never sent to until it sends START), \`carrier_rejected\` (a number Twilio found unreachable
before: not a mobile number), \`recipient_unsubscribed\` (a subscriber carrying the number turned SMS off:
\`preferences.channels.sms\` false), then the project's SMS delivery policy (\`quiet_hours\`, \`frequency_capped\`,
counted per number). A number no subscriber carries is sent to, and becomes a contact with only that number.

**The envelope**: \`sent\` — Twilio accepted it (queued at Twilio); \`queued\` — waiting for its sender's rate or a
retry (Herald's workers send it); \`failed\` — Twilio refused it now: \`invalid_phone\` (21211),
\`recipient_opted_out\` (21610, the number now opted out), \`carrier_rejected\` (21612, 21614),
\`provider_error\` (the account's refusals, or failures past the retries), \`provider_not_configured\` (no PUT
/projects/{id}/channels/sms); \`refused\` — above; \`sandbox\` — a test key's SMS, validated, its sender chosen and
recorded like a live one, never sent (no provider needed).

**Synchronous or later.** What the carrier does comes after the answer, in Twilio's status callback: the delivery
moves to \`delivered\`, or to \`failed\` with \`carrier_rejected\` (30003–30008: unreachable, blocked, unknown
handset, landline, filtered) and Twilio's code (\`twilio_30007\` …) as its provider code — seen on the delivery, never
in this answer. The send log keeps this answer and shows beside it the delivery as it is now (\`delivery\`: its status,
Twilio's last code and its words with a refusal, synchronous or from the callback).

**Senders of shared numbering.** Guernsey, Jersey and the Isle of Man (+44) are sent to from the senders provisioned for
GB when none is provisioned for the island itself.`.trim();

const WHATSAPP_DESCRIPTION = `
Sends one WhatsApp message now to \`to\` through the project's WhatsApp provider (PUT /projects/{id}/channels/whatsapp):
a Meta Cloud API number or a Twilio WhatsApp sender. API key only. A processed request answers 200 with the envelope; malformed input
(a \`to\` that is not a valid international number included) → 422 naming the field, bad credentials → 401, a
publishable key → 403, with the error envelope.

**What goes.** \`message\` is free-form text, which Meta takes only within the **24-hour customer-service window**:
less than 24 hours since the person last wrote to the business number (Herald learns of inbound messages through
the webhook, GET/POST /whatsapp/webhook/{projectId}, or a Twilio sender's POST /whatsapp/twilio/inbound/{projectId}).
\`templateName\` names a template of the project's registry (GET /projects/{id}/whatsapp-templates, synchronised from
Meta or written by hand) with \`templateLanguage\` (Meta's code, e.g. \`en_US\`; absent: the name's approved template)
and \`templateComponents\` (its parameters, Cloud API \`components\` as given). With both, the text goes while the
window is open and the template once it is closed.

**Through Twilio** the text goes as \`Body\` and a template as \`ContentSid\` — the registry row's
\`providerTemplateId\`; a template without one → \`template_not_found\` — with \`ContentVariables\`:
\`templateVariables\` as given, else the body component's text parameters numbered from 1.

**Refused** (200, \`status: refused\`, nothing sent), in order: \`template_not_found\` (no template of that name and
language in the registry), \`template_not_approved\` (its status is not APPROVED), \`recipient_opted_out\` (the person
blocked the business number — Meta's 131050 — or wrote STOP; START lifts it), \`outside_service_window\` (free-form
text and the window is closed or never opened), \`recipient_unsubscribed\` (a subscriber carrying the number turned
WhatsApp off: \`preferences.channels.whatsapp\` false), then the project's WhatsApp delivery policy (\`quiet_hours\`,
\`frequency_capped\`, counted per number; \`deliveryPolicy.channels.whatsapp\`).

**Recipient.** The number in the key's environment: a number no subscriber carries becomes a contact with only that
number, and the delivery is recorded against the number. The window and the opt-out are the live number's whichever
key sends.

**The envelope**: \`status\` \`sent\` (Meta accepted it; the delivery's provider id is Meta's wamid, and its
statuses — delivered, read, failed — arrive through the webhook), \`queued\` (Meta failed for now and the inline
retries ran out: Herald's workers keep trying), \`failed\` (\`provider_error\`; \`provider_not_configured\`;
\`outside_service_window\` when Meta answers 131047; \`recipient_opted_out\` when it answers 131050, the number then
opted out; \`template_not_approved\` when it does not have the template in that language, 132001; through Twilio the
same reasons for 63016, 63014 or 21610, and 63027), \`refused\` (see above), \`sandbox\` (a test key's: checked and
recorded like a live one, never sent; \`reason\` \`sandbox\`). The provider's code and words stay on the delivery,
shown by the send log (\`delivery\`), where its later statuses land too.
\`messageType\` says whether the text or the template went. Every send is logged (GET
/transactional/sends/project/{projectId}, channel \`whatsapp\`, \`recipient\` \`{to}\`).`.trim();

export async function transactionalRoutes(
  app: App,
  transactional: TransactionalService,
  transactionalEmail: TransactionalEmailService,
  transactionalSms: TransactionalSmsService,
  transactionalWhatsApp: TransactionalWhatsAppService,
  idempotency: IdempotencyStore,
) {
  app.post(
    '/transactional/send',
    {
      config: { access: { auth: 'project', credentials: 'apiKey' }, rateLimitCounter: 'transactional:send' },
      schema: {
        tags,
        summary: 'Send one push to a user or device now (API key only)',
        description: SEND_DESCRIPTION,
        headers: idempotencyHeaders,
        body: s.sendBody,
        response: { 200: s.sendEnvelope, ...commonErrors, 409: errorEnvelope },
      },
    },
    (request, reply) => {
      const tenant = tenantOf(request);
      if (tenant.kind !== 'project') throw new Error('POST /transactional/send is API key only: check its access');
      return idempotent(request, reply, idempotency, (key) => transactional.send(tenant, request.body, key));
    },
  );

  app.post(
    '/transactional/email',
    {
      config: { access: { auth: 'project', credentials: 'apiKey' }, rateLimitCounter: 'transactional:email' },
      bodyLimit: s.EMAIL_BODY_LIMIT,
      schema: {
        tags,
        summary: 'Send one email now (API key only)',
        description: EMAIL_DESCRIPTION,
        headers: idempotencyHeaders,
        body: s.emailBody,
        response: { 200: s.emailEnvelope, ...commonErrors, 409: errorEnvelope },
      },
    },
    (request, reply) => {
      const tenant = tenantOf(request);
      if (tenant.kind !== 'project') throw new Error('POST /transactional/email is API key only: check its access');
      return idempotent(request, reply, idempotency, (key) => transactionalEmail.send(tenant, request.body, key));
    },
  );

  app.post(
    '/transactional/sms',
    {
      config: { access: { auth: 'project', credentials: 'apiKey' }, rateLimitCounter: 'transactional:sms' },
      schema: {
        tags,
        summary: 'Send one SMS now (API key only)',
        description: SMS_DESCRIPTION,
        headers: idempotencyHeaders,
        body: s.smsBody,
        response: { 200: s.smsEnvelope, ...commonErrors, 409: errorEnvelope },
      },
    },
    (request, reply) => {
      const tenant = tenantOf(request);
      if (tenant.kind !== 'project') throw new Error('POST /transactional/sms is API key only: check its access');
      return idempotent(request, reply, idempotency, (key) => transactionalSms.send(tenant, request.body, key));
    },
  );

  app.post(
    '/transactional/whatsapp',
    {
      config: { access: { auth: 'project', credentials: 'apiKey' }, rateLimitCounter: 'transactional:whatsapp' },
      schema: {
        tags,
        summary: 'Send one WhatsApp message now (API key only)',
        description: WHATSAPP_DESCRIPTION,
        headers: idempotencyHeaders,
        body: s.whatsappBody,
        response: { 200: s.whatsappEnvelope, ...commonErrors, 409: errorEnvelope },
      },
    },
    (request, reply) => {
      const tenant = tenantOf(request);
      if (tenant.kind !== 'project') throw new Error('POST /transactional/whatsapp is API key only: check its access');
      return idempotent(request, reply, idempotency, (key) => transactionalWhatsApp.send(tenant, request.body, key));
    },
  );

  app.get(
    '/transactional/sends/project/:projectId',
    {
      config: { access: { auth: 'project', project: 'params.projectId' } },
      schema: {
        tags,
        summary: 'The transactional send log of a project, newest first, with filters',
        description:
          'Every send of every channel is logged, including refusals and unknown recipients: the key that sent it, the ' +
          'recipient as named, the envelope answered. A test key sees only its sandbox sends.',
        params: z.object({ projectId: z.string() }),
        querystring: z.strictObject({ ...paginationQuery, ...s.sendsQuery }),
        response: { 200: paginated(s.sendRecord), ...commonErrors },
      },
    },
    (request) => {
      const { page, pageSize, ...filters } = request.query;
      return transactional.listSends(projectOf(request), filters, page, pageSize);
    },
  );
}
