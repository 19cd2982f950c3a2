// Membership by consent: an ADMIN invites an address with a role, and only the owner of that address, holding the
// link's secret, turns the invitation into a membership (creating an account if the address has none).
import type { Db } from '../../db/database.js';
import { isUniqueViolation } from '../../db/pg-errors.js';
import { AppError, conflict, forbidden, notFound, unauthorized, validationFailed, type FieldError } from '../../shared/errors.js';
import { newId } from '../../shared/ids.js';
import { randomToken, sha256 } from '../../shared/secrets.js';
import type { AccountMailService } from '../account-mail/index.js';
import { hashPassword, userDirectory } from '../auth/index.js';
import { roleAtLeast, type OrganizationTenant, type Role } from '../tenancy.js';
import * as repo from './invitation.repository.js';
import { insertMembership } from './organization.repository.js';
import { invitationEmail } from './invitation-email.js';
import { assertMayGrant } from './organization.service.js';

export const INVITATION_TTL_DAYS = 7;
const TOKEN_PREFIX = 'hrd_inv_';

export interface Invitation {
  id: string;
  email: string;
  role: Role;
  status: 'pending' | 'expired';
  invitedBy: string | null;
  createdAt: string;
  expiresAt: string;
}

/** What the inviter sees once: the invitation, the link that carries its secret, and whether it was emailed. */
export type IssuedInvitation = Omit<Invitation, 'status'> & {
  token: string;
  acceptUrl: string;
  emailed: boolean;
  emailedFrom: string | null;
  emailProblem: string | null;
};

export interface AcceptedInvitation {
  organization: { id: string; name: string; role: Role };
  user: { id: string; email: string; name: string };
}

export class InvitationService {
  constructor(
    private readonly db: Db,
    private readonly options: { publicUrl: string; clock: () => Date; accountMail: AccountMailService },
  ) {}

  /**
   * Invites an address (a new invitation of the same address replaces the open one). The answer is the same whether
   * or not the address has an account: nothing about other users is disclosed, and nobody joins without accepting.
   * The link is emailed to the address when a project of the organization can send email; a failed send is said in
   * the answer, never an error (the link is there to copy).
   */
  async invite(tenant: OrganizationTenant, input: { email: string; role: Role }): Promise<IssuedInvitation> {
    assertMayGrant(tenant, input.role);
    if (await repo.isMemberByEmail(this.db, tenant.organizationId, input.email)) {
      throw conflict('This address is already a member of the organization', 'already_member');
    }
    const token = `${TOKEN_PREFIX}${randomToken(32)}`;
    const now = this.options.clock();
    const row = await repo.replaceInvitation(this.db, {
      id: newId('inv'),
      organizationId: tenant.organizationId,
      email: input.email,
      role: input.role,
      tokenHash: sha256(token),
      invitedBy: tenant.userId,
      createdAt: now,
      expiresAt: new Date(now.getTime() + INVITATION_TTL_DAYS * 86_400_000),
    });
    const { id, email, role, invitedBy, createdAt, expiresAt } = this.toInvitation(row);
    // The secret travels in the fragment: browsers never send it to a server, so no access log or Referer holds it.
    const acceptUrl = `${this.options.publicUrl}/app/join#token=${token}`;
    const [inviter, organization] = await Promise.all([
      userDirectory.findById(this.db, tenant.userId),
      repo.organizationName(this.db, tenant.organizationId),
    ]);
    const mail = await this.options.accountMail.send(
      [tenant.organizationId],
      invitationEmail({ to: email, inviter: inviter?.name ?? 'Someone', organization: organization ?? 'an organization', role, acceptUrl, expiresAt: row.expiresAt }),
    );
    return {
      id,
      email,
      role,
      invitedBy,
      createdAt,
      expiresAt,
      token,
      acceptUrl,
      emailed: mail.emailed,
      emailedFrom: mail.emailed ? mail.from : null,
      emailProblem: mail.emailed ? null : mail.problem,
    };
  }

  async list(tenant: OrganizationTenant, page: number, pageSize: number) {
    const { rows, total } = await repo.listOpenInvitations(this.db, tenant.organizationId, pageSize, (page - 1) * pageSize);
    return { data: rows.map((row) => this.toInvitation(row)), page, pageSize, total };
  }

  /** Revokes an open invitation of the caller's organization; an OWNER invitation only an OWNER may revoke. */
  async revoke(tenant: OrganizationTenant, id: string): Promise<void> {
    const row = await repo.findOpenInvitation(this.db, tenant.organizationId, id);
    if (!row) throw notFound('Invitation');
    if (row.role === 'OWNER' && !roleAtLeast(tenant.role, 'OWNER')) throw forbidden('Only an OWNER can revoke an OWNER invitation');
    if (!(await repo.revokeInvitation(this.db, tenant.organizationId, id, this.options.clock()))) throw notFound('Invitation');
  }

  /**
   * Accepts with the link's secret. Signed in: the account must be the invited address (403 otherwise). Anonymous: the
   * address must have no account yet (401: sign in first) and `name` and `password` create it, in the transaction that
   * uses the invitation, so no account exists without an accepted invitation.
   */
  async accept(
    userId: string | undefined,
    input: { token: string; name?: string | undefined; password?: string | undefined },
  ): Promise<AcceptedInvitation> {
    const row = await repo.findInvitationByTokenHash(this.db, sha256(input.token));
    const now = this.options.clock();
    this.assertOpen(row, now);
    if (userId !== undefined) {
      const extra: FieldError[] = ['name', 'password']
        .filter((field) => input[field as 'name' | 'password'] !== undefined)
        .map((field) => ({ field, error: 'is only for a new account; you are signed in' }));
      if (extra.length > 0) throw validationFailed(extra);
    }

    const user = userId !== undefined ? await userDirectory.findById(this.db, userId) : await userDirectory.findByEmail(this.db, row.email);
    if (userId !== undefined && (!user || user.email.toLowerCase() !== row.email.toLowerCase())) {
      throw forbidden('This invitation is for another address: sign in as the invited address to accept it', 'invitation_email_mismatch');
    }
    if (userId === undefined && user) {
      throw unauthorized('The invited address has an account: sign in as it, then accept', 'sign_in_required');
    }
    if (userId === undefined) {
      const missing: FieldError[] = [];
      if (input.name === undefined) missing.push({ field: 'name', error: 'is required to create your account' });
      if (input.password === undefined) missing.push({ field: 'password', error: 'is required to create your account' });
      if (missing.length > 0) throw validationFailed(missing);
    }
    const passwordHash = userId === undefined ? await hashPassword(input.password!) : undefined;

    try {
      const member = await this.db.transaction(async (tx) => {
        if (!(await repo.markAccepted(tx, row.organizationId, row.id, now))) {
          // Used, revoked or replaced since it was read: say which.
          this.assertOpen(await repo.findInvitationByTokenHash(tx, row.tokenHash), now);
          throw notFound('Invitation');
        }
        const account =
          user ??
          (await userDirectory.create(tx, { id: newId('usr'), email: row.email, name: input.name!, passwordHash: passwordHash! }));
        if (!(await insertMembership(tx, row.organizationId, account.id, row.role))) {
          throw conflict('You are already a member of this organization', 'already_member');
        }
        return account;
      });
      return {
        organization: { id: row.organizationId, name: (await repo.organizationName(this.db, row.organizationId))!, role: row.role },
        user: { id: member.id, email: member.email, name: member.name },
      };
    } catch (error) {
      // An account of the same address was created meanwhile (another invitation accepted at the same moment).
      if (isUniqueViolation(error)) throw unauthorized('The invited address has an account: sign in as it, then accept', 'sign_in_required');
      throw error;
    }
  }

  private assertOpen(row: repo.InvitationRow | undefined, now: Date): asserts row is repo.InvitationRow {
    if (!row) throw notFound('Invitation');
    if (row.acceptedAt) throw new AppError(410, 'invitation_used', 'This invitation was already accepted');
    if (row.revokedAt) throw new AppError(410, 'invitation_revoked', 'This invitation was revoked or replaced by a newer one');
    if (row.expiresAt.getTime() <= now.getTime()) throw new AppError(410, 'invitation_expired', 'This invitation has expired: ask for a new one');
  }

  private toInvitation(row: repo.InvitationRow): Invitation {
    return {
      id: row.id,
      email: row.email,
      role: row.role,
      status: row.expiresAt.getTime() <= this.options.clock().getTime() ? 'expired' : 'pending',
      invitedBy: row.invitedBy,
      createdAt: row.createdAt.toISOString(),
      expiresAt: row.expiresAt.toISOString(),
    };
  }
}
