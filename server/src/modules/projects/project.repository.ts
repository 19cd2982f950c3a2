// Projects: every read and write is confined to the organization (or the one project) of the caller.
import { and, asc, count, eq, getTableColumns, sql } from 'drizzle-orm';
import type { Db } from '../../db/database.js';
import { notifyProjectChange } from '../../db/project-changes.js';
import { projects, type Channel, type ProjectSettings } from '../../db/schema.js';

/** A project with its web push public key and its email domain (from its channel configurations; null without). */
export type ProjectRow = typeof projects.$inferSelect & { vapidPublicKey: string | null; emailDomain: string | null };

const channelSetting = (channel: Channel, name: string) =>
  sql<string | null>`(SELECT c.settings->>${name} FROM channel_configs c WHERE c.project_id = ${projects.id} AND c.channel = ${channel})`;

const projectColumns = {
  ...getTableColumns(projects),
  vapidPublicKey: channelSetting('push', 'vapidPublicKey'),
  emailDomain: channelSetting('email', 'domain'),
};

export async function listProjects(db: Db, organizationId: string, limit: number, offset: number) {
  const where = eq(projects.organizationId, organizationId);
  const [rows, [total]] = await Promise.all([
    db.select(projectColumns).from(projects).where(where).orderBy(asc(projects.createdAt), asc(projects.id)).limit(limit).offset(offset),
    db.select({ total: count() }).from(projects).where(where),
  ]);
  return { rows, total: total?.total ?? 0 };
}

export async function findProject(db: Db, organizationId: string, projectId: string): Promise<ProjectRow | undefined> {
  const [row] = await db
    .select(projectColumns)
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
  const [row] = await db.insert(projects).values(project).returning(projectColumns);
  return row!;
}

/** A change to `settings` is announced in the same transaction (so on commit). */
export function updateProject(
  db: Db,
  organizationId: string,
  projectId: string,
  change: { name?: string | undefined; settings?: ProjectSettings | undefined },
): Promise<ProjectRow | undefined> {
  return db.transaction(async (tx) => {
    const [row] = await tx
      .update(projects)
      .set({
        ...(change.name !== undefined && { name: change.name }),
        // Settings merge key by key, so a partial update keeps what it does not name.
        ...(change.settings !== undefined && { settings: sql`${projects.settings} || ${JSON.stringify(change.settings)}::jsonb` }),
        updatedAt: new Date(),
      })
      .where(and(eq(projects.organizationId, organizationId), eq(projects.id, projectId)))
      .returning(projectColumns);
    if (row && change.settings !== undefined) await notifyProjectChange(tx, row.id);
    return row;
  });
}

/** The deletion is announced in the same transaction. */
export function deleteProject(db: Db, organizationId: string, projectId: string): Promise<boolean> {
  return db.transaction(async (tx) => {
    const deleted = await tx
      .delete(projects)
      .where(and(eq(projects.organizationId, organizationId), eq(projects.id, projectId)))
      .returning({ id: projects.id });
    if (deleted.length > 0) await notifyProjectChange(tx, projectId);
    return deleted.length > 0;
  });
}

/** The project's identity secret; one made before secrets existed gets `generated` now (kept if another read won). */
export async function identitySecret(db: Db, organizationId: string, projectId: string, generated: string): Promise<string | undefined> {
  const [row] = await db
    .update(projects)
    .set({ identitySecret: sql`coalesce(${projects.identitySecret}, ${generated})` })
    .where(and(eq(projects.organizationId, organizationId), eq(projects.id, projectId)))
    .returning({ identitySecret: projects.identitySecret });
  return row?.identitySecret ?? undefined;
}

export async function rotateIdentitySecret(db: Db, organizationId: string, projectId: string, secret: string): Promise<boolean> {
  const rows = await db
    .update(projects)
    .set({ identitySecret: secret, updatedAt: new Date() })
    .where(and(eq(projects.organizationId, organizationId), eq(projects.id, projectId)))
    .returning({ id: projects.id });
  return rows.length > 0;
}

/** What identify checks for a publishable key: whether verification is on, and the key to check the hash with. */
export async function identityVerification(db: Db, organizationId: string, projectId: string) {
  const [row] = await db
    .select({ settings: projects.settings, identitySecret: projects.identitySecret })
    .from(projects)
    .where(and(eq(projects.organizationId, organizationId), eq(projects.id, projectId)));
  return row && { required: row.settings.identityVerification === true, secret: row.identitySecret };
}
