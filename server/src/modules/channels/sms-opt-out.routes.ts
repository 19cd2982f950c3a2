// The SMS opt-out list of a project: read by any member or key of it.
import { z } from 'zod';
import { projectOf } from '../../http/access.js';
import { commonErrors, paginated, paginationQuery, timestamp } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import type { SmsOptOutService } from './sms-opt-out.service.js';

const smsOptOut = z
  .object({
    number: z.string().describe('The number (E.164)'),
    reason: z.string().nullable().describe('`sms_stop` (the person sent STOP or a synonym), `twilio_21610` (Twilio refused a send: the number had opted out with it)'),
    source: z.string().nullable().describe('Who said so: `recipient` (a STOP) or `provider` (Twilio)'),
    optedOutAt: timestamp,
  })
  .meta({ id: 'SmsOptOut' });

export async function smsOptOutRoutes(app: App, optOuts: SmsOptOutService) {
  app.get(
    '/projects/:id/channels/sms/opt-outs',
    {
      config: { access: { auth: 'project', project: 'params.id' } },
      schema: {
        tags: ['Channels'],
        summary: 'The numbers opted out of SMS, most recent first',
        description:
          'Numbers no SMS goes to (sends answer `recipient_opted_out`), in the caller\'s environment (a test key sees the ' +
          'sandbox list). A START, UNSTOP or YES from the number takes it off the list.',
        params: z.object({ id: z.string() }),
        querystring: z.strictObject(paginationQuery),
        response: { 200: paginated(smsOptOut), ...commonErrors },
      },
    },
    (request) => optOuts.list(projectOf(request), request.query.page, request.query.pageSize),
  );
}
