// Recently authenticated API keys in memory, served only while change notifications are known to arrive.
import type { KeyOwner } from './api-key.repository.js';

/** What a notification names: one key (revoked), or every key of a project (deleted, settings changed). */
export type KeyChange = { keyId: string } | { projectId: string };

export interface CachedKey {
  owner: KeyOwner;
  /** When last_used_at was last written for this key, as far as this process knows (ms, 0 = never). */
  lastUsedAt: number;
  expiresAt: number;
}

export interface ApiKeyCacheOptions {
  maxEntries: number;
  /** Bounds staleness should a notification be lost between a commit and its delivery. */
  ttlMs: number;
}

/** A bounded LRU (a Map keeps insertion order: a hit is re-inserted at the end) of secret digest → key owner. */
export class ApiKeyCache {
  private readonly entries = new Map<string, CachedKey>();
  private trusted = false;
  // Bumped by every eviction: a lookup that read the database before one must not store what it read.
  private generation = 0;

  constructor(private readonly options: ApiKeyCacheOptions = { maxEntries: 10_000, ttlMs: 30_000 }) {}

  get(secretHash: string, now = Date.now()): CachedKey | undefined {
    if (!this.trusted) return undefined;
    const entry = this.entries.get(secretHash);
    if (!entry) return undefined;
    this.entries.delete(secretHash);
    if (entry.expiresAt <= now) return undefined;
    this.entries.set(secretHash, entry);
    return entry;
  }

  /** Taken before a database lookup and handed to set() with its result. */
  version(): number {
    return this.generation;
  }

  set(secretHash: string, owner: KeyOwner, lastUsedAt: number, version: number, now = Date.now()): void {
    if (!this.trusted || version !== this.generation) return;
    this.entries.delete(secretHash);
    this.entries.set(secretHash, { owner, lastUsedAt, expiresAt: now + this.options.ttlMs });
    if (this.entries.size > this.options.maxEntries) this.entries.delete(this.entries.keys().next().value!);
  }

  evict(change: KeyChange): void {
    this.generation++;
    for (const [hash, entry] of this.entries) {
      if ('keyId' in change ? entry.owner.keyId === change.keyId : entry.owner.projectId === change.projectId) this.entries.delete(hash);
    }
  }

  clear(): void {
    this.generation++;
    this.entries.clear();
  }

  /** Untrusted (no listener, or it lost its connection and may have missed notifications): empty and unused. */
  setTrusted(trusted: boolean): void {
    this.trusted = trusted;
    this.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}
