// Project API keys: `hrd_[pub_]live_…` / `hrd_[pub_]test_…` secrets shown once, stored hashed, revocable, several at a time.
import type pg from 'pg';
import type { BaseLogger } from 'pino';
import type { Db } from '../../db/database.js';
import type { KeyOwner } from '../../http/access.js';
import { notFound } from '../../shared/errors.js';
import { newId } from '../../shared/ids.js';
import { randomToken, sha256 } from '../../shared/secrets.js';
import type { ProjectScope } from '../tenancy.js';
import { listen } from '../../db/listen.js';
import { PROJECT_CHANGES_CHANNEL } from '../../db/project-changes.js';
import { ApiKeyCache, type CachedKey, type KeyChange } from './api-key-cache.js';
import * as repo from './api-key.repository.js';

export type KeyMode = 'live' | 'test';
export type KeyScope = 'server' | 'publishable';

// 32 base32 characters: 160 bits of randomness.
const SECRET_LENGTH = 32;
const KEY_FORMAT = /^hrd_(pub_)?(live|test)_[0-9a-z]{32}$/;

/**
 * The scope shows in the prefix and the mode ends it (spec 5.2.2: a live key's prefix ends in `_live_`): server keys
 * keep the original `hrd_live_` / `hrd_test_`, publishable keys are `hrd_pub_live_` / `hrd_pub_test_`.
 */
const keyPrefix = (scope: KeyScope, mode: KeyMode) => `hrd_${scope === 'publishable' ? 'pub_' : ''}${mode}_`;
// last_used_at is written at most once a minute per key (and process), so a busy key does not turn reads into writes.
const TOUCH_INTERVAL_MS = 60_000;

export interface ApiKey {
  id: string;
  projectId: string;
  name: string;
  mode: KeyMode;
  scope: KeyScope;
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
  scope: row.scope,
  prefix: row.prefix,
  lastFour: row.lastFour,
  createdAt: row.createdAt.toISOString(),
  lastUsedAt: row.lastUsedAt?.toISOString() ?? null,
  revokedAt: row.revokedAt?.toISOString() ?? null,
});

export class ApiKeyService {
  private readonly cache = new ApiKeyCache();

  constructor(private readonly db: Db) {}

  /** Creates a key; the returned `key` is the only time the secret exists outside the caller. */
  async create(scope: ProjectScope, input: { name: string; mode: KeyMode; scope?: KeyScope | undefined }): Promise<ApiKey & { key: string }> {
    const keyScope = input.scope ?? 'server';
    const prefix = keyPrefix(keyScope, input.mode);
    const key = prefix + randomToken(SECRET_LENGTH);
    const row = await repo.insertApiKey(this.db, {
      id: newId('key'),
      projectId: scope.projectId,
      name: input.name,
      mode: input.mode,
      scope: keyScope,
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
  async authenticate(secret: string): Promise<KeyOwner | undefined> {
    if (!KEY_FORMAT.test(secret)) return undefined;
    const secretHash = sha256(secret);
    const now = Date.now();
    const version = this.cache.version();
    let entry: CachedKey | undefined = this.cache.get(secretHash, now);
    const cached = entry !== undefined;
    if (!entry) {
      const found = await repo.findKeyOwner(this.db, secretHash);
      if (!found) return undefined;
      const { lastUsedAt, ...owner } = found;
      entry = { owner, lastUsedAt: lastUsedAt?.getTime() ?? 0 };
    }
    if (now - entry.lastUsedAt > TOUCH_INTERVAL_MS) {
      entry.lastUsedAt = now;
      await repo.touchApiKey(this.db, entry.owner.keyId);
    }
    if (!cached) this.cache.set(secretHash, entry, version);
    return entry.owner;
  }

  /**
   * Serves repeated lookups from memory while a listener hears every revocation and project change, from any
   * process; until this runs (and whenever the listener is disconnected) every lookup reads the database.
   */
  async watchChanges(connection: pg.ClientConfig, logger: Pick<BaseLogger, 'warn'>): Promise<() => Promise<void>> {
    // Both channels carry a KeyChange: a revoked key's id, or a changed or deleted project's id.
    const stop = await listen(connection, [repo.KEY_CHANGES_CHANNEL, PROJECT_CHANGES_CHANNEL], {
      applicationName: 'herald-api-key-listener',
      onNotify: (payload) => {
        try {
          this.cache.evict(JSON.parse(payload) as KeyChange);
        } catch {
          this.cache.clear();
        }
      },
      onListening: () => this.cache.setTrusted(true),
      onLost: (error) => {
        this.cache.setTrusted(false);
        logger.warn({ err: error }, 'API key listener lost its connection; keys are looked up in the database until it reconnects');
      },
    });
    return async () => {
      this.cache.setTrusted(false);
      await stop();
    };
  }

  /** After a project is deleted or its settings change (other processes hear of it through PROJECT_CHANGES_CHANNEL). */
  forgetProject(projectId: string): void {
    this.cache.evict({ projectId });
  }
}
