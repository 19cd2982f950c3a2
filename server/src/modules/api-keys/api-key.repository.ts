// API keys of a project, stored as SHA-256 digests; the secret itself is never stored.
import { and, desc, eq, isNull, sql } from 'drizzle-orm';
import type { Db } from '../../db/database.js';
import type { KeyOwner } from '../../http/access.js';
import { apiKeys, projects } from '../../db/schema.js';

/** The NOTIFY channel on which every API process hears of revoked keys (changed projects: PROJECT_CHANGES_CHANNEL). */
export const KEY_CHANGES_CHANNEL = 'herald_api_key_changes';

export type ApiKeyRow = typeof apiKeys.$inferSelect;


export async function insertApiKey(db: Db, key: typeof apiKeys.$inferInsert): Promise<ApiKeyRow> {
  const [row] = await db.insert(apiKeys).values(key).returning();
  return row!;
}

export function listApiKeys(db: Db, projectId: string): Promise<ApiKeyRow[]> {
  return db.select().from(apiKeys).where(eq(apiKeys.projectId, projectId)).orderBy(desc(apiKeys.createdAt), desc(apiKeys.id));
}

/** Revokes the key and, in the same transaction (so on commit), tells every API process to forget it. */
export function revokeApiKey(db: Db, projectId: string, keyId: string): Promise<ApiKeyRow | undefined> {
  return db.transaction(async (tx) => {
    const [row] = await tx
      .update(apiKeys)
      .set({ revokedAt: sql`coalesce(${apiKeys.revokedAt}, now())` })
      .where(and(eq(apiKeys.projectId, projectId), eq(apiKeys.id, keyId)))
      .returning();
    if (row) await notifyKeyChange(tx, { keyId: row.id });
    return row;
  });
}

/** Delivered to the listeners when the caller's transaction commits (at once outside a transaction). */
async function notifyKeyChange(db: Db, change: { keyId: string }): Promise<void> {
  await db.execute(sql`select pg_notify(${KEY_CHANGES_CHANNEL}, ${JSON.stringify(change)})`);
}

export async function touchApiKey(db: Db, keyId: string): Promise<void> {
  await db.update(apiKeys).set({ lastUsedAt: new Date() }).where(eq(apiKeys.id, keyId));
}

/** The live (unrevoked) key with this digest, the project it opens, and when it was last used. */
export async function findKeyOwner(db: Db, secretHash: string): Promise<(KeyOwner & { lastUsedAt: Date | null }) | undefined> {
  const [row] = await db
    .select({
      keyId: apiKeys.id,
      mode: apiKeys.mode,
      scope: apiKeys.scope,
      projectId: apiKeys.projectId,
      organizationId: projects.organizationId,
      settings: projects.settings,
      lastUsedAt: apiKeys.lastUsedAt,
    })
    .from(apiKeys)
    .innerJoin(projects, eq(projects.id, apiKeys.projectId))
    .where(and(eq(apiKeys.secretHash, secretHash), isNull(apiKeys.revokedAt)));
  return row;
}
