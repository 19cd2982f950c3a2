// Email campaign analytics and exports (spec 2.3): the chart's series, the top clicked links, the recipients' outcomes
// as CSV, and the campaign list as CSV.
import { z } from 'zod';
import { projectOf, reachOf } from '../../http/access.js';
import { sendCsv } from '../../http/csv.js';
import { commonErrors } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { exportQuery } from './campaign.schemas.js';
import type { CampaignService } from './campaign.service.js';
import { analyticsQuery, emailCampaignAnalytics, emailCampaignLinks, linksQuery } from './email-campaign-analytics.schemas.js';
import type { EmailCampaignAnalyticsService } from './email-campaign-analytics.service.js';
import {
  EMAIL_CAMPAIGN_CSV_COLUMNS,
  EMAIL_CAMPAIGN_CSV_DESCRIPTION,
  RECIPIENT_CSV_COLUMNS,
  RECIPIENT_CSV_DESCRIPTION,
  toEmailCampaignCsvRecord,
  toRecipientCsvRecord,
} from './email-campaign-csv.js';

const tags = ['Email campaigns'];
const idParams = z.object({ id: z.string() });
const projectParams = z.object({ projectId: z.string() });
const REACH_DOC = 'Found as GET /email-campaigns/{id} finds it: 404 outside the caller\'s reach (a test key reaches sandbox campaigns only) or for a push campaign.';

export async function emailCampaignAnalyticsRoutes(app: App, analytics: EmailCampaignAnalyticsService, campaigns: CampaignService) {
  app.get(
    '/email-campaigns/export/project/:projectId.csv',
    {
      config: { access: { auth: 'project', project: 'params.projectId' } },
      schema: {
        tags,
        summary: "CSV stream of a project's email campaigns with their counters and rates",
        description: EMAIL_CAMPAIGN_CSV_DESCRIPTION,
        params: projectParams,
        querystring: exportQuery,
        produces: ['text/csv'],
        response: { 200: z.string().describe('A header row, then one row per email campaign'), ...commonErrors },
      },
    },
    async (request, reply) => {
      const rows = campaigns.openExport(projectOf(request), 'email', request.query);
      return sendCsv(request, reply, {
        filename: `email-campaigns-${request.params.projectId}.csv`,
        columns: EMAIL_CAMPAIGN_CSV_COLUMNS,
        rows,
        toRecord: toEmailCampaignCsvRecord,
      });
    },
  );

  app.get(
    '/email-campaigns/:id/analytics',
    {
      config: { access: { auth: 'project' } },
      schema: {
        tags,
        summary: "An email campaign's chart: events per type per time bucket",
        description:
          'For each bucket of the window (from → to, by default from when the campaign started sending until now): sent, ' +
          'delivered, opened and clicked (each all / unique / human), bounced, softBounced, complained and unsubscribed. The ' +
          'bucket size is chosen from the window\'s span unless `bucket` names one: the smallest of 1m, 5m, 15m, 1h, 6h, 1d, 1w ' +
          'giving at most 120 buckets (up to 2 hours: minutes; 5 days: hours; 120 days: days). from after to → 422. ' +
          REACH_DOC,
        params: idParams,
        querystring: analyticsQuery,
        response: { 200: emailCampaignAnalytics, ...commonErrors },
      },
    },
    (request) => analytics.analytics(reachOf(request), request.params.id, request.query),
  );

  app.get(
    '/email-campaigns/:id/links',
    {
      config: { access: { auth: 'project' } },
      schema: {
        tags,
        summary: "An email campaign's top clicked links",
        description:
          'Each tracked link clicked at least once, with its clicks (every one logged), unique clickers (recipients) and human ' +
          `clickers (recipients with a click without machine signals), most unique clickers first. ${REACH_DOC}`,
        params: idParams,
        querystring: linksQuery,
        response: { 200: emailCampaignLinks, ...commonErrors },
      },
    },
    (request) => analytics.links(reachOf(request), request.params.id, request.query.limit),
  );

  app.get(
    '/email-campaigns/:id/recipients.csv',
    {
      config: { access: { auth: 'project' } },
      schema: {
        tags,
        summary: "CSV stream of an email campaign's recipients and their outcomes",
        description: `${RECIPIENT_CSV_DESCRIPTION} ${REACH_DOC}`,
        params: idParams,
        produces: ['text/csv'],
        response: { 200: z.string().describe('A header row, then one row per recipient'), ...commonErrors },
      },
    },
    async (request, reply) => {
      const rows = await analytics.openRecipients(reachOf(request), request.params.id);
      return sendCsv(request, reply, {
        filename: `email-campaign-${request.params.id}-recipients.csv`,
        columns: RECIPIENT_CSV_COLUMNS,
        rows,
        toRecord: toRecipientCsvRecord,
      });
    },
  );
}
