// Twilio's callbacks (form-encoded, signed): POST /sms/twilio/status/:projectId and POST /sms/twilio/inbound/:projectId.
import { z } from 'zod';
import { commonErrors } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import type { TwilioWebhookService } from './twilio-webhook.service.js';

const FORM_LIMIT = 64 * 1024;
const tags = ['SMS'];
const params = z.object({ projectId: z.string() });

const SIGNATURE = 'Believed only when `X-Twilio-Signature` holds: base64 HMAC-SHA1 under the project\'s auth token of `PUBLIC_URL` + the path and query, then every POST parameter\'s name and value sorted by name (Twilio\'s scheme). A forged signature, or a project without a Twilio account, → 403 and nothing is recorded.';

export async function twilioWebhookRoutes(app: App, webhook: TwilioWebhookService, publicUrl: string) {
  // Twilio posts forms; only these routes read them raw: the signature is computed over what was posted.
  await app.register(async (scope: App) => {
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'buffer', bodyLimit: FORM_LIMIT }, (_request, body, done) => done(null, body));
    const requestOf = (request: { url: string; headers: Record<string, string | string[] | undefined>; body: unknown }) => ({
      url: `${publicUrl}${request.url}`,
      headers: request.headers,
      rawBody: Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0),
    });

    scope.post(
      '/sms/twilio/status/:projectId',
      {
        bodyLimit: FORM_LIMIT,
        config: { access: { auth: 'public' } },
        schema: {
          tags,
          summary: "Twilio's status callback of an SMS Herald sent (named by Herald in each message's StatusCallback)",
          description:
            `${SIGNATURE} \`delivered\` moves the delivery to delivered; \`undelivered\` and \`failed\` move it to failed with reason ` +
            '`carrier_rejected` (or `invalid_phone`, `recipient_opted_out` when Twilio\'s ErrorCode says so: 21211, 21610 — which ' +
            'also opts the number out), the provider code `twilio_<ErrorCode>` kept on the delivery and the code in the event\'s ' +
            'detail. Other statuses (queued, sending, sent) change nothing. A callback Twilio repeats is recorded once.',
          params,
          response: { 200: z.object({ applied: z.number().int(), unknown: z.number().int() }), ...commonErrors },
        },
      },
      (request) => webhook.status(request.params.projectId, requestOf(request)),
    );

    scope.post(
      '/sms/twilio/inbound/:projectId',
      {
        bodyLimit: FORM_LIMIT,
        config: { access: { auth: 'public' } },
        schema: {
          tags,
          summary: "Twilio's incoming-message webhook of the project's numbers: STOP, START and HELP",
          description:
            `${SIGNATURE} A message that is exactly (trimmed, any case) STOP, STOPALL, UNSUBSCRIBE, CANCEL, END or QUIT opts the sending ` +
            'number out of the project\'s SMS (live): nothing is sent to it again, sends answer `recipient_opted_out`. START, UNSTOP ' +
            'or YES opts it back in. HELP or INFO is answered with the SMS configuration\'s `helpReply` as TwiML, or not at all ' +
            '(Twilio\'s own HELP reply, if its Advanced Opt-Out is on). Answers TwiML (`text/xml`).',
          params,
          response: { 200: z.string(), ...commonErrors },
        },
      },
      async (request, reply) => {
        const { twiml } = await webhook.inbound(request.params.projectId, requestOf(request));
        return reply.type('text/xml').send(twiml);
      },
    );
  });
}
