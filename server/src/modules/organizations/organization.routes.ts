// Organizations and their members (JWT + x-org-id); only OWNER and ADMIN manage members (who join by invitation).
import { z } from 'zod';
import { organizationOf, userOf } from '../../http/access.js';
import { commonErrors, paginated, paginationQuery, timestamp } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { ROLES } from '../tenancy.js';
import type { OrganizationService } from './organization.service.js';

const member = z
  .object({ userId: z.string(), email: z.string(), name: z.string(), role: z.enum(ROLES), createdAt: timestamp })
  .meta({ id: 'Member' });
const userIdParams = z.object({ userId: z.string() });

export async function organizationRoutes(app: App, organizations: OrganizationService) {
  app.post(
    '/organizations',
    {
      config: { access: { auth: 'user' } },
      schema: {
        tags: ['Organizations'],
        summary: 'Create an organization; the caller becomes its OWNER',
        body: z.strictObject({ name: z.string().trim().min(1).max(200) }),
        response: {
          201: z.object({ id: z.string(), name: z.string(), role: z.enum(ROLES), createdAt: timestamp }),
          ...commonErrors,
        },
      },
    },
    async (request, reply) => reply.status(201).send(await organizations.create(userOf(request), request.body.name)),
  );

  app.get(
    '/members',
    {
      config: { access: { auth: 'organization' } },
      schema: {
        tags: ['Organizations'],
        summary: 'Members of the x-org-id organization',
        description: 'Only accepted members: an invited address shows under GET /invitations until it accepts.',
        querystring: z.strictObject(paginationQuery),
        response: { 200: paginated(member), ...commonErrors },
      },
    },
    (request) => organizations.listMembers(organizationOf(request), request.query.page, request.query.pageSize),
  );

  app.patch(
    '/members/:userId',
    {
      config: { access: { auth: 'organization', minRole: 'ADMIN' } },
      schema: {
        tags: ['Organizations'],
        summary: 'Change a member’s role',
        description: 'The last OWNER cannot be demoted (409).',
        params: userIdParams,
        body: z.strictObject({ role: z.enum(ROLES) }),
        response: { 200: member, 409: commonErrors[422], ...commonErrors },
      },
    },
    (request) => organizations.changeRole(organizationOf(request), request.params.userId, request.body.role),
  );

  app.delete(
    '/members/:userId',
    {
      config: { access: { auth: 'organization', minRole: 'ADMIN' } },
      schema: {
        tags: ['Organizations'],
        summary: 'Remove a member',
        description: 'The last OWNER cannot be removed (409).',
        params: userIdParams,
        response: { 204: z.null(), 409: commonErrors[422], ...commonErrors },
      },
    },
    async (request, reply) => {
      await organizations.removeMember(organizationOf(request), request.params.userId);
      return reply.status(204).send(null);
    },
  );
}
