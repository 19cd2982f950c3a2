// Password resets by email; every call names the user, except the lookup by the link's secret.
import { and, desc, eq, gt, isNull } from 'drizzle-orm';
import type { Db } from '../../db/database.js';
import { passwordResets, users } from '../../db/schema.js';

export type PasswordResetRow = typeof passwordResets.$inferSelect;

/** When the user last asked for a reset, if ever. */
export async function lastRequestedAt(db: Db, userId: string): Promise<Date | undefined> {
  const [row] = await db
    .select({ createdAt: passwordResets.createdAt })
    .from(passwordResets)
    .where(eq(passwordResets.userId, userId))
    .orderBy(desc(passwordResets.createdAt))
    .limit(1);
  return row?.createdAt;
}

/** Writes a reset, closing the user's open ones first: only the newest link works. */
export async function replaceReset(db: Db, row: typeof passwordResets.$inferInsert & { createdAt: Date }): Promise<void> {
  await db.transaction(async (tx) => {
    await tx
      .update(passwordResets)
      .set({ usedAt: row.createdAt })
      .where(and(eq(passwordResets.userId, row.userId), isNull(passwordResets.usedAt)));
    await tx.insert(passwordResets).values(row);
  });
}

/** The reset whose link carries this secret, by the secret's digest (the one lookup outside any user). */
export async function findResetByTokenHash(db: Db, tokenHash: string): Promise<PasswordResetRow | undefined> {
  const [row] = await db.select().from(passwordResets).where(eq(passwordResets.tokenHash, tokenHash));
  return row;
}

/**
 * Uses an open, unexpired reset and sets the user's password in one transaction; false when it was used, replaced or
 * expired meanwhile (the password is then unchanged).
 */
export async function useReset(db: Db, userId: string, id: string, passwordHash: string, at: Date): Promise<boolean> {
  return db.transaction(async (tx) => {
    const used = await tx
      .update(passwordResets)
      .set({ usedAt: at })
      .where(and(eq(passwordResets.userId, userId), eq(passwordResets.id, id), isNull(passwordResets.usedAt), gt(passwordResets.expiresAt, at)))
      .returning({ id: passwordResets.id });
    if (used.length === 0) return false;
    await tx.update(users).set({ passwordHash, updatedAt: at }).where(eq(users.id, userId));
    return true;
  });
}
