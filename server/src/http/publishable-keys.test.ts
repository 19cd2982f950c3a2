// Key scopes through HTTP: publishable keys (hrd_pub_…) open only the routes a browser SDK calls; server keys all.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROME_UA, createTenant, pushSubscription, type Tenant } from '../../test/fixtures.js';
import { startTestApp, type TestApp } from '../../test/harness.js';

interface Operation {
  security?: Record<string, string[]>[];
}

let t: TestApp;
let owner: Tenant;
let publishable: { 'x-api-key': string };
let publishableTest: { 'x-api-key': string };

const createKey = (scope: string | undefined, mode: 'live' | 'test') =>
  t.app.inject({
    method: 'POST',
    url: `/projects/${owner.projectId}/api-keys`,
    headers: owner.jwt,
    payload: { name: `${scope ?? 'default'} ${mode}`, mode, ...(scope && { scope }) },
  });

beforeAll(async () => {
  t = await startTestApp();
  owner = await createTenant(t);
  publishable = { 'x-api-key': (await createKey('publishable', 'live')).json<{ key: string }>().key };
  publishableTest = { 'x-api-key': (await createKey('publishable', 'test')).json<{ key: string }>().key };
});
afterAll(() => t.close());

const register = (headers: Record<string, string>) =>
  t.app.inject({
    method: 'POST',
    url: '/subscribers',
    headers,
    payload: { projectId: owner.projectId, ...pushSubscription(), userAgent: CHROME_UA },
  });

describe('key scopes', () => {
  it.each([
    ['publishable', 'live', 'hrd_pub_live_'],
    ['publishable', 'test', 'hrd_pub_test_'],
    ['server', 'live', 'hrd_live_'],
    [undefined, 'test', 'hrd_test_'],
  ] as const)('a %s %s key is created with the prefix %s and shows its scope', async (scope, mode, prefix) => {
    const res = await createKey(scope, mode);
    expect(res.statusCode, res.body).toBe(201);
    const key = res.json<{ key: string; scope: string; prefix: string; mode: string }>();
    expect(key).toMatchObject({ scope: scope ?? 'server', prefix, mode });
    expect(key.key).toMatch(new RegExp(`^${prefix}[0-9a-z]{32}$`));
    const list = await t.app.inject({ method: 'GET', url: `/projects/${owner.projectId}/api-keys`, headers: owner.jwt });
    expect(list.json<{ data: { prefix: string; scope: string }[] }>().data).toContainEqual(expect.objectContaining({ prefix, scope: scope ?? 'server' }));
  });

  it('keeps the keys made before scopes existed: hrd_live_ and hrd_test_ keys are server keys', async () => {
    const list = await t.app.inject({ method: 'GET', url: `/projects/${owner.projectId}/api-keys`, headers: owner.jwt });
    const first = list.json<{ data: { name: string; scope: string }[] }>().data.filter((k) => k.name === 'live' || k.name === 'test');
    expect(first.map((k) => k.scope)).toEqual(['server', 'server']);
    const res = await t.app.inject({ method: 'GET', url: `/subscribers/project/${owner.projectId}`, headers: owner.live });
    expect(res.statusCode).toBe(200);
  });

  it('refuses a publishable key on every route that does not list publishableKey in its OpenAPI security', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/docs/json' })).json<{ paths: Record<string, Record<string, Operation>> }>();
    const refused: string[] = [];
    let walked = 0;
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        const schemes = (op.security ?? []).flatMap((requirement) => Object.keys(requirement));
        // Public routes read no key; the event stream reads only a JWT (any key there is a 401, tested elsewhere).
        if (schemes.length === 0 || schemes.includes('publishableKey') || schemes.includes('metricsToken')) continue;
        if (schemes.includes('tokenQuery')) continue;
        walked++;
        const url = path.replace(/\{(\w+)\}/g, (_, name: string) => (name === 'projectId' || name === 'id' ? owner.projectId : 'x'));
        const res = await t.app.inject({ method: method.toUpperCase() as 'GET', url, headers: publishable, payload: {} });
        if (res.statusCode !== 403 || res.json<{ code: string }>().code !== 'publishable_key_forbidden') {
          refused.push(`${method.toUpperCase()} ${path} → ${res.statusCode} ${res.body}`);
        }
      }
    }
    expect(walked).toBeGreaterThan(30);
    expect(refused).toEqual([]);
  });

  it('answers the refusal in the envelope with a message saying what to do', async () => {
    const res = await t.app.inject({ method: 'GET', url: `/subscribers/project/${owner.projectId}`, headers: publishable });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({
      statusCode: 403,
      code: 'publishable_key_forbidden',
      message: 'A publishable key may only call the routes a browser SDK needs; call this route from your server with a server key',
      requestId: expect.any(String),
    });
  });

  it('refuses a publishable key on transactional sends, which take API keys only', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/transactional/send', headers: publishable, payload: {} });
    expect(res.statusCode).toBe(403);
    expect(res.json<{ code: string }>().code).toBe('publishable_key_forbidden');
  });

  it('lets a publishable key make every call the browser SDK makes', async () => {
    const config = await t.app.inject({ method: 'GET', url: `/projects/${owner.projectId}/push-config`, headers: publishable });
    expect(config.statusCode, config.body).toBe(200);
    const registered = await register(publishable);
    expect(registered.statusCode, registered.body).toBe(201);
    const { token, id } = registered.json<{ token: string; id: string }>();
    const calls: [string, string, Record<string, unknown> | undefined][] = [
      ['POST', '/subscribers/identify', { token, externalId: 'user-1' }],
      ['POST', '/subscribers/tag', { token, tags: ['vip'] }],
      ['POST', '/subscribers/untag', { token, tags: ['vip'] }],
      ['POST', '/subscribers/seen', { token }],
      ['POST', '/subscribers/update', { token, email: 'one@example.com' }],
      ['GET', `/subscribers/token/${token}`, undefined],
      ['POST', '/subscribers/push-subscription', { token, ...pushSubscription(), userAgent: CHROME_UA }],
      ['POST', '/subscribers/unsubscribe', { token }],
    ];
    for (const [method, url, payload] of calls) {
      const res = await t.app.inject({ method: method as 'POST', url, headers: publishable, ...(payload && { payload }) });
      expect(res.statusCode, `${method} ${url}: ${res.body}`).toBe(200);
    }
    // What it wrote is there for a server key; reading it by id is a server route.
    const read = await t.app.inject({ method: 'GET', url: `/subscribers/${id}`, headers: owner.live });
    expect(read.json()).toMatchObject({ externalId: 'user-1', email: 'one@example.com', sandbox: false });
    expect((await t.app.inject({ method: 'GET', url: `/subscribers/${id}`, headers: publishable })).statusCode).toBe(403);
  });

  it('a publishable test key registers sandbox subscribers, like a server test key', async () => {
    const res = await register(publishableTest);
    expect(res.statusCode, res.body).toBe(201);
    const { id } = res.json<{ id: string }>();
    const read = await t.app.inject({ method: 'GET', url: `/subscribers/${id}`, headers: owner.test });
    expect(read.json()).toMatchObject({ id, sandbox: true });
  });

  it('a publishable key naming another project is refused like a server key (403 cross_project)', async () => {
    const other = await createTenant(t);
    const res = await t.app.inject({ method: 'GET', url: `/projects/${other.projectId}/push-config`, headers: publishable });
    expect(res.statusCode).toBe(403);
    expect(res.json<{ code: string }>().code).toBe('cross_project');
  });

  it('documents the publishableKey scheme on the publishable routes only', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/docs/json' })).json<{
      paths: Record<string, Record<string, Operation & { description?: string }>>;
      components: { securitySchemes: Record<string, { description: string }> };
    }>();
    expect(doc.components.securitySchemes.publishableKey!.description).toContain('hrd_pub_live_');
    const listed = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([, op]) => (op.security ?? []).some((r) => 'publishableKey' in r))
        .map(([method]) => `${method.toUpperCase()} ${path}`),
    );
    expect(listed.sort()).toEqual(
      [
        'GET /projects/{id}/push-config',
        'POST /subscribers',
        'POST /subscribers/identify',
        'POST /subscribers/tag',
        'POST /subscribers/untag',
        'POST /subscribers/seen',
        'POST /subscribers/update',
        'GET /subscribers/token/{token}',
        'POST /subscribers/push-subscription',
        'POST /subscribers/unsubscribe',
      ].sort(),
    );
    expect(doc.paths['/subscribers/seen']!.post!.description).toContain('publishable key');
  });
});
