// SMS senders per destination country: listed by any member or key, provisioned and removed by OWNERs and ADMINs.
import { z } from 'zod';
import { SMS_SENDER_KINDS } from '../../db/schema.js';
import { projectOf } from '../../http/access.js';
import { commonErrors, errorEnvelope, timestamp } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import type { SmsSenderService } from './sms-sender.service.js';

const tags = ['Channels'];
const idParams = z.object({ id: z.string() });

const smsSender = z
  .object({
    id: z.string(),
    country: z.string().describe('The destination country (ISO 3166-1 alpha-2) it sends to'),
    kind: z.enum(SMS_SENDER_KINDS),
    sender: z.string().describe('The alphanumeric id, the number (E.164) or the short code'),
    ratePerSecond: z.number().describe('Sends per second held for this sender across every worker'),
    createdAt: timestamp,
  })
  .meta({ id: 'SmsSender' });

const SENDERS_DESCRIPTION = `
Provisions a sender for SMS to one destination country. A transactional SMS goes from the sender provisioned for its
recipient's country: with \`senderId\`, the alphanumeric sender of that name — only where the country's carriers show
alphanumeric ids (not the US, Canada and a few others: Herald keeps the list as data); a \`senderId\` not provisioned
for the country is refused \`unverified_sender_id\`. Without one, or where alphanumeric ids are not shown, the number
provisioned for the country (a short code first, then toll-free, then a long code), else the project's Messaging Service.

\`alphanumeric\`: 1–11 letters, digits or spaces with at least one letter (one-way: replies cannot come back);
\`long_code\` and \`toll_free\`: an E.164 number of the Twilio account; \`short_code\`: its digits. \`ratePerSecond\`
defaults to the kind's usual rate (long code 1, toll-free 3, short code 100, alphanumeric 10), held across every worker.
The same sender twice for one country → 409.`.trim();

export async function smsSenderRoutes(app: App, senders: SmsSenderService) {
  app.get(
    '/projects/:id/channels/sms/senders',
    {
      config: { access: { auth: 'project', project: 'params.id' } },
      schema: { tags, summary: "The project's SMS senders, per destination country", params: idParams, response: { 200: z.object({ data: z.array(smsSender) }), ...commonErrors } },
    },
    (request) => senders.list(projectOf(request)),
  );

  app.post(
    '/projects/:id/channels/sms/senders',
    {
      config: { access: { auth: 'project', credentials: 'jwt', project: 'params.id', minRole: 'ADMIN' } },
      schema: {
        tags,
        summary: 'Provision an SMS sender for a destination country (OWNER or ADMIN)',
        description: SENDERS_DESCRIPTION,
        params: idParams,
        body: z
          .strictObject({
            country: z.string().regex(/^[A-Z]{2}$/, 'must be an ISO 3166-1 alpha-2 country code such as GB').describe('The destination country'),
            kind: z.enum(SMS_SENDER_KINDS),
            sender: z.string().trim().min(1).max(16).describe('The alphanumeric id, the number (E.164) or the short code'),
            ratePerSecond: z.number().int().min(1).max(10_000).optional().describe("Sends per second (default: the kind's usual rate)"),
          })
          .superRefine((body, ctx) => {
            if ((body.kind === 'long_code' || body.kind === 'toll_free') && !/^\+[1-9]\d{6,14}$/.test(body.sender)) {
              ctx.addIssue({ code: 'custom', path: ['sender'], message: 'must be an E.164 number such as +14155550123' });
            }
            if (body.kind === 'short_code' && !/^\d{3,8}$/.test(body.sender)) ctx.addIssue({ code: 'custom', path: ['sender'], message: 'must be 3–8 digits' });
          }),
        response: { 201: smsSender, ...commonErrors, 409: errorEnvelope },
      },
    },
    async (request, reply) => reply.status(201).send(await senders.add(projectOf(request), request.body)),
  );

  app.delete(
    '/projects/:id/channels/sms/senders/:senderId',
    {
      config: { access: { auth: 'project', credentials: 'jwt', project: 'params.id', minRole: 'ADMIN' } },
      schema: {
        tags,
        summary: 'Remove an SMS sender (OWNER or ADMIN)',
        params: z.object({ id: z.string(), senderId: z.string() }),
        response: { 204: z.null(), ...commonErrors },
      },
    },
    async (request, reply) => {
      await senders.remove(projectOf(request), request.params.senderId);
      return reply.status(204).send(null);
    },
  );
}
