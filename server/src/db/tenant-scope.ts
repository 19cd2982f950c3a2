// The SQL predicates that confine a query to what a caller may reach: its tenant's projects, and its environment.
import { and, eq, inArray, type SQL } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import type { ProjectScope, Reach, Tenant } from '../modules/tenancy.js';
import type { Db } from './database.js';
import { projects } from './schema.js';

function projectOfTenant(db: Db, tenant: Tenant, projectIdColumn: PgColumn): SQL {
  if (tenant.kind === 'project') return eq(projectIdColumn, tenant.projectId);
  return inArray(
    projectIdColumn,
    db.select({ id: projects.id }).from(projects).where(eq(projects.organizationId, tenant.organizationId)),
  );
}

/**
 * The rows of a table with a project and a sandbox flag (subscribers, segments, campaigns) a caller may reach, by
 * docs/CONTEXT.md "Sandbox vs live": a test key its project's sandbox rows, a live key its project's rows of both
 * environments, a dashboard user its organization's.
 */
export function reachableRows(db: Db, reach: Reach, columns: { projectId: PgColumn; sandbox: PgColumn }): SQL {
  if ('kind' in reach && reach.kind === 'organization') return projectOfTenant(db, reach, columns.projectId);
  const scope = reach as ProjectScope;
  const project = eq(columns.projectId, scope.projectId);
  return scope.sandbox ? and(project, eq(columns.sandbox, true))! : project;
}
