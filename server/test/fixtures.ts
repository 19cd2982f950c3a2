// Test fixtures: a user with an organization, a project and keys, created through the real services and login.
import { createECDH, randomBytes } from 'node:crypto';
import { inArray } from 'drizzle-orm';
import { subscribers } from '../src/db/schema.js';
import { hashPassword, userDirectory } from '../src/modules/auth/index.js';
import { emailStatusOf } from '../src/modules/segments/index.js';
import type { Role } from '../src/modules/tenancy.js';
import { newId } from '../src/shared/ids.js';
import { randomToken } from '../src/shared/secrets.js';
import { startTestApp, type TestApp } from './harness.js';

export interface Tenant {
  userId: string;
  email: string;
  password: string;
  token: string;
  orgId: string;
  projectId: string;
  liveKey: string;
  testKey: string;
  /** Headers for the dashboard user (JWT + x-org-id). */
  jwt: Record<string, string>;
  /** Headers for the project's live key. */
  live: Record<string, string>;
  /** Headers for the project's test key. */
  test: Record<string, string>;
}

export async function login(t: TestApp, email: string, password: string): Promise<string> {
  const res = await t.app.inject({ method: 'POST', url: '/auth/login', payload: { email, password } });
  if (res.statusCode !== 200) throw new Error(`login failed: ${res.statusCode} ${res.body}`);
  return res.json<{ access_token: string }>().access_token;
}

/** A fresh organization owned by a new user, with one project and a live and a test key. */
export async function createTenant(t: TestApp): Promise<Tenant> {
  const email = `owner-${randomToken(8)}@example.com`;
  const password = 'correct horse battery staple';
  const user = await userDirectory.create(t.database.db, { id: newId('usr'), email, name: 'Owner', passwordHash: await hashPassword(password) });
  const org = await t.services.organizations.create(user.id, 'Org');
  const project = await t.services.projects.create(org.id, { name: 'Project' });
  const scope = { organizationId: org.id, projectId: project.id, sandbox: false };
  const live = await t.services.apiKeys.create(scope, { name: 'live', mode: 'live' });
  const test = await t.services.apiKeys.create(scope, { name: 'test', mode: 'test' });
  const token = await login(t, email, password);
  return {
    userId: user.id,
    email,
    password,
    token,
    orgId: org.id,
    projectId: project.id,
    liveKey: live.key,
    testKey: test.key,
    jwt: { authorization: `Bearer ${token}`, 'x-org-id': org.id },
    live: { 'x-api-key': live.key },
    test: { 'x-api-key': test.key },
  };
}

/** Headers with a new live publishable key (the browser SDK's) of the tenant's project, created through the API. */
export async function publishableKey(t: TestApp, tenant: Tenant): Promise<Record<string, string>> {
  const res = await t.app.inject({
    method: 'POST',
    url: `/projects/${tenant.projectId}/api-keys`,
    headers: tenant.jwt,
    payload: { name: 'browser', mode: 'live', scope: 'publishable' },
  });
  if (res.statusCode !== 201) throw new Error(`creating a publishable key failed: ${res.statusCode} ${res.body}`);
  return { 'x-api-key': res.json<{ key: string }>().key };
}

/** Invites a new address with `role` to the tenant's organization, accepts as a new account, and returns its JWT headers. */
export async function addMember(t: TestApp, tenant: Tenant, role: Role): Promise<{ userId: string; headers: Record<string, string> }> {
  const email = `${role.toLowerCase()}-${randomToken(8)}@example.com`;
  const password = 'correct horse battery staple';
  const invited = await t.app.inject({ method: 'POST', url: '/invitations', headers: tenant.jwt, payload: { email, role } });
  if (invited.statusCode !== 202) throw new Error(`invitation failed: ${invited.statusCode} ${invited.body}`);
  const accepted = await t.app.inject({
    method: 'POST',
    url: '/invitations/accept',
    payload: { token: invited.json<{ token: string }>().token, name: role, password },
  });
  if (accepted.statusCode !== 200) throw new Error(`accepting failed: ${accepted.statusCode} ${accepted.body}`);
  const token = await login(t, email, password);
  return { userId: accepted.json<{ user: { id: string } }>().user.id, headers: { authorization: `Bearer ${token}`, 'x-org-id': tenant.orgId } };
}

export const CHROME_UA =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36';

/** What a browser's PushSubscription hands the SDK: a fresh endpoint, P-256 public key and auth secret. */
export function pushSubscription() {
  const ecdh = createECDH('prime256v1');
  ecdh.generateKeys();
  return {
    endpoint: `https://fcm.googleapis.com/fcm/send/${randomBytes(12).toString('hex')}`,
    p256dh: ecdh.getPublicKey().toString('base64url'),
    auth: randomBytes(16).toString('base64url'),
  };
}

/** The app on a fresh database with one tenant: the set-up most HTTP tests start from. */
export async function startWithTenant(): Promise<{ t: TestApp; tenant: Tenant }> {
  const t = await startTestApp();
  return { t, tenant: await createTenant(t) };
}

/** The app on a fresh database with two tenants, the second to prove the first's data stays its own. */
export async function startWithTwoTenants(): Promise<{ t: TestApp; tenant: Tenant; other: Tenant }> {
  const t = await startTestApp();
  const [tenant, other] = await Promise.all([createTenant(t), createTenant(t)]);
  return { t, tenant, other };
}

/** Each subscriber's email status as every answer and audience reads it (`emailStatusOf`), in the order of `ids`. */
export async function emailStatuses(t: TestApp, ids: readonly string[]): Promise<string[]> {
  const rows = await t.database.db
    .select({ id: subscribers.id, status: emailStatusOf() })
    .from(subscribers)
    .where(inArray(subscribers.id, [...ids]));
  const byId = new Map(rows.map((r) => [r.id, r.status as string]));
  return ids.map((id) => byId.get(id) ?? 'missing');
}
