// Organizations and their members: create, invite by email, change roles, remove, always keeping one OWNER.
import type { Db } from '../../db/database.js';
import { AppError, conflict, forbidden, notFound } from '../../shared/errors.js';
import { newId } from '../../shared/ids.js';
import { randomToken } from '../../shared/secrets.js';
import { hashPassword } from '../auth/password.js';
import * as users from '../auth/user.repository.js';
import { roleAtLeast, type OrganizationTenant, type Role } from '../tenancy.js';
import * as repo from './organization.repository.js';

export interface Member {
  userId: string;
  email: string;
  name: string;
  role: Role;
  createdAt: string;
}

const toMember = (row: repo.MemberRow): Member => ({ ...row, createdAt: row.createdAt.toISOString() });

export class OrganizationService {
  constructor(private readonly db: Db) {}

  async create(ownerId: string, name: string) {
    const org = await repo.insertOrganization(this.db, { id: newId('org'), name }, ownerId);
    return { id: org.id, name: org.name, role: 'OWNER' as const, createdAt: org.createdAt.toISOString() };
  }

  async listMembers(tenant: OrganizationTenant, page: number, pageSize: number) {
    const { rows, total } = await repo.listMembers(this.db, tenant.organizationId, pageSize, (page - 1) * pageSize);
    return { data: rows.map(toMember), page, pageSize, total };
  }

  /**
   * Adds a user by email. A new address gets an account with a one-time password, returned once so the inviter
   * can pass it on; an existing user keeps theirs.
   */
  async addMember(tenant: OrganizationTenant, input: { email: string; role: Role; name?: string | undefined }) {
    this.assertMayGrant(tenant, input.role);
    let user = await users.findUserByEmail(this.db, input.email);
    let temporaryPassword: string | undefined;
    if (!user) {
      temporaryPassword = randomToken(20);
      user = await users
        .insertUser(this.db, {
          id: newId('usr'),
          email: input.email,
          name: input.name ?? input.email.split('@')[0]!,
          passwordHash: await hashPassword(temporaryPassword),
        })
        .catch(async (error: unknown) => {
          // Two invitations of the same new address raced; the other one created the user.
          const existing = await users.findUserByEmail(this.db, input.email);
          if (!existing) throw error;
          temporaryPassword = undefined;
          return existing;
        });
    }
    if (!(await repo.insertMembership(this.db, tenant.organizationId, user.id, input.role))) {
      throw conflict('This user is already a member of the organization', 'already_member');
    }
    const member = toMember((await repo.findMember(this.db, tenant.organizationId, user.id))!);
    return temporaryPassword ? { ...member, temporaryPassword } : member;
  }

  async changeRole(tenant: OrganizationTenant, userId: string, role: Role): Promise<Member> {
    this.assertMayGrant(tenant, role);
    await this.assertMayManage(tenant, userId);
    this.check(await repo.changeMembership(this.db, tenant.organizationId, userId, { role }));
    return toMember((await repo.findMember(this.db, tenant.organizationId, userId))!);
  }

  async removeMember(tenant: OrganizationTenant, userId: string): Promise<void> {
    await this.assertMayManage(tenant, userId);
    this.check(await repo.changeMembership(this.db, tenant.organizationId, userId, { remove: true }));
  }

  // Only an OWNER may create or touch another OWNER; an ADMIN manages everyone else.
  private assertMayGrant(tenant: OrganizationTenant, role: Role) {
    if (role === 'OWNER' && tenant.role !== 'OWNER') throw forbidden('Only an OWNER can grant the OWNER role');
  }

  private async assertMayManage(tenant: OrganizationTenant, userId: string) {
    const target = await repo.findMember(this.db, tenant.organizationId, userId);
    if (!target) throw notFound('Member');
    if (target.role === 'OWNER' && !roleAtLeast(tenant.role, 'OWNER')) {
      throw forbidden('Only an OWNER can change or remove an OWNER');
    }
  }

  private check(result: 'ok' | 'not_found' | 'last_owner') {
    if (result === 'not_found') throw notFound('Member');
    if (result === 'last_owner') {
      throw new AppError(409, 'last_owner', 'An organization must keep at least one OWNER');
    }
  }
}
