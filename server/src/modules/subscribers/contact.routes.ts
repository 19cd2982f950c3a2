// Contact routes: set contact fields by token (SDK) or id, create email/phone-only contacts, bulk import (JSON or CSV).
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { projectOf, reachOf } from '../../http/access.js';
import { fieldName } from '../../http/errors.js';
import { commonErrors } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { validationFailed } from '../../shared/errors.js';
import { contactsFromCsv } from './contact-import.js';
import * as c from './contact.schemas.js';
import type { ContactService } from './contact.service.js';
import { subscriber } from './subscriber.schemas.js';

const tags = ['Contacts'];
const subscriberResponse = { 200: subscriber, ...commonErrors };
const FIELDS_NOTE =
  "email (emailStatus is the address's state: active for an address Herald never heard of, unsubscribed, bounced or " +
  'complained for one it did, whichever subscriber carries it; null → none), phone (international format, stored as E.164), timezone (IANA), language (BCP 47), attributes ' +
  '(merged key by key, null removes a key), preferences.channels.{email,push,sms,whatsapp} (merged flag by flag). ' +
  'null clears email, phone, timezone or language.';

const isCsv = (request: FastifyRequest) => /^text\/csv\b/i.test(request.headers['content-type'] ?? '');

export async function contactRoutes(app: App, contacts: ContactService) {
  app.post(
    '/subscribers/update',
    {
      config: { access: { auth: 'project', publishable: true }, rateLimitCounter: 'ingest' },
      schema: {
        tags,
        summary: 'Set contact fields of a subscriber by its token (normally called by the SDK)',
        description: FIELDS_NOTE,
        body: c.updateByTokenBody,
        response: subscriberResponse,
      },
    },
    (request) => {
      const { token, ...update } = request.body;
      return contacts.updateByToken(reachOf(request), token, update);
    },
  );

  app.patch(
    '/subscribers/:id',
    {
      config: { access: { auth: 'project' }, rateLimitCounter: 'ingest' },
      schema: {
        tags,
        summary: 'Set contact fields of a subscriber by id',
        description: FIELDS_NOTE,
        params: z.object({ id: z.string() }),
        body: c.updateByIdBody,
        response: subscriberResponse,
      },
    },
    (request) => contacts.updateById(reachOf(request), request.params.id, request.body),
  );

  app.post(
    '/contacts',
    {
      config: { access: { auth: 'project', project: 'body.projectId' } },
      schema: {
        tags,
        summary: 'Create a contact without a push endpoint (email- or phone-only)',
        description:
          "At least one of externalId, email or phone. The contact is active; emailStatus is its address's (none without " +
          'one). A test key creates a sandbox contact. Names and other data go in attributes.',
        body: c.createContactBody,
        response: { 201: subscriber, ...commonErrors },
      },
    },
    async (request, reply) => {
      const { projectId: _, ...input } = request.body;
      return reply.status(201).send(await contacts.create(projectOf(request), input));
    },
  );

  // Only this route reads text/csv: the app deliberately accepts JSON alone everywhere else.
  await app.register(async (scope: App) => {
    scope.addContentTypeParser('text/csv', { parseAs: 'string', bodyLimit: c.IMPORT_MAX_BYTES }, async (request: FastifyRequest, body: string | Buffer) => {
      // The body is read before the route checks its query: the mapping and types it needs are checked here first.
      const query = c.importQuery.safeParse(request.query ?? {});
      if (!query.success) {
        throw validationFailed(query.error.issues.map((issue) => ({ field: fieldName('querystring', issue.path.map(String)), error: issue.message })));
      }
      const { projectId, upsertBy, mapping, types } = query.data;
      return { projectId, upsertBy, contacts: contactsFromCsv(String(body), { mapping, types }) };
    });

    scope.post(
      '/contacts/import',
      {
        bodyLimit: c.IMPORT_MAX_BYTES,
        config: {
          access: { auth: 'project', project: 'body.projectId' },
          textBodies: { 'text/csv': 'A header row, then one contact per row; projectId and upsertBy in the query' },
        },
        schema: {
          tags,
          summary: `Import up to ${c.IMPORT_MAX_ROWS} contacts (JSON or CSV), all or nothing`,
          description:
            'JSON: {projectId, upsertBy, contacts}. CSV (Content-Type text/csv): a header row with the columns externalId, ' +
            'email, phone, timezone, language, tags (separated by , or |), attributes.<name>, ' +
            'preferences.channels.<email|push|sms|whatsapp>, marketingConsent.<email|sms|whatsapp>, or any other header ' +
            'sent to one of them (or skipped) by the mapping query parameter; attribute columns are text unless the ' +
            'types query parameter says number, boolean or date; projectId and upsertBy come from the query too. Rows are ' +
            'matched by externalId or by email (case-insensitive) within the project and environment (a test key ' +
            'imports sandbox contacts); every match is updated, the other rows are created. Any bad row → 422 listing ' +
            'rows[<index>].<field> (0-based, the first row after a CSV header is 0) and nothing is written. A body over ' +
            `${c.IMPORT_MAX_BYTES / 1024 / 1024} MB → 413 body_too_large.`,
          querystring: c.importQuery,
          body: c.importBody,
          response: { 200: c.importResult, ...commonErrors },
        },
      },
      (request) => {
        if (!isCsv(request) && Object.keys(request.query).length > 0) {
          throw validationFailed(
            Object.keys(request.query).map((key) => ({ field: `query.${key}`, error: 'is for CSV uploads only: send it in the JSON body' })),
          );
        }
        const { upsertBy, contacts: rows } = request.body;
        return contacts.import(projectOf(request), upsertBy, rows, request.query.types);
      },
    );
  });
}
