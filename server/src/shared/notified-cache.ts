// A bounded, expiring in-memory cache that is served only while change notifications are known to arrive.

export interface NotifiedCacheOptions {
  maxEntries: number;
  /** Bounds staleness should a notification be lost between a commit and its delivery. */
  ttlMs: number;
}

/**
 * A bounded LRU (a Map keeps insertion order: a hit is re-inserted at the end). Its owner evicts entries when a
 * change is announced (LISTEN/NOTIFY, `db/listen.ts`) and marks it trusted only while that listener is connected:
 * untrusted, it is empty and neither serves nor stores, so every lookup reads the database.
 */
export class NotifiedCache<V> {
  private readonly entries = new Map<string, { value: V; expiresAt: number }>();
  private trusted = false;
  // Bumped by every eviction: a lookup that read the database before one must not store what it read.
  private generation = 0;

  constructor(private readonly options: NotifiedCacheOptions) {}

  get(key: string, now = Date.now()): V | undefined {
    if (!this.trusted) return undefined;
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    if (entry.expiresAt <= now) return undefined;
    this.entries.set(key, entry);
    return entry.value;
  }

  /** Taken before a database lookup and handed to set() with its result. */
  version(): number {
    return this.generation;
  }

  set(key: string, value: V, version: number, now = Date.now()): void {
    if (!this.trusted || version !== this.generation) return;
    this.entries.delete(key);
    this.entries.set(key, { value, expiresAt: now + this.options.ttlMs });
    if (this.entries.size > this.options.maxEntries) this.entries.delete(this.entries.keys().next().value!);
  }

  evictWhere(changed: (value: V) => boolean): void {
    this.generation++;
    for (const [key, entry] of this.entries) {
      if (changed(entry.value)) this.entries.delete(key);
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
