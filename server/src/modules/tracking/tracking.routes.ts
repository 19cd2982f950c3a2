// Public tracking endpoints the service worker calls from the customer's site: POST /t/:token/delivered|clicked|dismissed.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { errorEnvelope } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { TRACKING_EVENTS, type TrackingService } from './tracking.service.js';

const params = z.object({ token: z.string().describe('The token of the `track` URL in the push payload') });

const summaries = {
  delivered: 'Report that the push reached the device (the service worker received it)',
  clicked: 'Report a click on the notification (implies delivered)',
  dismissed: 'Report that the notification was closed without a click (implies delivered)',
};

// The service worker runs on the customer's origin: any origin may call these routes, which carry no credentials.
const allowAnyOrigin = async (_request: FastifyRequest, reply: FastifyReply) => {
  reply.header('access-control-allow-origin', '*');
};

export async function trackingRoutes(app: App, tracking: TrackingService) {
  for (const event of TRACKING_EVENTS) {
    const url = `/t/:token/${event}`;
    app.post(
      url,
      {
        config: { access: { auth: 'public' }, secretParams: ['token'] },
        onRequest: allowAnyOrigin,
        schema: {
          tags: ['Tracking'],
          summary: summaries[event],
          description:
            'Authenticated by the signed, opaque token of the push payload\'s `track` URL; no body. Idempotent: repeats answer 204 ' +
            'and change nothing. An unknown or forged token → 404. Cross-origin calls are allowed from any origin.',
          params,
          response: { 204: z.null(), 404: errorEnvelope, 429: errorEnvelope },
        },
      },
      async (request, reply) => {
        await tracking.record(request.params.token, event);
        return reply.status(204).send(null);
      },
    );

    // The CORS preflight a browser sends before a cross-origin POST that is not a "simple" request.
    app.options(
      url,
      { config: { access: { auth: 'public' } }, onRequest: allowAnyOrigin, schema: { hide: true, params } },
      async (_request, reply) =>
        reply
          .headers({
            'access-control-allow-methods': 'POST, OPTIONS',
            'access-control-allow-headers': 'content-type',
            'access-control-max-age': '86400',
          })
          .status(204)
          .send(),
    );
  }
}
