// Email templates' SQL; every function is confined to what the caller may reach (its project, its environment).
import { and, count, desc, eq, getTableColumns, ilike, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/database.js';
import { emailTemplates } from '../../db/schema.js';
import { reachableRows } from '../../db/tenant-scope.js';
import type { ProjectScope, Reach } from '../tenancy.js';

export type EmailTemplateRow = typeof emailTemplates.$inferSelect;
export type EmailTemplateContent = Pick<EmailTemplateRow, 'name' | 'subject' | 'html' | 'text' | 'preheader' | 'design' | 'variables'>;

/**
 * The templates a caller may see and change, by the sandbox rule of subscribers and segments (docs/CONTEXT.md,
 * "Sandbox vs live"): a test key its project's sandbox templates, a live key its project's templates of both
 * environments, a dashboard user its organization's.
 */
const templatesOf = (db: Db, reach: Reach): SQL => reachableRows(db, reach, emailTemplates);

/** `%` and `_` in a search are the characters themselves, not LIKE wildcards. */
const containing = (search: string) => `%${search.replace(/[\\%_]/g, (character) => `\\${character}`)}%`;

export async function insertTemplate(db: Db, row: typeof emailTemplates.$inferInsert): Promise<EmailTemplateRow> {
  const [inserted] = await db.insert(emailTemplates).values(row).returning();
  return inserted!;
}

/** A page of a project's templates, newest first, without their bodies; `search` narrows by name (case-insensitive). */
export async function listTemplates(db: Db, scope: ProjectScope, page: { limit: number; offset: number; search?: string | undefined }) {
  const where = and(templatesOf(db, scope), page.search !== undefined ? ilike(emailTemplates.name, containing(page.search)) : undefined);
  const { html: _html, text: _text, design: _design, ...summary } = getTableColumns(emailTemplates);
  const [rows, [total]] = await Promise.all([
    db
      .select(summary)
      .from(emailTemplates)
      .where(where)
      .orderBy(desc(emailTemplates.createdAt), desc(emailTemplates.id))
      .limit(page.limit)
      .offset(page.offset),
    db.select({ total: count() }).from(emailTemplates).where(where),
  ]);
  return { rows, total: total?.total ?? 0 };
}

/** `lock`: held until the caller's transaction ends, so an edit merges with the row as it is, not as it was. */
export async function findTemplate(db: Db, reach: Reach, id: string, lock = false): Promise<EmailTemplateRow | undefined> {
  const query = db
    .select()
    .from(emailTemplates)
    .where(and(templatesOf(db, reach), eq(emailTemplates.id, id)));
  const [row] = lock ? await query.for('update') : await query;
  return row;
}

/** A template a send from this scope may render: of its project and of its environment (live or sandbox). */
export async function findSendableTemplate(db: Db, scope: ProjectScope, id: string): Promise<EmailTemplateRow | undefined> {
  const [row] = await db
    .select()
    .from(emailTemplates)
    .where(and(eq(emailTemplates.projectId, scope.projectId), eq(emailTemplates.sandbox, scope.sandbox), eq(emailTemplates.id, id)));
  return row;
}

export async function updateTemplate(db: Db, reach: Reach, id: string, content: EmailTemplateContent): Promise<EmailTemplateRow | undefined> {
  const [row] = await db
    .update(emailTemplates)
    .set({ ...content, updatedAt: new Date() })
    .where(and(templatesOf(db, reach), eq(emailTemplates.id, id)))
    .returning();
  return row;
}

/** The deleted template's project, or undefined when the caller reaches no such template. */
export async function deleteTemplate(db: Db, reach: Reach, id: string): Promise<string | undefined> {
  const [deleted] = await db
    .delete(emailTemplates)
    .where(and(templatesOf(db, reach), eq(emailTemplates.id, id)))
    .returning({ projectId: emailTemplates.projectId });
  return deleted?.projectId;
}
