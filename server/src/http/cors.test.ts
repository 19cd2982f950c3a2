// CORS through HTTP: preflights and allowed origins on the publishable routes, nothing on dashboard or server routes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROME_UA, createTenant, publishableKey, pushSubscription, type Tenant } from '../../test/fixtures.js';
import { startTestApp, type TestApp } from '../../test/harness.js';

let t: TestApp;
let owner: Tenant;
let publishable: Record<string, string>;

const SHOP = 'https://shop.example.com';
const OTHER = 'https://evil.example.net';

const preflight = (url: string, origin = SHOP, method = 'POST') =>
  t.app.inject({
    method: 'OPTIONS',
    url,
    headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'x-api-key, content-type' },
  });

const setOrigins = async (allowedOrigins: string[]) => {
  const res = await t.app.inject({ method: 'PATCH', url: `/projects/${owner.projectId}`, headers: owner.jwt, payload: { settings: { allowedOrigins } } });
  expect(res.statusCode, res.body).toBe(200);
  return res;
};

const register = (headers: Record<string, string>) =>
  t.app.inject({
    method: 'POST',
    url: '/subscribers',
    headers,
    payload: { projectId: owner.projectId, ...pushSubscription(), userAgent: CHROME_UA },
  });

const corsHeaders = (headers: Record<string, unknown>) => Object.keys(headers).filter((name) => name.startsWith('access-control-'));

beforeAll(async () => {
  t = await startTestApp();
  owner = await createTenant(t);
  publishable = await publishableKey(t, owner);
});
afterAll(() => t.close());

describe('preflights', () => {
  it.each([
    ['/subscribers', 'POST'],
    ['/subscribers/identify', 'POST'],
    ['/subscribers/tag', 'POST'],
    ['/subscribers/untag', 'POST'],
    ['/subscribers/seen', 'POST'],
    ['/subscribers/update', 'POST'],
    ['/subscribers/push-subscription', 'POST'],
    ['/subscribers/unsubscribe', 'POST'],
    ['/subscribers/token/st_abc', 'GET'],
    ['/projects/prj_any/push-config', 'GET'],
  ])('OPTIONS %s: 204 for any origin, allowing %s with x-api-key and content-type', async (url, method) => {
    const res = await preflight(url, OTHER, method);
    expect(res.statusCode).toBe(204);
    expect(res.headers).toMatchObject({
      'access-control-allow-origin': OTHER,
      'access-control-allow-methods': `${method}, OPTIONS`,
      'access-control-allow-headers': 'x-api-key, content-type',
      'access-control-max-age': '7200',
      vary: 'Origin',
    });
    expect(res.body).toBe('');
  });

  it.each([
    ['/subscribers/project/prj_x', 'GET'],
    ['/subscribers/sub_x', 'GET'],
    ['/campaigns', 'POST'],
    ['/transactional/send', 'POST'],
    ['/projects/prj_x/api-keys', 'POST'],
    ['/projects', 'GET'],
    ['/auth/login', 'POST'],
  ])('OPTIONS %s (not a publishable route): no CORS header', async (url, method) => {
    const res = await preflight(url, SHOP, method);
    expect(res.statusCode).toBe(404);
    expect(corsHeaders(res.headers)).toEqual([]);
  });
});

describe('requests', () => {
  it('with no allowed origins set, any origin may call, and the answer names it', async () => {
    const res = await register({ ...publishable, origin: OTHER });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.headers).toMatchObject({
      'access-control-allow-origin': OTHER,
      'access-control-expose-headers': 'retry-after, x-request-id',
      vary: 'Origin',
    });
  });

  describe('with allowed origins', () => {
    beforeAll(() => setOrigins([`${SHOP}/`, 'HTTPS://App.Example.com:8443']));
    afterAll(() => setOrigins([]));

    it('stores them normalised', async () => {
      const project = await t.app.inject({ method: 'GET', url: `/projects/${owner.projectId}`, headers: owner.jwt });
      expect(project.json<{ settings: { allowedOrigins: string[] } }>().settings.allowedOrigins).toEqual([SHOP, 'https://app.example.com:8443']);
    });

    it('an allowed origin calls and reads the answer', async () => {
      for (const origin of [SHOP, 'https://app.example.com:8443']) {
        const res = await register({ ...publishable, origin });
        expect(res.statusCode, res.body).toBe(201);
        expect(res.headers['access-control-allow-origin']).toBe(origin);
      }
    });

    it('another origin: 403 origin_not_allowed, no Access-Control-Allow-Origin, nothing written', async () => {
      const before = await t.app.inject({ method: 'GET', url: `/subscribers/project/${owner.projectId}`, headers: owner.live });
      const res = await register({ ...publishable, origin: OTHER });
      expect(res.statusCode).toBe(403);
      expect(res.json()).toMatchObject({ code: 'origin_not_allowed', message: expect.stringContaining(OTHER) });
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
      expect(res.headers.vary).toBe('Origin');
      const after = await t.app.inject({ method: 'GET', url: `/subscribers/project/${owner.projectId}`, headers: owner.live });
      expect(after.json<{ total: number }>().total).toBe(before.json<{ total: number }>().total);
    });

    it('the preflight is still answered for any origin (it carries no key)', async () => {
      expect((await preflight('/subscribers/seen', OTHER)).statusCode).toBe(204);
    });

    it('a call without an Origin (a server) or from the dashboard (JWT) is not an origin check', async () => {
      expect((await register(publishable)).statusCode).toBe(201);
      const token = (await register(owner.live)).json<{ token: string }>().token;
      const res = await t.app.inject({ method: 'POST', url: '/subscribers/seen', headers: { ...owner.jwt, origin: OTHER }, payload: { token } });
      expect(res.statusCode, res.body).toBe(200);
    });

    it('an unknown key from any origin is a 401 the page can read', async () => {
      const res = await register({ 'x-api-key': 'hrd_pub_live_00000000000000000000000000000000', origin: OTHER });
      expect(res.statusCode).toBe(401);
      expect(res.headers['access-control-allow-origin']).toBe(OTHER);
    });
  });

  it('server and dashboard routes answer without CORS headers, whatever the Origin', async () => {
    const list = await t.app.inject({ method: 'GET', url: `/subscribers/project/${owner.projectId}`, headers: { ...owner.live, origin: SHOP } });
    expect(list.statusCode).toBe(200);
    expect(corsHeaders(list.headers)).toEqual([]);
    const projects = await t.app.inject({ method: 'GET', url: '/projects', headers: { ...owner.jwt, origin: SHOP } });
    expect(projects.statusCode).toBe(200);
    expect(corsHeaders(projects.headers)).toEqual([]);
  });

  it.each([['https://shop.example.com/path'], ['ftp://shop.example.com'], ['shop.example.com'], ['https://user@shop.example.com']])(
    'refuses %s as an allowed origin (422)',
    async (origin) => {
      const res = await t.app.inject({
        method: 'PATCH',
        url: `/projects/${owner.projectId}`,
        headers: owner.jwt,
        payload: { settings: { allowedOrigins: [origin] } },
      });
      expect(res.statusCode).toBe(422);
      expect(res.json<{ details: { field: string }[] }>().details[0]!.field).toBe('settings.allowedOrigins.0');
    },
  );
});

describe('with rate limits on', () => {
  let limited: TestApp;
  let tenant: Tenant;
  beforeAll(async () => {
    limited = await startTestApp({ RATE_LIMIT_ENABLED: 'true', RATE_LIMIT_INGEST: '2' });
    tenant = await createTenant(limited);
  });
  afterAll(() => limited.close());

  it('preflights are not counted, and a 429 is readable by the page with its Retry-After', async () => {
    for (let i = 0; i < 5; i++) {
      const res = await limited.app.inject({ method: 'OPTIONS', url: '/subscribers/seen', headers: { origin: SHOP, 'access-control-request-method': 'POST' } });
      expect(res.statusCode).toBe(204);
    }
    const seen = () => limited.app.inject({ method: 'POST', url: '/subscribers/seen', headers: { ...tenant.live, origin: SHOP }, payload: { token: 'st_x' } });
    expect((await seen()).statusCode).toBe(404);
    expect((await seen()).statusCode).toBe(404);
    const refused = await seen();
    expect(refused.statusCode).toBe(429);
    expect(refused.headers).toMatchObject({
      'access-control-allow-origin': SHOP,
      'access-control-expose-headers': 'retry-after, x-request-id',
      'retry-after': expect.stringMatching(/^\d+$/),
    });
  });
});
