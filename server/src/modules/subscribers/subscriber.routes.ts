// Subscriber routes (spec 4.3): registration by the SDK, identify/tag/untag/seen by token, and project reads.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { SUBSCRIBER_STATUSES } from '../../db/schema.js';
import { isPublishable, projectOf, reachOf } from '../../http/access.js';
import { escapeCell, sendCsv } from '../../http/csv.js';
import { commonErrors, paginated, paginationQuery } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { timelinePage, timelineQuery } from './person-timeline.schemas.js';
import * as s from './subscriber.schemas.js';
import type { ExportedPerson, Subscriber, SubscriberService } from './subscriber.service.js';

export interface SubscriberRouteOptions {
  allowInsecurePushEndpoints: boolean;
}

const tags = ['Subscribers'];

const PEOPLE_EXPORT_COLUMNS = ['id', 'name', 'email', 'phone', 'externalId', 'channels', 'status', 'tags', 'lastSeenAt', 'createdAt'] as const;

function toPeopleRecord(row: ExportedPerson): string[] {
  return [
    row.id,
    escapeCell(row.name),
    escapeCell(row.email),
    // E.164 only (digits after a +): it cannot carry a formula, and an apostrophe would corrupt it.
    row.phone ?? '',
    escapeCell(row.externalId),
    row.channels.join(','),
    row.status,
    escapeCell(row.tags.join(',')),
    row.lastSeenAt.toISOString(),
    row.createdAt.toISOString(),
  ];
}
// The SDK's calls by token: a publishable key may make them.
const byToken = { auth: 'project', publishable: true } as const;
const idParams = z.object({ id: z.string() });
const projectParams = z.object({ projectId: z.string() });

/** Spec 3.2's 409 for a push endpoint already registered: the error envelope plus the holder, when the caller may see it. */
const endpointTaken = (request: FastifyRequest, reply: FastifyReply, message: string, existing: Subscriber | undefined) =>
  reply.status(409).send({ statusCode: 409, code: 'subscriber_exists', message, requestId: request.id, ...(existing && { subscriber: existing }) });

export async function subscriberRoutes(app: App, subscribers: SubscriberService, options: SubscriberRouteOptions) {
  app.post(
    '/subscribers',
    {
      config: { access: { auth: 'project', project: 'body.projectId', publishable: true }, rateLimitCounter: 'ingest' },
      schema: {
        tags,
        summary: 'Register a push subscription (normally called by the browser SDK with a project key)',
        description:
          'platform, browser, os and device are derived from userAgent; language from the body, else Accept-Language; ' +
          'country, city and timezone (when not in the body) from trusted edge headers or GEOIP_DB when configured, else null. ' +
          'A test key registers a sandbox subscriber. A second registration of the same endpoint answers 409 with the ' +
          'error envelope plus `subscriber`, the existing record (left out when the caller may not see it: a test key ' +
          'is not shown a live subscriber). The existing record keeps its id and token. When its status was ' +
          '`unsubscribed` (permission revoked, or the push service reported the subscription gone) and the ' +
          'registration comes from its environment, it is revived first: `active` again with the keys and user agent ' +
          'just sent, and the 409 shows it `active`. An `inactive` subscriber (deactivated by Herald or an operator) ' +
          'is not revived; an `active` one keeps its keys.',
        body: s.registrationBody(options.allowInsecurePushEndpoints),
        response: { 201: s.registered, ...commonErrors, 409: s.duplicateSubscriber },
      },
    },
    async (request, reply) => {
      const { projectId: _, ...input } = request.body;
      const result = await subscribers.register(projectOf(request), input, {
        acceptLanguage: request.headers['accept-language'],
        ip: request.ip,
        headers: request.headers,
      });
      if (result.outcome === 'exists') return endpointTaken(request, reply, 'A subscriber with this endpoint is already registered', result.existing);
      return reply.status(201).send(result.subscriber);
    },
  );

  app.post(
    '/subscribers/identify',
    {
      config: { access: byToken, rateLimitCounter: 'ingest' },
      schema: {
        tags,
        summary: 'Link a subscriber to your own user id (several devices may share one externalId)',
        description:
          'With identity verification on (project settings.identityVerification), a publishable key must send ' +
          'externalIdHash: missing → 422 naming externalIdHash, not the HMAC of this externalId under the project\'s ' +
          'identity secret → 401 invalid_identity_hash (nothing changed). Server keys and dashboard users are trusted: ' +
          'no hash needed, and one sent is not checked.',
        body: s.tokenBody.extend({
          externalId: z.string().trim().min(1).max(255).describe('Your user id (trimmed)'),
          externalIdHash: z
            .string()
            .regex(/^[0-9a-fA-F]{64}$/, 'must be 64 hex characters: HMAC-SHA256(identity secret, externalId)')
            .optional()
            .describe(
              'hex HMAC-SHA256 of externalId (as sent, trimmed, UTF-8) under the identity secret, computed by your server ' +
                'for the signed-in user',
            ),
        }),
        response: {
          200: z.object({ id: z.string(), token: z.string(), externalId: z.string().nullable(), updatedAt: z.string() }),
          ...commonErrors,
        },
      },
    },
    (request) =>
      subscribers.identify(reachOf(request), request.body.token, request.body.externalId, {
        publishable: isPublishable(request),
        externalIdHash: request.body.externalIdHash,
      }),
  );

  const tagsResponse = { 200: z.object({ id: z.string(), tags: z.array(z.string()) }), ...commonErrors };
  app.post(
    '/subscribers/tag',
    {
      config: { access: byToken, rateLimitCounter: 'ingest' },
      schema: {
        tags,
        summary: 'Add tags (additive and deduplicated: existing tags are kept, in order)',
        body: s.tagsBody,
        response: tagsResponse,
      },
    },
    (request) => subscribers.tag(reachOf(request), request.body.token, request.body.tags),
  );

  app.post(
    '/subscribers/untag',
    {
      config: { access: byToken, rateLimitCounter: 'ingest' },
      schema: { tags, summary: 'Remove the listed tags', body: s.tagsBody, response: tagsResponse },
    },
    (request) => subscribers.untag(reachOf(request), request.body.token, request.body.tags),
  );

  app.post(
    '/subscribers/seen',
    {
      config: { access: byToken, rateLimitCounter: 'ingest' },
      schema: {
        tags,
        summary: 'Record that the subscriber was seen now (lastSeenAt), e.g. on each page view',
        body: s.tokenBody,
        response: { 200: z.object({ id: z.string(), lastSeenAt: z.string() }), ...commonErrors },
      },
    },
    (request) => subscribers.seen(reachOf(request), request.body.token),
  );

  app.post(
    '/subscribers/push-subscription',
    {
      config: { access: byToken, rateLimitCounter: 'ingest' },
      schema: {
        tags,
        summary: "Replace a subscriber's push subscription (normally called by the SDK and its service worker)",
        description:
          'For a browser whose subscription changed: new keys, a new endpoint after a `pushsubscriptionchange` or a ' +
          'changed VAPID key, or a new subscription after the person unsubscribed. The subscriber keeps its id, token, ' +
          'externalId, tags and contact fields. An `unsubscribed` subscriber is `active` again; an `inactive` one stays ' +
          'inactive. Another subscriber of the project holding the endpoint → 409 with that subscriber, as on ' +
          'registration (the SDK adopts it).',
        body: s.pushSubscriptionBody(options.allowInsecurePushEndpoints),
        response: { 200: s.subscriber, ...commonErrors, 409: s.duplicateSubscriber },
      },
    },
    async (request, reply) => {
      const { token, ...subscription } = request.body;
      const result = await subscribers.replacePushSubscription(reachOf(request), token, subscription);
      if (result.outcome === 'exists') return endpointTaken(request, reply, 'Another subscriber is registered with this endpoint', result.existing);
      return result.subscriber;
    },
  );

  app.post(
    '/subscribers/unsubscribe',
    {
      config: { access: byToken, rateLimitCounter: 'ingest' },
      schema: {
        tags,
        summary: 'Unsubscribe a device from push by its token (the SDK\'s unsubscribe())',
        description:
          'An `active` subscriber becomes `unsubscribed` (statusReason `unsubscribed_by_subscriber`) and is left out of ' +
          'every push from then on; transactional pushes to it answer `subscriber_unsubscribed`. Idempotent: any other ' +
          'status is kept and answered. The subscriber and its data stay: a new push subscription from the SDK ' +
          '(POST /subscribers/push-subscription) makes it `active` again.',
        body: s.tokenBody,
        response: {
          200: z.object({ id: z.string(), status: z.enum(SUBSCRIBER_STATUSES), updatedAt: z.string() }),
          ...commonErrors,
        },
      },
    },
    (request) => subscribers.unsubscribe(reachOf(request), request.body.token),
  );

  app.get(
    '/subscribers/project/:projectId',
    {
      config: { access: { auth: 'project', project: 'params.projectId' }, rateLimitCounter: 'ingest' },
      schema: {
        tags,
        summary: 'Subscribers of a project, newest first, with filters, a partial search (q) and a sort',
        description:
          'Each row carries its readable `name` and the `channels` that reach it now. `q` matches any part of the ' +
          'email, externalId, phone or name, case-insensitively.',
        params: projectParams,
        querystring: z.strictObject({ ...paginationQuery, ...s.listQuery }),
        response: { 200: paginated(s.subscriber), ...commonErrors },
      },
    },
    (request) => {
      const { page, pageSize, sort, order, ...filters } = request.query;
      return subscribers.list(projectOf(request), filters, { sort, order }, page, pageSize);
    },
  );

  app.post(
    '/projects/:projectId/subscribers/bulk',
    {
      config: { access: { auth: 'project', project: 'params.projectId' } },
      schema: {
        tags,
        summary: 'Tag, untag, set attributes of or delete subscribers in bulk: a list of ids or every subscriber matching the list filters',
        description:
          'One transaction: all of the selection is changed or none. Only subscribers the caller can see are matched ' +
          "(a test key its sandbox ones; ids of another project match nothing). `matched` counts the selection, `changed` " +
          'the rows changed: a tag is added where missing (existing tags kept, in order), removed where present; ' +
          '`set_attributes` merges `attributes` into each one as PATCH /subscribers/{id} does (null removes a key; a new ' +
          "name joins the project's attribute list with the type of its value; a result over the size cap is a 422 and " +
          'nothing is written); a deletion removes each subscriber as DELETE /subscribers/:id does. Refused to a VIEWER (403).',
        params: projectParams,
        body: s.bulkBody,
        response: { 200: s.bulkResult, ...commonErrors },
      },
    },
    (request) => {
      const { action, tags: actionTags, attributes, ids, filter } = request.body;
      const selection = ids !== undefined ? { ids } : { filter: filter ?? {} };
      return subscribers.bulk(
        projectOf(request),
        selection,
        action === 'delete' ? { action } : action === 'set_attributes' ? { action, attributes: attributes ?? {} } : { action, tags: actionTags ?? [] },
      );
    },
  );

  app.post(
    '/projects/:projectId/subscribers/export',
    {
      // A read, though a POST (a list of ids does not fit in a URL): viewers may export.
      config: { access: { auth: 'project', project: 'params.projectId', minRole: 'VIEWER' } },
      schema: {
        tags,
        summary: 'CSV of the subscribers selected by ids or by the list filters, with the columns of the people list',
        description:
          `Columns: ${PEOPLE_EXPORT_COLUMNS.join(', ')}; rows in id order. channels and tags are joined with commas in ` +
          'one cell; timestamps are ISO 8601. Cells starting with = + - @ tab, CR or NUL are prefixed with an ' +
          'apostrophe (formula injection). Only subscribers the caller can see are exported.',
        params: projectParams,
        body: s.exportBody,
        produces: ['text/csv'],
        response: { 200: z.string().describe('A header row, then one row per subscriber'), ...commonErrors },
      },
    },
    async (request, reply) => {
      const { ids, filter } = request.body;
      const selection = ids !== undefined ? { ids } : { filter: filter ?? {} };
      return sendCsv(request, reply, {
        filename: 'people.csv',
        columns: PEOPLE_EXPORT_COLUMNS,
        rows: subscribers.exportSelection(projectOf(request), selection),
        toRecord: toPeopleRecord,
      });
    },
  );

  app.get(
    '/subscribers/analytics/project/:projectId',
    {
      config: { access: { auth: 'project', project: 'params.projectId' }, rateLimitCounter: 'ingest' },
      schema: {
        tags,
        summary: 'Active subscribers by country, platform, browser, os, device and city, computed live',
        description:
          "Counts the caller's environment only: live subscribers for a live key or a dashboard user, sandbox ones for a test key. " +
          'Each list holds every value, sorted by count (largest first); unknown values are left out. `limit` keeps the ' +
          'largest values of each list only (a dashboard chart).',
        params: projectParams,
        querystring: s.analyticsQuery,
        response: { 200: s.analytics, ...commonErrors },
      },
    },
    (request) => subscribers.analytics(projectOf(request), request.query.limit),
  );

  app.get(
    '/subscribers/project/:projectId/external-id/:externalId',
    {
      config: { access: { auth: 'project', project: 'params.projectId' }, rateLimitCounter: 'ingest' },
      schema: {
        tags,
        summary: 'The subscribers (devices) identified with an externalId, newest first (at most 100)',
        params: projectParams.extend({ externalId: z.string().min(1).max(255) }),
        response: { 200: z.object({ data: z.array(s.subscriber) }), ...commonErrors },
      },
    },
    (request) => subscribers.byExternalId(projectOf(request), request.params.externalId),
  );

  app.get(
    '/subscribers/token/:token',
    {
      config: { access: byToken, rateLimitCounter: 'ingest', secretParams: ['token'] },
      schema: {
        tags,
        summary: 'One subscriber by its token',
        params: z.object({ token: z.string().min(1).max(100) }),
        response: { 200: s.subscriber, ...commonErrors },
      },
    },
    (request) => subscribers.getByToken(reachOf(request), request.params.token),
  );

  app.get(
    '/subscribers/:id',
    {
      config: { access: { auth: 'project' }, rateLimitCounter: 'ingest' },
      schema: { tags, summary: 'One subscriber', params: idParams, response: { 200: s.subscriber, ...commonErrors } },
    },
    (request) => subscribers.get(reachOf(request), request.params.id),
  );

  app.get(
    '/subscribers/:id/deliveries',
    {
      config: { access: { auth: 'project' }, rateLimitCounter: 'ingest' },
      schema: {
        tags,
        summary: "A subscriber's deliveries, newest first",
        description:
          'Campaign pushes and transactional sends to this subscriber with their status, reason and timestamps (the ' +
          "dashboard's recent sends). A test key sees only its sandbox subscribers, so only their deliveries.",
        params: idParams,
        querystring: z.strictObject(paginationQuery),
        response: { 200: paginated(s.subscriberDelivery), ...commonErrors },
      },
    },
    (request) => subscribers.deliveries(reachOf(request), request.params.id, request.query.page, request.query.pageSize),
  );

  app.get(
    '/subscribers/:id/events',
    {
      config: { access: { auth: 'project' }, rateLimitCounter: 'ingest' },
      schema: {
        tags,
        summary: "A subscriber's delivery events, newest first",
        description:
          'What happened to the messages sent to this subscriber, from the events log (docs/CONTEXT.md, "Delivery ' +
          'events"): deliveries confirmed, every open and click — a later one of the same delivery flagged `repeat`, ' +
          'a likely privacy proxy or link scanner flagged `machine` — dismissals, unsubscribes, complaints and bounces, ' +
          'with the campaign or transactional send each belongs to, the URL of a click and the code and diagnostic of a ' +
          "bounce. Email reaches an address through one of the subscribers carrying it, so a person's email events are " +
          'on the subscriber their deliveries went to. A test key sees only its sandbox subscribers, so only their events.',
        params: idParams,
        querystring: s.eventsQuery,
        response: { 200: paginated(s.subscriberEvent), ...commonErrors },
      },
    },
    (request) => {
      const { page, pageSize, ...filters } = request.query;
      return subscribers.events(reachOf(request), request.params.id, filters, page, pageSize);
    },
  );

  app.get(
    '/subscribers/:id/timeline',
    {
      config: { access: { auth: 'project' }, rateLimitCounter: 'ingest' },
      schema: {
        tags,
        summary: "A person's timeline: everything that happened to or with them, newest first",
        description:
          'One list of what was sent to this subscriber (each message with its channel, its campaign, automation or ' +
          'transactional send, its status and, when it did not go, why in words), what its devices, tracked links and ' +
          'providers reported (delivered, opened, clicked with the link, dismissed, unsubscribed, complained, bounced, ' +
          'failed), the events the application sent about them (`POST /events`, with a summary of their properties) ' +
          'and their automation runs (entered, completed, left or stopped, with why). Paged by cursor: pass ' +
          '`nextCursor` as `cursor` for older items; items added meanwhile never shift a page. A test key sees only ' +
          "its sandbox subscribers, so only their timelines; another project's subscriber is 404.",
        params: idParams,
        querystring: timelineQuery,
        response: { 200: timelinePage, ...commonErrors },
      },
    },
    (request) => subscribers.timeline(reachOf(request), request.params.id, request.query.cursor, request.query.limit),
  );

  app.delete(
    '/subscribers/:id',
    {
      config: { access: { auth: 'project' }, rateLimitCounter: 'ingest' },
      schema: {
        tags,
        summary: 'Delete a subscriber and its personal data',
        params: idParams,
        response: { 204: z.null(), ...commonErrors },
      },
    },
    async (request, reply) => {
      await subscribers.remove(reachOf(request), request.params.id);
      return reply.status(204).send(null);
    },
  );
}
