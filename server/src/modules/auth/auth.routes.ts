// POST /auth/login (spec 4.1), GET /auth/me and POST /auth/password.
import { z } from 'zod';
import { userOf } from '../../http/access.js';
import { commonErrors } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { ROLES } from '../tenancy.js';
import type { AuthService } from './auth.service.js';

const organization = z.object({ id: z.string(), name: z.string(), role: z.enum(ROLES) });
const user = z
  .object({ id: z.string(), email: z.string(), name: z.string(), organizations: z.array(organization) })
  .meta({ id: 'User' });

export async function authRoutes(app: App, auth: AuthService) {
  app.post(
    '/auth/login',
    {
      config: { access: { auth: 'public' } },
      schema: {
        tags: ['Auth'],
        summary: 'Log in and receive a JWT',
        description: 'A wrong email and a wrong password give the same 401, so accounts cannot be probed.',
        body: z.strictObject({ email: z.string().min(1).max(320), password: z.string().min(1).max(1024) }),
        response: { 200: z.object({ access_token: z.string(), user }), ...commonErrors },
      },
    },
    (request) => auth.login(request.body.email, request.body.password),
  );

  app.get(
    '/auth/me',
    {
      config: { access: { auth: 'user' } },
      schema: { tags: ['Auth'], summary: 'The signed-in user and their organizations', response: { 200: user, ...commonErrors } },
    },
    (request) => auth.profile(userOf(request)),
  );

  app.post(
    '/auth/password',
    {
      config: { access: { auth: 'user' } },
      schema: {
        tags: ['Auth'],
        summary: 'Change the signed-in user’s password',
        body: z.strictObject({ currentPassword: z.string().min(1), newPassword: z.string().min(8).max(1024) }),
        response: { 204: z.null(), ...commonErrors },
      },
    },
    async (request, reply) => {
      await auth.changePassword(userOf(request), request.body.currentPassword, request.body.newPassword);
      return reply.status(204).send(null);
    },
  );
}
