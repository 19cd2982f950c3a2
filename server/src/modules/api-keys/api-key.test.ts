// API key lifecycle through HTTP: create (secret once), list (no secret), stored hashed, use, several live, revoke.
import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { addMember, createTenant, type Tenant } from '../../../test/fixtures.js';
import { startTestApp, type TestApp } from '../../../test/harness.js';

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const call = (options: InjectOptions) => t.app.inject(options);
const KEY_FORMAT = /^hrd_(live|test)_[0-9a-z]{32}$/;

interface CreatedKey {
  id: string;
  projectId: string;
  name: string;
  mode: 'live' | 'test';
  prefix: string;
  lastFour: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
  key: string;
}

function expectError(res: Awaited<ReturnType<typeof call>>, statusCode: number, message: string) {
  expect(res.statusCode, res.body).toBe(statusCode);
  expect(res.json()).toMatchObject({ statusCode, message });
  return res.json() as { details?: { field: string }[] };
}

async function createKey(tenant: Tenant, name: string, mode: 'live' | 'test', projectId = tenant.projectId): Promise<CreatedKey> {
  const res = await call({ method: 'POST', url: `/projects/${projectId}/api-keys`, headers: tenant.jwt, payload: { name, mode } });
  expect(res.statusCode, res.body).toBe(201);
  return res.json<CreatedKey>();
}

const listKeys = async (tenant: Tenant, projectId = tenant.projectId) => {
  const res = await call({ method: 'GET', url: `/projects/${projectId}/api-keys`, headers: tenant.jwt });
  expect(res.statusCode, res.body).toBe(200);
  return res;
};

const useKey = (key: string, projectId: string) => call({ method: 'GET', url: `/projects/${projectId}`, headers: { 'x-api-key': key } });
const revoke = (tenant: Tenant, keyId: string) =>
  call({ method: 'DELETE', url: `/projects/${tenant.projectId}/api-keys/${keyId}`, headers: tenant.jwt });

let org: Tenant;
beforeEach(async () => {
  org = await createTenant(t);
});

describe('create', () => {
  it.each(['live', 'test'] as const)('a %s key: 201 with the secret once, in the documented format', async (mode) => {
    const created = await createKey(org, `My ${mode} key`, mode);
    expect(created).toEqual({
      id: expect.stringMatching(/^key_/),
      projectId: org.projectId,
      name: `My ${mode} key`,
      mode,
      scope: 'server',
      prefix: `hrd_${mode}_`,
      lastFour: created.key.slice(-4),
      createdAt: expect.any(String),
      lastUsedAt: null,
      revokedAt: null,
      key: expect.stringMatching(KEY_FORMAT),
    });
    expect(created.key.startsWith(`hrd_${mode}_`)).toBe(true);
  });

  it('secrets are unique and random', async () => {
    const keys = await Promise.all(Array.from({ length: 8 }, (_, i) => createKey(org, `k${i}`, 'live')));
    expect(new Set(keys.map((k) => k.key)).size).toBe(8);
    expect(new Set(keys.map((k) => k.id)).size).toBe(8);
  });

  it('the secret is stored only as a digest', async () => {
    const created = await createKey(org, 'hashed', 'live');
    const { rows } = await t.database.pool.query('SELECT * FROM api_keys WHERE id = $1', [created.id]);
    expect(rows).toHaveLength(1);
    const row = rows[0];
    expect(row.secret_hash).not.toBe(created.key);
    expect(row.secret_hash).toMatch(/^[0-9a-f]{64}$/);
    // No column of the row holds the secret, or its random part.
    const stored = JSON.stringify(row);
    expect(stored).not.toContain(created.key);
    expect(stored).not.toContain(created.key.slice('hrd_live_'.length));
    expect(row).toMatchObject({ project_id: org.projectId, mode: 'live', prefix: 'hrd_live_', last_four: created.key.slice(-4) });
  });

  it.each([
    [{ name: 'x' }, ['mode']],
    [{ mode: 'live' }, ['name']],
    [{ name: ' ', mode: 'live' }, ['name']],
    [{ name: 'x', mode: 'prod' }, ['mode']],
    [{ name: 'x', mode: 'live', key: 'hrd_live_chosenbyme00000000000000000' }, ['key']],
  ])('rejects %j with 422 on %j', async (payload, fields) => {
    const res = await call({ method: 'POST', url: `/projects/${org.projectId}/api-keys`, headers: org.jwt, payload });
    const body = expectError(res, 422, 'Validation failed');
    expect((body.details ?? []).map((d) => d.field).sort()).toEqual(fields);
    const { rows } = await t.database.pool.query('SELECT count(*)::int AS n FROM api_keys WHERE project_id = $1', [org.projectId]);
    expect(rows[0].n).toBe(2);
  });

  it('an ADMIN may manage keys; a MEMBER may not (403)', async () => {
    const admin = await addMember(t, org, 'ADMIN');
    const member = await addMember(t, org, 'MEMBER');
    const byAdmin = await call({
      method: 'POST',
      url: `/projects/${org.projectId}/api-keys`,
      headers: admin.headers,
      payload: { name: 'admin', mode: 'live' },
    });
    expect(byAdmin.statusCode).toBe(201);
    const byMember = await call({
      method: 'POST',
      url: `/projects/${org.projectId}/api-keys`,
      headers: member.headers,
      payload: { name: 'member', mode: 'live' },
    });
    expectError(byMember, 403, 'This action needs the ADMIN role');
  });

  it('a key cannot create keys (JWT only) → 401', async () => {
    const res = await call({
      method: 'POST',
      url: `/projects/${org.projectId}/api-keys`,
      headers: org.live,
      payload: { name: 'self-made', mode: 'live' },
    });
    expectError(res, 401, 'Invalid or expired token');
  });
});

describe('list', () => {
  it('shows name, mode, prefix and last four, newest first, and never the secret', async () => {
    const first = await createKey(org, 'first', 'live');
    const second = await createKey(org, 'second', 'test');
    const res = await listKeys(org);
    const { data } = res.json<{ data: Record<string, unknown>[] }>();
    expect(data).toHaveLength(4);
    const withoutSecret = ({ key: _key, ...rest }: CreatedKey) => rest;
    expect(data.slice(0, 2)).toEqual([withoutSecret(second), withoutSecret(first)]);
    for (const item of data) {
      expect(Object.keys(item).sort()).toEqual(
        ['createdAt', 'id', 'lastFour', 'lastUsedAt', 'mode', 'name', 'prefix', 'projectId', 'revokedAt', 'scope'].sort(),
      );
      expect(item.prefix).toBe(`hrd_${String(item.mode)}_`);
      expect(String(item.lastFour)).toMatch(/^[0-9a-z]{4}$/);
    }
    for (const secret of [first.key, second.key, org.liveKey, org.testKey]) expect(res.body).not.toContain(secret);
    const modes = Object.fromEntries(data.map((k) => [k.name, k.mode]));
    expect(modes).toEqual({ first: 'live', second: 'test', live: 'live', test: 'test' });
  });

  it('lists only the keys of the named project', async () => {
    const other = await call({ method: 'POST', url: '/projects', headers: org.jwt, payload: { name: 'Other' } });
    const otherId = other.json().id as string;
    const key = await createKey(org, 'other project', 'live', otherId);
    const { data } = (await listKeys(org, otherId)).json<{ data: { id: string }[] }>();
    expect(data.map((k) => k.id)).toEqual([key.id]);
    const own = (await listKeys(org)).json<{ data: { id: string }[] }>().data.map((k) => k.id);
    expect(own).not.toContain(key.id);
  });
});

describe('use', () => {
  it('a new key works at once and opens its project', async () => {
    const created = await createKey(org, 'fresh', 'live');
    const res = await useKey(created.key, org.projectId);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: org.projectId, organizationId: org.orgId });
  });

  it('a key of another project of the same organization is still another project → 403', async () => {
    const other = await call({ method: 'POST', url: '/projects', headers: org.jwt, payload: { name: 'Other' } });
    const key = await createKey(org, 'other', 'live', other.json().id);
    expectError(await useKey(key.key, org.projectId), 403, 'Resource belongs to a different project');
    expect((await useKey(key.key, other.json().id)).statusCode).toBe(200);
  });

  it('several live keys work at the same time', async () => {
    const keys = [org.liveKey, (await createKey(org, 'new 1', 'live')).key, (await createKey(org, 'new 2', 'live')).key];
    const results = await Promise.all(keys.map((key) => useKey(key, org.projectId)));
    expect(results.map((r) => r.statusCode)).toEqual([200, 200, 200]);
  });

  it('lastUsedAt is set after use', async () => {
    const created = await createKey(org, 'tracked', 'test');
    const before = Date.now();
    expect((await useKey(created.key, org.projectId)).statusCode).toBe(200);
    const { data } = (await listKeys(org)).json<{ data: { id: string; lastUsedAt: string | null }[] }>();
    const listed = data.find((k) => k.id === created.id)!;
    expect(listed.lastUsedAt).not.toBeNull();
    expect(new Date(listed.lastUsedAt!).getTime()).toBeGreaterThanOrEqual(before - 1000);
    expect(new Date(listed.lastUsedAt!).getTime()).toBeLessThanOrEqual(Date.now() + 1000);
    // Keys that were not used stay null.
    const unused = await createKey(org, 'unused', 'live');
    const again = (await listKeys(org)).json<{ data: { id: string; lastUsedAt: string | null }[] }>().data;
    expect(again.find((k) => k.id === unused.id)!.lastUsedAt).toBeNull();
  });

  it('test and live mode are reported for each key', async () => {
    const live = await createKey(org, 'L', 'live');
    const test = await createKey(org, 'T', 'test');
    expect([live.mode, test.mode]).toEqual(['live', 'test']);
    const { rows } = await t.database.pool.query<{ id: string; mode: string }>(
      'SELECT id, mode FROM api_keys WHERE id = ANY($1) ORDER BY mode',
      [[live.id, test.id]],
    );
    expect(rows).toEqual([
      { id: live.id, mode: 'live' },
      { id: test.id, mode: 'test' },
    ]);
    // Both open the project; the test key as a sandbox caller.
    expect((await useKey(test.key, org.projectId)).statusCode).toBe(200);
    expect((await useKey(live.key, org.projectId)).statusCode).toBe(200);
  });
});

describe('revoke', () => {
  it('→ 200 with revokedAt; that key answers 401 Invalid API key while the others keep working', async () => {
    const doomed = await createKey(org, 'doomed', 'live');
    const survivor = await createKey(org, 'survivor', 'live');
    expect((await useKey(doomed.key, org.projectId)).statusCode).toBe(200);

    const res = await revoke(org, doomed.id);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: doomed.id, name: 'doomed', mode: 'live', revokedAt: expect.any(String) });
    expect(res.json()).not.toHaveProperty('key');

    expectError(await useKey(doomed.key, org.projectId), 401, 'Invalid API key');
    for (const key of [survivor.key, org.liveKey, org.testKey]) expect((await useKey(key, org.projectId)).statusCode).toBe(200);

    const { rows } = await t.database.pool.query('SELECT revoked_at FROM api_keys WHERE id = $1', [doomed.id]);
    expect(rows[0].revoked_at).toBeInstanceOf(Date);
    const listed = (await listKeys(org)).json<{ data: { id: string; revokedAt: string | null }[] }>().data;
    expect(listed.find((k) => k.id === doomed.id)!.revokedAt).toBe(res.json().revokedAt);
    expect(listed.find((k) => k.id === survivor.id)!.revokedAt).toBeNull();
  });

  it('revoking the fixture test key leaves the live key working, and the reverse', async () => {
    const { rows } = await t.database.pool.query<{ id: string; mode: string }>('SELECT id, mode FROM api_keys WHERE project_id = $1', [
      org.projectId,
    ]);
    const testId = rows.find((r) => r.mode === 'test')!.id;
    expect((await revoke(org, testId)).statusCode).toBe(200);
    expectError(await useKey(org.testKey, org.projectId), 401, 'Invalid API key');
    expect((await useKey(org.liveKey, org.projectId)).statusCode).toBe(200);
  });

  it('revoking twice keeps the first revocation time', async () => {
    const key = await createKey(org, 'twice', 'test');
    const first = await revoke(org, key.id);
    const second = await revoke(org, key.id);
    expect(second.statusCode).toBe(200);
    expect(second.json().revokedAt).toBe(first.json().revokedAt);
    expectError(await useKey(key.key, org.projectId), 401, 'Invalid API key');
  });

  it('an unknown key id → 404 API key not found', async () => {
    expectError(await revoke(org, 'key_nope'), 404, 'API key not found');
  });

  it('a key of another project cannot be revoked through this one → 404, and keeps working', async () => {
    const other = await call({ method: 'POST', url: '/projects', headers: org.jwt, payload: { name: 'Other' } });
    const key = await createKey(org, 'elsewhere', 'live', other.json().id);
    expectError(await revoke(org, key.id), 404, 'API key not found');
    expect((await useKey(key.key, other.json().id)).statusCode).toBe(200);
  });

  it('a key cannot list keys (JWT only) → 401', async () => {
    const key = await createKey(org, 'x', 'live');
    const res = await call({ method: 'GET', url: `/projects/${org.projectId}/api-keys`, headers: { 'x-api-key': key.key } });
    expectError(res, 401, 'Invalid or expired token');
  });
});
