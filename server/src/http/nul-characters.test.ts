// A NUL character anywhere in a request's body, query, path or headers: 422 naming the field, never 500, nothing written.
import { sql } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CHROME_UA, createTenant, pushSubscription, type Tenant } from '../../test/fixtures.js';
import { startTestApp, type TestApp } from '../../test/harness.js';

const NUL_ERROR = 'must not contain the NUL character (\\u0000)';

let t: TestApp;
let tenant: Tenant;

beforeAll(async () => {
  t = await startTestApp(
    {},
    {
      beforeReady: (app) => {
        app.get(
          '/test/headers',
          { config: { access: { auth: 'public' } }, schema: { headers: z.looseObject({}) } },
          async () => ({ ok: true }),
        );
      },
    },
  );
  tenant = await createTenant(t);
});
afterAll(() => t.close());

async function countSubscribers() {
  const { rows } = await t.database.db.execute<{ n: number }>(
    sql`select count(*)::int as n from subscribers where project_id = ${tenant.projectId}`,
  );
  return rows[0]!.n;
}

/** Asserts a 422 validation_failed envelope naming exactly `fields`, each for its NUL. */
function expectNulFields(res: LightMyRequestResponse, fields: string[]) {
  expect(res.statusCode, res.body).toBe(422);
  const body = res.json<{ code: string; message: string; details: { field: string; error: string }[] }>();
  expect(body).toMatchObject({ statusCode: 422, code: 'validation_failed', message: 'Validation failed' });
  expect(body.details).toEqual(fields.map((field) => ({ field, error: NUL_ERROR })));
}

const registration = (extra: Record<string, unknown>) => ({
  projectId: tenant.projectId,
  ...pushSubscription(),
  userAgent: CHROME_UA,
  ...extra,
});

describe('a NUL in the body', () => {
  it('in a value: 422 naming the field, and no subscriber is registered', async () => {
    const before = await countSubscribers();
    const res = await t.app.inject({
      method: 'POST',
      url: '/subscribers',
      headers: tenant.live,
      payload: registration({ userAgent: 'Mozilla\u0000X' }),
    });
    expectNulFields(res, ['userAgent']);
    expect(await countSubscribers()).toBe(before);
  });

  it('in a nested key: 422 naming the key by its path, and no contact is created', async () => {
    const before = await countSubscribers();
    const res = await t.app.inject({
      method: 'POST',
      url: '/contacts',
      headers: tenant.live,
      payload: { projectId: tenant.projectId, email: 'nul@example.com', attributes: { profile: { 'nick\u0000name': 'Ada' } } },
    });
    expectNulFields(res, ['attributes.profile.nick\u0000name']);
    expect(await countSubscribers()).toBe(before);
  });

  it('in an update: 422, and the stored attributes are unchanged', async () => {
    const created = await t.app.inject({
      method: 'POST',
      url: '/contacts',
      headers: tenant.live,
      payload: { projectId: tenant.projectId, externalId: 'nul-update', attributes: { plan: 'pro' } },
    });
    expect(created.statusCode, created.body).toBe(201);
    const { id } = created.json<{ id: string }>();

    const res = await t.app.inject({
      method: 'PATCH',
      url: `/subscribers/${id}`,
      headers: tenant.live,
      payload: { attributes: { plan: 'free\u0000', tags: ['a', 'b\u0000'] } },
    });
    expectNulFields(res, ['attributes.plan', 'attributes.tags.1']);
    const stored = await t.app.inject({ method: 'GET', url: `/subscribers/${id}`, headers: tenant.live });
    expect(stored.json<{ attributes: unknown }>().attributes).toEqual({ plan: 'pro' });
  });

  it('deep inside a JSON import: 422 naming the row field, nothing imported', async () => {
    const before = await countSubscribers();
    const res = await t.app.inject({
      method: 'POST',
      url: '/contacts/import',
      headers: tenant.live,
      payload: {
        projectId: tenant.projectId,
        contacts: [{ externalId: 'nul-1' }, { externalId: 'nul-2', email: 'b\u0000@example.com' }],
      },
    });
    expectNulFields(res, ['contacts.1.email']);
    expect(await countSubscribers()).toBe(before);
  });

  it('in a CSV import cell: 422 naming the row field, nothing imported', async () => {
    const before = await countSubscribers();
    const res = await t.app.inject({
      method: 'POST',
      url: `/contacts/import?projectId=${tenant.projectId}`,
      headers: { ...tenant.live, 'content-type': 'text/csv' },
      payload: 'externalId,attributes.plan\nnul-csv-1,pro\nnul-csv-2,free\u0000\n',
    });
    expectNulFields(res, ['contacts.1.attributes.plan']);
    expect(await countSubscribers()).toBe(before);
  });

  it('names at most 100 fields', async () => {
    const contacts = Array.from({ length: 150 }, (_, i) => ({ externalId: `nul-many-${i}\u0000` }));
    const res = await t.app.inject({
      method: 'POST',
      url: '/contacts/import',
      headers: tenant.live,
      payload: { projectId: tenant.projectId, contacts },
    });
    expectNulFields(res, Array.from({ length: 100 }, (_, i) => `contacts.${i}.externalId`));
  });

  it('nested far deeper than the call stack allows: still 422', async () => {
    const depth = 100_000;
    const res = await t.app.inject({
      method: 'POST',
      url: '/contacts',
      headers: { ...tenant.live, 'content-type': 'application/json' },
      payload: `{"projectId":"${tenant.projectId}","attributes":{"deep":${'['.repeat(depth)}"\\u0000"${']'.repeat(depth)}}}`,
    });
    expectNulFields(res, [['attributes', 'deep', ...Array<string>(depth).fill('0')].join('.')]);
  });
});

describe('a NUL outside the body', () => {
  it('in a query parameter: 422 naming query.<name>', async () => {
    const res = await t.app.inject({ method: 'GET', url: `/subscribers/project/${tenant.projectId}?tag=a%00b`, headers: tenant.live });
    expectNulFields(res, ['query.tag']);
  });

  it('in a path parameter: 422 naming params.<name>', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/subscribers/token/st_%00', headers: tenant.live });
    expectNulFields(res, ['params.token']);
  });

  it('in the organization an event stream names in its query (read before validation): 403, not a member', async () => {
    const url = `/campaigns/cmp_x/stream?token=${tenant.token}&orgId=org_%00`;
    const res = await t.app.inject({ method: 'GET', url });
    expect(res.statusCode, res.body).toBe(403);
    expect(res.json().message).toBe('You are not a member of this organization');
  });

  it('in a header of a route that validates headers: 422 naming headers.<name>', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/test/headers', headers: { 'x-note': 'a\u0000b' } });
    expectNulFields(res, ['headers.x-note']);
  });
});
