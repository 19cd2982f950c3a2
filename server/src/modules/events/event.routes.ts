// Event routes (spec 4.6, 6.1): POST /events from the application's server, and the dashboard's recent events and counts.
import { z } from 'zod';
import { projectOf } from '../../http/access.js';
import { commonErrors, paginated } from '../../http/schemas.js';
import { validationFailed } from '../../shared/errors.js';
import type { App } from '../../http/types.js';
import { countsQuery, event, eventCounts, eventProperties, eventsBody, eventsQuery, eventsResponse, PROPERTIES_SAMPLE, propertiesQuery } from './event.schemas.js';
import type { EventService } from './event.service.js';

const tags = ['Events'];
const projectParams = z.object({ projectId: z.string() });

export async function eventRoutes(app: App, events: EventService) {
  app.post(
    '/events',
    {
      config: { access: { auth: 'project', project: 'body.projectId' } },
      schema: {
        tags,
        summary: 'Report events (one, or a batch of up to 1000)',
        description:
          'An API key, or a JWT + x-org-id naming the project in `projectId` (spec 4: a route takes either). ' +
          "Recorded in the project (a test key's: sandbox) against the subscriber each names, all or none in one transaction. " +
          'Each enrolls its subscriber in the active automations whose `event` trigger has its name and whose conditions its ' +
          'properties meet — at most once per automation (spec 3.3), however often the event comes. An event naming nobody known ' +
          'is recorded and enrolls nobody, then or later. An eventId already recorded is a `duplicate` and changes nothing.',
        body: eventsBody,
        response: { 202: eventsResponse, ...commonErrors },
      },
    },
    async (request, reply) => {
      const { projectId: _named, ...body } = request.body;
      // A key names its project; a dashboard user must name one.
      if (!request.project) throw validationFailed([{ field: 'projectId', error: 'is required with a JWT' }]);
      return reply.status(202).send(await events.record(projectOf(request), 'events' in body ? body.events : [body]));
    },
  );

  app.get(
    '/events/project/:projectId',
    {
      config: { access: { auth: 'project', project: 'params.projectId' } },
      schema: {
        tags,
        summary: "A project's events, most recently received first",
        description: 'Each event carries `subscriber`, the person it was recorded against (name, email, phone, external id, device); null when none matched or once deleted.',
        params: projectParams,
        querystring: eventsQuery,
        response: { 200: paginated(event), ...commonErrors },
      },
    },
    (request) => events.list(projectOf(request), request.query),
  );

  app.get(
    '/events/project/:projectId/counts',
    {
      config: { access: { auth: 'project', project: 'params.projectId' } },
      schema: {
        tags,
        summary: 'Events per name over the last N days',
        params: projectParams,
        querystring: countsQuery,
        response: { 200: eventCounts, ...commonErrors },
      },
    },
    (request) => events.counts(projectOf(request), request.query.days),
  );

  app.get(
    '/events/project/:projectId/properties',
    {
      config: { access: { auth: 'project', project: 'params.projectId' } },
      schema: {
        tags,
        summary: 'The properties seen on recent events of a name, with their types and most frequent values',
        description:
          `Read from the ${PROPERTIES_SAMPLE} most recently received events of the name in the project's environment (a test key's: ` +
          'sandbox), for the segment builder: the paths an event condition\'s `where` can name and values to offer. ' +
          'A name never received answers `sampled: 0` and no properties.',
        params: projectParams,
        querystring: propertiesQuery,
        response: { 200: eventProperties, ...commonErrors },
      },
    },
    (request) => events.properties(projectOf(request), request.query.name),
  );
}
