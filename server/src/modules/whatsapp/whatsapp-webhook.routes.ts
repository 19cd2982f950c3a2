// Meta's WhatsApp webhook per project: the verification GET, and the signed POSTs of statuses and inbound messages.
import { z } from 'zod';
import { commonErrors } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import type { WhatsAppWebhookService } from './whatsapp-webhook.service.js';

const tags = ['WhatsApp'];
const params = z.object({ projectId: z.string() });
/** Meta batches up to a thousand updates in one callback. */
const WEBHOOK_BODY_LIMIT = 3 * 1024 * 1024;

const outcome = z.object({
  messages: z.number().int().describe('Inbound messages read: each opens the 24-hour customer-service window of its number'),
  optedOut: z.number().int().describe('Numbers opted out by a STOP keyword or a failed status 131050'),
  optedIn: z.number().int().describe('Numbers whose opt-out a START keyword lifted'),
  applied: z.number().int().describe('Status callbacks recorded on their delivery'),
  unknown: z.number().int().describe('Status callbacks naming a message Herald did not send for the project'),
});

export async function whatsappWebhookRoutes(app: App, webhook: WhatsAppWebhookService) {
  app.get(
    '/whatsapp/webhook/:projectId',
    {
      config: { access: { auth: 'public' }, secretParams: ['hub.verify_token'] },
      schema: {
        tags,
        summary: "Meta's webhook verification handshake",
        description:
          'Meta calls this once when the callback URL is saved in its console: with `hub.mode=subscribe` and ' +
          "`hub.verify_token` equal to the project's `verifyToken`, the answer is `hub.challenge` as plain text; " +
          'otherwise 403 (also for a project without a WhatsApp provider).',
        params,
        querystring: z.object({
          'hub.mode': z.string().max(64).optional(),
          'hub.verify_token': z.string().max(256).optional(),
          'hub.challenge': z.string().max(256).optional(),
        }),
        response: { 200: z.string(), ...commonErrors },
      },
    },
    async (request, reply) => {
      const { 'hub.mode': mode, 'hub.verify_token': token, 'hub.challenge': challenge } = request.query;
      const echoed = await webhook.verify(request.params.projectId, { mode, token, challenge });
      return reply.type('text/plain; charset=utf-8').send(echoed);
    },
  );

  // The signature is over the bytes Meta sent: this route keeps them, and parses them itself once they are verified.
  await app.register(async (scope: App) => {
    scope.removeContentTypeParser('application/json');
    scope.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit: WEBHOOK_BODY_LIMIT }, (_request, body, done) => done(null, body));
    scope.post(
      '/whatsapp/webhook/:projectId',
      {
        bodyLimit: WEBHOOK_BODY_LIMIT,
        config: { access: { auth: 'public' } },
        schema: {
          tags,
          summary: "Meta's WhatsApp callbacks: message statuses and inbound messages",
          description:
            "The URL is the project's (`settings.webhookUrl` of its WhatsApp channel configuration). Each POST must carry " +
            '`X-Hub-Signature-256: sha256=<HMAC-SHA256 of the raw body under the app secret>`; otherwise 403 and nothing is ' +
            'recorded.\n\n' +
            '**Statuses** land on the delivery whose provider message id is the wamid: `delivered` → delivered, `read` → ' +
            'opened, `failed` → failed, with the reason a send refused with Meta\'s first error code gets (131047 ' +
            '`outside_service_window`, 131050 `recipient_opted_out`, 132001 `template_not_approved`, any other ' +
            '`provider_error`), `meta_<code>` as its provider code and Meta\'s title, message and details as its words — the ' +
            'send log shows them; `sent` adds nothing (the send recorded it). Each status of a message is recorded once: a ' +
            'replayed callback changes nothing. A failed status with error 131050 (the person stopped the business\'s ' +
            'messages) opts the number out.\n\n' +
            '**Inbound messages** open the number\'s 24-hour customer-service window from their timestamp (free-form ' +
            'messages may be sent within it). A message that is only a stop keyword (STOP, STOPALL, UNSUBSCRIBE, CANCEL, END, ' +
            'QUIT, OPTOUT; any case) opts the number out on WhatsApp: sends answer `recipient_opted_out`. START, UNSTOP, ' +
            'SUBSCRIBE or OPTIN lifts any opt-out of the number, a block reported by Meta included.',
          params,
          response: { 200: outcome, ...commonErrors },
        },
      },
      (request) => webhook.receive(request.params.projectId, { url: request.url, headers: request.headers, rawBody: request.body as Buffer }),
    );
  });
}
