// Segment routes: saved segments CRUD, reach estimates and the streamed CSV export of spec 4.5.
import { z } from 'zod';
import { ATTRIBUTE_TYPES, CHANNELS } from '../../db/schema.js';
import { projectOf, reachOf } from '../../http/access.js';
import { escapeCell, sendCsv } from '../../http/csv.js';
import { commonErrors, errorEnvelope, paginated, paginationQuery, timestamp } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { segmentFilterSchema } from './segment-filter.js';
import type { ExportRow, SegmentService } from './segment.service.js';

const tags = ['Segments'];
const segment = z
  .object({
    id: z.string(),
    projectId: z.string(),
    name: z.string(),
    filters: segmentFilterSchema,
    sandbox: z.boolean().describe('Saved with a test key: test keys see and change only these; only sandbox campaigns send to them'),
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({
    id: 'Segment',
    description:
      'A saved segment belongs to an environment, like subscribers: a test key saves sandbox segments and sees and changes ' +
      'only those (another segment is 404); a live key sees both environments of its project; dashboard users every ' +
      'segment of their organization. A campaign uses a saved segment of its own environment only.',
  });

const name = z.string().trim().min(1).max(200);
const idParams = z.object({ id: z.string() });
const projectParams = z.object({ projectId: z.string() });

const EXPORT_COLUMNS = ['externalId', 'token', 'email', 'country', 'platform', 'tags', 'subscribedAt', 'lastSeenAt'] as const;

function toCsvRecord(row: ExportRow): string[] {
  return [
    escapeCell(row.externalId),
    escapeCell(row.token),
    escapeCell(row.email),
    escapeCell(row.country),
    escapeCell(row.platform),
    escapeCell(row.tags.join(',')),
    row.subscribedAt.toISOString(),
    row.lastSeenAt.toISOString(),
  ];
}

const attributeTags = ['Attributes'];
const attributeName = z.string().min(1).max(100);
const attributeView = z
  .object({
    name: z.string(),
    type: z.enum(ATTRIBUTE_TYPES),
    source: z.enum(['inferred', 'declared']).describe('inferred: from the first value written; declared: set by a user'),
    firstSeenAt: timestamp.nullable().describe('When a person first had it; null: declared before anyone had it'),
  })
  .meta({ id: 'Attribute', description: "An attribute of the project's people and the type every condition reads it as (docs/TARGETING.md)" });
const attributeParams = z.object({ projectId: z.string(), name: attributeName });

export async function segmentRoutes(app: App, segments: SegmentService) {
  app.get(
    '/projects/:projectId/attributes',
    {
      config: { access: { auth: 'project', project: 'params.projectId' } },
      schema: {
        tags: attributeTags,
        summary: "The project's attribute list: every top-level attribute its people have, by name, with its type",
        description: 'Of the caller\'s environment (a test key: the sandbox people\'s). A new attribute is listed with the type of the first value written.',
        params: projectParams,
        response: { 200: z.object({ data: z.array(attributeView) }), ...commonErrors },
      },
    },
    async (request) => ({ data: await segments.attributes.list(projectOf(request)) }),
  );

  app.put(
    '/projects/:projectId/attributes/:name',
    {
      config: { access: { auth: 'project', project: 'params.projectId' } },
      schema: {
        tags: attributeTags,
        summary: "Declare an attribute's type: every condition on it reads stored values as this type from now on",
        params: attributeParams,
        body: z.strictObject({ type: z.enum(ATTRIBUTE_TYPES) }),
        response: { 200: attributeView, ...commonErrors },
      },
    },
    (request) => segments.attributes.declare(projectOf(request), request.params.name, request.body.type),
  );

  app.get(
    '/projects/:projectId/attributes/:name/values',
    {
      config: { access: { auth: 'project', project: 'params.projectId' } },
      schema: {
        tags: attributeTags,
        summary: "An attribute's 20 most frequent values among the environment's people, optionally those starting with q",
        description: 'Values as text (numbers and booleans as their JSON text); objects and lists are left out. For the segment builder\'s typeahead.',
        params: attributeParams,
        querystring: z.strictObject({ q: z.string().max(200).optional().describe('Only values starting with this (case-sensitive)') }),
        response: { 200: z.object({ data: z.array(z.object({ value: z.string(), count: z.number().int() })) }), ...commonErrors },
      },
    },
    (request) => segments.attributes.values(projectOf(request), request.params.name, request.query.q || undefined),
  );

  app.post(
    '/segments',
    {
      config: { access: { auth: 'project', project: 'body.projectId' } },
      schema: {
        tags,
        summary: 'Save a segment: a name and filters combined with AND',
        description: 'Attribute conditions are checked against the attribute list, named segments must exist in the same project and environment (422); a segment that would name itself, directly or through others, is 422 `segment_cycle`.',
        body: z.strictObject({ projectId: z.string(), name, filters: segmentFilterSchema }),
        response: { 201: segment, ...commonErrors },
      },
    },
    async (request, reply) => {
      const { name: segmentName, filters } = request.body;
      return reply.status(201).send(await segments.create(projectOf(request), { name: segmentName, filters }));
    },
  );

  app.get(
    '/segments/project/:projectId',
    {
      config: { access: { auth: 'project', project: 'params.projectId' } },
      schema: {
        tags,
        summary: 'Saved segments of a project, newest first (a test key lists only sandbox segments)',
        params: projectParams,
        querystring: z.strictObject(paginationQuery),
        response: { 200: paginated(segment), ...commonErrors },
      },
    },
    (request) => segments.list(projectOf(request), request.query.page, request.query.pageSize),
  );

  app.post(
    '/segments/reach',
    {
      config: { access: { auth: 'project', project: 'body.projectId' } },
      schema: {
        tags,
        summary: 'Exact number of active subscribers matching inline filters or a saved segment (cached 30 s)',
        description:
          'Give exactly one of `filters` and `segmentId`. Counts active subscribers of the caller\'s environment ' +
          '(sandbox subscribers for a test key, live ones otherwise). With `channel` it counts the recipients a send on ' +
          'that channel to the same filters would reach (docs/CONTEXT.md, "Recipients"): `push` counts devices (active, ' +
          'with a push subscription); `email` counts distinct addresses (case-insensitive) not suppressed, ' +
          'whatever their devices\' push status; `sms` and `whatsapp` count distinct phone numbers. Each ' +
          'leaves out those who turned the channel off in preferences.channels, and email, sms and whatsapp count only ' +
          'addresses whose marketing consent is `subscribed` (docs/CONTEXT.md, "Marketing consent"). The count is exact; the same (project, ' +
          'channel, filters) within 30 seconds answers from a cache (`cached: true`).',
        body: z.strictObject({
          projectId: z.string(),
          filters: segmentFilterSchema.optional(),
          segmentId: z.string().optional(),
          channel: z.enum(CHANNELS).optional().describe("Count a channel's recipients (default: every active subscriber)"),
        }),
        response: {
          200: z.object({ count: z.number().int(), computedAt: timestamp, cached: z.boolean() }),
          ...commonErrors,
        },
      },
    },
    (request) => {
      const { filters, segmentId, channel } = request.body;
      return segments.reach(projectOf(request), { filters, segmentId, channel });
    },
  );

  app.get(
    '/segments/project/:projectId/export.csv',
    {
      config: { access: { auth: 'project', project: 'params.projectId' } },
      schema: {
        tags,
        summary: 'CSV stream of the active subscribers currently matching a saved segment',
        description:
          `Columns: ${EXPORT_COLUMNS.join(', ')}. tags are joined with commas in one cell; timestamps are ISO 8601. ` +
          'Cells starting with = + - @ tab, CR or NUL are prefixed with an apostrophe (formula injection).',
        params: projectParams,
        querystring: z.strictObject({ segmentId: z.string().min(1) }),
        produces: ['text/csv'],
        response: { 200: z.string().describe('A header row, then one row per subscriber'), ...commonErrors },
      },
    },
    async (request, reply) => {
      const rows = await segments.openExport(projectOf(request), request.query.segmentId);
      return sendCsv(request, reply, {
        filename: `segment-${request.query.segmentId}.csv`,
        columns: EXPORT_COLUMNS,
        rows,
        toRecord: toCsvRecord,
      });
    },
  );

  app.get(
    '/segments/:id',
    {
      config: { access: { auth: 'project' } },
      schema: { tags, summary: 'One saved segment', params: idParams, response: { 200: segment, ...commonErrors } },
    },
    (request) => segments.get(reachOf(request), request.params.id),
  );

  app.patch(
    '/segments/:id',
    {
      config: { access: { auth: 'project' } },
      schema: {
        tags,
        summary: 'Rename a segment or replace its filters',
        params: idParams,
        body: z.strictObject({ name: name.optional(), filters: segmentFilterSchema.optional() }),
        response: { 200: segment, ...commonErrors },
      },
    },
    (request) => segments.update(reachOf(request), request.params.id, request.body),
  );

  app.delete(
    '/segments/:id',
    {
      config: { access: { auth: 'project' } },
      schema: {
        tags,
        summary: 'Delete a saved segment',
        description: 'A segment a draft or scheduled campaign will read at send time, or that another segment names (inSegment / notInSegment), cannot be deleted: 409 `segment_in_use`.',
        params: idParams,
        response: { 204: z.null(), ...commonErrors, 409: errorEnvelope },
      },
    },
    async (request, reply) => {
      await segments.remove(reachOf(request), request.params.id);
      return reply.status(204).send(null);
    },
  );
}
