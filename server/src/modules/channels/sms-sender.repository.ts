// A project's provisioned SMS senders, per destination country.
import { and, asc, eq } from 'drizzle-orm';
import type { Db } from '../../db/database.js';
import { smsSenders } from '../../db/schema.js';

export type SmsSenderRow = typeof smsSenders.$inferSelect;

export async function insertSmsSender(db: Db, row: typeof smsSenders.$inferInsert): Promise<SmsSenderRow> {
  const [saved] = await db.insert(smsSenders).values(row).returning();
  return saved!;
}

export function listSmsSenders(db: Db, projectId: string, country?: string): Promise<SmsSenderRow[]> {
  const where = country === undefined ? eq(smsSenders.projectId, projectId) : and(eq(smsSenders.projectId, projectId), eq(smsSenders.country, country));
  return db.select().from(smsSenders).where(where).orderBy(asc(smsSenders.country), asc(smsSenders.createdAt), asc(smsSenders.id));
}

export async function deleteSmsSender(db: Db, projectId: string, id: string): Promise<boolean> {
  const deleted = await db
    .delete(smsSenders)
    .where(and(eq(smsSenders.projectId, projectId), eq(smsSenders.id, id)))
    .returning({ id: smsSenders.id });
  return deleted.length > 0;
}
