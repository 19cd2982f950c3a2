// Idempotency keys: the first response of a request per project, scope and key, kept for a limited time.
import { and, eq, isNull, sql } from 'drizzle-orm';
import type { Db } from '../../db/database.js';
import { idempotencyKeys } from '../../db/schema.js';

export interface KeyRef {
  projectId: string;
  /** The namespace of the key: route and environment, e.g. `live POST /transactional/send`. */
  scope: string;
  key: string;
}

export type Claim =
  | { state: 'claimed' }
  | { state: 'replay'; requestHash: string; statusCode: number; response: unknown }
  | { state: 'in_flight'; requestHash: string };

const where = (ref: KeyRef) =>
  and(eq(idempotencyKeys.projectId, ref.projectId), eq(idempotencyKeys.route, ref.scope), eq(idempotencyKeys.key, ref.key));

/**
 * Claims the key for a first request, or returns what the key holds. A key older than `ttlSeconds` is taken over as
 * if new, and so is a claim that never completed within `abandonedSeconds` (its process died mid-request).
 */
export async function claimKey(db: Db, ref: KeyRef, requestHash: string, ttlSeconds: number, abandonedSeconds: number): Promise<Claim> {
  // The conflicting row may be released (deleted) between the insert and the read: then claim again.
  for (;;) {
    const { rows } = await db.execute(sql`
      INSERT INTO idempotency_keys (project_id, route, key, request_hash)
      VALUES (${ref.projectId}, ${ref.scope}, ${ref.key}, ${requestHash})
      ON CONFLICT (project_id, route, key) DO UPDATE
        SET request_hash = EXCLUDED.request_hash, status_code = NULL, response = NULL, created_at = now()
        WHERE idempotency_keys.created_at < now() - make_interval(secs => ${ttlSeconds})
           OR (idempotency_keys.status_code IS NULL AND idempotency_keys.created_at < now() - make_interval(secs => ${abandonedSeconds}))
      RETURNING 1`);
    if (rows.length > 0) return { state: 'claimed' };
    const [held] = await db
      .select({ requestHash: idempotencyKeys.requestHash, statusCode: idempotencyKeys.statusCode, response: idempotencyKeys.response })
      .from(idempotencyKeys)
      .where(where(ref));
    if (!held) continue;
    if (held.statusCode === null) return { state: 'in_flight', requestHash: held.requestHash };
    return { state: 'replay', requestHash: held.requestHash, statusCode: held.statusCode, response: held.response };
  }
}

/** Stores the first response of a claimed key. */
export async function completeKey(db: Db, ref: KeyRef, requestHash: string, statusCode: number, response: unknown): Promise<void> {
  await db
    .update(idempotencyKeys)
    .set({ statusCode, response })
    .where(and(where(ref), eq(idempotencyKeys.requestHash, requestHash), isNull(idempotencyKeys.statusCode)));
}

/** Gives a claimed key back after the request failed, so the client's retry is processed rather than refused. */
export async function releaseKey(db: Db, ref: KeyRef, requestHash: string): Promise<void> {
  await db.delete(idempotencyKeys).where(and(where(ref), eq(idempotencyKeys.requestHash, requestHash), isNull(idempotencyKeys.statusCode)));
}

/**
 * Deletes keys older than `ttlSeconds` across every project: expiry is a matter of age, not of a tenant, so this
 * maintenance statement names none. Returns how many went.
 */
export async function deleteExpiredKeys(db: Db, ttlSeconds: number): Promise<number> {
  const result = await db.execute(sql`DELETE FROM idempotency_keys WHERE created_at < now() - make_interval(secs => ${ttlSeconds})`);
  return result.rowCount ?? 0;
}
