// Rate limits (spec 8): default, ingest and per-transactional-route counters, per-project raises and the shared Redis store.
import { randomBytes } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant, type Tenant } from '../../test/fixtures.js';
import { createTestDatabase, startTestApp, type TestApp } from '../../test/harness.js';
import { rateLimitGroup, type RateLimitCounter } from './rate-limit.js';
import type { App } from './types.js';

const LIMITS = { RATE_LIMIT_ENABLED: 'true', RATE_LIMIT_DEFAULT: '5', RATE_LIMIT_INGEST: '3', RATE_LIMIT_TRANSACTIONAL: '2' };

/** Public test-only routes in the ingest group and under two transactional counters, declared as real routes do. */
const INGEST = '/subscribers/__rate-test';
const SEND = '/transactional/send/__rate-test';
const EMAIL = '/transactional/email/__rate-test';

function registerStandIns(app: App) {
  const open = (rateLimitCounter: RateLimitCounter) => ({ config: { access: { auth: 'public' as const }, rateLimitCounter } });
  app.get(INGEST, open('ingest'), async () => ({ ok: true }));
  app.get(`${INGEST}/:id`, open('ingest'), async () => ({ ok: true }));
  app.post(SEND, open('transactional:send'), async () => ({ ok: true }));
  app.post(EMAIL, open('transactional:email'), async () => ({ ok: true }));
}

/** A random documentation-range IPv6 address, so each test (and each parallel run) has counters of its own. */
function randomIp(): string {
  const groups = Array.from({ length: 4 }, () => randomBytes(2).toString('hex'));
  return `2001:db8::${groups.join(':')}`;
}

function expect429(res: LightMyRequestResponse) {
  expect(res.statusCode).toBe(429);
  expect(res.json()).toEqual({
    statusCode: 429,
    code: 'rate_limited',
    message: 'Rate limit exceeded',
    requestId: res.headers['x-request-id'],
  });
  const retryAfter = String(res.headers['retry-after']);
  expect(retryAfter).toMatch(/^\d+$/);
  expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
  expect(Number(retryAfter)).toBeLessThanOrEqual(60);
}

describe('rateLimitGroup', () => {
  it.each([
    [undefined, 'default', 'default'],
    ['ingest', 'ingest', 'ingest'],
    ['transactional:send', 'transactional', 'transactional:send'],
    ['transactional:email', 'transactional', 'transactional:email'],
  ] as const)('reads the declaration %s as the %s group (counter %s)', (declared, group, counter) => {
    expect(rateLimitGroup(declared)).toEqual({ group, counter });
  });
});

describe('with rate limits on (local store)', () => {
  let t: TestApp;
  let tenant: Tenant;

  beforeAll(async () => {
    t = await startTestApp(LIMITS, { beforeReady: registerStandIns });
    // createTenant logs in from 127.0.0.1; the three tenants of this block stay under its default limit of 5.
    tenant = await createTenant(t);
  });
  afterAll(() => t.close());

  it('answers 429 Rate limit exceeded with Retry-After once the default limit is used', async () => {
    const call = () => t.app.inject({ method: 'GET', url: '/projects', headers: tenant.jwt, remoteAddress: '192.0.2.10' });
    for (let i = 0; i < 5; i++) expect((await call()).statusCode).toBe(200);
    expect429(await call());
    expect429(await call());
  });

  it('counts per IP address', async () => {
    const call = (ip: string) => t.app.inject({ method: 'GET', url: '/auth/me', headers: { authorization: tenant.jwt.authorization! }, remoteAddress: ip });
    for (let i = 0; i < 5; i++) expect((await call('192.0.2.20')).statusCode).toBe(200);
    expect((await call('192.0.2.20')).statusCode).toBe(429);
    expect((await call('192.0.2.21')).statusCode).toBe(200);
  });

  it('counts failed and unauthenticated requests too', async () => {
    const call = () => t.app.inject({ method: 'GET', url: '/auth/me', remoteAddress: '192.0.2.30' });
    for (let i = 0; i < 5; i++) expect((await call()).statusCode).toBe(401);
    expect429(await call());
  });

  it('shares one default counter across default-group routes', async () => {
    const ip = '192.0.2.40';
    for (let i = 0; i < 3; i++) expect((await t.app.inject({ method: 'GET', url: '/projects', headers: tenant.jwt, remoteAddress: ip })).statusCode).toBe(200);
    for (let i = 0; i < 2; i++) expect((await t.app.inject({ method: 'GET', url: '/auth/me', headers: tenant.jwt, remoteAddress: ip })).statusCode).toBe(200);
    expect429(await t.app.inject({ method: 'GET', url: '/members', headers: tenant.jwt, remoteAddress: ip }));
  });

  it('counts the ingest group (/subscribers*) apart from the default group, at its own limit', async () => {
    const ip = '192.0.2.50';
    const ingest = (url: string) => t.app.inject({ method: 'GET', url, remoteAddress: ip });
    expect((await ingest(INGEST)).statusCode).toBe(200);
    expect((await ingest(`${INGEST}/sub_1`)).statusCode).toBe(200);
    expect((await ingest(`${INGEST}/sub_2`)).statusCode).toBe(200);
    expect429(await ingest(INGEST));
    expect429(await ingest(`${INGEST}/sub_3`));
    // The real ingest routes declare the same counter (limits apply before authentication).
    expect429(await t.app.inject({ method: 'POST', url: '/subscribers', remoteAddress: ip, payload: {} }));
    expect429(await t.app.inject({ method: 'POST', url: '/subscribers/seen', remoteAddress: ip, payload: {} }));
    expect429(await t.app.inject({ method: 'PATCH', url: '/subscribers/sub_1', remoteAddress: ip, payload: {} }));
    expect429(await t.app.inject({ method: 'POST', url: '/subscribers/update', remoteAddress: ip, payload: {} }));
    // The default counter of the same IP is untouched.
    for (let i = 0; i < 5; i++) expect((await t.app.inject({ method: 'GET', url: '/projects', headers: tenant.jwt, remoteAddress: ip })).statusCode).toBe(200);
    expect429(await t.app.inject({ method: 'GET', url: '/projects', headers: tenant.jwt, remoteAddress: ip }));
  });

  it('counts each transactional route independently', async () => {
    const ip = '192.0.2.60';
    const send = () => t.app.inject({ method: 'POST', url: SEND, remoteAddress: ip, payload: {} });
    const email = () => t.app.inject({ method: 'POST', url: EMAIL, remoteAddress: ip, payload: {} });
    expect((await send()).statusCode).toBe(200);
    expect((await send()).statusCode).toBe(200);
    expect429(await send());
    expect((await email()).statusCode).toBe(200);
    expect((await email()).statusCode).toBe(200);
    expect429(await email());
    // Neither touched the ingest counter.
    expect((await t.app.inject({ method: 'GET', url: INGEST, remoteAddress: ip })).statusCode).toBe(200);
  });

  it('does not limit /healthz', async () => {
    for (let i = 0; i < 12; i++) {
      expect((await t.app.inject({ method: 'GET', url: '/healthz', remoteAddress: '192.0.2.70' })).statusCode).toBe(200);
    }
  });

  it('gives a project with a raised limit the higher limit with its API key', async () => {
    const raised = await createTenant(t);
    await t.services.projects.setRateLimits(raised.orgId, raised.projectId, { default: 8 });
    const withKey = (ip: string, headers: Record<string, string>) =>
      t.app.inject({ method: 'GET', url: `/projects/${raised.projectId}`, headers, remoteAddress: ip });

    for (let i = 0; i < 8; i++) expect((await withKey('192.0.2.80', raised.live)).statusCode).toBe(200);
    expect429(await withKey('192.0.2.80', raised.live));

    // Another project's key, without a raise, keeps the configured limit.
    const plain = (ip: string) => t.app.inject({ method: 'GET', url: `/projects/${tenant.projectId}`, headers: tenant.live, remoteAddress: ip });
    for (let i = 0; i < 5; i++) expect((await plain('192.0.2.81')).statusCode).toBe(200);
    expect429(await plain('192.0.2.81'));
  });

  it('does not let a raise lower the configured limit', async () => {
    const lowered = await createTenant(t);
    await t.services.projects.setRateLimits(lowered.orgId, lowered.projectId, { default: 1 });
    const call = () => t.app.inject({ method: 'GET', url: `/projects/${lowered.projectId}`, headers: lowered.live, remoteAddress: '192.0.2.90' });
    for (let i = 0; i < 5; i++) expect((await call()).statusCode).toBe(200);
    expect429(await call());
  });

  it('does not apply a raise to a revoked or unknown key', async () => {
    const call = () =>
      t.app.inject({ method: 'GET', url: `/projects/${tenant.projectId}`, headers: { 'x-api-key': 'hrd_live_unknown' }, remoteAddress: '192.0.2.100' });
    for (let i = 0; i < 5; i++) expect((await call()).statusCode).toBe(401);
    expect429(await call());
  });
});

describe('with rate limits off', () => {
  it('never answers 429', async () => {
    const t = await startTestApp({ RATE_LIMIT_DEFAULT: '1' });
    try {
      for (let i = 0; i < 4; i++) expect((await t.app.inject({ method: 'GET', url: '/auth/me' })).statusCode).toBe(401);
    } finally {
      await t.close();
    }
  });
});

describe('shared Redis store', () => {
  const redisUrl = process.env.HERALD_TEST_REDIS_URL;

  it.skipIf(!redisUrl)('shares counters between two API instances on the same database', async () => {
    const database = await createTestDatabase();
    const env = { ...LIMITS, REDIS_URL: redisUrl, TRUST_PROXY: 'true' };
    const ip = randomIp();
    // The tenant is set up without limits, so its login counts against no shared counter.
    const setup = await startTestApp({}, { database });
    const tenant = await createTenant(setup).finally(() => setup.close());
    const a = await startTestApp(env, { database, beforeReady: registerStandIns });
    const b = await startTestApp(env, { database, beforeReady: registerStandIns });
    const redis = new Redis(redisUrl!);
    try {
      expect(a.config.redisUrl).toBe(redisUrl);
      const call = (instance: TestApp, url = '/projects') =>
        instance.app.inject({ method: 'GET', url, headers: { ...tenant.jwt, 'x-forwarded-for': ip } });

      // 5 requests split across both instances use up the default limit for that IP on both.
      for (const instance of [a, b, a, b, a]) expect((await call(instance)).statusCode).toBe(200);
      expect429(await call(b));
      expect429(await call(a));

      // Each transactional route's counter is shared too.
      const send = (instance: TestApp) =>
        instance.app.inject({ method: 'POST', url: SEND, headers: { 'x-forwarded-for': ip }, payload: {} });
      expect((await send(a)).statusCode).toBe(200);
      expect((await send(b)).statusCode).toBe(200);
      expect429(await send(a));
      expect429(await send(b));

      // The counters are in Redis under the herald namespace.
      const keys = await redis.keys(`herald:rate:*${ip}`);
      expect(keys.sort()).toEqual([`herald:rate:default|${ip}`, `herald:rate:transactional:send|${ip}`]);
    } finally {
      const keys = await redis.keys(`herald:rate:*${ip}`);
      if (keys.length > 0) await redis.del(...keys);
      await redis.quit();
      await a.close();
      await b.close();
      await database.drop();
    }
  });
});
