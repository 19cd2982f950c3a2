// Organizations and their members: create, change roles, remove, always keeping one OWNER (invitations add members).
import type { Db } from '../../db/database.js';
import { AppError, forbidden, notFound } from '../../shared/errors.js';
import { newId } from '../../shared/ids.js';
import { roleAtLeast, type OrganizationTenant, type Role } from '../tenancy.js';
import * as repo from './organization.repository.js';

export interface Member {
  userId: string;
  email: string;
  name: string;
  role: Role;
  createdAt: string;
}

/** Only an OWNER may grant the OWNER role (by invitation or promotion) or touch another OWNER; an ADMIN manages the rest. */
export function assertMayGrant(tenant: OrganizationTenant, role: Role) {
  if (role === 'OWNER' && tenant.role !== 'OWNER') throw forbidden('Only an OWNER can grant the OWNER role');
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

  async changeRole(tenant: OrganizationTenant, userId: string, role: Role): Promise<Member> {
    assertMayGrant(tenant, role);
    await this.assertMayManage(tenant, userId);
    this.check(await repo.changeMembership(this.db, tenant.organizationId, userId, { role }));
    return toMember((await repo.findMember(this.db, tenant.organizationId, userId))!);
  }

  async removeMember(tenant: OrganizationTenant, userId: string): Promise<void> {
    await this.assertMayManage(tenant, userId);
    this.check(await repo.changeMembership(this.db, tenant.organizationId, userId, { remove: true }));
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
