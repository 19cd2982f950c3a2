// Organizations and members through HTTP: the role matrix, role changes, removal and the last OWNER (invitations: invitations.test.ts).
import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { addMember, createTenant, type Tenant } from '../../../test/fixtures.js';
import { startTestApp, type TestApp } from '../../../test/harness.js';
import { randomToken } from '../../shared/secrets.js';

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const call = (options: InjectOptions) => t.app.inject(options);
const newEmail = (label = 'user') => `${label}-${randomToken(8)}@example.com`;

function expectError(res: Awaited<ReturnType<typeof call>>, statusCode: number, message: string, code?: string) {
  expect(res.statusCode, res.body).toBe(statusCode);
  expect(res.json()).toMatchObject({ statusCode, message, ...(code && { code }) });
  expect(typeof res.json().requestId).toBe('string');
}

async function roleIn(orgId: string, userId: string): Promise<string | undefined> {
  const { rows } = await t.database.pool.query<{ role: string }>(
    'SELECT role FROM memberships WHERE organization_id = $1 AND user_id = $2',
    [orgId, userId],
  );
  return rows[0]?.role;
}

async function count(sql: string, params: unknown[]): Promise<number> {
  const { rows } = await t.database.pool.query<{ n: number }>(sql, params);
  return rows[0]!.n;
}

describe('role matrix', () => {
  let org: Tenant;
  let keyId: string;
  let viewer: Awaited<ReturnType<typeof addMember>>;
  let member: Awaited<ReturnType<typeof addMember>>;
  let admin: Awaited<ReturnType<typeof addMember>>;
  let target: Awaited<ReturnType<typeof addMember>>;

  beforeAll(async () => {
    org = await createTenant(t);
    viewer = await addMember(t, org, 'VIEWER');
    member = await addMember(t, org, 'MEMBER');
    admin = await addMember(t, org, 'ADMIN');
    target = await addMember(t, org, 'MEMBER');
    const { rows } = await t.database.pool.query<{ id: string }>('SELECT id FROM api_keys WHERE project_id = $1 LIMIT 1', [
      org.projectId,
    ]);
    keyId = rows[0]!.id;
  });

  const reads = (): InjectOptions[] => [
    { method: 'GET', url: '/members' },
    { method: 'GET', url: '/projects' },
    { method: 'GET', url: `/projects/${org.projectId}` },
  ];

  const writes = (): InjectOptions[] => [
    { method: 'POST', url: '/invitations', payload: { email: newEmail(), role: 'VIEWER' } },
    { method: 'PATCH', url: `/members/${target.userId}`, payload: { role: 'VIEWER' } },
    { method: 'DELETE', url: `/members/${target.userId}` },
    { method: 'POST', url: '/projects', payload: { name: 'New' } },
    { method: 'PATCH', url: `/projects/${org.projectId}`, payload: { name: 'Renamed' } },
    { method: 'DELETE', url: `/projects/${org.projectId}` },
    { method: 'POST', url: `/projects/${org.projectId}/api-keys`, payload: { name: 'k', mode: 'live' } },
    { method: 'DELETE', url: `/projects/${org.projectId}/api-keys/${keyId}` },
  ];

  async function snapshot() {
    return {
      members: await count('SELECT count(*)::int AS n FROM memberships WHERE organization_id = $1', [org.orgId]),
      invitations: await count('SELECT count(*)::int AS n FROM invitations WHERE organization_id = $1', [org.orgId]),
      targetRole: await roleIn(org.orgId, target.userId),
      projects: await count('SELECT count(*)::int AS n FROM projects WHERE organization_id = $1', [org.orgId]),
      projectName: (await t.database.pool.query('SELECT name FROM projects WHERE id = $1', [org.projectId])).rows[0]?.name,
      keys: await count('SELECT count(*)::int AS n FROM api_keys WHERE project_id = $1 AND revoked_at IS NULL', [org.projectId]),
    };
  }

  it('VIEWER can read', async () => {
    for (const read of reads()) {
      const res = await call({ ...read, headers: viewer.headers });
      expect(res.statusCode, `${read.method} ${read.url}: ${res.body}`).toBe(200);
    }
  });

  it('VIEWER: every write → 403 and nothing changes', async () => {
    const before = await snapshot();
    for (const write of writes()) {
      const res = await call({ ...write, headers: viewer.headers });
      expectError(res, 403, 'The VIEWER role is read-only', 'insufficient_role');
    }
    expect(await snapshot()).toEqual(before);
  });

  it('VIEWER cannot read API keys (ADMIN needed) → 403', async () => {
    const res = await call({ method: 'GET', url: `/projects/${org.projectId}/api-keys`, headers: viewer.headers });
    expectError(res, 403, 'This action needs the ADMIN role', 'insufficient_role');
  });

  it('MEMBER can read', async () => {
    for (const read of reads()) expect((await call({ ...read, headers: member.headers })).statusCode).toBe(200);
  });

  it('MEMBER cannot invite, create/update/delete projects or manage keys → 403 (ADMIN needed)', async () => {
    const before = await snapshot();
    for (const write of writes()) {
      const res = await call({ ...write, headers: member.headers });
      expectError(res, 403, 'This action needs the ADMIN role', 'insufficient_role');
    }
    expectError(
      await call({ method: 'GET', url: `/projects/${org.projectId}/api-keys`, headers: member.headers }),
      403,
      'This action needs the ADMIN role',
    );
    expect(await snapshot()).toEqual(before);
  });

  it('ADMIN can invite a member, create a project and change a non-owner’s role', async () => {
    const invited = await call({ method: 'POST', url: '/invitations', headers: admin.headers, payload: { email: newEmail(), role: 'MEMBER' } });
    expect(invited.statusCode).toBe(202);
    const accepted = await call({
      method: 'POST',
      url: '/invitations/accept',
      payload: { token: invited.json().token, name: 'New', password: 'long enough password' },
    });
    expect(accepted.statusCode, accepted.body).toBe(200);
    const userId: string = accepted.json().user.id;
    const project = await call({ method: 'POST', url: '/projects', headers: admin.headers, payload: { name: 'By admin' } });
    expect(project.statusCode).toBe(201);
    const changed = await call({
      method: 'PATCH',
      url: `/members/${userId}`,
      headers: admin.headers,
      payload: { role: 'ADMIN' },
    });
    expect(changed.statusCode).toBe(200);
    expect(changed.json().role).toBe('ADMIN');
    const removed = await call({ method: 'DELETE', url: `/members/${userId}`, headers: admin.headers });
    expect(removed.statusCode).toBe(204);
  });

  it('ADMIN cannot grant OWNER: not by invitation, nor by promotion, nor to themselves', async () => {
    const email = newEmail();
    expectError(
      await call({ method: 'POST', url: '/invitations', headers: admin.headers, payload: { email, role: 'OWNER' } }),
      403,
      'Only an OWNER can grant the OWNER role',
    );
    expect(await count('SELECT count(*)::int AS n FROM invitations WHERE email = $1', [email])).toBe(0);
    expectError(
      await call({ method: 'PATCH', url: `/members/${target.userId}`, headers: admin.headers, payload: { role: 'OWNER' } }),
      403,
      'Only an OWNER can grant the OWNER role',
    );
    expectError(
      await call({ method: 'PATCH', url: `/members/${admin.userId}`, headers: admin.headers, payload: { role: 'OWNER' } }),
      403,
      'Only an OWNER can grant the OWNER role',
    );
    expect(await roleIn(org.orgId, target.userId)).toBe('MEMBER');
    expect(await roleIn(org.orgId, admin.userId)).toBe('ADMIN');
  });

  it('ADMIN cannot demote or remove an OWNER', async () => {
    expectError(
      await call({ method: 'PATCH', url: `/members/${org.userId}`, headers: admin.headers, payload: { role: 'VIEWER' } }),
      403,
      'Only an OWNER can change or remove an OWNER',
    );
    expectError(
      await call({ method: 'DELETE', url: `/members/${org.userId}`, headers: admin.headers }),
      403,
      'Only an OWNER can change or remove an OWNER',
    );
    expect(await roleIn(org.orgId, org.userId)).toBe('OWNER');
  });

  it('a changed role applies to the very next request (no re-login)', async () => {
    const demoted = await addMember(t, org, 'ADMIN');
    expect((await call({ method: 'POST', url: '/projects', headers: demoted.headers, payload: { name: 'x' } })).statusCode).toBe(201);
    const res = await call({ method: 'PATCH', url: `/members/${demoted.userId}`, headers: org.jwt, payload: { role: 'VIEWER' } });
    expect(res.statusCode).toBe(200);
    expectError(
      await call({ method: 'POST', url: '/projects', headers: demoted.headers, payload: { name: 'y' } }),
      403,
      'The VIEWER role is read-only',
    );
  });
});

describe('GET /members', () => {
  let org: Tenant;
  beforeEach(async () => {
    org = await createTenant(t);
  });

  it('GET /members is paginated', async () => {
    for (let i = 0; i < 3; i++) await addMember(t, org, 'VIEWER');
    const first = await call({ method: 'GET', url: '/members?pageSize=2', headers: org.jwt });
    expect(first.statusCode).toBe(200);
    expect(first.json()).toMatchObject({ page: 1, pageSize: 2, total: 4 });
    expect(first.json().data).toHaveLength(2);
    expect(first.json().data[0]).toMatchObject({ userId: org.userId, role: 'OWNER', email: org.email, name: 'Owner' });
    const second = await call({ method: 'GET', url: '/members?page=2&pageSize=2', headers: org.jwt });
    expect(second.json().data).toHaveLength(2);
    const ids = [...first.json().data, ...second.json().data].map((m: { userId: string }) => m.userId);
    expect(new Set(ids).size).toBe(4);
  });
});

describe('changing roles and removing members', () => {
  let org: Tenant;
  beforeEach(async () => {
    org = await createTenant(t);
  });

  it('an OWNER changes a role', async () => {
    const m = await addMember(t, org, 'MEMBER');
    const res = await call({ method: 'PATCH', url: `/members/${m.userId}`, headers: org.jwt, payload: { role: 'ADMIN' } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ userId: m.userId, role: 'ADMIN' });
    expect(await roleIn(org.orgId, m.userId)).toBe('ADMIN');
  });

  it('an OWNER promotes another OWNER, who can then manage owners', async () => {
    const m = await addMember(t, org, 'ADMIN');
    const res = await call({ method: 'PATCH', url: `/members/${m.userId}`, headers: org.jwt, payload: { role: 'OWNER' } });
    expect(res.statusCode).toBe(200);
    const demote = await call({ method: 'PATCH', url: `/members/${org.userId}`, headers: m.headers, payload: { role: 'ADMIN' } });
    expect(demote.statusCode).toBe(200);
    expect(await roleIn(org.orgId, org.userId)).toBe('ADMIN');
  });

  it('removing a member: gone from the list, and their JWT no longer opens the organization', async () => {
    const m = await addMember(t, org, 'MEMBER');
    const res = await call({ method: 'DELETE', url: `/members/${m.userId}`, headers: org.jwt });
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expect(await roleIn(org.orgId, m.userId)).toBeUndefined();
    const list = await call({ method: 'GET', url: '/members', headers: org.jwt });
    expect(list.json().data.map((x: { userId: string }) => x.userId)).toEqual([org.userId]);
    expectError(await call({ method: 'GET', url: '/projects', headers: m.headers }), 403, 'You are not a member of this organization');
    // The user account itself remains.
    expect(await count('SELECT count(*)::int AS n FROM users WHERE id = $1', [m.userId])).toBe(1);
  });

  it('a member can be removed only once; unknown users → 404 Member not found', async () => {
    const m = await addMember(t, org, 'VIEWER');
    expect((await call({ method: 'DELETE', url: `/members/${m.userId}`, headers: org.jwt })).statusCode).toBe(204);
    expectError(await call({ method: 'DELETE', url: `/members/${m.userId}`, headers: org.jwt }), 404, 'Member not found');
    expectError(
      await call({ method: 'PATCH', url: '/members/usr_nobody', headers: org.jwt, payload: { role: 'VIEWER' } }),
      404,
      'Member not found',
    );
  });

  it('the last OWNER cannot be demoted or removed (409 last_owner)', async () => {
    for (const role of ['ADMIN', 'MEMBER', 'VIEWER']) {
      expectError(
        await call({ method: 'PATCH', url: `/members/${org.userId}`, headers: org.jwt, payload: { role } }),
        409,
        'An organization must keep at least one OWNER',
        'last_owner',
      );
    }
    expectError(
      await call({ method: 'DELETE', url: `/members/${org.userId}`, headers: org.jwt }),
      409,
      'An organization must keep at least one OWNER',
      'last_owner',
    );
    expect(await roleIn(org.orgId, org.userId)).toBe('OWNER');
  });

  it('setting the last OWNER to OWNER again is a no-op, not a conflict', async () => {
    const res = await call({ method: 'PATCH', url: `/members/${org.userId}`, headers: org.jwt, payload: { role: 'OWNER' } });
    expect(res.statusCode).toBe(200);
    expect(res.json().role).toBe('OWNER');
  });

  it('with two OWNERs one may leave, and then the other is the last', async () => {
    const second = await addMember(t, org, 'OWNER');
    expect((await call({ method: 'DELETE', url: `/members/${org.userId}`, headers: org.jwt })).statusCode).toBe(204);
    expectError(
      await call({ method: 'DELETE', url: `/members/${second.userId}`, headers: second.headers }),
      409,
      'An organization must keep at least one OWNER',
      'last_owner',
    );
  });

  it('two concurrent demotions of the only two OWNERs leave one OWNER', async () => {
    const second = await addMember(t, org, 'OWNER');
    const results = await Promise.all([
      call({ method: 'PATCH', url: `/members/${org.userId}`, headers: org.jwt, payload: { role: 'ADMIN' } }),
      call({ method: 'PATCH', url: `/members/${second.userId}`, headers: second.headers, payload: { role: 'ADMIN' } }),
    ]);
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 409]);
    expect(
      await count("SELECT count(*)::int AS n FROM memberships WHERE organization_id = $1 AND role = 'OWNER'", [org.orgId]),
    ).toBe(1);
  });
});

describe('POST /organizations', () => {
  it('makes the caller OWNER; the organization shows in /auth/me and is usable at once', async () => {
    const user = await createTenant(t);
    const res = await call({
      method: 'POST',
      url: '/organizations',
      headers: { authorization: `Bearer ${user.token}` },
      payload: { name: '  Second org  ' },
    });
    expect(res.statusCode).toBe(201);
    const org = res.json();
    expect(org).toEqual({ id: expect.stringMatching(/^org_/), name: 'Second org', role: 'OWNER', createdAt: expect.any(String) });
    expect(await roleIn(org.id, user.userId)).toBe('OWNER');

    const me = await call({ method: 'GET', url: '/auth/me', headers: { authorization: `Bearer ${user.token}` } });
    expect(me.json().organizations).toEqual([
      { id: user.orgId, name: 'Org', role: 'OWNER' },
      { id: org.id, name: 'Second org', role: 'OWNER' },
    ]);

    const headers = { authorization: `Bearer ${user.token}`, 'x-org-id': org.id };
    const members = await call({ method: 'GET', url: '/members', headers });
    expect(members.json()).toMatchObject({ total: 1, data: [{ userId: user.userId, role: 'OWNER' }] });
    expect((await call({ method: 'GET', url: '/projects', headers })).json()).toEqual({ data: [], page: 1, pageSize: 20, total: 0 });
    expect((await call({ method: 'POST', url: '/projects', headers, payload: { name: 'P' } })).statusCode).toBe(201);
  });

  it('needs no x-org-id, and a VIEWER elsewhere may still create their own organization', async () => {
    const owner = await createTenant(t);
    const viewer = await addMember(t, owner, 'VIEWER');
    const res = await call({
      method: 'POST',
      url: '/organizations',
      headers: { authorization: viewer.headers.authorization! },
      payload: { name: 'Mine' },
    });
    expect(res.statusCode).toBe(201);
    expect(res.json().role).toBe('OWNER');
  });

  it('requires a JWT (401) and a non-empty name (422)', async () => {
    expectError(await call({ method: 'POST', url: '/organizations', payload: { name: 'X' } }), 401, 'Invalid or expired token');
    const user = await createTenant(t);
    const res = await call({ method: 'POST', url: '/organizations', headers: { authorization: `Bearer ${user.token}` }, payload: { name: ' ' } });
    expectError(res, 422, 'Validation failed');
    expect(res.json().details.map((d: { field: string }) => d.field)).toEqual(['name']);
  });
});
