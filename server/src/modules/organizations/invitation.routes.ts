// Invitations: ADMINs invite, list and revoke (JWT + x-org-id); the invitee accepts with the link's secret.
import { z } from 'zod';
import { optionalUserOf, organizationOf } from '../../http/access.js';
import { commonErrors, errorEnvelope, paginated, paginationQuery, timestamp } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { ROLES } from '../tenancy.js';
import { INVITATION_TTL_DAYS, type InvitationService } from './invitation.service.js';

const tags = ['Organizations'];
const invitationFields = {
  id: z.string(),
  email: z.string(),
  role: z.enum(ROLES),
  invitedBy: z.string().nullable().describe('User id of the inviter (null once that account is deleted)'),
  createdAt: timestamp,
  expiresAt: timestamp,
};
const invitation = z
  .object({ ...invitationFields, status: z.enum(['pending', 'expired']) })
  .meta({ id: 'Invitation', description: 'An open invitation: not yet accepted, revoked or replaced. No name is shown before it is accepted.' });
const issued = z
  .object({
    ...invitationFields,
    token: z.string().describe('The secret of the invitation, shown this once; Herald keeps only its SHA-256 digest'),
    acceptUrl: z.string().describe('The link to hand to the invitee (the secret is in its fragment); shown this once'),
    emailed: z
      .boolean()
      .describe(
        'Whether the link was emailed to the invitee: through the oldest project of the organization that has an email provider and a verified sending domain (live), untracked',
      ),
    emailedFrom: z.string().nullable().describe('The address it was emailed from (`no-reply@` the sending domain); null when not emailed'),
    emailProblem: z.string().nullable().describe('Why it was not emailed, in words; null when it was. The link still works: hand it over yourself'),
  })
  .meta({ id: 'IssuedInvitation' });
const idParams = z.object({ id: z.string() });

export async function invitationRoutes(app: App, invitations: InvitationService) {
  app.post(
    '/invitations',
    {
      config: { access: { auth: 'organization', minRole: 'ADMIN' } },
      schema: {
        tags,
        summary: 'Invite an address to the x-org-id organization with a role',
        description:
          'Nobody joins without consent: the invitee accepts with the link (POST /invitations/accept). The answer is ' +
          'the same 202 whether or not the address has an account, and discloses nothing about it. The link (and its ' +
          `secret \`token\`) is shown in this response only; it expires after ${INVITATION_TTL_DAYS} days and is used ` +
          'once. When a project of the organization can send email (an email provider and a verified sending domain; the ' +
          'oldest such project, live), the link is also emailed to the invitee from `no-reply@` its sending domain: ' +
          'subject "<inviter> invited you to <organization> on Herald", the link and its expiry, no tracked link, no open ' +
          'pixel, no unsubscribe footer; it is not counted as a campaign or transactional send nor drawn from the monthly ' +
          'email cap. A failed send never fails the invitation: `emailed` is false and `emailProblem` says why. ' +
          'Inviting the same address again replaces its open invitation (the old link stops working). Only an ' +
          'OWNER may invite an OWNER (403); an address that is already a member → 409 `already_member`.',
        body: z.strictObject({ email: z.email().max(320), role: z.enum(ROLES) }),
        response: { 202: issued, 409: errorEnvelope, ...commonErrors },
      },
    },
    async (request, reply) => reply.status(202).send(await invitations.invite(organizationOf(request), request.body)),
  );

  app.get(
    '/invitations',
    {
      config: { access: { auth: 'organization', minRole: 'ADMIN' } },
      schema: {
        tags,
        summary: 'Open invitations of the x-org-id organization, newest first (expired ones flagged)',
        querystring: z.strictObject(paginationQuery),
        response: { 200: paginated(invitation), ...commonErrors },
      },
    },
    (request) => invitations.list(organizationOf(request), request.query.page, request.query.pageSize),
  );

  app.delete(
    '/invitations/:id',
    {
      config: { access: { auth: 'organization', minRole: 'ADMIN' } },
      schema: {
        tags,
        summary: 'Revoke an open invitation: its link stops working',
        description: 'An invitation of another organization, or one already accepted or revoked → 404. Only an OWNER may revoke an OWNER invitation.',
        params: idParams,
        response: { 204: z.null(), ...commonErrors },
      },
    },
    async (request, reply) => {
      await invitations.revoke(organizationOf(request), request.params.id);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/invitations/accept',
    {
      config: { access: { auth: 'user', optional: true } },
      schema: {
        tags,
        summary: 'Accept an invitation with the secret from its link',
        description:
          'Signed in (bearer JWT): the account must be the invited address, else 403 `invitation_email_mismatch`; give ' +
          'only `token`. Not signed in: for an address without an account, `name` and `password` create it and it joins; ' +
          'an address that has an account → 401 `sign_in_required` (sign in, then accept). An unknown secret → 404; one ' +
          'already used → 410 `invitation_used`, revoked or replaced → 410 `invitation_revoked`, expired → 410 ' +
          '`invitation_expired`. Already a member → 409 `already_member`.',
        body: z.strictObject({
          token: z.string().min(1).max(200),
          name: z.string().trim().min(1).max(200).optional().describe('A new account only: your name'),
          password: z.string().min(8).max(1024).optional().describe('A new account only: your password (at least 8 characters)'),
        }),
        response: {
          200: z.object({
            organization: z.object({ id: z.string(), name: z.string(), role: z.enum(ROLES) }),
            user: z.object({ id: z.string(), email: z.string(), name: z.string() }),
          }),
          409: errorEnvelope,
          410: errorEnvelope,
          ...commonErrors,
        },
      },
    },
    (request) => invitations.accept(optionalUserOf(request), request.body),
  );
}
