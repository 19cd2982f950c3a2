// Automation routes (spec 2.5, 3.3, 4.6): flows, their states, starters, per-step stats and the enrollments view.
import { z } from 'zod';
import { projectOf, reachOf } from '../../http/access.js';
import { commonErrors, errorEnvelope, paginated } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import {
  automation,
  automationStats,
  automationTotals,
  createAutomationBody,
  enrollment,
  enrollmentDetail,
  enrollmentsQuery,
  fromStarterBody,
  listQuery,
  starter,
  updateAutomationBody,
} from './automation.schemas.js';
import type { AutomationService } from './automation.service.js';

const tags = ['Automations'];
const idParams = z.object({ id: z.string() });
const enrollmentParams = z.object({ id: z.string(), enrollmentId: z.string() });

const FLOW_NOTE =
  'A flow is a list of steps; the first is the entry step. Each step has an id, a type and `next` (null ends the flow); ' +
  'a condition has `trueBranch` and `falseBranch` instead. Saving checks that every link names a step, that no step ' +
  'leads back to an earlier one (no cycle) and that the entry step leads to every step, and each content for its ' +
  'channel: 422 with one detail per problem, its field (`steps[2].next`) and its message naming the step. ' +
  'docs/AUTOMATIONS.md describes triggers, steps, conditions and delays.';

const VERSION_NOTE =
  "A draft's flow is replaced in place. Changing the trigger or steps of any other automation makes a new version: " +
  'new enrollments start on it, and each running enrollment keeps the version it started on to its end.';

export async function automationRoutes(app: App, automations: AutomationService) {
  app.get(
    '/automations/starters',
    {
      config: { access: { auth: 'project' } },
      schema: {
        tags,
        summary: 'The starter automations',
        description: 'welcome-series, reengagement-30d, onboarding-drip-7d and abandoned-cart (spec 2.5): POST /automations/from-starter clones one.',
        response: { 200: z.object({ data: z.array(starter) }), ...commonErrors },
      },
    },
    () => automations.starters(),
  );

  app.post(
    '/automations/from-starter',
    {
      config: { access: { auth: 'project', project: 'body.projectId' } },
      schema: {
        tags,
        summary: 'Clone a starter into a project as a draft',
        description: "The draft is the project's to edit: its emails go from hello@example.com until a sender on a verified domain replaces it (activation checks it).",
        body: fromStarterBody,
        response: { 201: automation, ...commonErrors },
      },
    },
    async (request, reply) => reply.status(201).send(await automations.fromStarter(projectOf(request), request.body.starter, request.body.name)),
  );

  app.post(
    '/automations',
    {
      config: { access: { auth: 'project', project: 'body.projectId' } },
      schema: {
        tags,
        summary: 'Create an automation (a draft)',
        description: FLOW_NOTE,
        body: createAutomationBody,
        response: { 201: automation, ...commonErrors },
      },
    },
    async (request, reply) => reply.status(201).send(await automations.create(projectOf(request), request.body)),
  );

  app.get(
    '/automations/project/:projectId',
    {
      config: { access: { auth: 'project', project: 'params.projectId' } },
      schema: {
        tags,
        summary: "A project's automations, newest first, with their enrollment totals",
        params: z.object({ projectId: z.string() }),
        querystring: listQuery,
        response: { 200: paginated(automation.extend({ totals: automationTotals })), ...commonErrors },
      },
    },
    (request) => automations.list(projectOf(request), request.query),
  );

  app.get(
    '/automations/:id',
    {
      config: { access: { auth: 'project' } },
      schema: { tags, summary: 'An automation with its current flow', params: idParams, response: { 200: automation, ...commonErrors } },
    },
    (request) => automations.get(reachOf(request), request.params.id),
  );

  app.patch(
    '/automations/:id',
    {
      config: { access: { auth: 'project' } },
      schema: {
        tags,
        summary: 'Rename an automation or change its flow',
        description: `${FLOW_NOTE} ${VERSION_NOTE} An archived automation → 409 \`automation_archived\`.`,
        params: idParams,
        body: updateAutomationBody,
        response: { 200: automation, ...commonErrors, 409: errorEnvelope },
      },
    },
    (request) => automations.update(reachOf(request), request.params.id, request.body),
  );

  app.delete(
    '/automations/:id',
    {
      config: { access: { auth: 'project' } },
      schema: { tags, summary: 'Delete an automation with its enrollments', params: idParams, response: { 204: z.null(), ...commonErrors } },
    },
    async (request, reply) => {
      await automations.remove(reachOf(request), request.params.id);
      return reply.status(204).send(null);
    },
  );

  const moves = {
    activate: 'Activate (draft or paused → active): its trigger enrolls people and their steps run. Email senders must be on verified domains (422)',
    pause: 'Pause (active → paused): nobody is enrolled and no step runs until it is activated again; due steps run then',
    archive: 'Archive (draft, active or paused → archived), for good: running enrollments exit',
  } as const;
  for (const [action, summary] of Object.entries(moves) as [keyof typeof moves, string][]) {
    app.post(
      `/automations/:id/${action}`,
      {
        config: { access: { auth: 'project' } },
        schema: {
          tags,
          summary,
          description: 'Any other move → 409 `invalid_state_transition`.',
          params: idParams,
          response: { 200: automation, ...commonErrors, 409: errorEnvelope },
        },
      },
      (request) => automations.move(reachOf(request), request.params.id, action),
    );
  }

  app.get(
    '/automations/:id/stats',
    {
      config: { access: { auth: 'project' } },
      schema: {
        tags,
        summary: 'Per-step stats and totals',
        description:
          'Per step (spec 2.5): entered (enrollments the step started for), sent (send steps: messages the provider accepted), clicked, ' +
          'completed (moved past it: a delay not yet expired is entered, not completed), converted (of those entering it, the ' +
          'enrollments that reached the goal). Totals count enrollments by state; conversion is completed / enrolled, ' +
          'goalConversion converted / enrolled.',
        params: idParams,
        response: { 200: automationStats, ...commonErrors },
      },
    },
    (request) => automations.stats(reachOf(request), request.params.id),
  );

  app.get(
    '/automations/:id/enrollments',
    {
      config: { access: { auth: 'project' } },
      schema: {
        tags,
        summary: "An automation's enrollments, newest first",
        description:
          'States: active (a step is due), waiting (in a delay or a wait-until step), completed, converted (reached the goal), exited (an exit step, or the automation archived), failed (reason says why). ' +
          'Each enrollment carries `subscriber`, the person it is about (name, email, phone, external id, device), for a list to name them.',
        params: idParams,
        querystring: enrollmentsQuery,
        response: { 200: paginated(enrollment), ...commonErrors },
      },
    },
    (request) => automations.enrollmentsOf(reachOf(request), request.params.id, request.query),
  );

  app.get(
    '/automations/:id/enrollments/:enrollmentId',
    {
      config: { access: { auth: 'project' } },
      schema: { tags, summary: 'An enrollment with its step history', params: enrollmentParams, response: { 200: enrollmentDetail, ...commonErrors } },
    },
    (request) => automations.enrollmentOf(reachOf(request), request.params.id, request.params.enrollmentId),
  );

  app.delete(
    '/automations/:id/enrollments/:enrollmentId',
    {
      config: { access: { auth: 'project' } },
      schema: {
        tags,
        summary: 'Delete an enrollment',
        description: 'A subscriber is enrolled at most once per automation (spec 3.3): deleting the enrollment lets the next trigger enroll them again.',
        params: enrollmentParams,
        response: { 204: z.null(), ...commonErrors },
      },
    },
    async (request, reply) => {
      await automations.deleteEnrollment(reachOf(request), request.params.id, request.params.enrollmentId);
      return reply.status(204).send(null);
    },
  );
}
