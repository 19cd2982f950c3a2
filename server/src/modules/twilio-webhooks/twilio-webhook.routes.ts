// Twilio's callbacks (form-encoded, signed), for SMS and for a WhatsApp sender: POST /{sms|whatsapp}/twilio/status/:projectId
// and POST /{sms|whatsapp}/twilio/inbound/:projectId.
import { z } from 'zod';
import { commonErrors } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import type { TwilioChannel, TwilioWebhookService } from './twilio-webhook.service.js';

const FORM_LIMIT = 64 * 1024;
const params = z.object({ projectId: z.string() });

const SIGNATURE =
  "Believed only when `X-Twilio-Signature` holds: base64 HMAC-SHA1 under the project's auth token of `PUBLIC_URL` + the path and query, then every POST parameter's name and value sorted by name (Twilio's scheme). A forged signature, or a project whose channel is not on Twilio, → 403 and nothing is recorded.";

/** What each channel's routes say of themselves. */
const DOCS: Record<TwilioChannel, { tags: string[]; status: { summary: string; description: string }; inbound: { summary: string; description: string } }> = {
  sms: {
    tags: ['SMS'],
    status: {
      summary: "Twilio's status callback of an SMS Herald sent (named by Herald in each message's StatusCallback)",
      description:
        `${SIGNATURE} The URL names the delivery (\`?delivery=\`), so a callback that overtakes Twilio's answer to the send still lands. ` +
        '`delivered` moves the delivery to delivered; `undelivered` and `failed` move it to failed with reason ' +
        '`carrier_rejected` (or `invalid_phone`, `recipient_opted_out` when Twilio\'s ErrorCode says so: 21211, 21610 — which ' +
        'also opts the number out), the provider code `twilio_<ErrorCode>` kept on the delivery and the code in the event\'s ' +
        'detail. Other statuses (queued, sending, sent) change nothing. A callback Twilio repeats is recorded once.',
    },
    inbound: {
      summary: "Twilio's incoming-message webhook of the project's numbers: STOP, START and HELP",
      description:
        `${SIGNATURE} A message that is exactly (trimmed, any case) STOP, STOPALL, UNSUBSCRIBE, CANCEL, END or QUIT opts the sending ` +
        'number out of the project\'s SMS (live): nothing is sent to it again, sends answer `recipient_opted_out`. START, UNSTOP ' +
        'or YES opts it back in. HELP or INFO is answered with the SMS configuration\'s `helpReply` as TwiML, or not at all ' +
        '(Twilio\'s own HELP reply, if its Advanced Opt-Out is on). Answers TwiML (`text/xml`).',
    },
  },
  whatsapp: {
    tags: ['WhatsApp'],
    status: {
      summary: "Twilio's status callback of a WhatsApp message Herald sent through a Twilio sender (named in each message's StatusCallback)",
      description:
        `${SIGNATURE} The URL names the delivery (\`?delivery=\`), so a callback that overtakes Twilio's answer to the send still lands. ` +
        '`delivered` moves the delivery to delivered, `read` to opened; `undelivered` and `failed` to failed with the reason ' +
        "Twilio's ErrorCode says (63016 `outside_service_window`, 63014 or 21610 `recipient_opted_out` — the number is then " +
        'opted out —, 63027 `template_not_approved`, anything else `provider_error`), the provider code `twilio_<ErrorCode>` and ' +
        "the channel's words (ChannelStatusMessage) kept on the delivery. Other statuses change nothing; a repeat is recorded once.",
    },
    inbound: {
      summary: "Twilio's incoming-message webhook of the project's WhatsApp sender: the 24-hour window, STOP and START",
      description:
        `${SIGNATURE} \`From\` is \`whatsapp:+…\`. Every message opens the number's 24-hour customer-service window from when it arrives; ` +
        "one that is only a stop keyword (STOP, STOPALL, UNSUBSCRIBE, CANCEL, END, QUIT, OPTOUT; any case) opts the number out of " +
        'WhatsApp, START, UNSTOP, SUBSCRIBE or OPTIN lifts any opt-out — as on Meta\'s webhook. Answers an empty TwiML `Response`.',
    },
  },
};

export async function twilioWebhookRoutes(app: App, webhook: TwilioWebhookService, publicUrl: string) {
  // Twilio posts forms; only these routes read them raw: the signature is computed over what was posted.
  await app.register(async (scope: App) => {
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'buffer', bodyLimit: FORM_LIMIT }, (_request, body, done) => done(null, body));
    const requestOf = (request: { url: string; headers: Record<string, string | string[] | undefined>; body: unknown }) => ({
      url: `${publicUrl}${request.url}`,
      headers: request.headers,
      rawBody: Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0),
    });

    for (const channel of ['sms', 'whatsapp'] as const) {
      const { tags, status, inbound } = DOCS[channel];
      scope.post(
        `/${channel}/twilio/status/:projectId`,
        {
          bodyLimit: FORM_LIMIT,
          config: { access: { auth: 'public' } },
          schema: {
            tags,
            ...status,
            params,
            querystring: z.object({ delivery: z.string().max(20).optional().describe('The delivery Herald named when it sent the message') }),
            response: { 200: z.object({ applied: z.number().int(), unknown: z.number().int() }), ...commonErrors },
          },
        },
        (request) => webhook.status(channel, request.params.projectId, requestOf(request)),
      );

      scope.post(
        `/${channel}/twilio/inbound/:projectId`,
        {
          bodyLimit: FORM_LIMIT,
          config: { access: { auth: 'public' } },
          schema: { tags, ...inbound, params, response: { 200: z.string(), ...commonErrors } },
        },
        async (request, reply) => {
          const { twiml } = await webhook.inbound(channel, request.params.projectId, requestOf(request));
          return reply.type('text/xml').send(twiml);
        },
      );
    }
  });
}
