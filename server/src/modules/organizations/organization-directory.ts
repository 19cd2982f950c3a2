// Organizations as the CLI creates them and adds members: the only way to organization rows from outside the module.
import type { Db } from '../../db/database.js';
import type { organizations } from '../../db/schema.js';
import type { Role } from '../tenancy.js';
import * as repo from './organization.repository.js';

export interface OrganizationDirectory {
  /** The organization, with `ownerId` its OWNER. */
  create(db: Db, org: typeof organizations.$inferInsert, ownerId: string): Promise<typeof organizations.$inferSelect>;
  /** False when the user is a member already. */
  addMember(db: Db, organizationId: string, userId: string, role: Role): Promise<boolean>;
}

export const organizationDirectory: OrganizationDirectory = {
  create: repo.insertOrganization,
  addMember: repo.insertMembership,
};
