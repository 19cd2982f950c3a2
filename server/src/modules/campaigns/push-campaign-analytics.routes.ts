// A push campaign's activity chart: GET /campaigns/:id/analytics, the email campaign's analytics keyed by channel.
import { z } from 'zod';
import { reachOf } from '../../http/access.js';
import { commonErrors } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { analyticsQuery, emailCampaignAnalytics } from './email-campaign-analytics.schemas.js';
import type { EmailCampaignAnalyticsService } from './email-campaign-analytics.service.js';

const pushCampaignAnalytics = emailCampaignAnalytics.meta({
  id: 'PushCampaignAnalytics',
  description:
    "A push campaign's activity per time bucket, in the shape of an email campaign's (EmailCampaignAnalytics): sent (the " +
    'push service accepted it), delivered (confirmed by the device\'s service worker; browsers that are offline confirm when ' +
    'they come back, so recent buckets may still grow) and clicked (the notification or one of its buttons; unique = first ' +
    'click per delivery). Pushes have no opens, bounces, complaints or unsubscribes: those series are zero.',
});

export async function pushCampaignAnalyticsRoutes(app: App, analytics: EmailCampaignAnalyticsService) {
  app.get(
    '/campaigns/:id/analytics',
    {
      config: { access: { auth: 'project' } },
      schema: {
        tags: ['Campaigns'],
        summary: "A push campaign's activity chart: sent, delivered and clicked per time bucket",
        description:
          'For each bucket of the window (from → to, by default from when the campaign started sending until now): sent, ' +
          'delivered and clicked, bucketed as GET /email-campaigns/{id}/analytics does (the smallest of 1m, 5m, 15m, 1h, 6h, 1d, ' +
          "1w giving at most 120 buckets unless `bucket` names one). from after to → 422. Found as GET /campaigns/{id} finds it: " +
          "404 outside the caller's reach (a test key reaches sandbox campaigns only) or for an email campaign.",
        params: z.object({ id: z.string() }),
        querystring: analyticsQuery,
        response: { 200: pushCampaignAnalytics, ...commonErrors },
      },
    },
    (request) => analytics.analytics(reachOf(request), request.params.id, request.query, 'push'),
  );
}
