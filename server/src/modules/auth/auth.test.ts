// Login, tokens and the JWT lifecycle through HTTP on a real database.
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant, login, startWithTenant, type Tenant } from '../../../test/fixtures.js';
import { startTestApp, TEST_JWT_SECRET, type TestApp } from '../../../test/harness.js';

let t: TestApp;
let tenant: Tenant;

beforeAll(async () => {
  ({ t, tenant } = await startWithTenant());
});
afterAll(() => t.close());

const secretKey = new TextEncoder().encode(TEST_JWT_SECRET);

describe('POST /auth/login', () => {
  it('returns access_token and the user with organizations', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/auth/login', payload: { email: tenant.email, password: tenant.password } });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(typeof body.access_token).toBe('string');
    expect(body.user).toEqual({
      id: tenant.userId,
      email: tenant.email,
      name: 'Owner',
      organizations: [{ id: tenant.orgId, name: 'Org', role: 'OWNER' }],
    });
  });

  it('answers a wrong password and an unknown email with the same 401', async () => {
    const wrong = await t.app.inject({ method: 'POST', url: '/auth/login', payload: { email: tenant.email, password: 'nope' } });
    const unknown = await t.app.inject({ method: 'POST', url: '/auth/login', payload: { email: 'ghost@example.com', password: 'nope' } });
    expect(wrong.statusCode).toBe(401);
    expect(unknown.statusCode).toBe(401);
    expect(wrong.json().message).toBe(unknown.json().message);
    expect(wrong.json()).toMatchObject({ statusCode: 401, code: 'invalid_credentials' });
  });

  it('matches the email case-insensitively', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/auth/login',
      payload: { email: tenant.email.toUpperCase(), password: tenant.password },
    });
    expect(res.statusCode).toBe(200);
  });
});

describe('JWT', () => {
  const me = (authorization: string) => t.app.inject({ method: 'GET', url: '/auth/me', headers: { authorization } });

  it('opens GET /auth/me', async () => {
    const res = await me(`Bearer ${tenant.token}`);
    expect(res.statusCode).toBe(200);
    expect(res.json().id).toBe(tenant.userId);
  });

  it('rejects a missing, malformed or tampered token with 401 Invalid or expired token', async () => {
    const [header, payload] = tenant.token.split('.');
    const forged = Buffer.from(JSON.stringify({ sub: 'usr_someone_else', iss: 'herald', exp: 9999999999 })).toString('base64url');
    for (const authorization of ['', 'Bearer', 'Bearer not-a-jwt', `Bearer ${header}.${forged}.${tenant.token.split('.')[2]}`, `Bearer ${header}.${payload}.AAAA`]) {
      const res = await me(authorization);
      expect(res.statusCode, authorization).toBe(401);
      expect(res.json()).toMatchObject({ statusCode: 401, message: 'Invalid or expired token' });
    }
  });

  it('rejects an expired token', async () => {
    const expired = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(tenant.userId)
      .setIssuer('herald')
      .setIssuedAt(Math.floor(Date.now() / 1000) - 3600)
      .setExpirationTime(Math.floor(Date.now() / 1000) - 60)
      .sign(secretKey);
    expect((await me(`Bearer ${expired}`)).statusCode).toBe(401);
  });

  describe('hand-signed tokens: exp and iat required, lifetime at most JWT_TTL (7d here), iat not in the future', () => {
    const now = () => Math.floor(Date.now() / 1000);
    const DAY = 86_400;
    const signed = (claims: { iat?: number; exp?: number }) => {
      const jwt = new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject(tenant.userId).setIssuer('herald');
      if (claims.iat !== undefined) jwt.setIssuedAt(claims.iat);
      if (claims.exp !== undefined) jwt.setExpirationTime(claims.exp);
      return jwt.sign(secretKey);
    };
    const expectRefused = async (token: string) => {
      const res = await me(`Bearer ${token}`);
      expect(res.statusCode).toBe(401);
      expect(res.json()).toMatchObject({ statusCode: 401, message: 'Invalid or expired token' });
    };

    it('refuses a token without exp, which would never expire', async () => {
      await expectRefused(await signed({ iat: now() }));
    });

    it('refuses a token without iat', async () => {
      await expectRefused(await signed({ exp: now() + 3600 }));
    });

    it('refuses a token whose lifetime is longer than JWT_TTL, even while it is young', async () => {
      await expectRefused(await signed({ iat: now() - 60, exp: now() - 60 + 7 * DAY + 1 }));
      await expectRefused(await signed({ iat: now(), exp: now() + 365 * DAY }));
    });

    it('refuses a token issued in the future beyond the clock tolerance', async () => {
      await expectRefused(await signed({ iat: now() + 600, exp: now() + 600 + 3600 }));
    });

    it('accepts a token of exactly JWT_TTL, and an iat a few seconds ahead (clock skew)', async () => {
      expect((await me(`Bearer ${await signed({ iat: now(), exp: now() + 7 * DAY })}`)).statusCode).toBe(200);
      expect((await me(`Bearer ${await signed({ iat: now() + 20, exp: now() + 20 + 3600 })}`)).statusCode).toBe(200);
    });

    it('refuses the same tokens on the project routes and the event stream', async () => {
      const endless = await signed({ iat: now() });
      const projects = await t.app.inject({ method: 'GET', url: '/projects', headers: { authorization: `Bearer ${endless}`, 'x-org-id': tenant.orgId } });
      expect(projects.statusCode).toBe(401);
      const stream = await t.app.inject({ method: 'GET', url: `/campaigns/cmp_none/stream?token=${endless}&orgId=${tenant.orgId}` });
      expect(stream.statusCode).toBe(401);
    });
  });

  it('rejects alg none and other algorithms', async () => {
    const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const claims = { sub: tenant.userId, iss: 'herald', exp: Math.floor(Date.now() / 1000) + 3600 };
    const none = `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims)}.`;
    expect((await me(`Bearer ${none}`)).statusCode).toBe(401);
    const hs512 = await new SignJWT(claims).setProtectedHeader({ alg: 'HS512' }).sign(new Uint8Array(64).fill(1));
    expect((await me(`Bearer ${hs512}`)).statusCode).toBe(401);
    const hs512SameKey = await new SignJWT(claims).setProtectedHeader({ alg: 'HS512' }).sign(secretKey);
    expect((await me(`Bearer ${hs512SameKey}`)).statusCode).toBe(401);
  });

  it('expires after JWT_TTL', async () => {
    // `iat` and `exp` are whole seconds: a 2 s lifetime leaves at least 1 s for the first call on a loaded machine.
    const short = await startTestApp({ JWT_TTL: '2s' });
    try {
      const other = await createTenant(short);
      const token = await login(short, other.email, other.password);
      const call = () => short.app.inject({ method: 'GET', url: '/auth/me', headers: { authorization: `Bearer ${token}` } });
      expect((await call()).statusCode).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 3100));
      expect((await call()).statusCode).toBe(401);
    } finally {
      await short.close();
    }
  });
});
