// API keys of a project, stored as SHA-256 digests; the secret itself is never stored.
import { and, desc, eq, isNull, sql } from 'drizzle-orm';
import type { Db } from '../../db/database.js';
import { apiKeys, projects, type ProjectSettings } from '../../db/schema.js';

export type ApiKeyRow = typeof apiKeys.$inferSelect;

export interface KeyOwner {
  keyId: string;
  mode: 'live' | 'test';
  projectId: string;
  organizationId: string;
  settings: ProjectSettings;
}

export async function insertApiKey(db: Db, key: typeof apiKeys.$inferInsert): Promise<ApiKeyRow> {
  const [row] = await db.insert(apiKeys).values(key).returning();
  return row!;
}

export function listApiKeys(db: Db, projectId: string): Promise<ApiKeyRow[]> {
  return db.select().from(apiKeys).where(eq(apiKeys.projectId, projectId)).orderBy(desc(apiKeys.createdAt), desc(apiKeys.id));
}

export async function revokeApiKey(db: Db, projectId: string, keyId: string): Promise<ApiKeyRow | undefined> {
  const [row] = await db
    .update(apiKeys)
    .set({ revokedAt: sql`coalesce(${apiKeys.revokedAt}, now())` })
    .where(and(eq(apiKeys.projectId, projectId), eq(apiKeys.id, keyId)))
    .returning();
  return row;
}

/** The live (unrevoked) key with this digest and the project it opens. */
export async function findKeyOwner(db: Db, secretHash: string): Promise<KeyOwner | undefined> {
  const [row] = await db
    .select({
      keyId: apiKeys.id,
      mode: apiKeys.mode,
      projectId: apiKeys.projectId,
      organizationId: projects.organizationId,
      settings: projects.settings,
      lastUsedAt: apiKeys.lastUsedAt,
    })
    .from(apiKeys)
    .innerJoin(projects, eq(projects.id, apiKeys.projectId))
    .where(and(eq(apiKeys.secretHash, secretHash), isNull(apiKeys.revokedAt)));
  if (!row) return undefined;
  // last_used_at is written at most once a minute per key, so a busy key does not turn every read into a write.
  if (!row.lastUsedAt || Date.now() - row.lastUsedAt.getTime() > 60_000) {
    await db.update(apiKeys).set({ lastUsedAt: new Date() }).where(eq(apiKeys.id, row.keyId));
  }
  const { lastUsedAt: _, ...owner } = row;
  return owner;
}
