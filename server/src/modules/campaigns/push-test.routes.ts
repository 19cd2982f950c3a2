// A test push to one browser (the builder's own): POST /projects/:projectId/push/test, through the push adapter.
import { z } from 'zod';
import { projectOf } from '../../http/access.js';
import { commonErrors } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { pushSubscriptionJson } from '../subscribers/index.js';
import { pushContent } from './campaign.schemas.js';
import type { CampaignService } from './campaign.service.js';

export async function pushTestRoutes(app: App, campaigns: CampaignService, options: { allowInsecurePushEndpoints: boolean }) {
  app.post(
    '/projects/:projectId/push/test',
    {
      // Its own counter: a builder's button, not an ingest path; a MEMBER (editor) or above, as every write.
      config: { access: { auth: 'project', project: 'params.projectId' }, rateLimitCounter: 'transactional:push-test' },
      schema: {
        tags: ['Campaigns'],
        summary: 'Send a push as composed to one browser subscription, as a test',
        description:
          "The notification goes to the subscription given (the dashboard's: its browser subscribed with the project's VAPID " +
          'public key from GET /projects/{id}/push-config) through the project\'s keys and the push service, encrypted as a ' +
          "campaign's push is. No campaign is made, the browser is not registered as a subscriber (it joins no audience), " +
          'nothing is counted or logged, and the notification\'s delivered and click reports record nothing. A test key\'s ' +
          'test goes to the sandbox and reaches no browser. Answers what the push service said: sent, or failed with the ' +
          'delivery reason (spec 7.4) and its answer (`http_410`: the subscription is gone). A notification over 4 KB is a ' +
          "422 as for a campaign; a project without VAPID keys is a 409 `push_not_configured`. MEMBER role or above; rate " +
          'limited per client address on a counter of its own (the transactional limit).',
        params: z.object({ projectId: z.string() }),
        body: z.strictObject({
          subscription: pushSubscriptionJson(options.allowInsecurePushEndpoints).describe('PushSubscription.toJSON() of the browser to notify'),
          notification: pushContent.describe('What the push shows, as a campaign\'s content: title, body, iconUrl, imageUrl, clickUrl, actions'),
        }),
        response: {
          200: z
            .object({
              status: z.enum(['sent', 'failed']).describe('sent: the push service accepted it for the browser'),
              reason: z.string().nullable().describe('Why it failed (a spec 7.4 reason code)'),
              providerCode: z.string().nullable().describe("The push service's answer, e.g. http_201, http_410"),
            })
            .meta({ id: 'PushTestOutcome' }),
          ...commonErrors,
        },
      },
    },
    (request) => campaigns.testPush(projectOf(request), request.body.subscription, request.body.notification),
  );
}
