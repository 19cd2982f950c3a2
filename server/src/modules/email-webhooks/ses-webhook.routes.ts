// The SES callback (spec 4.7, 5.3): SNS posts bounce, complaint, delivery, open and click notifications here.
import { z } from 'zod';
import { commonErrors } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import type { SesWebhookService } from './ses-webhook.service.js';

const outcome = z.object({
  status: z.enum(['confirmed', 'ignored', 'recorded']),
  applied: z.number().int().optional().describe('Deliveries the notification was recorded on'),
  unknown: z.number().int().optional().describe('1 when it names a message Herald did not send'),
});

export async function sesWebhookRoutes(app: App, webhook: SesWebhookService) {
  // SNS posts its JSON as text/plain; only this route reads text/plain.
  await app.register(async (scope: App) => {
    scope.addContentTypeParser('text/plain', { parseAs: 'string', bodyLimit: 256 * 1024 }, (_request, body, done) => {
      try {
        done(null, JSON.parse(String(body)));
      } catch {
        const error = Object.assign(new Error('Body is not valid JSON'), { statusCode: 400 });
        done(error, undefined);
      }
    });
    scope.post(
      '/email/ses-webhook',
      {
        bodyLimit: 256 * 1024,
        config: { access: { auth: 'public' } },
        schema: {
          tags: ['email'],
          summary: 'Amazon SES notifications through SNS (bounces, complaints, deliveries, opens, clicks)',
          description:
            'Point an SNS topic listed in SES_SNS_TOPIC_ARNS here (HTTPS subscription). Each message must carry a valid ' +
            'SNS signature (SignatureVersion 1 or 2, certificate from sns.<region>.amazonaws.com only), come from a listed ' +
            'topic and be at most SNS_MAX_AGE old; otherwise 403 and nothing is recorded. A SubscriptionConfirmation of a ' +
            'listed topic is confirmed. Events land on the delivery whose provider message id is the SES message id; a ' +
            'notification SNS sends again is recorded once (its MessageId). Every Open and Click is logged, likely machine ' +
            "ones flagged as Herald's own tracking links flag them; only a delivery's first open and first click move its " +
            'status and counters. Other events are recorded once per delivery. A permanent bounce suppresses the address as ' +
            'bounced, a complaint as complained; 3 transient bounces within 7 days count as a permanent one.',
          body: z.record(z.string(), z.unknown()),
          response: { 200: outcome, ...commonErrors },
        },
      },
      // SNS signs a message's fields, not its bytes: the body, checked as JSON above, is handed on as JSON again.
      (request) => webhook.receive({ url: request.url, headers: request.headers, rawBody: Buffer.from(JSON.stringify(request.body)) }),
    );
  });
}
