// Identity verification through HTTP: a publishable key's identify carries the HMAC the customer's server computed.
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, CHROME_UA, createTenant, publishableKey, pushSubscription, type Tenant } from '../../../test/fixtures.js';
import { startTestApp, type TestApp } from '../../../test/harness.js';

let t: TestApp;
let owner: Tenant;
let publishable: Record<string, string>;

const hmac = (secret: string, value: string) => createHmac('sha256', secret).update(value).digest('hex');

beforeAll(async () => {
  t = await startTestApp();
  owner = await createTenant(t);
  publishable = await publishableKey(t, owner);
});
afterAll(() => t.close());

async function subscriberToken() {
  const res = await t.app.inject({
    method: 'POST',
    url: '/subscribers',
    headers: publishable,
    payload: { projectId: owner.projectId, ...pushSubscription(), userAgent: CHROME_UA },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json<{ token: string }>().token;
}

const identify = (headers: Record<string, string>, payload: Record<string, unknown>) =>
  t.app.inject({ method: 'POST', url: '/subscribers/identify', headers, payload });

const secretOf = async () =>
  (await t.app.inject({ method: 'GET', url: `/projects/${owner.projectId}/identity-secret`, headers: owner.jwt })).json<{ identitySecret: string }>()
    .identitySecret;

const setVerification = async (on: boolean) => {
  const res = await t.app.inject({
    method: 'PATCH',
    url: `/projects/${owner.projectId}`,
    headers: owner.jwt,
    payload: { settings: { identityVerification: on } },
  });
  expect(res.statusCode, res.body).toBe(200);
};

const externalIdOf = async (token: string) =>
  (await t.app.inject({ method: 'GET', url: `/subscribers/token/${token}`, headers: owner.live })).json<{ externalId: string | null }>().externalId;

describe('identity secret', () => {
  it('is generated per project, readable again by an ADMIN, and replaced by a rotation', async () => {
    const first = await secretOf();
    expect(first).toMatch(/^hrd_ids_[0-9a-z]{40}$/);
    expect(await secretOf()).toBe(first);
    const other = await createTenant(t);
    const otherSecret = await t.app.inject({ method: 'GET', url: `/projects/${other.projectId}/identity-secret`, headers: other.jwt });
    expect(otherSecret.json<{ identitySecret: string }>().identitySecret).not.toBe(first);

    const rotated = await t.app.inject({ method: 'POST', url: `/projects/${owner.projectId}/identity-secret/rotate`, headers: owner.jwt });
    expect(rotated.statusCode, rotated.body).toBe(200);
    const second = rotated.json<{ identitySecret: string }>().identitySecret;
    expect(second).toMatch(/^hrd_ids_/);
    expect(second).not.toBe(first);
    expect(await secretOf()).toBe(second);
  });

  it('is refused to a MEMBER, to API keys of either scope, and is not in the project', async () => {
    const member = await addMember(t, owner, 'MEMBER');
    const url = `/projects/${owner.projectId}/identity-secret`;
    expect((await t.app.inject({ method: 'GET', url, headers: member.headers })).statusCode).toBe(403);
    expect((await t.app.inject({ method: 'POST', url: `${url}/rotate`, headers: member.headers })).statusCode).toBe(403);
    expect((await t.app.inject({ method: 'GET', url, headers: owner.live })).statusCode).toBe(401);
    expect((await t.app.inject({ method: 'GET', url, headers: publishable })).json<{ code: string }>().code).toBe('publishable_key_forbidden');
    const project = await t.app.inject({ method: 'GET', url: `/projects/${owner.projectId}`, headers: owner.jwt });
    expect(project.body).not.toContain(await secretOf());
  });
});

describe('identify with identity verification', () => {
  it('is off by default: a publishable key identifies without a hash', async () => {
    const token = await subscriberToken();
    const res = await identify(publishable, { token, externalId: 'user-off' });
    expect(res.statusCode, res.body).toBe(200);
    expect(await externalIdOf(token)).toBe('user-off');
  });

  describe('when on', () => {
    beforeAll(() => setVerification(true));
    afterAll(() => setVerification(false));

    it('accepts the HMAC of the externalId under the identity secret (hex, either case)', async () => {
      const token = await subscriberToken();
      const hash = hmac(await secretOf(), 'user-42');
      expect((await identify(publishable, { token, externalId: 'user-42', externalIdHash: hash })).statusCode).toBe(200);
      expect(await externalIdOf(token)).toBe('user-42');
      const again = await identify(publishable, { token, externalId: 'user-42', externalIdHash: hash.toUpperCase() });
      expect(again.statusCode, again.body).toBe(200);
    });

    it('refuses another user’s id with a hash of a different one: 401 invalid_identity_hash, nothing changed', async () => {
      const token = await subscriberToken();
      await identify(publishable, { token, externalId: 'visitor', externalIdHash: hmac(await secretOf(), 'visitor') });
      const res = await identify(publishable, { token, externalId: 'admin', externalIdHash: hmac(await secretOf(), 'visitor') });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toMatchObject({ statusCode: 401, code: 'invalid_identity_hash', requestId: expect.any(String) });
      expect(await externalIdOf(token)).toBe('visitor');
    });

    it('refuses a hash made with a rotated-away secret', async () => {
      const token = await subscriberToken();
      const old = await secretOf();
      await t.app.inject({ method: 'POST', url: `/projects/${owner.projectId}/identity-secret/rotate`, headers: owner.jwt });
      const res = await identify(publishable, { token, externalId: 'user-7', externalIdHash: hmac(old, 'user-7') });
      expect(res.statusCode).toBe(401);
      expect(await externalIdOf(token)).toBeNull();
    });

    it('without a hash: 422 naming externalIdHash; a malformed hash: 422 too', async () => {
      const token = await subscriberToken();
      const missing = await identify(publishable, { token, externalId: 'user-9' });
      expect(missing.statusCode).toBe(422);
      expect(missing.json()).toMatchObject({ code: 'validation_failed', details: [{ field: 'externalIdHash', error: expect.stringContaining('required') }] });
      const malformed = await identify(publishable, { token, externalId: 'user-9', externalIdHash: 'abc' });
      expect(malformed.statusCode).toBe(422);
      expect(malformed.json<{ details: { field: string }[] }>().details[0]!.field).toBe('externalIdHash');
      expect(await externalIdOf(token)).toBeNull();
    });

    it('does not tell a refused caller whether the token exists', async () => {
      const res = await identify(publishable, { token: 'st_unknown', externalId: 'user-1', externalIdHash: '0'.repeat(64) });
      expect(res.statusCode).toBe(401);
    });

    it('trusts server keys and dashboard users: no hash needed', async () => {
      const token = await subscriberToken();
      expect((await identify(owner.live, { token, externalId: 'from-server' })).statusCode).toBe(200);
      expect((await identify(owner.jwt, { token, externalId: 'from-dashboard' })).statusCode).toBe(200);
      expect(await externalIdOf(token)).toBe('from-dashboard');
    });
  });
});
