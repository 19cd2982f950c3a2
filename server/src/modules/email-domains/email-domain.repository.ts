// A project's sending domains: every function is confined to one project, but the re-check and the key rotation.
import { and, asc, eq, inArray } from 'drizzle-orm';
import type { Db } from '../../db/database.js';
import { isUniqueViolation } from '../../db/pg-errors.js';
import { emailDomains, type DomainRecordProblem, type EmailDomainStatus } from '../../db/schema.js';

export type EmailDomainRow = typeof emailDomains.$inferSelect;

/** The new row, or undefined when the project already has the domain. */
export async function insertDomain(db: Db, row: typeof emailDomains.$inferInsert): Promise<EmailDomainRow | undefined> {
  try {
    const [inserted] = await db.insert(emailDomains).values(row).returning();
    return inserted;
  } catch (error) {
    if (isUniqueViolation(error)) return undefined;
    throw error;
  }
}

export function listDomains(db: Db, projectId: string): Promise<EmailDomainRow[]> {
  return db.select().from(emailDomains).where(eq(emailDomains.projectId, projectId)).orderBy(asc(emailDomains.domain));
}

export async function findDomain(db: Db, projectId: string, id: string): Promise<EmailDomainRow | undefined> {
  const [row] = await db
    .select()
    .from(emailDomains)
    .where(and(eq(emailDomains.projectId, projectId), eq(emailDomains.id, id)));
  return row;
}

/** The project's verified domains. */
export function listVerified(db: Db, projectId: string): Promise<EmailDomainRow[]> {
  return db
    .select()
    .from(emailDomains)
    .where(and(eq(emailDomains.projectId, projectId), eq(emailDomains.status, 'verified')));
}

export async function deleteDomain(db: Db, projectId: string, id: string): Promise<EmailDomainRow | undefined> {
  const [row] = await db
    .delete(emailDomains)
    .where(and(eq(emailDomains.projectId, projectId), eq(emailDomains.id, id)))
    .returning();
  return row;
}

/** Stores what a check found; `verifiedAt` only when the domain becomes verified. Undefined if it was deleted meanwhile. */
export async function recordCheck(
  db: Db,
  projectId: string,
  id: string,
  check: { status: EmailDomainStatus; problems: DomainRecordProblem[]; checkedAt: Date; verifiedAt?: Date },
): Promise<EmailDomainRow | undefined> {
  const [row] = await db
    .update(emailDomains)
    .set({
      status: check.status,
      problems: check.problems,
      lastCheckedAt: check.checkedAt,
      ...(check.verifiedAt && { verifiedAt: check.verifiedAt }),
      updatedAt: check.checkedAt,
    })
    .where(and(eq(emailDomains.projectId, projectId), eq(emailDomains.id, id)))
    .returning();
  return row;
}

/** Every project's domains the hourly re-check looks at: those verified once (`verified`, `failing`). */
export function domainsToRecheck(db: Db): Promise<EmailDomainRow[]> {
  return db
    .select()
    .from(emailDomains)
    .where(inArray(emailDomains.status, ['verified', 'failing']))
    .orderBy(asc(emailDomains.lastCheckedAt));
}

/** Every project's sealed private keys: the key rotation reseals them. */
export function allPrivateKeys(db: Db): Promise<{ projectId: string; id: string; privateKeys: string }[]> {
  return db.select({ projectId: emailDomains.projectId, id: emailDomains.id, privateKeys: emailDomains.privateKeys }).from(emailDomains);
}

/** Replaces the sealed keys only if they are still `expected` (a concurrent rotation wins). */
export async function replacePrivateKeys(db: Db, projectId: string, id: string, expected: string, privateKeys: string): Promise<boolean> {
  const updated = await db
    .update(emailDomains)
    .set({ privateKeys })
    .where(and(eq(emailDomains.projectId, projectId), eq(emailDomains.id, id), eq(emailDomains.privateKeys, expected)))
    .returning({ id: emailDomains.id });
  return updated.length > 0;
}
