// POST /auth/password-reset and POST /auth/password-reset/confirm: a forgotten password reset by email.
import { z } from 'zod';
import { commonErrors } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { RESET_REQUEST_INTERVAL_SECONDS, RESET_TTL_MINUTES, type PasswordResetService } from './password-reset.service.js';

const tags = ['Auth'];

export async function passwordResetRoutes(app: App, resets: PasswordResetService) {
  app.post(
    '/auth/password-reset',
    {
      config: { access: { auth: 'public' } },
      schema: {
        tags,
        summary: 'Email a link to choose a new password',
        description:
          'Always 202, whether or not the address has an account, and answered before anything is looked up, so ' +
          'neither the answer nor its timing tells. For an account, a link to `/app/reset?token=…` is emailed through the ' +
          'oldest project (live) that has an email provider and a verified sending domain, in the first of the user’s ' +
          'organizations that has one, from `no-reply@` its sending domain, untracked. The link works once and expires ' +
          `after ${RESET_TTL_MINUTES} minutes; a new request replaces it. Another request for the same account within ` +
          `${RESET_REQUEST_INTERVAL_SECONDS} seconds sends nothing, and the route shares the per-IP default rate limit. ` +
          'When no organization of the user can send email, nothing is sent and the server logs it: an ADMIN must set up ' +
          'email in a project (or the operator sets a password with `herald admin set-password`).',
        body: z.strictObject({ email: z.string().trim().min(1).max(320) }),
        response: { 202: z.null(), ...commonErrors },
      },
    },
    async (request, reply) => {
      resets.request(request.body.email);
      return reply.status(202).send(null);
    },
  );

  app.post(
    '/auth/password-reset/confirm',
    {
      config: { access: { auth: 'public' } },
      schema: {
        tags,
        summary: 'Set a new password with the secret from a reset link',
        description:
          'The secret is the `token` of the emailed link. 204: the new password logs in and the old one no longer ' +
          'does. An unknown, expired, used or replaced secret → 400 `reset_token_invalid`. The password rules are ' +
          'those of a new account: 8 to 1,024 characters.',
        body: z.strictObject({
          token: z.string().min(1).max(200),
          password: z.string().min(8).max(1024).describe('The new password (at least 8 characters)'),
        }),
        response: { 204: z.null(), ...commonErrors },
      },
    },
    async (request, reply) => {
      await resets.confirm(request.body.token, request.body.password);
      return reply.status(204).send(null);
    },
  );
}
