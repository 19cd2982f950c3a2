// Projects through HTTP: CRUD, pagination, emailConfig and settings validation, settings merge, VAPID keys, cascade.
import { createPublicKey } from 'node:crypto';
import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTenant, type Tenant } from '../../../test/fixtures.js';
import { startTestApp, type TestApp } from '../../../test/harness.js';

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const call = (options: InjectOptions) => t.app.inject(options);

function expectError(res: Awaited<ReturnType<typeof call>>, statusCode: number, message: string) {
  expect(res.statusCode, res.body).toBe(statusCode);
  expect(res.json()).toMatchObject({ statusCode, message });
  return res.json() as { details?: { field: string; error: string }[]; code: string };
}

const fieldsOf = (body: { details?: { field: string }[] }) => (body.details ?? []).map((d) => d.field).sort();

async function create(tenant: Tenant, payload: Record<string, unknown>) {
  const res = await call({ method: 'POST', url: '/projects', headers: tenant.jwt, payload });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

describe('create and read', () => {
  let org: Tenant;
  beforeAll(async () => {
    org = await createTenant(t);
  });

  it('POST /projects → 201 with the project; GET /projects/:id returns the same', async () => {
    const project = await create(org, { name: '  Web shop ', emailConfig: { domain: 'Mail.Example.COM' }, settings: { timezone: 'Europe/Paris' } });
    expect(project).toEqual({
      id: expect.stringMatching(/^prj_/),
      organizationId: org.orgId,
      name: 'Web shop',
      // Not verified yet: the domain named is the project's choice once it is (spec 2.6).
      emailConfig: { domain: null },
      settings: { timezone: 'Europe/Paris' },
      vapidPublicKey: expect.any(String),
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(new Date(project.createdAt).toISOString()).toBe(project.createdAt);

    const read = await call({ method: 'GET', url: `/projects/${project.id}`, headers: org.jwt });
    expect(read.statusCode).toBe(200);
    expect(read.json()).toEqual(project);

    const { rows } = await t.database.pool.query('SELECT organization_id, settings FROM projects WHERE id = $1', [project.id]);
    expect(rows[0]).toEqual({ organization_id: org.orgId, settings: { timezone: 'Europe/Paris' } });
    // The domain is the project's email configuration, which has no provider yet.
    const email = await t.database.pool.query(`SELECT provider, settings FROM channel_configs WHERE project_id = $1 AND channel = 'email'`, [project.id]);
    expect(email.rows).toEqual([{ provider: 'none', settings: { domain: 'mail.example.com' } }]);
  });

  it('defaults: no domain, empty settings', async () => {
    const project = await create(org, { name: 'Bare' });
    expect(project.emailConfig).toEqual({ domain: null });
    expect(project.settings).toEqual({});
  });

  it('never exposes the VAPID private key, and keeps it sealed in the database', async () => {
    const project = await create(org, { name: 'Secretive' });
    const { rows } = await t.database.pool.query<{ credentials: string }>(
      `SELECT credentials FROM channel_configs WHERE project_id = $1 AND channel = 'push'`,
      [project.id],
    );
    const { vapidPrivateKey } = await t.services.channels.open(rows[0]!.credentials);
    expect(vapidPrivateKey!.length).toBeGreaterThan(20);
    expect(rows[0]!.credentials).toMatch(/^hsb1\./);
    expect(rows[0]!.credentials).not.toContain(vapidPrivateKey);
    for (const url of [`/projects/${project.id}`, `/projects/${project.id}/channels`]) {
      const body = (await call({ method: 'GET', url, headers: org.jwt })).body;
      expect(body).not.toContain(vapidPrivateKey);
      expect(body).not.toContain(rows[0]!.credentials);
    }
  });

  it.each([
    [{}, ['name']],
    [{ name: '' }, ['name']],
    [{ name: '   ' }, ['name']],
    [{ name: 'x'.repeat(201) }, ['name']],
    [{ name: 'ok', bogus: true }, ['bogus']],
    [{ name: 'ok', emailConfig: { domain: 'example.com', dkim: 'x' } }, ['emailConfig.dkim']],
    [{ name: 'ok', settings: { timezone: 'Mars/Olympus' } }, ['settings.timezone']],
    [{ name: 'ok', settings: { unknownSetting: 1 } }, ['settings.unknownSetting']],
    [{ name: 'ok', settings: { rateLimits: { default: 100000 } } }, ['settings.rateLimits']],
  ])('rejects %j with 422 on %j', async (payload, fields) => {
    const before = (await t.database.pool.query('SELECT count(*)::int AS n FROM projects')).rows[0].n;
    const body = expectError(await call({ method: 'POST', url: '/projects', headers: org.jwt, payload }), 422, 'Validation failed');
    expect(fieldsOf(body)).toEqual(fields);
    expect((await t.database.pool.query('SELECT count(*)::int AS n FROM projects')).rows[0].n).toBe(before);
  });
});

describe('emailConfig.domain', () => {
  let org: Tenant;
  beforeAll(async () => {
    org = await createTenant(t);
  });

  it.each([
    'example',
    'exa mple.com',
    'http://example.com',
    '-bad.example.com',
    'bad-.example.com',
    'example.com.',
    'user@example.com',
    'a..b.com',
    'example.c',
    'example.123',
    `${'a'.repeat(64)}.example.com`,
    `${'a'.repeat(60)}.`.repeat(5) + 'com',
    '',
  ])(
    'rejects %j with 422 and a detail on emailConfig.domain',
    async (domain) => {
      const res = await call({ method: 'POST', url: '/projects', headers: org.jwt, payload: { name: 'D', emailConfig: { domain } } });
      const body = expectError(res, 422, 'Validation failed');
      expect(body.details).toEqual([{ field: 'emailConfig.domain', error: expect.any(String) }]);
    },
  );

  it.each(['example.com', 'mail.example.co.uk', 'xn--bcher-kva.example', 'my--shop.example.io', 'xn--d1acufc.xn--p1ai', `${'a'.repeat(63)}.com`])(
    'accepts %j', async (domain) => {
    const project = await create(org, { name: 'D', emailConfig: { domain } });
    const { rows } = await t.database.pool.query(`SELECT settings->>'domain' AS domain FROM channel_configs WHERE project_id = $1 AND channel = 'email'`, [project.id]);
    expect(rows).toEqual([{ domain }]);
  });

  it('is the verified sending domain: derived from the verified domains, chosen among them, never an unverified one', async () => {
    const project = await create(org, { name: 'Verified' });
    const headers = org.jwt;
    const addDomain = async (domain: string) => {
      const res = await call({ method: 'POST', url: `/projects/${project.id}/email-domains`, headers, payload: { domain } });
      expect(res.statusCode, res.body).toBe(201);
    };
    const shown = async () => (await call({ method: 'GET', url: `/projects/${project.id}`, headers })).json().emailConfig;
    await addDomain('news.shop.example');
    const unverified = await call({ method: 'PATCH', url: `/projects/${project.id}`, headers, payload: { emailConfig: { domain: 'news.shop.example' } } });
    expect(expectError(unverified, 422, 'Validation failed').details).toEqual([
      { field: 'emailConfig.domain', error: 'news.shop.example is not a verified sending domain of this project: add it under email domains and verify it first' },
    ]);
    const unknown = await call({ method: 'PATCH', url: `/projects/${project.id}`, headers, payload: { emailConfig: { domain: 'elsewhere.example' } } });
    expect(unknown.statusCode).toBe(422);
    expect(await shown()).toEqual({ domain: null });

    // What a passing DNS check records (email-domains.test.ts drives the check itself).
    const verify = (domain: string) => t.database.pool.query(`UPDATE email_domains SET status = 'verified', verified_at = now() WHERE project_id = $1 AND domain = $2`, [project.id, domain]);
    await verify('news.shop.example');
    expect(await shown()).toEqual({ domain: 'news.shop.example' });
    await addDomain('mail.shop.example');
    await verify('mail.shop.example');
    expect(await shown(), 'the first verified domain by name, none chosen').toEqual({ domain: 'mail.shop.example' });
    const chosen = await call({ method: 'PATCH', url: `/projects/${project.id}`, headers, payload: { emailConfig: { domain: 'News.Shop.Example' } } });
    expect(chosen.statusCode, chosen.body).toBe(200);
    expect(chosen.json().emailConfig).toEqual({ domain: 'news.shop.example' });
    expect(await shown()).toEqual({ domain: 'news.shop.example' });
    const listed = (await call({ method: 'GET', url: '/projects?pageSize=100', headers })).json().data.find((p: { id: string }) => p.id === project.id);
    expect(listed.emailConfig).toEqual({ domain: 'news.shop.example' });
  });

  it('PATCH validates the domain the same way, and null clears the choice', async () => {
    const project = await create(org, { name: 'D', emailConfig: { domain: 'example.com' } });
    const bad = await call({ method: 'PATCH', url: `/projects/${project.id}`, headers: org.jwt, payload: { emailConfig: { domain: 'nope' } } });
    expect(expectError(bad, 422, 'Validation failed').details).toEqual([{ field: 'emailConfig.domain', error: expect.any(String) }]);
    const cleared = await call({ method: 'PATCH', url: `/projects/${project.id}`, headers: org.jwt, payload: { emailConfig: { domain: null } } });
    expect(cleared.statusCode).toBe(200);
    expect(cleared.json().emailConfig).toEqual({ domain: null });
    const { rows } = await t.database.pool.query(`SELECT settings FROM channel_configs WHERE project_id = $1 AND channel = 'email'`, [project.id]);
    expect(rows).toEqual([{ settings: {} }]);
    const read = await call({ method: 'GET', url: `/projects/${project.id}`, headers: org.jwt });
    expect(read.json().emailConfig).toEqual({ domain: null });
  });

  it('emailConfig without domain → 422', async () => {
    const res = await call({ method: 'POST', url: '/projects', headers: org.jwt, payload: { name: 'D', emailConfig: {} } });
    expect(fieldsOf(expectError(res, 422, 'Validation failed'))).toEqual(['emailConfig.domain']);
  });
});

describe('GET /projects pagination', () => {
  let org: Tenant;
  const names: string[] = [];
  beforeAll(async () => {
    org = await createTenant(t); // already owns "Project"
    names.push('Project');
    for (let i = 1; i <= 24; i++) {
      const name = `P${String(i).padStart(2, '0')}`;
      await create(org, { name });
      names.push(name);
    }
  });

  const list = (query: string) => call({ method: 'GET', url: `/projects${query}`, headers: org.jwt });

  it('defaults to page 1 of 20, oldest first', async () => {
    const res = await list('');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['data', 'page', 'pageSize', 'total']);
    expect(body).toMatchObject({ page: 1, pageSize: 20, total: 25 });
    expect(body.data.map((p: { name: string }) => p.name)).toEqual(names.slice(0, 20));
  });

  it('pages through without overlap', async () => {
    const seen: string[] = [];
    for (let page = 1; page <= 3; page++) {
      const body = (await list(`?page=${page}&pageSize=10`)).json();
      expect(body).toMatchObject({ page, pageSize: 10, total: 25 });
      seen.push(...body.data.map((p: { name: string }) => p.name));
    }
    expect(seen).toEqual(names);
  });

  it('a page past the end is empty with the total', async () => {
    expect((await list('?page=9&pageSize=10')).json()).toEqual({ data: [], page: 9, pageSize: 10, total: 25 });
  });

  it('pageSize 100 is allowed', async () => {
    const body = (await list('?pageSize=100')).json();
    expect(body.pageSize).toBe(100);
    expect(body.data).toHaveLength(25);
  });

  it.each([
    ['?pageSize=101', ['query.pageSize']],
    ['?pageSize=0', ['query.pageSize']],
    ['?page=0', ['query.page']],
    ['?page=-1', ['query.page']],
    ['?page=abc', ['query.page']],
    ['?pageSize=1.5', ['query.pageSize']],
    ['?sort=name', ['query.sort']],
  ])('%s → 422 on %j', async (query, fields) => {
    expect(fieldsOf(expectError(await list(query), 422, 'Validation failed'))).toEqual(fields);
  });
});

describe('PATCH /projects/:id', () => {
  let org: Tenant;
  let project: { id: string; updatedAt: string };
  beforeEach(async () => {
    org = await createTenant(t);
    project = await create(org, { name: 'Original', emailConfig: { domain: 'example.com' }, settings: { timezone: 'Europe/Paris' } });
  });

  const patch = (payload: Record<string, unknown>) =>
    call({ method: 'PATCH', url: `/projects/${project.id}`, headers: org.jwt, payload });

  it('fields left out are kept', async () => {
    const res = await patch({ name: 'Renamed' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      name: 'Renamed',
      emailConfig: { domain: null },
      settings: { timezone: 'Europe/Paris' },
    });
    expect(new Date(res.json().updatedAt).getTime()).toBeGreaterThanOrEqual(new Date(project.updatedAt).getTime());
    expect((await call({ method: 'GET', url: `/projects/${project.id}`, headers: org.jwt })).json().name).toBe('Renamed');
  });

  it('an empty body changes nothing', async () => {
    const res = await patch({});
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ name: 'Original', emailConfig: { domain: null }, settings: { timezone: 'Europe/Paris' } });
  });

  it('settings merge key by key: keys the request does not name are kept', async () => {
    // A key written by a later capability (or an older version) must survive a partial update.
    await t.database.pool.query(`UPDATE projects SET settings = settings || '{"deliveryPolicy":{"cap":3}}'::jsonb WHERE id = $1`, [
      project.id,
    ]);
    const res = await patch({ settings: { timezone: 'America/New_York' } });
    expect(res.statusCode).toBe(200);
    expect(res.json().settings).toEqual({ timezone: 'America/New_York', deliveryPolicy: { cap: 3 } });
    const { rows } = await t.database.pool.query('SELECT settings FROM projects WHERE id = $1', [project.id]);
    expect(rows[0].settings).toEqual({ timezone: 'America/New_York', deliveryPolicy: { cap: 3 } });

    const untouched = await patch({ settings: {} });
    expect(untouched.json().settings).toEqual({ timezone: 'America/New_York', deliveryPolicy: { cap: 3 } });
  });

  it('operator rate-limit raises survive a PATCH and are never shown nor writable', async () => {
    await t.services.projects.setRateLimits(org.orgId, project.id, { default: 5000 });
    const res = await patch({ settings: { timezone: 'Asia/Tokyo' } });
    expect(res.statusCode).toBe(200);
    expect(res.json().settings).toEqual({ timezone: 'Asia/Tokyo' });
    const { rows } = await t.database.pool.query('SELECT settings FROM projects WHERE id = $1', [project.id]);
    expect(rows[0].settings).toEqual({ timezone: 'Asia/Tokyo', rateLimits: { default: 5000 } });
    const write = await patch({ settings: { rateLimits: { default: 1_000_000 } } });
    expect(fieldsOf(expectError(write, 422, 'Validation failed'))).toEqual(['settings.rateLimits']);
  });

  it('rejects unknown fields and bad values with 422 and leaves the project as it was', async () => {
    const res = await patch({ name: '', organizationId: 'org_other', vapidPublicKey: 'x', settings: { timezone: 'Nowhere' } });
    expect(fieldsOf(expectError(res, 422, 'Validation failed'))).toEqual(['name', 'organizationId', 'settings.timezone', 'vapidPublicKey']);
    const { rows } = await t.database.pool.query('SELECT name, organization_id, settings FROM projects WHERE id = $1', [project.id]);
    expect(rows[0]).toEqual({ name: 'Original', organization_id: org.orgId, settings: { timezone: 'Europe/Paris' } });
  });
});

describe('VAPID keys', () => {
  it('each project has its own 65-byte uncompressed P-256 public key, base64url', async () => {
    const org = await createTenant(t);
    const keys = new Set<string>();
    const projects = [await create(org, { name: 'A' }), await create(org, { name: 'B' }), await create(org, { name: 'C' })];
    for (const project of projects) {
      const key: string = project.vapidPublicKey;
      expect(key).toMatch(/^[A-Za-z0-9_-]+$/);
      const point = Buffer.from(key, 'base64url');
      expect(point).toHaveLength(65);
      expect(point[0]).toBe(0x04);
      expect(point.toString('base64url')).toBe(key);
      // A point on the curve: importable as a P-256 public key.
      const jwk = { kty: 'EC', crv: 'P-256', x: point.subarray(1, 33).toString('base64url'), y: point.subarray(33).toString('base64url') };
      expect(createPublicKey({ key: jwk, format: 'jwk' }).asymmetricKeyDetails).toMatchObject({ namedCurve: 'prime256v1' });
      keys.add(key);
    }
    expect(keys.size).toBe(3);
    const { rows } = await t.database.pool.query(
      `SELECT count(DISTINCT c.settings->>'vapidPublicKey')::int AS n FROM channel_configs c JOIN projects p ON p.id = c.project_id WHERE p.organization_id = $1`,
      [org.orgId],
    );
    expect(rows[0].n).toBe(4);
  });

  it('PATCH keeps the VAPID key', async () => {
    const org = await createTenant(t);
    const project = await create(org, { name: 'Keep' });
    const res = await call({ method: 'PATCH', url: `/projects/${project.id}`, headers: org.jwt, payload: { name: 'Kept' } });
    expect(res.json().vapidPublicKey).toBe(project.vapidPublicKey);
  });
});

describe('DELETE /projects/:id', () => {
  it('→ 204; the project is gone and its API keys with it (the key then → 401)', async () => {
    const org = await createTenant(t);
    const other = await create(org, { name: 'Stays' });
    expect((await call({ method: 'GET', url: `/projects/${org.projectId}`, headers: org.live })).statusCode).toBe(200);

    const res = await call({ method: 'DELETE', url: `/projects/${org.projectId}`, headers: org.jwt });
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');

    expectError(await call({ method: 'GET', url: `/projects/${org.projectId}`, headers: org.jwt }), 404, 'Project not found');
    expectError(await call({ method: 'DELETE', url: `/projects/${org.projectId}`, headers: org.jwt }), 404, 'Project not found');
    for (const headers of [org.live, org.test]) {
      expectError(await call({ method: 'GET', url: `/projects/${org.projectId}`, headers }), 401, 'Invalid API key');
    }
    const { rows } = await t.database.pool.query('SELECT count(*)::int AS n FROM api_keys WHERE project_id = $1', [org.projectId]);
    expect(rows[0].n).toBe(0);

    const list = (await call({ method: 'GET', url: '/projects', headers: org.jwt })).json();
    expect(list).toMatchObject({ total: 1, data: [{ id: other.id, name: 'Stays' }] });
  });

  it('deleting one project leaves another project’s keys working', async () => {
    const org = await createTenant(t);
    const doomed = await create(org, { name: 'Doomed' });
    const key = await call({ method: 'POST', url: `/projects/${doomed.id}/api-keys`, headers: org.jwt, payload: { name: 'k', mode: 'live' } });
    expect(key.statusCode).toBe(201);
    expect((await call({ method: 'DELETE', url: `/projects/${doomed.id}`, headers: org.jwt })).statusCode).toBe(204);
    expectError(
      await call({ method: 'GET', url: `/projects/${doomed.id}`, headers: { 'x-api-key': key.json().key } }),
      401,
      'Invalid API key',
    );
    expect((await call({ method: 'GET', url: `/projects/${org.projectId}`, headers: org.live })).statusCode).toBe(200);
  });
});
