// The overview routes: a project's home in the dashboard, for its users of any role, whole or in its two parts.
import { z } from 'zod';
import { projectOf } from '../../http/access.js';
import { commonErrors } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { overviewActivity, overviewAudience, overviewQuery, projectOverview } from './overview.schemas.js';
import type { OverviewService } from './overview.service.js';

const tags = ['Projects'];
const access = { auth: 'project', credentials: 'jwt', project: 'params.projectId' } as const;
const params = z.object({ projectId: z.string() });

export async function overviewRoutes(app: App, overview: OverviewService) {
  app.get(
    '/projects/:projectId/overview',
    {
      config: { access },
      schema: {
        tags,
        summary: "A project's overview: live audience per channel, growth, sends, rates, recent work, health and set-up",
        description:
          'For dashboard users (JWT + x-org-id, any role); always the live environment. Growth and sends have one entry per UTC day ' +
          'of the window (`days`, today included), zeros included; rates are counts of the window, each rate being counter / sent. ' +
          "A project of another organization is 404, as on every project route.",
        params,
        querystring: overviewQuery,
        response: { 200: projectOverview, ...commonErrors },
      },
    },
    (request) => overview.overview(projectOf(request), request.query.days),
  );

  app.get(
    '/projects/:projectId/overview/activity',
    {
      config: { access },
      schema: {
        tags,
        summary: "A project's overview without its audience: growth, sends, rates, recent work, health and set-up",
        description:
          'The overview (`GET /projects/{projectId}/overview`) less `audience`, the same figures: its counts are bounded by the window ' +
          'and answer quickly at any audience size, so a page can show them while the audience is counted.',
        params,
        querystring: overviewQuery,
        response: { 200: overviewActivity, ...commonErrors },
      },
    },
    (request) => overview.activity(projectOf(request), request.query.days),
  );

  app.get(
    '/projects/:projectId/overview/audience',
    {
      config: { access },
      schema: {
        tags,
        summary: "A project's live audience per channel now: the overview's `audience`",
        description:
          "The overview's `audience`, the same figures: each a count over the project's whole audience (0.5–1 s at a million " +
          'people), independent of the window. For dashboard users (JWT + x-org-id, any role); always the live environment.',
        params,
        response: { 200: overviewAudience, ...commonErrors },
      },
    },
    (request) => overview.audience(projectOf(request)),
  );
}
