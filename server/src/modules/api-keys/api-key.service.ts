// Project API keys: `hrd_live_…` / `hrd_test_…` secrets shown once, stored hashed, revocable, several at a time.
import type pg from 'pg';
import type { BaseLogger } from 'pino';
import type { Db } from '../../db/database.js';
import { notFound } from '../../shared/errors.js';
import { newId } from '../../shared/ids.js';
import { randomToken, sha256 } from '../../shared/secrets.js';
import type { ProjectScope } from '../tenancy.js';
import { ApiKeyCache } from './api-key-cache.js';
import { listenForKeyChanges } from './api-key-listener.js';
import * as repo from './api-key.repository.js';

export type KeyMode = 'live' | 'test';

// 32 base32 characters: 160 bits of randomness.
const SECRET_LENGTH = 32;
const KEY_FORMAT = /^hrd_(live|test)_[0-9a-z]{32}$/;
// last_used_at is written at most once a minute per key (and process), so a busy key does not turn reads into writes.
const TOUCH_INTERVAL_MS = 60_000;

// One cache per database handle, so every service holding the handle (API keys, projects) evicts the same entries.
const caches = new WeakMap<Db, ApiKeyCache>();

export interface ApiKey {
  id: string;
  projectId: string;
  name: string;
  mode: KeyMode;
  prefix: string;
  lastFour: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

const toApiKey = (row: repo.ApiKeyRow): ApiKey => ({
  id: row.id,
  projectId: row.projectId,
  name: row.name,
  mode: row.mode,
  prefix: row.prefix,
  lastFour: row.lastFour,
  createdAt: row.createdAt.toISOString(),
  lastUsedAt: row.lastUsedAt?.toISOString() ?? null,
  revokedAt: row.revokedAt?.toISOString() ?? null,
});

export class ApiKeyService {
  private readonly cache: ApiKeyCache;

  constructor(private readonly db: Db) {
    const cache = caches.get(db) ?? new ApiKeyCache();
    caches.set(db, cache);
    this.cache = cache;
  }

  /** Creates a key; the returned `key` is the only time the secret exists outside the caller. */
  async create(scope: ProjectScope, input: { name: string; mode: KeyMode }): Promise<ApiKey & { key: string }> {
    const prefix = `hrd_${input.mode}_`;
    const key = prefix + randomToken(SECRET_LENGTH);
    const row = await repo.insertApiKey(this.db, {
      id: newId('key'),
      projectId: scope.projectId,
      name: input.name,
      mode: input.mode,
      prefix,
      lastFour: key.slice(-4),
      secretHash: sha256(key),
    });
    return { ...toApiKey(row), key };
  }

  async list(scope: ProjectScope): Promise<ApiKey[]> {
    return (await repo.listApiKeys(this.db, scope.projectId)).map(toApiKey);
  }

  async revoke(scope: ProjectScope, keyId: string): Promise<ApiKey> {
    const row = await repo.revokeApiKey(this.db, scope.projectId, keyId);
    if (!row) throw notFound('API key');
    // Other processes hear of it from the NOTIFY committed with the revocation.
    this.cache.evict({ keyId: row.id });
    return toApiKey(row);
  }

  /** The project a presented secret opens, or undefined for an unknown or revoked key. */
  async authenticate(secret: string): Promise<repo.KeyOwner | undefined> {
    if (!KEY_FORMAT.test(secret)) return undefined;
    const secretHash = sha256(secret);
    const now = Date.now();
    const cached = this.cache.get(secretHash, now);
    if (cached) {
      if (now - cached.lastUsedAt > TOUCH_INTERVAL_MS) {
        cached.lastUsedAt = now;
        await repo.touchApiKey(this.db, cached.owner.keyId);
      }
      return cached.owner;
    }
    const version = this.cache.version();
    const found = await repo.findKeyOwner(this.db, secretHash);
    if (!found) return undefined;
    const { lastUsedAt, ...owner } = found;
    let used = lastUsedAt?.getTime() ?? 0;
    if (now - used > TOUCH_INTERVAL_MS) {
      await repo.touchApiKey(this.db, owner.keyId);
      used = now;
    }
    this.cache.set(secretHash, owner, used, version);
    return owner;
  }

  /**
   * Serves repeated lookups from memory while a listener hears every revocation and project change, from any
   * process; until this runs (and whenever the listener is disconnected) every lookup reads the database.
   */
  watchChanges(connection: pg.ClientConfig, logger: Pick<BaseLogger, 'warn'>): Promise<() => Promise<void>> {
    return listenForKeyChanges(connection, this.cache, logger);
  }
}

/** After a project is deleted or its settings change: its keys are forgotten here and, through PostgreSQL, everywhere. */
export async function forgetProjectKeys(db: Db, projectId: string): Promise<void> {
  caches.get(db)?.evict({ projectId });
  await repo.notifyKeyChange(db, { projectId });
}
