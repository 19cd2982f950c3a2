// Campaign routes on every channel (spec 4.4, 2.3): one family of verbs, each channel's paths, schemas and words its descriptor's.
import { z } from 'zod';
import type { CampaignChannel } from '../../db/schema.js';
import { projectOf, reachOf } from '../../http/access.js';
import { sendCsv } from '../../http/csv.js';
import { commonErrors, errorEnvelope, paginated } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { CampaignStreams, DEFAULT_STREAM_TIMING, type StreamTiming } from './campaign-stream.js';
import { exportQuery, resendBody, streamQuery, type CampaignSchemas } from './campaign.schemas.js';
import type { CampaignInput, CampaignPatch, CampaignService, CampaignViews } from './campaign.service.js';

/** A route's words in the OpenAPI document. */
export interface RouteDoc {
  summary: string;
  description?: string;
}

/** A channel's campaign list filters, as its list query gives them. */
type ListQuery = Parameters<CampaignService['list']>[2] & { page: number; pageSize: number };

/** What a channel's campaign routes are: where they live, what they read and answer, what they say, and its own verbs. */
export interface CampaignRoutes<C extends CampaignChannel, TestBody = never> {
  channel: C;
  /** The path every route starts with (`/campaigns` for push, as spec 4.4 names it). */
  path: string;
  tag: string;
  schemas: Omit<CampaignSchemas, 'create' | 'update' | 'listQuery'> & {
    create: z.ZodType<CampaignInput<C> & { projectId: string }>;
    update: z.ZodType<CampaignPatch<C>>;
    listQuery: z.ZodType<ListQuery>;
  };
  docs: Record<'create' | 'list' | 'get' | 'update' | 'remove' | 'send' | 'cancel' | 'archive' | 'stream', RouteDoc> &
    Partial<Record<'duplicate' | 'pause' | 'resume', RouteDoc>>;
  /** The CSV export of a project's campaigns, for a channel that has one. */
  export?: RouteDoc & {
    columns: readonly string[];
    toRecord: (campaign: CampaignViews[C]) => string[];
  };
  /** A test send of the campaign as it stands to a few addresses, for a channel that has one. */
  test?: RouteDoc & {
    body: z.ZodType<TestBody>;
    addressesOf: (body: TestBody) => readonly string[];
    answer: z.ZodType;
    answerOf: (outcomes: Awaited<ReturnType<CampaignService['testSend']>>) => unknown;
  };
}

const idParams = z.object({ id: z.string() });
const projectParams = z.object({ projectId: z.string() });
const withConflict = { ...commonErrors, 409: errorEnvelope };

export async function campaignRoutes<C extends CampaignChannel, TestBody>(
  app: App,
  campaigns: CampaignService,
  routes: CampaignRoutes<C, TestBody>,
  timing: StreamTiming = DEFAULT_STREAM_TIMING,
) {
  const { channel, path, docs, schemas } = routes;
  const tags = [routes.tag];
  const streams = new CampaignStreams(timing, app.log);
  app.addHook('preClose', async () => streams.closeAll());

  app.post(
    path,
    {
      config: { access: { auth: 'project', project: 'body.projectId' } },
      schema: { tags, ...docs.create, body: schemas.create, response: { 201: schemas.campaign, ...commonErrors } },
    },
    async (request, reply) => {
      const { projectId: _scopedByGuard, ...input } = request.body;
      return reply.status(201).send(await campaigns.create(projectOf(request), channel, input));
    },
  );

  app.get(
    `${path}/project/:projectId`,
    {
      config: { access: { auth: 'project', project: 'params.projectId' } },
      schema: { tags, ...docs.list, params: projectParams, querystring: schemas.listQuery, response: { 200: paginated(schemas.campaign), ...commonErrors } },
    },
    (request) => {
      const { page, pageSize, ...filters } = request.query;
      return campaigns.list(projectOf(request), channel, filters, page, pageSize);
    },
  );

  if (routes.export) {
    const { columns, toRecord, ...doc } = routes.export;
    app.get(
      `${path}/export/project/:projectId.csv`,
      {
        config: { access: { auth: 'project', project: 'params.projectId' } },
        schema: {
          tags,
          ...doc,
          params: projectParams,
          querystring: exportQuery,
          produces: ['text/csv'],
          response: { 200: z.string().describe('A header row, then one row per campaign'), ...commonErrors },
        },
      },
      async (request, reply) => {
        const rows = campaigns.openExport(projectOf(request), channel, request.query);
        return sendCsv(request, reply, { filename: `campaigns-${request.params.projectId}.csv`, columns, rows, toRecord });
      },
    );
  }

  app.get(
    `${path}/:id`,
    {
      config: { access: { auth: 'project' } },
      schema: { tags, ...docs.get, params: idParams, response: { 200: schemas.campaign, ...commonErrors } },
    },
    (request) => campaigns.get(reachOf(request), channel, request.params.id),
  );

  app.patch(
    `${path}/:id`,
    {
      config: { access: { auth: 'project' } },
      schema: { tags, ...docs.update, params: idParams, body: schemas.update, response: { 200: schemas.campaign, ...withConflict } },
    },
    (request) => campaigns.update(reachOf(request), channel, request.params.id, request.body),
  );

  app.delete(
    `${path}/:id`,
    {
      config: { access: { auth: 'project' } },
      schema: { tags, ...docs.remove, params: idParams, response: { 204: z.null(), ...withConflict } },
    },
    async (request, reply) => {
      await campaigns.remove(reachOf(request), channel, request.params.id);
      return reply.status(204).send(null);
    },
  );

  app.post(
    `${path}/:id/send`,
    {
      config: { access: { auth: 'project' } },
      schema: { tags, ...docs.send, params: idParams, body: resendBody, response: { 200: schemas.campaign, 201: schemas.campaign, ...withConflict } },
    },
    async (request, reply) => {
      const { campaign: sent, created } = await campaigns.send(reachOf(request), channel, request.params.id, request.body?.segment);
      return reply.status(created ? 201 : 200).send(sent);
    },
  );

  if (docs.duplicate) {
    app.post(
      `${path}/:id/duplicate`,
      {
        config: { access: { auth: 'project' } },
        schema: { tags, ...docs.duplicate, params: idParams, response: { 201: schemas.campaign, ...commonErrors } },
      },
      async (request, reply) => reply.status(201).send(await campaigns.duplicate(reachOf(request), channel, request.params.id)),
    );
  }

  if (routes.test) {
    const { body, addressesOf, answer, answerOf, ...doc } = routes.test;
    app.post(
      `${path}/:id/test`,
      {
        config: { access: { auth: 'project' } },
        schema: { tags, ...doc, params: idParams, body, response: { 200: answer, ...commonErrors } },
      },
      async (request) => answerOf(await campaigns.testSend(reachOf(request), channel, request.params.id, addressesOf(request.body as TestBody))),
    );
  }

  for (const [verb, act] of [
    ['cancel', campaigns.cancel],
    ['pause', campaigns.pause],
    ['resume', campaigns.resume],
    ['archive', campaigns.archive],
  ] as const) {
    const doc = docs[verb];
    if (!doc) continue;
    app.post(
      `${path}/:id/${verb}`,
      {
        config: { access: { auth: 'project' } },
        schema: { tags, ...doc, params: idParams, response: { 200: schemas.campaign, ...withConflict } },
      },
      (request) => act.call(campaigns, reachOf(request), channel, request.params.id),
    );
  }

  app.get(
    `${path}/:id/stream`,
    {
      config: { access: { auth: 'project', credentials: 'jwt-query' } },
      schema: {
        tags,
        ...docs.stream,
        params: idParams,
        querystring: streamQuery,
        produces: ['text/event-stream'],
        response: { 200: z.string().describe('Server-sent events: `data:` lines of progress, `: heartbeat` comments'), ...commonErrors },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const first = await campaigns.progress(reachOf(request), channel, id);
      reply.hijack();
      streams.stream(id, () => campaigns.progressOf(channel, id), first, request.raw, reply.raw, reply.getHeaders());
    },
  );
}
