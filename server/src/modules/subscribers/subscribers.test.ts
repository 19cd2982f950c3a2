// Subscribers through HTTP on a real database: registration, validation, derivation, token routes, reads, tenancy.
import { createECDH, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, createTenant, pushSubscription, startWithTwoTenants, type Tenant } from '../../../test/fixtures.js';
import { startTestApp, type TestApp } from '../../../test/harness.js';

let t: TestApp;
let tenant: Tenant;
let other: Tenant;

beforeAll(async () => {
  ({ t, tenant, other } = await startWithTwoTenants());
});
afterAll(() => t.close());

const UA = {
  chromeWindows:
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36',
  edgeWindows:
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36 Edg/120.0.0.0',
  safariMac:
    'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Safari/605.1.15',
  safariIpad:
    'Mozilla/5.0 (iPad; CPU OS 16_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/16.0 Mobile/15E148 Safari/604.1',
  chromeAndroid:
    'Mozilla/5.0 (Linux; Android 14; Pixel 7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36',
  firefoxLinux: 'Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0',
};

function pushKeys() {
  const { p256dh, auth } = pushSubscription();
  return { p256dh, auth };
}

function compressedKey() {
  const ecdh = createECDH('prime256v1');
  ecdh.generateKeys();
  return ecdh.getPublicKey(null, 'compressed').toString('base64url');
}

const endpoint = () => pushSubscription().endpoint;

function registration(projectId: string, extra: Record<string, unknown> = {}) {
  return { projectId, endpoint: endpoint(), ...pushKeys(), userAgent: UA.chromeWindows, ...extra };
}

async function register(who: Tenant, headers: Record<string, string> = who.live, extra: Record<string, unknown> = {}) {
  const res = await t.app.inject({ method: 'POST', url: '/subscribers', headers, payload: registration(who.projectId, extra) });
  expect(res.statusCode, res.body).toBe(201);
  return res.json<{ id: string; token: string; projectId: string; status: string }>();
}

const get = (id: string, headers: Record<string, string>) => t.app.inject({ method: 'GET', url: `/subscribers/${id}`, headers });
const post = (url: string, headers: Record<string, string>, payload: unknown) =>
  t.app.inject({ method: 'POST', url, headers, payload: payload as Record<string, unknown> });

describe('POST /subscribers', () => {
  it('registers a subscriber and answers id, token, projectId, status', async () => {
    const res = await post('/subscribers', tenant.live, registration(tenant.projectId));
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['id', 'projectId', 'status', 'token']);
    expect(body).toMatchObject({ projectId: tenant.projectId, status: 'active' });
    expect(body.id).toMatch(/^sub_/);
    expect(typeof body.token).toBe('string');
  });

  it('answers a duplicate endpoint with 409 carrying the existing subscriber', async () => {
    const payload = registration(tenant.projectId);
    const first = await post('/subscribers', tenant.live, payload);
    const second = await post('/subscribers', tenant.live, { ...payload, ...pushKeys() });
    expect(second.statusCode).toBe(409);
    expect(second.json()).toMatchObject({
      statusCode: 409,
      code: 'subscriber_exists',
      subscriber: { id: first.json().id, token: first.json().token, endpoint: payload.endpoint, status: 'active' },
    });
    expect(typeof second.json().requestId).toBe('string');
    expect(second.json().subscriber.p256dh).toBeUndefined();
  });

  it('lets the same endpoint register in two projects', async () => {
    const payload = registration(tenant.projectId);
    expect((await post('/subscribers', tenant.live, payload)).statusCode).toBe(201);
    expect((await post('/subscribers', other.live, { ...payload, projectId: other.projectId })).statusCode).toBe(201);
  });

  it('registers a sandbox subscriber with a test key, and does not show a live duplicate to it', async () => {
    const sandbox = await register(tenant, tenant.test);
    expect((await get(sandbox.id, tenant.jwt)).json()).toMatchObject({ sandbox: true });
    const live = await register(tenant, tenant.live);
    expect((await get(live.id, tenant.jwt)).json()).toMatchObject({ sandbox: false });

    const payload = registration(tenant.projectId);
    await post('/subscribers', tenant.live, payload);
    const dup = await post('/subscribers', tenant.test, payload);
    expect(dup.statusCode).toBe(409);
    expect(dup.json().subscriber).toBeUndefined();
  });

  it('shows a live key the sandbox subscriber holding the endpoint: live keys see both environments', async () => {
    const payload = registration(tenant.projectId);
    const sandbox = (await post('/subscribers', tenant.test, payload)).json();
    const dup = await post('/subscribers', tenant.live, payload);
    expect(dup.statusCode).toBe(409);
    expect(dup.json().subscriber).toMatchObject({ id: sandbox.id, sandbox: true });
  });

  it('a gone (unsubscribed) subscriber registering its endpoint again: 409 with the existing subscriber, revived active with the new keys', async () => {
    const payload = registration(tenant.projectId);
    const first = await register(tenant, tenant.live, { endpoint: payload.endpoint });
    const setStatus = (status: string) =>
      t.database.pool.query("UPDATE subscribers SET status = $2, status_reason = 'push_subscription_gone' WHERE id = $1", [first.id, status]);
    const keysOf = async () =>
      (await t.database.pool.query<{ p256dh: string; auth: string }>('SELECT p256dh, auth FROM subscribers WHERE id = $1', [first.id])).rows[0];

    await setStatus('unsubscribed');
    // A test key does not revive a live subscriber.
    expect((await post('/subscribers', tenant.test, payload)).statusCode).toBe(409);
    const again = await post('/subscribers', tenant.live, payload);
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({
      statusCode: 409,
      code: 'subscriber_exists',
      requestId: expect.any(String),
      subscriber: { id: first.id, token: first.token, projectId: tenant.projectId, endpoint: payload.endpoint, status: 'active' },
    });
    expect(again.json().subscriber.p256dh).toBeUndefined();
    expect(await keysOf()).toEqual({ p256dh: payload.p256dh, auth: payload.auth });
    const { rows } = await t.database.pool.query('SELECT status_reason FROM subscribers WHERE id = $1', [first.id]);
    expect(rows[0]).toEqual({ status_reason: null });
    const stored = (await get(first.id, tenant.live)).json();
    expect(stored).toMatchObject({ status: 'active' });
    expect(Date.parse(stored.subscribedAt)).toBeGreaterThan(Date.parse(stored.createdAt));

    // Registered again while active, or deactivated by an operator: the usual 409, nothing changed.
    expect((await post('/subscribers', tenant.live, payload)).statusCode).toBe(409);
    await setStatus('inactive');
    const inactive = await post('/subscribers', tenant.live, { ...payload, ...pushKeys() });
    expect(inactive.statusCode).toBe(409);
    expect(inactive.json().subscriber).toMatchObject({ id: first.id, status: 'inactive' });
    expect(await keysOf()).toEqual({ p256dh: payload.p256dh, auth: payload.auth });
  });

  it('accepts a dashboard user (JWT) too', async () => {
    expect((await post('/subscribers', tenant.jwt, registration(tenant.projectId))).statusCode).toBe(201);
  });

  it.each([
    ['endpoint', { endpoint: 'http://push.example.com/x' }],
    ['endpoint', { endpoint: 'http://localhost:9999/push' }],
    ['endpoint', { endpoint: 'not a url' }],
    ['p256dh', { p256dh: 'not base64url!' }],
    ['p256dh', { p256dh: randomBytes(65).toString('base64url') }],
    ['p256dh', { p256dh: Buffer.concat([Buffer.from([4]), Buffer.alloc(64, 1)]).toString('base64url') }],
    ['p256dh', { p256dh: compressedKey() }],
    ['auth', { auth: randomBytes(15).toString('base64url') }],
    ['auth', { auth: '+/+/+/+/+/+/+/+/+/+/+w' }],
    ['timezone', { timezone: 'Mars/Olympus' }],
    ['language', { language: 'not a language!' }],
    ['userAgent', { userAgent: undefined }],
    ['extra', { extra: 1 }],
  ])('rejects a bad %s with 422 naming the field', async (field, change) => {
    const res = await post('/subscribers', tenant.live, { ...registration(tenant.projectId), ...change });
    expect(res.statusCode).toBe(422);
    expect(res.json().details.map((d: { field: string }) => d.field)).toContain(field);
  });

  it.each([
    'https://127.0.0.1/push/x',
    'https://127.1.2.3:8443/push/x',
    'https://0x7f.1/push/x',
    'https://2130706433/push/x',
    'https://0.0.0.0/push/x',
    'https://10.1.2.3/push/x',
    'https://172.16.0.1/push/x',
    'https://192.168.1.1/push/x',
    'https://169.254.169.254/latest/meta-data',
    'https://[::1]/push/x',
    'https://[::ffff:127.0.0.1]/push/x',
    'https://[::ffff:10.0.0.1]/push/x',
    'https://[::ffff:a9fe:a9fe]/push/x',
    'https://[fe80::1]/push/x',
    'https://[febf::1]/push/x',
    'https://[fc00::1]/push/x',
    'https://[fd12:3456::1]/push/x',
    'https://localhost/push/x',
    'https://localhost./push/x',
    'https://foo.localhost/push/x',
    'https://Push.LocalHost./push/x',
  ])('refuses the non-public endpoint %s with 422 naming endpoint, and stores nothing', async (url) => {
    const res = await post('/subscribers', tenant.live, registration(tenant.projectId, { endpoint: url }));
    expect(res.statusCode, res.body).toBe(422);
    expect(res.json()).toMatchObject({ statusCode: 422, message: 'Validation failed', requestId: expect.any(String) });
    expect(res.json().details).toEqual([{ field: 'endpoint', error: expect.stringMatching(/^must not be a (loopback|.*non-public)/) }]);
    const { rows } = await t.database.pool.query('SELECT 1 FROM subscribers WHERE endpoint = $1', [url]);
    expect(rows).toHaveLength(0);
  });

  it('accepts https endpoints on public hosts and addresses', async () => {
    for (const url of ['https://fcm.googleapis.com/fcm/send/abc', 'https://localhost.example.com/push', 'https://8.8.8.8/push', 'https://[2606:4700::1111]/push']) {
      expect((await post('/subscribers', tenant.live, registration(tenant.projectId, { endpoint: url }))).statusCode, url).toBe(201);
    }
  });

  it('reports every failing field at once', async () => {
    const res = await post('/subscribers', tenant.live, {
      ...registration(tenant.projectId),
      endpoint: 'ftp://x',
      p256dh: 'AAAA',
      auth: 'AAAA',
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().details.map((d: { field: string }) => d.field).sort()).toEqual(['auth', 'endpoint', 'p256dh']);
  });

  it('accepts http and loopback endpoints only when ALLOW_INSECURE_PUSH_ENDPOINTS is on, private ones never', async () => {
    const insecure = await startTestApp({ ALLOW_INSECURE_PUSH_ENDPOINTS: 'true' });
    try {
      const owner = await createTenant(insecure);
      const send = (url: string) =>
        insecure.app.inject({
          method: 'POST',
          url: '/subscribers',
          headers: owner.live,
          payload: { ...registration(owner.projectId), endpoint: url },
        });
      expect((await send('http://127.0.0.1:8080/push/1')).statusCode).toBe(201);
      expect((await send('http://localhost:8080/push/2')).statusCode).toBe(201);
      expect((await send('https://[::1]:8443/push/4')).statusCode).toBe(201);
      expect((await send('http://push.example.com/push/3')).statusCode).toBe(422);
      // The flag admits loopback, never private or link-local addresses.
      for (const url of ['http://10.0.0.1/push/5', 'https://192.168.0.10/push/6', 'https://169.254.169.254/x', 'https://[fd00::1]/push/7']) {
        const res = await send(url);
        expect(res.statusCode, url).toBe(422);
        expect(res.json().details, url).toEqual([{ field: 'endpoint', error: expect.any(String) }]);
      }
    } finally {
      await insecure.close();
    }
  });

  it('derives platform, browser, os and device from the user agent', async () => {
    const cases: [string, Record<string, unknown>][] = [
      [UA.chromeWindows, { platform: 'desktop', browser: 'Chrome', os: 'Windows' }],
      [UA.edgeWindows, { platform: 'desktop', browser: 'Edge', os: 'Windows' }],
      [UA.safariMac, { platform: 'desktop', browser: 'Safari', os: 'macOS' }],
      [UA.safariIpad, { platform: 'tablet', browser: 'Safari', os: 'iOS', device: 'Apple iPad' }],
      [UA.chromeAndroid, { platform: 'mobile', browser: 'Chrome', os: 'Android' }],
      [UA.firefoxLinux, { platform: 'desktop', browser: 'Firefox', os: null }],
      ['curl/8.0', { platform: null, browser: null, os: null, device: null }],
    ];
    for (const [userAgent, expected] of cases) {
      const { id } = await register(tenant, tenant.live, { userAgent });
      expect((await get(id, tenant.live)).json(), userAgent).toMatchObject({ userAgent, ...expected });
    }
  });

  it('takes language from the body, else Accept-Language, and keeps the timezone', async () => {
    const fromBody = await register(tenant, { ...tenant.live, 'accept-language': 'fr-FR' }, { language: 'pt-br', timezone: 'Europe/Paris' });
    expect((await get(fromBody.id, tenant.live)).json()).toMatchObject({ language: 'pt-BR', timezone: 'Europe/Paris' });
    const fromHeader = await register(tenant, { ...tenant.live, 'accept-language': 'de;q=0.5, en-GB;q=0.9, *;q=0.1' });
    expect((await get(fromHeader.id, tenant.live)).json()).toMatchObject({ language: 'en-GB', timezone: null });
    const none = await register(tenant);
    expect((await get(none.id, tenant.live)).json()).toMatchObject({ language: null, country: null, city: null });
  });

  it('answers a key of another project with 403 and a user of another organization with 404', async () => {
    const payload = registration(tenant.projectId);
    const byKey = await post('/subscribers', other.live, payload);
    expect(byKey.statusCode).toBe(403);
    expect(byKey.json().message).toBe('Resource belongs to a different project');
    expect((await post('/subscribers', other.test, payload)).statusCode).toBe(403);
    expect((await post('/subscribers', tenant.live, registration('prj_unknown'))).statusCode).toBe(404);
    expect((await post('/subscribers', other.jwt, payload)).statusCode).toBe(404);
    expect((await post('/subscribers', {}, payload)).statusCode).toBe(401);
  });
});

describe('identify, tag, untag, seen', () => {
  it('identifies a subscriber; several devices may share one externalId', async () => {
    const a = await register(tenant);
    const b = await register(tenant);
    const res = await post('/subscribers/identify', tenant.live, { token: a.token, externalId: 'user-42' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: a.id, token: a.token, externalId: 'user-42' });
    expect(Date.parse(res.json().updatedAt)).not.toBeNaN();
    expect((await post('/subscribers/identify', tenant.live, { token: b.token, externalId: 'user-42' })).statusCode).toBe(200);
    expect((await get(b.id, tenant.jwt)).json().externalId).toBe('user-42');
  });

  it('adds tags additively without duplicates and removes them with untag', async () => {
    const { id, token } = await register(tenant);
    expect((await post('/subscribers/tag', tenant.live, { token, tags: ['vip', 'news'] })).json()).toEqual({ id, tags: ['vip', 'news'] });
    expect((await post('/subscribers/tag', tenant.live, { token, tags: ['news', 'sports', 'sports'] })).json()).toEqual({
      id,
      tags: ['vip', 'news', 'sports'],
    });
    expect((await post('/subscribers/untag', tenant.live, { token, tags: ['news', 'absent'] })).json()).toEqual({
      id,
      tags: ['vip', 'sports'],
    });
  });

  it('validates the bodies', async () => {
    const { token } = await register(tenant);
    expect((await post('/subscribers/tag', tenant.live, { token, tags: [] })).statusCode).toBe(422);
    expect((await post('/subscribers/tag', tenant.live, { token, tags: [''] })).statusCode).toBe(422);
    expect((await post('/subscribers/identify', tenant.live, { token })).statusCode).toBe(422);
    expect((await post('/subscribers/tag', tenant.live, { token: 'st_unknown', tags: ['a'] })).statusCode).toBe(404);
  });

  it('updates lastSeenAt on seen, identify and tag', async () => {
    const { id, token } = await register(tenant);
    const before = (await get(id, tenant.live)).json().lastSeenAt as string;
    await new Promise((resolve) => setTimeout(resolve, 5));
    const seen = await post('/subscribers/seen', tenant.live, { token });
    expect(seen.statusCode).toBe(200);
    expect(seen.json().id).toBe(id);
    expect(Date.parse(seen.json().lastSeenAt)).toBeGreaterThan(Date.parse(before));
    await new Promise((resolve) => setTimeout(resolve, 5));
    await post('/subscribers/tag', tenant.live, { token, tags: ['x'] });
    expect(Date.parse((await get(id, tenant.live)).json().lastSeenAt)).toBeGreaterThan(Date.parse(seen.json().lastSeenAt));
  });

  it('works for a dashboard user, and not for a VIEWER', async () => {
    const { token } = await register(tenant);
    expect((await post('/subscribers/tag', tenant.jwt, { token, tags: ['a'] })).statusCode).toBe(200);
    const viewer = await addMember(t, tenant, 'VIEWER');
    expect((await post('/subscribers/tag', viewer.headers, { token, tags: ['b'] })).statusCode).toBe(403);
  });

  it.each(['identify', 'tag', 'untag', 'seen'])('/%s: a token of another project is not found', async (route) => {
    const { token } = await register(tenant);
    const body = route === 'seen' ? { token } : route === 'identify' ? { token, externalId: 'x' } : { token, tags: ['x'] };
    for (const headers of [other.live, other.test, other.jwt]) {
      expect((await post(`/subscribers/${route}`, headers, body)).statusCode).toBe(404);
    }
    expect((await post(`/subscribers/${route}`, tenant.live, body)).statusCode).toBe(200);
  });

  it('a test key cannot reach a live subscriber by token (and a live key reaches sandbox ones)', async () => {
    const live = await register(tenant, tenant.live);
    expect((await post('/subscribers/tag', tenant.test, { token: live.token, tags: ['x'] })).statusCode).toBe(404);
    const sandbox = await register(tenant, tenant.test);
    expect((await post('/subscribers/tag', tenant.test, { token: sandbox.token, tags: ['x'] })).statusCode).toBe(200);
    expect((await post('/subscribers/tag', tenant.live, { token: sandbox.token, tags: ['y'] })).statusCode).toBe(200);
  });
});

describe('lookups by token and externalId', () => {
  it('finds a subscriber by token, within the caller\'s reach only', async () => {
    const { id, token } = await register(tenant);
    const res = await t.app.inject({ method: 'GET', url: `/subscribers/token/${token}`, headers: tenant.live });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id, token });
    for (const headers of [other.live, other.jwt, tenant.test]) {
      expect((await t.app.inject({ method: 'GET', url: `/subscribers/token/${token}`, headers })).statusCode).toBe(404);
    }
  });

  it('lists every device of an externalId', async () => {
    const a = await register(tenant);
    const b = await register(tenant);
    await register(tenant);
    for (const { token } of [a, b]) await post('/subscribers/identify', tenant.live, { token, externalId: 'user/7 é' });
    const url = `/subscribers/project/${tenant.projectId}/external-id/${encodeURIComponent('user/7 é')}`;
    const res = await t.app.inject({ method: 'GET', url, headers: tenant.jwt });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.map((s: { id: string }) => s.id).sort()).toEqual([a.id, b.id].sort());
    expect((await t.app.inject({ method: 'GET', url, headers: other.jwt })).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'GET', url, headers: other.live })).statusCode).toBe(403);
    expect((await t.app.inject({ method: 'GET', url, headers: tenant.test })).json().data).toEqual([]);
  });
});

describe('GET and DELETE /subscribers/:id', () => {
  it('returns the subscriber without its push keys', async () => {
    const { id, token } = await register(tenant);
    const res = await get(id, tenant.jwt);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id, token, projectId: tenant.projectId, status: 'active', emailStatus: 'none', tags: [] });
    expect(res.json().p256dh).toBeUndefined();
    expect(res.json().auth).toBeUndefined();
  });

  it('hides a subscriber of another tenant (404) and a live subscriber from a test key', async () => {
    const { id } = await register(tenant);
    for (const headers of [other.live, other.test, other.jwt, tenant.test]) {
      expect((await get(id, headers)).statusCode).toBe(404);
      expect((await t.app.inject({ method: 'DELETE', url: `/subscribers/${id}`, headers })).statusCode).toBe(404);
    }
    expect((await get(id, tenant.live)).statusCode).toBe(200);
  });

  it('deletes a subscriber', async () => {
    const { id, token } = await register(tenant);
    expect((await t.app.inject({ method: 'DELETE', url: `/subscribers/${id}`, headers: tenant.live })).statusCode).toBe(204);
    expect((await get(id, tenant.live)).statusCode).toBe(404);
    expect((await post('/subscribers/seen', tenant.live, { token })).statusCode).toBe(404);
  });
});

describe('GET /subscribers/project/:projectId and analytics', () => {
  let owner: Tenant;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    owner = await createTenant(t);
    const make = async (name: string, userAgent: string, tags: string[], headers = owner.live) => {
      const { id, token } = await register(owner, headers, { userAgent });
      if (tags.length) await post('/subscribers/tag', owner.live, { token, tags });
      ids[name] = id;
    };
    await make('win', UA.chromeWindows, ['vip']);
    await make('mac', UA.safariMac, ['vip', 'news']);
    await make('android', UA.chromeAndroid, []);
    await make('ipad', UA.safariIpad, ['news']);
    await make('sandbox', UA.chromeWindows, [], owner.test);
    // Country and city come from geo data (not configured in tests): set them directly.
    await t.database.pool.query(`UPDATE subscribers SET country = 'FR', city = 'Paris' WHERE id = ANY($1)`, [[ids.win, ids.mac]]);
    await t.database.pool.query(`UPDATE subscribers SET country = 'US', city = 'Austin' WHERE id = $1`, [ids.android]);
    await t.database.pool.query(`UPDATE subscribers SET email = 'Ada@Example.com' WHERE id = $1`, [ids.mac]);
    await t.database.pool.query(`UPDATE subscribers SET status = 'unsubscribed', created_at = '2020-01-01T00:00:00Z' WHERE id = $1`, [
      ids.ipad,
    ]);
  });

  const list = (query: string, headers: Record<string, string> = owner.jwt) =>
    t.app.inject({ method: 'GET', url: `/subscribers/project/${owner.projectId}${query}`, headers });
  const idsOf = (res: { json(): { data: { id: string }[] } }) => res.json().data.map((s) => s.id).sort();
  const expectIds = (names: string[]) => names.map((n) => ids[n]).sort();

  it('lists every subscriber, newest first, with pagination', async () => {
    const all = await list('');
    expect(all.statusCode).toBe(200);
    expect(all.json()).toMatchObject({ page: 1, pageSize: 20, total: 5 });
    expect(all.json().data[0]).toMatchObject({ id: ids.sandbox });
    const page2 = await list('?page=2&pageSize=2');
    expect(page2.json()).toMatchObject({ page: 2, pageSize: 2, total: 5 });
    expect(page2.json().data).toHaveLength(2);
    expect((await list('?pageSize=101')).statusCode).toBe(422);
  });

  it.each([
    ['?platform=mobile', ['android']],
    ['?platform=tablet', ['ipad']],
    ['?browser=Safari', ['mac', 'ipad']],
    ['?os=Windows', ['win', 'sandbox']],
    ['?country=fr', ['win', 'mac']],
    ['?tag=vip', ['win', 'mac']],
    ['?tag=news&browser=Safari', ['mac', 'ipad']],
    ['?status=unsubscribed', ['ipad']],
    ['?status=active&tag=news', ['mac']],
    ['?email=ada@example.com', ['mac']],
    ['?email=ADA%40EXAMPLE.COM&browser=Safari', ['mac']],
    ['?email=ada@example.org', []],
    ['?createdBefore=2021-01-01', ['ipad']],
    ['?createdAfter=2021-01-01&platform=desktop', ['win', 'mac', 'sandbox']],
  ])('filters %s', async (query, expected) => {
    const res = await list(query);
    expect(res.statusCode, res.body).toBe(200);
    expect(idsOf(res)).toEqual(expectIds(expected));
    expect(res.json().total).toBe(expected.length);
  });

  it('rejects bad filters with 422', async () => {
    for (const query of ['?platform=tv', '?country=FRA', '?createdAfter=yesterday', '?unknown=1']) {
      expect((await list(query)).statusCode, query).toBe(422);
    }
  });

  it('shows a test key only the sandbox subscribers', async () => {
    const res = await list('', owner.test);
    expect(idsOf(res)).toEqual([ids.sandbox]);
  });

  it('answers an unknown project with 404, another organization’s with 404 (users) and 403 (keys)', async () => {
    for (const headers of [owner.jwt, owner.live, owner.test]) {
      const res = await t.app.inject({ method: 'GET', url: '/subscribers/project/prj_unknown', headers });
      expect(res.statusCode).toBe(404);
      expect(res.json().message).toBe('Project not found');
    }
    expect((await list('', other.jwt)).statusCode).toBe(404);
    expect((await list('', other.live)).statusCode).toBe(403);
    const analytics = (headers: Record<string, string>) =>
      t.app.inject({ method: 'GET', url: `/subscribers/analytics/project/${owner.projectId}`, headers });
    expect((await analytics(other.jwt)).statusCode).toBe(404);
    expect((await analytics(other.test)).statusCode).toBe(403);
    for (const headers of [owner.jwt, owner.live]) {
      expect((await t.app.inject({ method: 'GET', url: '/subscribers/analytics/project/prj_unknown', headers })).statusCode).toBe(404);
    }
  });

  it('counts active subscribers by dimension, largest first', async () => {
    const res = await t.app.inject({ method: 'GET', url: `/subscribers/analytics/project/${owner.projectId}`, headers: owner.live });
    expect(res.statusCode).toBe(200);
    // Active and live: win, mac, android; ipad is unsubscribed; the sandbox one is another environment's.
    expect(res.json()).toEqual({
      country: [
        { key: 'FR', count: 2 },
        { key: 'US', count: 1 },
      ],
      platform: [
        { key: 'desktop', count: 2 },
        { key: 'mobile', count: 1 },
      ],
      browser: [
        { key: 'Chrome', count: 2 },
        { key: 'Safari', count: 1 },
      ],
      os: [
        { key: 'Android', count: 1 },
        { key: 'Windows', count: 1 },
        { key: 'macOS', count: 1 },
      ],
      device: [{ key: 'Apple', count: 1 }],
      city: [
        { key: 'Paris', count: 2 },
        { key: 'Austin', count: 1 },
      ],
    });
  });

  it('counts only the caller\'s environment: the dashboard sees live figures, a test key the sandbox ones', async () => {
    const analytics = (headers: Record<string, string>) =>
      t.app.inject({ method: 'GET', url: `/subscribers/analytics/project/${owner.projectId}`, headers }).then((r) => r.json());
    expect((await analytics(owner.jwt)).platform).toEqual([
      { key: 'desktop', count: 2 },
      { key: 'mobile', count: 1 },
    ]);
    expect(await analytics(owner.test)).toEqual({
      country: [],
      platform: [{ key: 'desktop', count: 1 }],
      browser: [{ key: 'Chrome', count: 1 }],
      os: [{ key: 'Windows', count: 1 }],
      device: [],
      city: [],
    });
  });

  it('lists every value of a key, however many, and the largest `limit` of each when asked', async () => {
    const many = await createTenant(t);
    // 300 cities: city i has i + 1 subscribers in country C<i mod 3>.
    await t.database.pool.query(
      `INSERT INTO subscribers (id, project_id, token, country, city)
       SELECT 'sub_city_' || c || '_' || n, $1, 'st_city_' || $1 || '_' || c || '_' || n, 'C' || (c % 3), 'City ' || c
       FROM generate_series(0, 299) c, generate_series(0, c) n`,
      [many.projectId],
    );
    const analytics = (query: string) =>
      t.app.inject({ method: 'GET', url: `/subscribers/analytics/project/${many.projectId}${query}`, headers: many.live });
    const all = (await analytics('')).json();
    expect(all.city).toHaveLength(300);
    expect(all.city[0]).toEqual({ key: 'City 299', count: 300 });
    expect(all.city[299]).toEqual({ key: 'City 0', count: 1 });
    const top = await analytics('?limit=2');
    expect(top.statusCode).toBe(200);
    expect(top.json().city).toEqual([
      { key: 'City 299', count: 300 },
      { key: 'City 298', count: 299 },
    ]);
    expect(top.json().country).toHaveLength(2);
    const bad = await analytics('?limit=0');
    expect(bad.statusCode).toBe(422);
    expect(bad.json().details).toEqual([expect.objectContaining({ field: 'query.limit' })]);
  });
});
