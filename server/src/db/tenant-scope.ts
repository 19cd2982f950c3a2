// The SQL predicate that confines a query to the projects a tenant may see.
import { eq, inArray, type SQL } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import type { Tenant } from '../modules/tenancy.js';
import type { Db } from './database.js';
import { projects } from './schema.js';

export function projectOfTenant(db: Db, tenant: Tenant, projectIdColumn: PgColumn): SQL {
  if (tenant.kind === 'project') return eq(projectIdColumn, tenant.projectId);
  return inArray(
    projectIdColumn,
    db.select({ id: projects.id }).from(projects).where(eq(projects.organizationId, tenant.organizationId)),
  );
}
