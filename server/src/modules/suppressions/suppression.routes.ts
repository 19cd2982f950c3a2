// Suppression list routes: list, look up, add, lift, import (JSON or CSV) and export (CSV) a project's suppressed emails.
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { projectOf } from '../../http/access.js';
import { sendCsv, escapeCell } from '../../http/csv.js';
import { commonErrors, paginated, paginationQuery, timestamp } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { SUPPRESSION_REASONS } from '../../delivery/index.js';
import { email } from '../subscribers/index.js';
import { MAX_IMPORT_ROWS, suppressionsFromCsv, type SuppressionService } from './suppression.service.js';

const tags = ['suppressions'];
const IMPORT_MAX_BYTES = 20 * 1024 * 1024;
const reason = z
  .enum(SUPPRESSION_REASONS)
  .describe('bounced (hard bounce), complained (marked as spam: permanent), unsubscribed (the recipient asked), manual (the project added it)');
const suppression = z
  .object({
    email: z.string().describe('The address, lower-cased'),
    reason,
    source: z.string().nullable().describe('Who said so: provider, recipient, api or import'),
    suppressedAt: timestamp,
  })
  .meta({ id: 'Suppression' });
const suppressionState = z
  .discriminatedUnion('suppressed', [
    suppression.extend({ suppressed: z.literal(true) }),
    z.object({
      email: z.string().describe('The address, lower-cased'),
      suppressed: z.literal(false),
      reason: z.null(),
      source: z.null(),
      suppressedAt: z.null(),
    }),
  ])
  .meta({ id: 'SuppressionState' });
const projectParams = z.strictObject({ projectId: z.string() });
const addressParams = z.strictObject({ projectId: z.string(), email: z.string().min(1).max(254) });
const entry = z.strictObject({ email, reason: reason.optional().describe('Default manual') });
const importBody = z.strictObject({ suppressions: z.array(entry).max(MAX_IMPORT_ROWS) });
const access = { auth: 'project', project: 'params.projectId' } as const;
const EXPORT_COLUMNS = ['email', 'reason', 'source', 'suppressedAt'] as const;

export async function suppressionRoutes(app: App, suppressions: SuppressionService) {
  app.get(
    '/projects/:projectId/suppressions',
    {
      config: { access },
      schema: {
        tags,
        summary: 'The email suppression list, most recent first',
        description:
          'Addresses no email goes to, campaign or transactional, in the caller\'s environment (a test key sees the ' +
          'sandbox list). `q` matches part of the address.',
        params: projectParams,
        querystring: z.strictObject({ ...paginationQuery, reason: reason.optional(), q: z.string().trim().min(1).max(254).optional() }),
        response: { 200: paginated(suppression), ...commonErrors },
      },
    },
    (request) => {
      const { page, pageSize, ...filters } = request.query;
      return suppressions.list(projectOf(request), filters, page, pageSize);
    },
  );

  app.get(
    '/projects/:projectId/suppressions/export.csv',
    {
      config: { access },
      schema: {
        tags,
        summary: 'The whole suppression list as CSV',
        description: `Columns: ${EXPORT_COLUMNS.join(', ')}; importable as it is. Cells that a spreadsheet would run as a formula are prefixed with an apostrophe.`,
        params: projectParams,
        produces: ['text/csv'],
        response: { 200: z.string().describe('A header row, then one row per address'), ...commonErrors },
      },
    },
    async (request, reply) =>
      sendCsv(request, reply, {
        filename: 'suppressions.csv',
        columns: EXPORT_COLUMNS,
        rows: suppressions.export(projectOf(request)),
        toRecord: (s) => [escapeCell(s.email), s.reason, escapeCell(s.source), s.suppressedAt],
      }),
  );

  app.get(
    '/projects/:projectId/suppressions/:email',
    {
      config: { access },
      schema: {
        tags,
        summary: 'Whether an address is suppressed, and why',
        description: "An address not on the list answers `suppressed: false` (in the caller's environment: a test key reads the sandbox list).",
        params: addressParams,
        response: { 200: suppressionState, ...commonErrors },
      },
    },
    (request) => suppressions.state(projectOf(request), request.params.email),
  );

  app.post(
    '/projects/:projectId/suppressions',
    {
      config: { access },
      schema: {
        tags,
        summary: 'Suppress an address',
        description:
          'An address already suppressed keeps its reason unless the new one is stronger (manual < unsubscribed < ' +
          'bounced < complained). With reason unsubscribed, bounced or complained, the subscribers carrying the address ' +
          'show that emailStatus.',
        params: projectParams,
        body: entry,
        response: { 201: suppression, ...commonErrors },
      },
    },
    async (request, reply) => reply.status(201).send(await suppressions.add(projectOf(request), request.body)),
  );

  app.delete(
    '/projects/:projectId/suppressions/:email',
    {
      config: { access },
      schema: {
        tags,
        summary: 'Lift a suppression: the address takes email again',
        description:
          'The subscribers carrying the address show emailStatus active again. A complaint is permanent: 409 ' +
          'complaint_permanent.',
        params: addressParams,
        response: { 204: z.null().describe('Lifted'), ...commonErrors },
      },
    },
    async (request, reply) => {
      await suppressions.remove(projectOf(request), request.params.email);
      return reply.status(204).send(null);
    },
  );

  // Only this route reads text/csv here, as the contacts import does.
  await app.register(async (scope: App) => {
    scope.addContentTypeParser('text/csv', { parseAs: 'string', bodyLimit: IMPORT_MAX_BYTES }, async (_request: FastifyRequest, body: string | Buffer) => ({
      suppressions: suppressionsFromCsv(String(body)),
    }));
    scope.post(
      '/projects/:projectId/suppressions/import',
      {
        bodyLimit: IMPORT_MAX_BYTES,
        config: { access, textBodies: { 'text/csv': 'A header row with an email column and optionally reason (other columns are ignored)' } },
        schema: {
          tags,
          summary: `Import up to ${MAX_IMPORT_ROWS} suppressions (JSON or CSV), all or nothing`,
          description:
            'JSON {suppressions: [{email, reason?}]} or CSV (Content-Type text/csv) with a header row: email, and ' +
            'optionally reason (default manual). Any bad row → 422 listing rows[<index>].<field> and nothing is ' +
            'written. Addresses already suppressed keep their reason. `suppressed` counts the addresses this import changed.',
          params: projectParams,
          body: importBody,
          response: { 200: z.object({ received: z.number().int(), suppressed: z.number().int() }), ...commonErrors },
        },
      },
      (request) => suppressions.import(projectOf(request), request.body.suppressions),
    );
  });
}
