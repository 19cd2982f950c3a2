// The tenancy guard through HTTP: org A's JWT and project A's keys against org/project B's resources, credentials
// that are missing, unknown or of the wrong kind, and the startup check that every route declares its access.
import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, createTenant, type Tenant } from '../../test/fixtures.js';
import { startTestApp, type TestApp } from '../../test/harness.js';
import { createLogger } from '../logger.js';
import { buildApp } from '../app/app.js';

let t: TestApp;
let a: Tenant;
let b: Tenant;

beforeAll(async () => {
  t = await startTestApp();
  a = await createTenant(t);
  b = await createTenant(t);
});
afterAll(() => t.close());

const call = (options: InjectOptions) => t.app.inject(options);
const NOT_A_PROJECT = 'prj_doesnotexist0000000000';
const UNKNOWN_KEY = `hrd_live_${'0'.repeat(32)}`;

/** Asserts the error envelope and returns the body. */
function expectError(res: Awaited<ReturnType<typeof call>>, statusCode: number, message: string) {
  expect(res.statusCode, res.body).toBe(statusCode);
  const body = res.json();
  expect(body).toMatchObject({ statusCode, message });
  expect(typeof body.requestId).toBe('string');
  expect(typeof body.code).toBe('string');
  expect(body).not.toHaveProperty('details');
  return body;
}

async function projectExists(id: string, name?: string) {
  const { rows } = await t.database.pool.query<{ name: string }>('SELECT name FROM projects WHERE id = $1', [id]);
  if (name !== undefined) expect(rows[0]?.name).toBe(name);
  return rows.length === 1;
}

describe('org A JWT against org B resources', () => {
  it.each([
    ['GET', undefined],
    ['PATCH', { name: 'Hijacked' }],
    ['DELETE', undefined],
  ] as const)('%s /projects/:id of B → 404 Project not found', async (method, payload) => {
    const res = await call({ method, url: `/projects/${b.projectId}`, headers: a.jwt, ...(payload && { payload }) });
    expectError(res, 404, 'Project not found');
    expect(await projectExists(b.projectId, 'Project')).toBe(true);
  });

  it.each(['GET', 'PATCH', 'DELETE'] as const)('%s /projects/:id of a project that does not exist → the same 404', async (method) => {
    const res = await call({
      method,
      url: `/projects/${NOT_A_PROJECT}`,
      headers: a.jwt,
      ...(method === 'PATCH' && { payload: { name: 'x' } }),
    });
    expectError(res, 404, 'Project not found');
  });

  it('GET /projects/:projectId/api-keys of B → 404', async () => {
    const res = await call({ method: 'GET', url: `/projects/${b.projectId}/api-keys`, headers: a.jwt });
    expectError(res, 404, 'Project not found');
  });

  it('POST /projects/:projectId/api-keys of B → 404 and no key is created', async () => {
    const before = await t.database.pool.query('SELECT id FROM api_keys WHERE project_id = $1', [b.projectId]);
    const res = await call({
      method: 'POST',
      url: `/projects/${b.projectId}/api-keys`,
      headers: a.jwt,
      payload: { name: 'stolen', mode: 'live' },
    });
    expectError(res, 404, 'Project not found');
    const after = await t.database.pool.query('SELECT id FROM api_keys WHERE project_id = $1', [b.projectId]);
    expect(after.rowCount).toBe(before.rowCount);
  });

  it('revoking a key of B → 404, through B’s project or through A’s own, and the key keeps working', async () => {
    const { rows } = await t.database.pool.query<{ id: string }>(
      "SELECT id FROM api_keys WHERE project_id = $1 AND mode = 'live'",
      [b.projectId],
    );
    const keyId = rows[0]!.id;
    expectError(
      await call({ method: 'DELETE', url: `/projects/${b.projectId}/api-keys/${keyId}`, headers: a.jwt }),
      404,
      'Project not found',
    );
    expectError(
      await call({ method: 'DELETE', url: `/projects/${a.projectId}/api-keys/${keyId}`, headers: a.jwt }),
      404,
      'API key not found',
    );
    const { rows: after } = await t.database.pool.query('SELECT revoked_at FROM api_keys WHERE id = $1', [keyId]);
    expect(after[0]!.revoked_at).toBeNull();
    expect((await call({ method: 'GET', url: `/projects/${b.projectId}`, headers: b.live })).statusCode).toBe(200);
  });

  it('GET /projects lists only the x-org-id organization’s projects', async () => {
    const res = await call({ method: 'GET', url: '/projects', headers: a.jwt });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.map((p: { id: string }) => p.id)).toEqual([a.projectId]);
    expect(res.json().total).toBe(1);
  });

  it('GET /members lists only the x-org-id organization’s members', async () => {
    const res = await call({ method: 'GET', url: '/members', headers: a.jwt });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.map((m: { userId: string }) => m.userId)).toEqual([a.userId]);
  });

  it('changing or removing a member of B → 404 Member not found', async () => {
    expectError(
      await call({ method: 'PATCH', url: `/members/${b.userId}`, headers: a.jwt, payload: { role: 'VIEWER' } }),
      404,
      'Member not found',
    );
    expectError(await call({ method: 'DELETE', url: `/members/${b.userId}` , headers: a.jwt }), 404, 'Member not found');
    const { rows } = await t.database.pool.query('SELECT role FROM memberships WHERE user_id = $1', [b.userId]);
    expect(rows).toEqual([{ role: 'OWNER' }]);
  });

  it('x-org-id of B (not a member) → 403 on every organization route, and nothing changes', async () => {
    const headers = { authorization: `Bearer ${a.token}`, 'x-org-id': b.orgId };
    const attempts: InjectOptions[] = [
      { method: 'GET', url: '/projects' },
      { method: 'POST', url: '/projects', payload: { name: 'Mine now' } },
      { method: 'GET', url: `/projects/${b.projectId}` },
      { method: 'PATCH', url: `/projects/${b.projectId}`, payload: { name: 'Hijacked' } },
      { method: 'DELETE', url: `/projects/${b.projectId}` },
      { method: 'GET', url: `/projects/${b.projectId}/api-keys` },
      { method: 'POST', url: `/projects/${b.projectId}/api-keys`, payload: { name: 'x', mode: 'live' } },
      { method: 'GET', url: '/members' },
      { method: 'POST', url: '/invitations', payload: { email: 'intruder@example.com', role: 'OWNER' } },
      { method: 'GET', url: '/invitations' },
      { method: 'PATCH', url: `/members/${b.userId}`, payload: { role: 'VIEWER' } },
      { method: 'DELETE', url: `/members/${b.userId}` },
    ];
    for (const attempt of attempts) {
      const body = expectError(await call({ ...attempt, headers }), 403, 'You are not a member of this organization');
      expect(body.code).toBe('not_a_member');
    }
    expect(await projectExists(b.projectId, 'Project')).toBe(true);
    const { rows } = await t.database.pool.query('SELECT count(*)::int AS n FROM projects WHERE organization_id = $1', [b.orgId]);
    expect(rows[0].n).toBe(1);
    const members = await t.database.pool.query('SELECT user_id, role FROM memberships WHERE organization_id = $1', [b.orgId]);
    expect(members.rows).toEqual([{ user_id: b.userId, role: 'OWNER' }]);
  });

  it('x-org-id of an organization that does not exist → 403', async () => {
    const res = await call({ method: 'GET', url: '/projects', headers: { authorization: `Bearer ${a.token}`, 'x-org-id': 'org_nope' } });
    expectError(res, 403, 'You are not a member of this organization');
  });

  it('a VIEWER of A also gets 404 for B’s project', async () => {
    const viewer = await addMember(t, a, 'VIEWER');
    expectError(await call({ method: 'GET', url: `/projects/${b.projectId}`, headers: viewer.headers }), 404, 'Project not found');
    expect((await call({ method: 'GET', url: `/projects/${a.projectId}`, headers: viewer.headers })).statusCode).toBe(200);
  });
});

describe('project A API key against project B', () => {
  it.each(['live', 'test'] as const)('the %s key opens its own project', async (mode) => {
    const res = await call({ method: 'GET', url: `/projects/${a.projectId}`, headers: a[mode] });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: a.projectId, organizationId: a.orgId });
  });

  it.each(['live', 'test'] as const)('the %s key naming B’s project → 403 Resource belongs to a different project', async (mode) => {
    const res = await call({ method: 'GET', url: `/projects/${b.projectId}`, headers: a[mode] });
    expect(expectError(res, 403, 'Resource belongs to a different project').code).toBe('cross_project');
  });

  it.each(['live', 'test'] as const)('the %s key naming a project that does not exist → 404 Project not found', async (mode) => {
    const res = await call({ method: 'GET', url: `/projects/${NOT_A_PROJECT}`, headers: a[mode] });
    expectError(res, 404, 'Project not found');
  });

  it('the key ignores x-org-id, even one of B', async () => {
    const own = await call({ method: 'GET', url: `/projects/${a.projectId}`, headers: { ...a.live, 'x-org-id': b.orgId } });
    expect(own.statusCode).toBe(200);
    const other = await call({ method: 'GET', url: `/projects/${b.projectId}`, headers: { ...a.live, 'x-org-id': b.orgId } });
    expectError(other, 403, 'Resource belongs to a different project');
  });

  it('GET /projects/:projectId/api-keys of B with A’s key → 401 (key management is JWT only)', async () => {
    const res = await call({ method: 'GET', url: `/projects/${b.projectId}/api-keys`, headers: a.live });
    expectError(res, 401, 'Invalid or expired token');
  });
});

describe('credentials of the wrong kind or none', () => {
  it.each([
    { method: 'GET', url: '/projects' },
    { method: 'POST', url: '/projects', payload: { name: 'Via key' } },
    { method: 'PATCH', url: '/projects/:a', payload: { name: 'Via key' } },
    { method: 'DELETE', url: '/projects/:a' },
    { method: 'GET', url: '/projects/:a/api-keys' },
    { method: 'POST', url: '/projects/:a/api-keys', payload: { name: 'k', mode: 'live' } },
    { method: 'GET', url: '/members' },
    { method: 'GET', url: '/auth/me' },
    { method: 'POST', url: '/organizations', payload: { name: 'Via key' } },
  ] as InjectOptions[])('an API key on the JWT-only route $method $url → 401', async (route) => {
    const url = String(route.url).replace(':a', a.projectId);
    const res = await call({ ...route, url, headers: a.live });
    expectError(res, 401, 'Invalid or expired token');
    expect(await projectExists(a.projectId, 'Project')).toBe(true);
  });

  it.each([
    { method: 'GET', url: '/projects' },
    { method: 'GET', url: '/projects/:a' },
    { method: 'PATCH', url: '/projects/:a', payload: { name: 'Anon' } },
    { method: 'DELETE', url: '/projects/:a' },
    { method: 'GET', url: '/projects/:a/api-keys' },
    { method: 'GET', url: '/members' },
    { method: 'GET', url: '/auth/me' },
  ] as InjectOptions[])('no credentials on $method $url → 401', async (route) => {
    const url = String(route.url).replace(':a', a.projectId);
    const res = await call({ ...route, url });
    expectError(res, 401, 'Invalid or expired token');
  });

  it('an x-org-id alone is not a credential', async () => {
    expectError(await call({ method: 'GET', url: '/projects', headers: { 'x-org-id': a.orgId } }), 401, 'Invalid or expired token');
  });

  it('a JWT of a user who no longer exists → 401', async () => {
    const gone = await createTenant(t);
    await t.database.pool.query('DELETE FROM users WHERE id = $1', [gone.userId]);
    expectError(await call({ method: 'GET', url: '/auth/me', headers: gone.jwt }), 401, 'Invalid or expired token');
    expectError(await call({ method: 'GET', url: '/projects', headers: gone.jwt }), 401, 'Invalid or expired token');
    // Its organization's keys still open the project: keys belong to the project, not to a user.
    expect((await call({ method: 'GET', url: `/projects/${gone.projectId}`, headers: gone.live })).statusCode).toBe(200);
  });

  it('a bad bearer token on a project route → 401 Invalid or expired token', async () => {
    const res = await call({
      method: 'GET',
      url: `/projects/${a.projectId}`,
      headers: { authorization: 'Bearer not-a-jwt', 'x-org-id': a.orgId },
    });
    expectError(res, 401, 'Invalid or expired token');
  });

  it.each([
    ['GET /projects', { method: 'GET', url: '/projects' }],
    ['GET /projects/:id', { method: 'GET', url: '/projects/:a' }],
    ['PATCH /projects/:id', { method: 'PATCH', url: '/projects/:a', payload: { name: 'x' } }],
    ['GET /projects/:projectId/api-keys', { method: 'GET', url: '/projects/:a/api-keys' }],
    ['GET /members', { method: 'GET', url: '/members' }],
  ] as [string, InjectOptions][])('a JWT without x-org-id on %s → 403 Missing x-org-id header', async (_name, route) => {
    const url = String(route.url).replace(':a', a.projectId);
    const res = await call({ ...route, url, headers: { authorization: `Bearer ${a.token}` } });
    expect(expectError(res, 403, 'Missing x-org-id header').code).toBe('missing_org_id');
  });

  it('an empty x-org-id counts as missing', async () => {
    const res = await call({ method: 'GET', url: '/projects', headers: { authorization: `Bearer ${a.token}`, 'x-org-id': '' } });
    expectError(res, 403, 'Missing x-org-id header');
  });

  it('a JWT needs no x-org-id on user routes', async () => {
    expect((await call({ method: 'GET', url: '/auth/me', headers: { authorization: `Bearer ${a.token}` } })).statusCode).toBe(200);
  });

  it.each([
    ['well-formed but unknown', UNKNOWN_KEY],
    ['unknown test-shaped', `hrd_test_${'z'.repeat(32)}`],
    ['malformed', 'not-a-key'],
    ['truncated', () => a.liveKey.slice(0, -1)],
    ['of the wrong mode prefix', () => a.liveKey.replace('hrd_live_', 'hrd_test_')],
  ] as [string, string | (() => string)][])('a %s key → 401 Invalid API key', async (_name, key) => {
    const secret = typeof key === 'function' ? key() : key;
    const res = await call({ method: 'GET', url: `/projects/${a.projectId}`, headers: { 'x-api-key': secret } });
    expect(expectError(res, 401, 'Invalid API key').code).toBe('unauthorized');
  });

  it('an unknown key is not rescued by a valid JWT beside it', async () => {
    const res = await call({ method: 'GET', url: `/projects/${a.projectId}`, headers: { ...a.jwt, 'x-api-key': UNKNOWN_KEY } });
    expectError(res, 401, 'Invalid API key');
  });

  it('a revoked key → 401 Invalid API key, on its own project and on any other', async () => {
    const created = await call({
      method: 'POST',
      url: `/projects/${a.projectId}/api-keys`,
      headers: a.jwt,
      payload: { name: 'to revoke', mode: 'live' },
    });
    expect(created.statusCode).toBe(201);
    const { id, key } = created.json<{ id: string; key: string }>();
    expect((await call({ method: 'GET', url: `/projects/${a.projectId}`, headers: { 'x-api-key': key } })).statusCode).toBe(200);
    const revoked = await call({ method: 'DELETE', url: `/projects/${a.projectId}/api-keys/${id}`, headers: a.jwt });
    expect(revoked.statusCode).toBe(200);
    expectError(await call({ method: 'GET', url: `/projects/${a.projectId}`, headers: { 'x-api-key': key } }), 401, 'Invalid API key');
    expectError(await call({ method: 'GET', url: `/projects/${b.projectId}`, headers: { 'x-api-key': key } }), 401, 'Invalid API key');
  });

  it('public routes need nothing and ignore a bad key', async () => {
    expect((await call({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    expect((await call({ method: 'GET', url: '/healthz', headers: { 'x-api-key': UNKNOWN_KEY } })).statusCode).toBe(200);
  });
});

describe('the startup check', () => {
  const freshApp = () => buildApp({ config: t.config, logger: createLogger('silent'), pool: t.database.pool, services: t.services });

  it('a route without config.access cannot be registered', async () => {
    const app = await freshApp();
    try {
      expect(() => app.get('/no-access', async () => 'open')).toThrow('Route GET /no-access declares no access');
      expect(() => app.post('/no-access', { config: {} }, async () => 'open')).toThrow('Route POST /no-access declares no access');
      // The /docs exemption covers the Swagger UI only, not every path that starts with the same letters.
      expect(() => app.get('/docsets', async () => 'open')).toThrow('Route GET /docsets declares no access');
    } finally {
      await app.close();
    }
  });

  it('nor inside an encapsulated plugin: the app does not start', async () => {
    const app = await freshApp();
    try {
      void app.register(async (child) => {
        child.get('/nested-no-access', async () => 'open');
      });
      await expect(app.ready()).rejects.toThrow('Route GET /nested-no-access declares no access');
    } finally {
      await app.close();
    }
  });

  it('a route that declares its access registers and is guarded', async () => {
    const app = await freshApp();
    try {
      app.get('/declared', { config: { access: { auth: 'organization' } } }, async () => ({ ok: true }));
      await app.ready();
      expect((await app.inject({ method: 'GET', url: '/declared' })).statusCode).toBe(401);
      expect((await app.inject({ method: 'GET', url: '/declared', headers: a.jwt })).json()).toEqual({ ok: true });
    } finally {
      await app.close();
    }
  });
});
