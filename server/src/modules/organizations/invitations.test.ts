// Invitations through HTTP: no account enumeration, acceptance by consent only, single-use expiring hashed secrets,
// revocation, roles and tenant isolation.
import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { addMember, createTenant, login, type Tenant } from '../../../test/fixtures.js';
import { startTestApp, type TestApp } from '../../../test/harness.js';
import { randomToken, sha256 } from '../../shared/secrets.js';

let t: TestApp;
let org: Tenant;

beforeAll(async () => {
  t = await startTestApp({ PUBLIC_URL: 'https://herald.example.com' });
});
afterAll(() => t.close());
beforeEach(async () => {
  org = await createTenant(t);
});

const call = (options: InjectOptions) => t.app.inject(options);
const newEmail = (label = 'invitee') => `${label}-${randomToken(8)}@example.com`;
const password = 'a long enough password';
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

interface Issued {
  id: string;
  email: string;
  role: string;
  token: string;
  acceptUrl: string;
  expiresAt: string;
}

async function invite(email: string, role = 'MEMBER', headers: Record<string, string> = org.jwt): Promise<Issued> {
  const res = await call({ method: 'POST', url: '/invitations', headers, payload: { email, role } });
  expect(res.statusCode, res.body).toBe(202);
  return res.json<Issued>();
}

const accept = (payload: Record<string, unknown>, headers: Record<string, string> = {}) =>
  call({ method: 'POST', url: '/invitations/accept', headers, payload });

function expectError(res: Awaited<ReturnType<typeof call>>, statusCode: number, code: string) {
  expect(res.statusCode, res.body).toBe(statusCode);
  expect(res.json()).toMatchObject({ statusCode, code, requestId: expect.any(String) });
}

const roleIn = async (orgId: string, userId: string) =>
  (await t.database.pool.query<{ role: string }>('SELECT role FROM memberships WHERE organization_id = $1 AND user_id = $2', [orgId, userId]))
    .rows[0]?.role;
const usersWith = async (email: string) =>
  (await t.database.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM users WHERE lower(email) = lower($1)', [email])).rows[0]!.n;

describe('POST /invitations', () => {
  it('answers the same for an address with an account and one without, and adds nobody', async () => {
    const existing = await createTenant(t);
    const fresh = newEmail();
    const a = await call({ method: 'POST', url: '/invitations', headers: org.jwt, payload: { email: existing.email, role: 'ADMIN' } });
    const b = await call({ method: 'POST', url: '/invitations', headers: org.jwt, payload: { email: fresh, role: 'ADMIN' } });
    expect([a.statusCode, b.statusCode]).toEqual([202, 202]);
    const shape = (body: Record<string, unknown>) => Object.keys(body).sort();
    expect(shape(a.json())).toEqual(shape(b.json()));
    expect(shape(a.json())).toEqual(['acceptUrl', 'createdAt', 'email', 'emailProblem', 'emailed', 'emailedFrom', 'expiresAt', 'id', 'invitedBy', 'role', 'token']);
    for (const [res, email] of [
      [a, existing.email],
      [b, fresh],
    ] as const) {
      const body = res.json<Issued & { invitedBy: string }>();
      expect(body).toMatchObject({ id: expect.stringMatching(/^inv_/), email, role: 'ADMIN', invitedBy: org.userId });
      expect(body.acceptUrl).toBe(`https://herald.example.com/app/join#token=${body.token}`);
      const days = (Date.parse(body.expiresAt) - Date.now()) / 86_400_000;
      expect(days).toBeGreaterThan(6.99);
      expect(days).toBeLessThanOrEqual(7);
    }
    // Nobody joined and no account was created.
    expect(await roleIn(org.orgId, existing.userId)).toBeUndefined();
    expect(await usersWith(fresh)).toBe(0);
    const members = await call({ method: 'GET', url: '/members', headers: org.jwt });
    expect(members.json().total).toBe(1);
  });

  it('keeps only the SHA-256 digest of the secret', async () => {
    const issued = await invite(newEmail());
    const { rows } = await t.database.pool.query('SELECT * FROM invitations WHERE id = $1', [issued.id]);
    expect(rows[0].token_hash).toBe(sha256(issued.token));
    expect(JSON.stringify(rows[0])).not.toContain(issued.token);
  });

  it('an address that is already a member → 409, in any case', async () => {
    expectError(await call({ method: 'POST', url: '/invitations', headers: org.jwt, payload: { email: org.email.toUpperCase(), role: 'VIEWER' } }), 409, 'already_member');
  });

  it('rejects an invalid email, an unknown role and unknown fields with 422', async () => {
    const bad = await call({ method: 'POST', url: '/invitations', headers: org.jwt, payload: { email: 'nope', role: 'GOD', name: 'x' } });
    expectError(bad, 422, 'validation_failed');
    expect(bad.json().details.map((d: { field: string }) => d.field).sort()).toEqual(['email', 'name', 'role']);
  });

  it('inviting the same address again replaces the open invitation: the old link stops working', async () => {
    const email = newEmail();
    const first = await invite(email, 'VIEWER');
    const second = await invite(email.toUpperCase(), 'MEMBER');
    const list = await call({ method: 'GET', url: '/invitations', headers: org.jwt });
    expect(list.json().data.map((i: { id: string }) => i.id)).toEqual([second.id]);
    expectError(await accept({ token: first.token, name: 'New', password }), 410, 'invitation_revoked');
    const accepted = await accept({ token: second.token, name: 'New', password });
    expect(accepted.statusCode, accepted.body).toBe(200);
    expect(accepted.json().organization.role).toBe('MEMBER');
  });
});

describe('roles', () => {
  it('a VIEWER or MEMBER cannot invite, list or revoke (403), an ADMIN can but not for OWNER', async () => {
    const issued = await invite(newEmail(), 'MEMBER');
    const ownerInvite = await invite(newEmail(), 'OWNER');
    for (const role of ['VIEWER', 'MEMBER'] as const) {
      const { headers } = await addMember(t, org, role);
      expectError(await call({ method: 'POST', url: '/invitations', headers, payload: { email: newEmail(), role: 'VIEWER' } }), 403, 'insufficient_role');
      expectError(await call({ method: 'GET', url: '/invitations', headers }), 403, 'insufficient_role');
      expectError(await call({ method: 'DELETE', url: `/invitations/${issued.id}`, headers }), 403, 'insufficient_role');
    }
    const admin = await addMember(t, org, 'ADMIN');
    expectError(await call({ method: 'POST', url: '/invitations', headers: admin.headers, payload: { email: newEmail(), role: 'OWNER' } }), 403, 'forbidden');
    expectError(await call({ method: 'DELETE', url: `/invitations/${ownerInvite.id}`, headers: admin.headers }), 403, 'forbidden');
    expect((await call({ method: 'DELETE', url: `/invitations/${issued.id}`, headers: admin.headers })).statusCode).toBe(204);
    const open = await call({ method: 'GET', url: '/invitations', headers: admin.headers });
    expect(open.json().data.map((i: { id: string }) => i.id)).toEqual([ownerInvite.id]);
  });
});

describe('POST /invitations/accept', () => {
  it('an existing user must be signed in as the invited address; then they join with the role', async () => {
    const invitee = await createTenant(t);
    const issued = await invite(invitee.email.toUpperCase(), 'ADMIN');

    expectError(await accept({ token: issued.token }), 401, 'sign_in_required');
    expectError(await accept({ token: issued.token, name: 'Mallory', password }), 401, 'sign_in_required');
    const stranger = await createTenant(t);
    expectError(await accept({ token: issued.token }, bearer(stranger.token)), 403, 'invitation_email_mismatch');
    expect(await roleIn(org.orgId, stranger.userId)).toBeUndefined();
    expectError(await accept({ token: issued.token, password }, bearer(invitee.token)), 422, 'validation_failed');

    const res = await accept({ token: issued.token }, bearer(invitee.token));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      organization: { id: org.orgId, name: 'Org', role: 'ADMIN' },
      user: { id: invitee.userId, email: invitee.email, name: 'Owner' },
    });
    expect(await roleIn(org.orgId, invitee.userId)).toBe('ADMIN');
    // Their password is untouched and their token opens the organization at once.
    await login(t, invitee.email, invitee.password);
    expect((await call({ method: 'GET', url: '/projects', headers: { ...bearer(invitee.token), 'x-org-id': org.orgId } })).statusCode).toBe(200);
  });

  it('a new address creates its account with name and password while accepting, and nothing before', async () => {
    const email = newEmail();
    const issued = await invite(email, 'VIEWER');
    const missing = await accept({ token: issued.token });
    expectError(missing, 422, 'validation_failed');
    expect(missing.json().details.map((d: { field: string }) => d.field)).toEqual(['name', 'password']);
    expectError(await accept({ token: issued.token, name: 'Short', password: 'short' }), 422, 'validation_failed');
    expect(await usersWith(email)).toBe(0);

    const res = await accept({ token: issued.token, name: 'Ada', password });
    expect(res.statusCode, res.body).toBe(200);
    const { user } = res.json<{ user: { id: string; email: string; name: string } }>();
    expect(user).toEqual({ id: expect.stringMatching(/^usr_/), email, name: 'Ada' });
    expect(await roleIn(org.orgId, user.id)).toBe('VIEWER');
    const token = await login(t, email, password);
    const me = await call({ method: 'GET', url: '/auth/me', headers: bearer(token) });
    expect(me.json().organizations).toEqual([{ id: org.orgId, name: 'Org', role: 'VIEWER' }]);
    const members = await call({ method: 'GET', url: '/members', headers: org.jwt });
    expect(members.json().data).toEqual(expect.arrayContaining([expect.objectContaining({ userId: user.id, name: 'Ada', role: 'VIEWER' })]));
  });

  it('a used, revoked or expired secret is refused (410) and an unknown one is 404; nothing is created', async () => {
    const used = await invite(newEmail());
    expect((await accept({ token: used.token, name: 'Once', password })).statusCode).toBe(200);
    expectError(await accept({ token: used.token, name: 'Twice', password }), 410, 'invitation_used');

    const revokedEmail = newEmail();
    const revoked = await invite(revokedEmail);
    expect((await call({ method: 'DELETE', url: `/invitations/${revoked.id}`, headers: org.jwt })).statusCode).toBe(204);
    expectError(await call({ method: 'DELETE', url: `/invitations/${revoked.id}`, headers: org.jwt }), 404, 'not_found');
    expectError(await accept({ token: revoked.token, name: 'Late', password }), 410, 'invitation_revoked');

    const expiredEmail = newEmail();
    const expired = await invite(expiredEmail);
    await t.database.pool.query(`UPDATE invitations SET expires_at = now() - interval '1 second' WHERE id = $1`, [expired.id]);
    const list = await call({ method: 'GET', url: '/invitations', headers: org.jwt });
    expect(list.json().data.find((i: { id: string }) => i.id === expired.id)).toMatchObject({ status: 'expired', email: expiredEmail });
    expectError(await accept({ token: expired.token, name: 'Late', password }), 410, 'invitation_expired');

    expectError(await accept({ token: `hrd_inv_${randomToken(32)}`, name: 'Guess', password }), 404, 'not_found');
    expect(await usersWith(revokedEmail)).toBe(0);
    expect(await usersWith(expiredEmail)).toBe(0);
  });

  it('two acceptances of one secret at the same moment: one joins, the other is refused', async () => {
    const email = newEmail();
    const issued = await invite(email);
    const results = await Promise.all([accept({ token: issued.token, name: 'A', password }), accept({ token: issued.token, name: 'B', password })]);
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 410]);
    expect(await usersWith(email)).toBe(1);
  });
});

describe('GET /invitations', () => {
  it('lists open invitations without names; members show invitees only once they accept', async () => {
    const email = newEmail();
    const issued = await invite(email, 'MEMBER');
    const list = await call({ method: 'GET', url: '/invitations', headers: org.jwt });
    expect(list.statusCode).toBe(200);
    expect(list.json()).toMatchObject({ page: 1, pageSize: 20, total: 1 });
    expect(list.json().data).toEqual([
      { id: issued.id, email, role: 'MEMBER', status: 'pending', invitedBy: org.userId, createdAt: expect.any(String), expiresAt: issued.expiresAt },
    ]);
    const members = await call({ method: 'GET', url: '/members', headers: org.jwt });
    expect(members.json().data.map((m: { email: string }) => m.email)).toEqual([org.email]);
  });
});

describe('tenant isolation', () => {
  it('another organization’s ADMIN cannot list, revoke or see an invitation', async () => {
    const issued = await invite(newEmail());
    const other = await createTenant(t);
    const list = await call({ method: 'GET', url: '/invitations', headers: other.jwt });
    expect(list.json()).toMatchObject({ data: [], total: 0 });
    expectError(await call({ method: 'DELETE', url: `/invitations/${issued.id}`, headers: other.jwt }), 404, 'not_found');
    // Naming this organization in x-org-id without belonging to it is refused before anything is read.
    expectError(await call({ method: 'GET', url: '/invitations', headers: { ...bearer(other.token), 'x-org-id': org.orgId } }), 403, 'not_a_member');
    expectError(
      await call({ method: 'DELETE', url: `/invitations/${issued.id}`, headers: { ...bearer(other.token), 'x-org-id': org.orgId } }),
      403,
      'not_a_member',
    );
    const { rows } = await t.database.pool.query('SELECT revoked_at FROM invitations WHERE id = $1', [issued.id]);
    expect(rows[0].revoked_at).toBeNull();
  });
});
