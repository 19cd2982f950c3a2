// Organizations and their memberships; every call names the organization it works in.
import { and, asc, count, eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/database.js';
import { memberships, organizations, users } from '../../db/schema.js';
import type { Role } from '../tenancy.js';

export interface MemberRow {
  userId: string;
  email: string;
  name: string;
  role: Role;
  createdAt: Date;
}

const memberColumns = {
  userId: users.id,
  email: users.email,
  name: users.name,
  role: memberships.role,
  createdAt: memberships.createdAt,
};

export async function insertOrganization(db: Db, org: typeof organizations.$inferInsert, ownerId: string) {
  return db.transaction(async (tx) => {
    const [row] = await tx.insert(organizations).values(org).returning();
    await tx.insert(memberships).values({ organizationId: row!.id, userId: ownerId, role: 'OWNER' });
    return row!;
  });
}

export async function listMembers(db: Db, organizationId: string, limit: number, offset: number) {
  const [rows, [total]] = await Promise.all([
    db
      .select(memberColumns)
      .from(memberships)
      .innerJoin(users, eq(users.id, memberships.userId))
      .where(eq(memberships.organizationId, organizationId))
      .orderBy(asc(memberships.createdAt), asc(users.id))
      .limit(limit)
      .offset(offset),
    db.select({ total: count() }).from(memberships).where(eq(memberships.organizationId, organizationId)),
  ]);
  return { rows: rows as MemberRow[], total: total?.total ?? 0 };
}

export async function findMember(db: Db, organizationId: string, userId: string): Promise<MemberRow | undefined> {
  const [row] = await db
    .select(memberColumns)
    .from(memberships)
    .innerJoin(users, eq(users.id, memberships.userId))
    .where(and(eq(memberships.organizationId, organizationId), eq(memberships.userId, userId)));
  return row;
}

export async function insertMembership(db: Db, organizationId: string, userId: string, role: Role): Promise<boolean> {
  const inserted = await db
    .insert(memberships)
    .values({ organizationId, userId, role })
    .onConflictDoNothing()
    .returning({ userId: memberships.userId });
  return inserted.length > 0;
}

/**
 * Changes a role or removes a member unless that would leave the organization without an OWNER. The owner rows
 * are locked first, so two concurrent demotions cannot each see the other's owner.
 */
export async function changeMembership(
  db: Db,
  organizationId: string,
  userId: string,
  change: { role: Role } | { remove: true },
): Promise<'ok' | 'not_found' | 'last_owner'> {
  return db.transaction(async (tx) => {
    const owners = await tx.execute<{ user_id: string }>(
      sql`SELECT user_id FROM memberships WHERE organization_id = ${organizationId} AND role = 'OWNER' FOR UPDATE`,
    );
    const [current] = await tx
      .select({ role: memberships.role })
      .from(memberships)
      .where(and(eq(memberships.organizationId, organizationId), eq(memberships.userId, userId)));
    if (!current) return 'not_found';
    const staysOwner = 'role' in change && change.role === 'OWNER';
    if (current.role === 'OWNER' && !staysOwner && owners.rows.length <= 1) return 'last_owner';
    const where = and(eq(memberships.organizationId, organizationId), eq(memberships.userId, userId));
    if ('role' in change) await tx.update(memberships).set({ role: change.role }).where(where);
    else await tx.delete(memberships).where(where);
    return 'ok';
  });
}
