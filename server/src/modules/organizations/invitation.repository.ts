// Invitations to join an organization; every call names the organization, except the lookup by the link's secret.
import { and, count, desc, eq, gt, isNull, sql } from 'drizzle-orm';
import type { Db } from '../../db/database.js';
import { invitations, memberships, organizations, users } from '../../db/schema.js';

export type InvitationRow = typeof invitations.$inferSelect;

const open = and(isNull(invitations.acceptedAt), isNull(invitations.revokedAt));
const sameEmail = (email: string) => sql`lower(${invitations.email}) = lower(${email})`;

/**
 * Writes an invitation, revoking the open one of the same address first (inviting again replaces it). Concurrent
 * invitations of one address queue on an advisory lock, so the second replaces the first.
 */
export async function replaceInvitation(db: Db, row: typeof invitations.$inferInsert): Promise<InvitationRow> {
  return db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`invitation:${row.organizationId}:${row.email.toLowerCase()}`}))`);
    await tx
      .update(invitations)
      .set({ revokedAt: row.createdAt ?? new Date() })
      .where(and(eq(invitations.organizationId, row.organizationId), sameEmail(row.email), open));
    const [inserted] = await tx.insert(invitations).values(row).returning();
    return inserted!;
  });
}

/** Open invitations (neither accepted nor revoked; expired ones included), newest first. */
export async function listOpenInvitations(db: Db, organizationId: string, limit: number, offset: number) {
  const where = and(eq(invitations.organizationId, organizationId), open);
  const [rows, [total]] = await Promise.all([
    db.select().from(invitations).where(where).orderBy(desc(invitations.createdAt), desc(invitations.id)).limit(limit).offset(offset),
    db.select({ total: count() }).from(invitations).where(where),
  ]);
  return { rows, total: total?.total ?? 0 };
}

export async function findOpenInvitation(db: Db, organizationId: string, id: string): Promise<InvitationRow | undefined> {
  const [row] = await db
    .select()
    .from(invitations)
    .where(and(eq(invitations.organizationId, organizationId), eq(invitations.id, id), open));
  return row;
}

export async function revokeInvitation(db: Db, organizationId: string, id: string, at: Date): Promise<boolean> {
  const revoked = await db
    .update(invitations)
    .set({ revokedAt: at })
    .where(and(eq(invitations.organizationId, organizationId), eq(invitations.id, id), open))
    .returning({ id: invitations.id });
  return revoked.length > 0;
}

/** The invitation whose link carries this secret, by the secret's digest (the one lookup outside any organization). */
export async function findInvitationByTokenHash(db: Db, tokenHash: string): Promise<InvitationRow | undefined> {
  const [row] = await db.select().from(invitations).where(eq(invitations.tokenHash, tokenHash));
  return row;
}

/**
 * Marks an invitation accepted if it is still open and unexpired; false when another request used, revoked or replaced
 * it meanwhile. Run in the transaction that writes the membership, so a token is used once.
 */
export async function markAccepted(tx: Db, organizationId: string, id: string, at: Date): Promise<boolean> {
  const accepted = await tx
    .update(invitations)
    .set({ acceptedAt: at })
    .where(and(eq(invitations.organizationId, organizationId), eq(invitations.id, id), open, gt(invitations.expiresAt, at)))
    .returning({ id: invitations.id });
  return accepted.length > 0;
}

/** Whether a user with this email (any case) is a member of the organization. */
export async function isMemberByEmail(db: Db, organizationId: string, email: string): Promise<boolean> {
  const [row] = await db
    .select({ userId: memberships.userId })
    .from(memberships)
    .innerJoin(users, eq(users.id, memberships.userId))
    .where(and(eq(memberships.organizationId, organizationId), sql`lower(${users.email}) = lower(${email})`));
  return row !== undefined;
}

export async function organizationName(db: Db, organizationId: string): Promise<string | undefined> {
  const [row] = await db.select({ name: organizations.name }).from(organizations).where(eq(organizations.id, organizationId));
  return row?.name;
}
