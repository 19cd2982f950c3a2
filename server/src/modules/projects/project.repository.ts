// Projects: every read and write is confined to the organization (or the one project) of the caller.
import { and, asc, count, eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/database.js';
import { projects, type ProjectSettings } from '../../db/schema.js';

export type ProjectRow = typeof projects.$inferSelect;

export async function listProjects(db: Db, organizationId: string, limit: number, offset: number) {
  const where = eq(projects.organizationId, organizationId);
  const [rows, [total]] = await Promise.all([
    db.select().from(projects).where(where).orderBy(asc(projects.createdAt), asc(projects.id)).limit(limit).offset(offset),
    db.select({ total: count() }).from(projects).where(where),
  ]);
  return { rows, total: total?.total ?? 0 };
}

export async function findProject(db: Db, organizationId: string, projectId: string): Promise<ProjectRow | undefined> {
  const [row] = await db
    .select()
    .from(projects)
    .where(and(eq(projects.organizationId, organizationId), eq(projects.id, projectId)));
  return row;
}

/**
 * Whether any organization has this project. The one lookup not confined to a tenant: an API key naming another
 * project must tell an unknown project (404, spec 4.3) from another tenant's (403, spec 5.2.6), and says nothing else.
 */
export async function projectExists(db: Db, projectId: string): Promise<boolean> {
  const [row] = await db.select({ id: projects.id }).from(projects).where(eq(projects.id, projectId));
  return row !== undefined;
}

export async function insertProject(db: Db, project: typeof projects.$inferInsert): Promise<ProjectRow> {
  const [row] = await db.insert(projects).values(project).returning();
  return row!;
}

export async function updateProject(
  db: Db,
  organizationId: string,
  projectId: string,
  change: { name?: string | undefined; emailDomain?: string | null | undefined; settings?: ProjectSettings | undefined },
): Promise<ProjectRow | undefined> {
  const [row] = await db
    .update(projects)
    .set({
      ...(change.name !== undefined && { name: change.name }),
      ...(change.emailDomain !== undefined && { emailDomain: change.emailDomain }),
      // Settings merge key by key, so a partial update keeps what it does not name.
      ...(change.settings !== undefined && { settings: sql`${projects.settings} || ${JSON.stringify(change.settings)}::jsonb` }),
      updatedAt: new Date(),
    })
    .where(and(eq(projects.organizationId, organizationId), eq(projects.id, projectId)))
    .returning();
  return row;
}

export async function deleteProject(db: Db, organizationId: string, projectId: string): Promise<boolean> {
  const deleted = await db
    .delete(projects)
    .where(and(eq(projects.organizationId, organizationId), eq(projects.id, projectId)))
    .returning({ id: projects.id });
  return deleted.length > 0;
}
