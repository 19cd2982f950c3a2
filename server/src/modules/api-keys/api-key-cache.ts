// Recently authenticated API keys in memory, served only while change notifications are known to arrive.
import { NotifiedCache, type NotifiedCacheOptions } from '../../shared/notified-cache.js';
import type { KeyOwner } from '../../http/access.js';

/** What a notification names: one key (revoked), or every key of a project (deleted, settings changed). */
export type KeyChange = { keyId: string } | { projectId: string };

export interface CachedKey {
  owner: KeyOwner;
  /** When last_used_at was last written for this key, as far as this process knows (ms, 0 = never). */
  lastUsedAt: number;
}

/** Secret digest → key owner. */
export class ApiKeyCache extends NotifiedCache<CachedKey> {
  constructor(options: NotifiedCacheOptions = { maxEntries: 10_000, ttlMs: 30_000 }) {
    super(options);
  }

  evict(change: KeyChange): void {
    this.evictWhere(({ owner }) => ('keyId' in change ? owner.keyId === change.keyId : owner.projectId === change.projectId));
  }
}
