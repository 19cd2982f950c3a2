// Email campaign routes (spec 2.3): the push campaign API's verbs and status machine for email, plus duplicate.
import { z } from 'zod';
import { CAMPAIGN_STATUSES } from '../../db/schema.js';
import { projectOf, reachOf } from '../../http/access.js';
import { commonErrors, errorEnvelope, paginated } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { CampaignStreams, DEFAULT_STREAM_TIMING, type StreamTiming } from './campaign-stream.js';
import { listQueryOf, resendBody, streamQuery } from './campaign.schemas.js';
import type { CampaignService } from './campaign.service.js';
import { createEmailCampaignBody, emailCampaign, testAnswer, testBody, updateEmailCampaignBody } from './email-campaign.schemas.js';

const tags = ['Email campaigns'];
const idParams = z.object({ id: z.string() });
const projectParams = z.object({ projectId: z.string() });
const withConflict = { ...commonErrors, 409: errorEnvelope };

const AUDIENCE_DOC =
  'The audience is evaluated when the campaign is sent: the subscribers of its segment in its environment that carry an ' +
  'email address, one email per distinct address (the first subscriber holding it), leaving out addresses on the ' +
  "project's suppression list or not `active`/`verified` (emailStatus), and subscribers whose preferences turn email off.";

export async function emailCampaignRoutes(app: App, campaigns: CampaignService, timing: StreamTiming = DEFAULT_STREAM_TIMING) {
  const streams = new CampaignStreams(timing, app.log);
  app.addHook('preClose', async () => streams.closeAll());

  app.post(
    '/email-campaigns',
    {
      config: { access: { auth: 'project', project: 'body.projectId' } },
      schema: {
        tags,
        summary: 'Create an email campaign: sent now, scheduled, or kept as a draft',
        description:
          'As POST /campaigns for push: immediate → `sending` (stats.totalTargeted counted now, the audience snapshotted into one ' +
          'delivery per address by a background job, `sent` once every delivery reached a final state); scheduled → `scheduled` ' +
          'until sendAt (in the future); draft → kept. Checked when written (422): merge tags parse in every part, the From and ' +
          'Reply-To addresses are on verified sending domains of the project, the content fits an email. A test key makes a ' +
          `sandbox campaign: rendered and recorded for sandbox subscribers, never handed to a provider. ${AUDIENCE_DOC}`,
        body: createEmailCampaignBody,
        response: { 201: emailCampaign, ...commonErrors },
      },
    },
    async (request, reply) => {
      const { projectId: _scopedByGuard, ...input } = request.body;
      return reply.status(201).send(await campaigns.create(projectOf(request), 'email', input));
    },
  );

  app.get(
    '/email-campaigns/project/:projectId',
    {
      config: { access: { auth: 'project', project: 'params.projectId' } },
      schema: {
        tags,
        summary: "A project's email campaigns, newest first",
        description: 'Archived campaigns are left out unless `status=archived`. A test key sees sandbox campaigns only.',
        params: projectParams,
        querystring: listQueryOf(z.enum(CAMPAIGN_STATUSES)),
        response: { 200: paginated(emailCampaign), ...commonErrors },
      },
    },
    (request) => {
      const { page, pageSize, ...filters } = request.query;
      return campaigns.list(projectOf(request), 'email', filters, page, pageSize);
    },
  );

  app.get(
    '/email-campaigns/:id',
    {
      config: { access: { auth: 'project' } },
      schema: { tags, summary: 'One email campaign with its live counters and rates', params: idParams, response: { 200: emailCampaign, ...commonErrors } },
    },
    (request) => campaigns.get(reachOf(request), 'email', request.params.id),
  );

  app.patch(
    '/email-campaigns/:id',
    {
      config: { access: { auth: 'project' } },
      schema: {
        tags,
        summary: 'Edit a draft email campaign; it stays a draft',
        description: 'Only drafts can be edited (409 `campaign_not_draft` otherwise); checked as on create. Nothing is sent until POST /email-campaigns/{id}/send.',
        params: idParams,
        body: updateEmailCampaignBody,
        response: { 200: emailCampaign, ...withConflict },
      },
    },
    (request) => campaigns.update(reachOf(request), 'email', request.params.id, request.body),
  );

  app.delete(
    '/email-campaigns/:id',
    {
      config: { access: { auth: 'project' } },
      schema: {
        tags,
        summary: 'Delete a draft, scheduled, cancelled or failed email campaign',
        description: 'sent and archived campaigns answer 409 (archive a sent one instead), sending ones 409 (cancel first).',
        params: idParams,
        response: { 204: z.null(), ...withConflict },
      },
    },
    async (request, reply) => {
      await campaigns.remove(reachOf(request), 'email', request.params.id);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/email-campaigns/:id/send',
    {
      config: { access: { auth: 'project' } },
      schema: {
        tags,
        summary: 'Send a draft, or re-send a finished email campaign as a new one',
        description:
          'As POST /campaigns/{id}/send: a draft goes as its schedule says (200, the same campaign); a sent, archived, cancelled ' +
          'or failed campaign is re-sent as a new campaign dispatched at once (201), to its segment evaluated now or the ' +
          '`segment` given. Scheduled and sending campaigns answer 409 `campaign_not_resendable`.',
        params: idParams,
        body: resendBody,
        response: { 200: emailCampaign, 201: emailCampaign, ...withConflict },
      },
    },
    async (request, reply) => {
      const { campaign: sent, created } = await campaigns.send(reachOf(request), 'email', request.params.id, request.body?.segment);
      return reply.status(created ? 201 : 200).send(sent);
    },
  );

  app.post(
    '/email-campaigns/:id/duplicate',
    {
      config: { access: { auth: 'project' } },
      schema: {
        tags,
        summary: 'Copy an email campaign into a new draft',
        description: 'Any status: the new draft has the name (marked "(copy)"), content, segment, UTM and time zone settings; nothing is sent.',
        params: idParams,
        response: { 201: emailCampaign, ...commonErrors },
      },
    },
    async (request, reply) => reply.status(201).send(await campaigns.duplicate(reachOf(request), 'email', request.params.id)),
  );

  app.post(
    '/email-campaigns/:id/test',
    {
      config: { access: { auth: 'project' } },
      schema: {
        tags,
        summary: 'Send the campaign as it stands to a few addresses, as a test',
        description:
          'Any status (a draft, typically). Each address gets the email now, its subject marked `[Test]`, rendered with the ' +
          'merge fields of the subscriber holding that address in the campaign\'s environment (none: only defaults, and a ' +
          'variable without one fails that address with `template_variables_missing`). Not counted in the campaign\'s stats, ' +
          'not logged as a delivery; its tracked links lead where they should but record nothing. It goes through the ' +
          "project's provider (a test key's campaign: the sandbox, nothing sent), within its rate, a sandbox account's " +
          'quota and the monthly cap. Each address answers `sent` or `failed` with a reason (spec 7.4 codes and ' +
          '`provider_not_configured`, `monthly_cap_reached`, `sandbox_limit_reached`).',
        params: idParams,
        body: testBody,
        response: { 200: testAnswer, ...commonErrors },
      },
    },
    async (request) => {
      const outcomes = await campaigns.testSend(reachOf(request), 'email', request.params.id, request.body.emails);
      return { data: outcomes.map(({ address, status, reason }) => ({ email: address, status, reason })) };
    },
  );

  app.post(
    '/email-campaigns/:id/cancel',
    {
      config: { access: { auth: 'project' } },
      schema: {
        tags,
        summary: 'Cancel a scheduled, sending or paused email campaign',
        description: 'A scheduled campaign never sends; a sending or paused one stops: emails not yet handed to a worker are suppressed at once, those being sent finish. Other statuses answer 409.',
        params: idParams,
        response: { 200: emailCampaign, ...withConflict },
      },
    },
    (request) => campaigns.cancel(reachOf(request), 'email', request.params.id),
  );

  app.post(
    '/email-campaigns/:id/pause',
    {
      config: { access: { auth: 'project' } },
      schema: {
        tags,
        summary: 'Pause a sending email campaign',
        description:
          '`sending` → `paused`: the emails still waiting are held (their deliveries `paused`, each keeping when it is due) and no ' +
          'worker takes them; those already being sent finish and are counted. Other statuses answer 409 `campaign_not_pausable`.',
        params: idParams,
        response: { 200: emailCampaign, ...withConflict },
      },
    },
    (request) => campaigns.pause(reachOf(request), 'email', request.params.id),
  );

  app.post(
    '/email-campaigns/:id/resume',
    {
      config: { access: { auth: 'project' } },
      schema: {
        tags,
        summary: 'Resume a paused email campaign where it stopped',
        description:
          '`paused` → `sending`: the held emails go, each as it was due (those overdue first). A recipient already sent is never ' +
          'sent again: every recipient is one delivery row, and only rows still held go. Other statuses answer 409 ' +
          '`campaign_not_resumable`. A paused campaign can also be cancelled.',
        params: idParams,
        response: { 200: emailCampaign, ...withConflict },
      },
    },
    (request) => campaigns.resume(reachOf(request), 'email', request.params.id),
  );

  app.post(
    '/email-campaigns/:id/archive',
    {
      config: { access: { auth: 'project' } },
      schema: {
        tags,
        summary: 'Archive a sent email campaign',
        description: 'Hides it from lists unless status=archived; it stays readable and re-sendable. Other statuses answer 409.',
        params: idParams,
        response: { 200: emailCampaign, ...withConflict },
      },
    },
    (request) => campaigns.archive(reachOf(request), 'email', request.params.id),
  );

  app.get(
    '/email-campaigns/:id/stream',
    {
      config: { access: { auth: 'project', credentials: 'jwt-query' } },
      schema: {
        tags,
        summary: 'Live counters of an email campaign (server-sent events)',
        description:
          'As GET /campaigns/{id}/stream, with the email counters: each event is `data: {"status", "totalTargeted", "sent", ' +
          '"delivered", "opened", "clicked", "bounced", "complained", "unsubscribed", "failed", "suppressed", the rates, and ' +
          '"sendingIssue" as on the campaign}`, one ' +
          'on connect and one whenever something changed (read at most every 400 ms), so the dashboard\'s counters move within ' +
          'the two seconds of spec 6.3. API-key callers poll GET /email-campaigns/{id}.',
        params: idParams,
        querystring: streamQuery,
        produces: ['text/event-stream'],
        response: { 200: z.string().describe('Server-sent events: `data:` lines of progress, `: heartbeat` comments'), ...commonErrors },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const first = await campaigns.progress(reachOf(request), 'email', id);
      reply.hijack();
      streams.stream(id, () => campaigns.progressOf('email', id), first, request.raw, reply.raw, reply.getHeaders());
    },
  );
}
