// WhatsApp templates' SQL: every function takes the project whose registry it reads or writes.
import { and, asc, count, eq, inArray, not, sql } from 'drizzle-orm';
import type { Db } from '../../db/database.js';
import { whatsappTemplates } from '../../db/schema.js';

export type WhatsAppTemplateRow = typeof whatsappTemplates.$inferSelect;
export type WhatsAppTemplateFields = Pick<WhatsAppTemplateRow, 'category' | 'status' | 'components' | 'providerTemplateId'>;

export async function listTemplates(db: Db, projectId: string, page: { limit: number; offset: number; name?: string | undefined }) {
  const where = and(eq(whatsappTemplates.projectId, projectId), page.name === undefined ? undefined : eq(whatsappTemplates.name, page.name));
  const [rows, [total]] = await Promise.all([
    db.select().from(whatsappTemplates).where(where).orderBy(asc(whatsappTemplates.name), asc(whatsappTemplates.language)).limit(page.limit).offset(page.offset),
    db.select({ total: count() }).from(whatsappTemplates).where(where),
  ]);
  return { rows, total: total?.total ?? 0 };
}

export async function findTemplate(db: Db, projectId: string, id: string): Promise<WhatsAppTemplateRow | undefined> {
  const [row] = await db
    .select()
    .from(whatsappTemplates)
    .where(and(eq(whatsappTemplates.projectId, projectId), eq(whatsappTemplates.id, id)));
  return row;
}

/** The project's templates of a name, approved ones first, then by language: what a send by name chooses from. */
export function findTemplatesNamed(db: Db, projectId: string, name: string): Promise<WhatsAppTemplateRow[]> {
  return db
    .select()
    .from(whatsappTemplates)
    .where(and(eq(whatsappTemplates.projectId, projectId), eq(whatsappTemplates.name, name)))
    .orderBy(sql`${whatsappTemplates.status} = 'APPROVED' DESC`, asc(whatsappTemplates.language));
}

/** Inserts a template; undefined when the project already has one of that name and language. */
export async function insertTemplate(db: Db, row: typeof whatsappTemplates.$inferInsert): Promise<WhatsAppTemplateRow | undefined> {
  const [inserted] = await db.insert(whatsappTemplates).values(row).onConflictDoNothing().returning();
  return inserted;
}

export async function updateTemplate(db: Db, projectId: string, id: string, fields: Partial<WhatsAppTemplateFields>): Promise<WhatsAppTemplateRow | undefined> {
  const [row] = await db
    .update(whatsappTemplates)
    .set({ ...fields, updatedAt: new Date() })
    .where(and(eq(whatsappTemplates.projectId, projectId), eq(whatsappTemplates.id, id)))
    .returning();
  return row;
}

export async function deleteTemplate(db: Db, projectId: string, id: string): Promise<boolean> {
  const deleted = await db
    .delete(whatsappTemplates)
    .where(and(eq(whatsappTemplates.projectId, projectId), eq(whatsappTemplates.id, id)))
    .returning({ id: whatsappTemplates.id });
  return deleted.length > 0;
}

/**
 * Makes the project's registry what the provider listed: each template upserted by name and language (a manual row
 * of the same name and language becomes the provider's), and the provider's rows it no longer lists removed.
 * Returns how many were written and removed.
 */
export async function replaceProviderTemplates(
  db: Db,
  projectId: string,
  rows: (typeof whatsappTemplates.$inferInsert)[],
): Promise<{ synced: number; removed: number }> {
  return db.transaction(async (tx) => {
    const written = rows.length === 0
      ? []
      : await tx
          .insert(whatsappTemplates)
          .values(rows)
          .onConflictDoUpdate({
            target: [whatsappTemplates.projectId, whatsappTemplates.name, whatsappTemplates.language],
            set: {
              category: sql`excluded.category`,
              status: sql`excluded.status`,
              components: sql`excluded.components`,
              source: sql`excluded.source`,
              providerTemplateId: sql`excluded.provider_template_id`,
              updatedAt: new Date(),
            },
          })
          .returning({ id: whatsappTemplates.id });
    const kept = written.map((r) => r.id);
    const removed = await tx
      .delete(whatsappTemplates)
      .where(
        and(
          eq(whatsappTemplates.projectId, projectId),
          eq(whatsappTemplates.source, 'provider'),
          kept.length > 0 ? not(inArray(whatsappTemplates.id, kept)) : undefined,
        ),
      )
      .returning({ id: whatsappTemplates.id });
    return { synced: written.length, removed: removed.length };
  });
}
