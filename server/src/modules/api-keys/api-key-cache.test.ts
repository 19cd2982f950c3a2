// The API key cache: bounded and expiring, and never stale past a revocation — in this process or another one.
import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant, type Tenant } from '../../../test/fixtures.js';
import { createTestDatabase, startTestApp, type TestApp, type TestDatabase } from '../../../test/harness.js';
import { ApiKeyCache } from './api-key-cache.js';
import type { KeyOwner } from '../../http/access.js';
import { KEY_CHANGES_CHANNEL } from './api-key.repository.js';

const owner = (keyId: string, projectId = 'prj_a'): KeyOwner => ({ keyId, mode: 'live', scope: 'server', projectId, organizationId: 'org_a', settings: {} });

describe('ApiKeyCache', () => {
  const trusted = (options = { maxEntries: 3, ttlMs: 1000 }) => {
    const cache = new ApiKeyCache(options);
    cache.setTrusted(true);
    return cache;
  };

  it('keeps the most recently used entries up to its bound', () => {
    const cache = trusted();
    for (const key of ['a', 'b', 'c']) cache.set(key, { owner: owner(key), lastUsedAt: 0 }, cache.version(), 0);
    expect(cache.get('a', 1)?.owner.keyId).toBe('a');
    cache.set('d', { owner: owner('d'), lastUsedAt: 0 }, cache.version(), 1);
    expect(cache.size).toBe(3);
    expect(cache.get('b', 2)).toBeUndefined();
    expect(['a', 'c', 'd'].map((key) => cache.get(key, 2)?.owner.keyId)).toEqual(['a', 'c', 'd']);
  });

  it('expires entries after the TTL', () => {
    const cache = trusted();
    cache.set('a', { owner: owner('a'), lastUsedAt: 0 }, cache.version(), 0);
    expect(cache.get('a', 999)).toBeDefined();
    expect(cache.get('a', 1000)).toBeUndefined();
  });

  it('evicts by key or by project, and drops a lookup that raced an eviction', () => {
    const cache = trusted({ maxEntries: 10, ttlMs: 1000 });
    cache.set('a', { owner: owner('key_a', 'prj_1'), lastUsedAt: 0 }, cache.version(), 0);
    cache.set('b', { owner: owner('key_b', 'prj_1'), lastUsedAt: 0 }, cache.version(), 0);
    cache.set('c', { owner: owner('key_c', 'prj_2'), lastUsedAt: 0 }, cache.version(), 0);
    cache.evict({ keyId: 'key_c' });
    expect(cache.get('c', 1)).toBeUndefined();
    cache.evict({ projectId: 'prj_1' });
    expect(cache.size).toBe(0);
    const before = cache.version();
    cache.evict({ keyId: 'key_other' });
    cache.set('a', { owner: owner('key_a'), lastUsedAt: 0 }, before, 1);
    expect(cache.get('a', 1)).toBeUndefined();
  });

  it('serves and stores nothing while untrusted, and forgets everything when trust is lost', () => {
    const cache = new ApiKeyCache();
    cache.set('a', { owner: owner('a'), lastUsedAt: 0 }, cache.version());
    expect(cache.size).toBe(0);
    cache.setTrusted(true);
    cache.set('a', { owner: owner('a'), lastUsedAt: 0 }, cache.version());
    expect(cache.get('a')).toBeDefined();
    cache.setTrusted(false);
    expect(cache.get('a')).toBeUndefined();
    expect(cache.size).toBe(0);
  });
});

describe('two API processes on one database', () => {
  let database: TestDatabase;
  let a: TestApp;
  let b: TestApp;
  let tenant: Tenant;

  beforeAll(async () => {
    database = await createTestDatabase();
    a = await startTestApp({}, { database });
    b = await startTestApp({}, { database });
    tenant = await createTenant(a);
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await database?.drop();
  });

  const call = (app: TestApp, options: InjectOptions) => app.app.inject(options);
  const useKey = (app: TestApp, key: string) =>
    call(app, { method: 'GET', url: `/projects/${tenant.projectId}`, headers: { 'x-api-key': key } }).then((r) => r.statusCode);
  const newKey = async () => {
    const res = await call(a, { method: 'POST', url: `/projects/${tenant.projectId}/api-keys`, headers: tenant.jwt, payload: { name: 'k', mode: 'live' } });
    return res.json<{ id: string; key: string }>();
  };
  /** Milliseconds until `probe` answers `status`, polling every 5 ms for at most 2 s. */
  async function msUntil(probe: () => Promise<number>, status: number): Promise<number> {
    const started = Date.now();
    while (Date.now() - started < 2000) {
      if ((await probe()) === status) return Date.now() - started;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    throw new Error(`still not ${status} after 2 s`);
  }
  const revokeSilently = (keyId: string) => a.database.pool.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [keyId]);

  it('serves a known key from memory: a revocation written without its notification is not seen', async () => {
    const key = await newKey();
    expect(await useKey(b, key.key)).toBe(200);
    await revokeSilently(key.id);
    expect(await useKey(b, key.key)).toBe(200);
    await a.database.pool.query('SELECT pg_notify($1, $2)', [KEY_CHANGES_CHANNEL, JSON.stringify({ keyId: key.id })]);
    expect(await msUntil(() => useKey(b, key.key), 401)).toBeLessThan(500);
  });

  it('a key revoked through one instance is refused by the other within milliseconds', async () => {
    const key = await newKey();
    expect(await useKey(a, key.key)).toBe(200);
    expect(await useKey(b, key.key)).toBe(200);
    const revoked = await call(a, { method: 'DELETE', url: `/projects/${tenant.projectId}/api-keys/${key.id}`, headers: tenant.jwt });
    expect(revoked.statusCode).toBe(200);
    expect(await useKey(a, key.key)).toBe(401);
    expect(await msUntil(() => useKey(b, key.key), 401)).toBeLessThan(500);
  });

  it('the keys of a project deleted through one instance are refused by the other', async () => {
    const doomed = await createTenant(a);
    const get = (app: TestApp) =>
      call(app, { method: 'GET', url: `/projects/${doomed.projectId}`, headers: doomed.live }).then((r) => r.statusCode);
    expect(await get(b)).toBe(200);
    expect((await call(a, { method: 'DELETE', url: `/projects/${doomed.projectId}`, headers: doomed.jwt })).statusCode).toBe(204);
    expect(await msUntil(() => get(b), 401)).toBeLessThan(500);
  });

  it('while the listener is disconnected the cache is not trusted; it is again once the listener is back', async () => {
    const key = await newKey();
    expect(await useKey(b, key.key)).toBe(200);
    await a.database.pool.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'herald-api-key-listener' AND datname = current_database()`,
    );
    await revokeSilently(key.id);
    expect(await msUntil(() => useKey(b, key.key), 401)).toBeLessThan(500);

    // Reconnected (retried each second): a key is cached again, so a silent revocation goes unseen.
    const cachedAgain = async () => {
      const later = await newKey();
      expect(await useKey(b, later.key)).toBe(200);
      await revokeSilently(later.id);
      return useKey(b, later.key);
    };
    const started = Date.now();
    while ((await cachedAgain()) !== 200) {
      expect(Date.now() - started).toBeLessThan(10_000);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });
});
