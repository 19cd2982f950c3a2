// Project API keys: `hrd_live_…` / `hrd_test_…` secrets shown once, stored hashed, revocable, several at a time.
import type { Db } from '../../db/database.js';
import { notFound } from '../../shared/errors.js';
import { newId } from '../../shared/ids.js';
import { randomToken, sha256 } from '../../shared/secrets.js';
import type { ProjectScope } from '../tenancy.js';
import * as repo from './api-key.repository.js';

export type KeyMode = 'live' | 'test';

// 32 base32 characters: 160 bits of randomness.
const SECRET_LENGTH = 32;

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
  constructor(private readonly db: Db) {}

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
    return toApiKey(row);
  }

  /** The project a presented secret opens, or undefined for an unknown or revoked key. */
  authenticate(secret: string) {
    if (!/^hrd_(live|test)_[0-9a-z]{32}$/.test(secret)) return Promise.resolve(undefined);
    return repo.findKeyOwner(this.db, sha256(secret));
  }
}
