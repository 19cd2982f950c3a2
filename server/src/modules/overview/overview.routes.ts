// The overview route: a project's home in the dashboard, for its users of any role.
import { z } from 'zod';
import { projectOf } from '../../http/access.js';
import { commonErrors } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { overviewQuery, projectOverview } from './overview.schemas.js';
import type { OverviewService } from './overview.service.js';

const tags = ['Projects'];

export async function overviewRoutes(app: App, overview: OverviewService) {
  app.get(
    '/projects/:projectId/overview',
    {
      config: { access: { auth: 'project', credentials: 'jwt', project: 'params.projectId' } },
      schema: {
        tags,
        summary: "A project's overview: live audience per channel, growth, sends, rates, recent work, health and set-up",
        description:
          'For dashboard users (JWT + x-org-id, any role); always the live environment. Growth and sends have one entry per UTC day ' +
          'of the window (`days`, today included), zeros included; rates are counts of the window, each rate being counter / sent. ' +
          "A project of another organization is 404, as on every project route.",
        params: z.object({ projectId: z.string() }),
        querystring: overviewQuery,
        response: { 200: projectOverview, ...commonErrors },
      },
    },
    (request) => overview.overview(projectOf(request), request.query.days),
  );
}
