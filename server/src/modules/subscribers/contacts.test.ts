// Contact fields, contacts without a push endpoint and bulk import, through HTTP on a real database.
import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, CHROME_UA, pushSubscription, startWithTwoTenants, type Tenant } from '../../../test/fixtures.js';
import type { TestApp } from '../../../test/harness.js';

let t: TestApp;
let tenant: Tenant;
let other: Tenant;

beforeAll(async () => {
  ({ t, tenant, other } = await startWithTwoTenants());
});
afterAll(() => t.close());

type Headers = Record<string, string>;
interface Sub {
  id: string;
  token: string;
  projectId: string;
  externalId: string | null;
  endpoint: string | null;
  email: string | null;
  phone: string | null;
  emailStatus: string;
  status: string;
  sandbox: boolean;
  timezone: string | null;
  language: string | null;
  tags: string[];
  attributes: Record<string, unknown>;
  preferences: Record<string, unknown>;
}

async function register(who: Tenant, headers: Headers = who.live) {
  const res = await t.app.inject({
    method: 'POST',
    url: '/subscribers',
    headers,
    payload: { projectId: who.projectId, ...pushSubscription(), userAgent: CHROME_UA },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json<{ id: string; token: string }>();
}

const post = (url: string, headers: Headers, payload: unknown) =>
  t.app.inject({ method: 'POST', url, headers, payload: payload as Record<string, unknown> });
const patch = (id: string, headers: Headers, payload: unknown) =>
  t.app.inject({ method: 'PATCH', url: `/subscribers/${id}`, headers, payload: payload as Record<string, unknown> });
const getSub = async (id: string, headers: Headers = tenant.jwt) => {
  const res = await t.app.inject({ method: 'GET', url: `/subscribers/${id}`, headers });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<Sub>();
};
const fields = (res: { json: () => unknown }) => ((res.json() as { details: { field: string }[] }).details ?? []).map((d) => d.field).sort();
const uid = () => randomBytes(6).toString('hex');

async function countRows(projectId: string) {
  const { rows } = await t.database.db.execute<{ n: number }>(sql`select count(*)::int as n from subscribers where project_id = ${projectId}`);
  return rows[0]!.n;
}

describe('setting contact fields', () => {
  it('sets every field by id (API key) and returns the subscriber', async () => {
    const { id } = await register(tenant);
    const res = await patch(id, tenant.live, {
      email: '  Ada@Example.com ',
      phone: '+44 20 7946 0958',
      timezone: 'Europe/London',
      language: 'en-gb',
      attributes: { firstName: 'Ada', plan: { name: 'pro', seats: 3 } },
      preferences: { channels: { email: true, sms: false } },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      id,
      email: 'Ada@Example.com',
      phone: '+442079460958',
      timezone: 'Europe/London',
      language: 'en-GB',
      emailStatus: 'active',
      attributes: { firstName: 'Ada', plan: { name: 'pro', seats: 3 } },
      preferences: { channels: { email: true, sms: false } },
    });
  });

  it('sets fields by token (SDK) and by id with a JWT', async () => {
    const { id, token } = await register(tenant);
    const byToken = await post('/subscribers/update', tenant.live, { token, phone: '+1 415 555 0123', language: 'fr' });
    expect(byToken.statusCode, byToken.body).toBe(200);
    expect(byToken.json()).toMatchObject({ id, phone: '+14155550123', language: 'fr' });
    const byJwt = await patch(id, tenant.jwt, { timezone: 'America/New_York' });
    expect(byJwt.statusCode, byJwt.body).toBe(200);
    expect(byJwt.json()).toMatchObject({ phone: '+14155550123', timezone: 'America/New_York' });
    const byTokenJwt = await post('/subscribers/update', tenant.jwt, { token, timezone: 'Asia/Tokyo' });
    expect(byTokenJwt.json()).toMatchObject({ timezone: 'Asia/Tokyo' });
  });

  it('validates each field with 422 details', async () => {
    const { id, token } = await register(tenant);
    const res = await patch(id, tenant.live, {
      email: 'not-an-email',
      phone: '0207946095',
      timezone: 'Mars/Olympus',
      language: 'not a language!',
      attributes: { '': 1 },
      preferences: { channels: { email: 'yes', fax: true } },
    });
    expect(res.statusCode).toBe(422);
    expect(fields(res)).toEqual(
      expect.arrayContaining(['email', 'phone', 'timezone', 'language', 'preferences.channels.email', 'preferences.channels.fax']),
    );
    expect(fields(res).some((f) => f.startsWith('attributes'))).toBe(true);

    const invalidNumber = await patch(id, tenant.live, { phone: '+1 415 555' });
    expect(fields(invalidNumber)).toEqual(['phone']);
    const tooBig = await patch(id, tenant.live, { attributes: { blob: 'x'.repeat(17 * 1024) } });
    expect(tooBig.statusCode).toBe(422);
    expect(fields(tooBig)).toEqual(['attributes']);
    const empty = await patch(id, tenant.live, {});
    expect(empty.statusCode).toBe(422);
    const unknown = await post('/subscribers/update', tenant.live, { token, nickname: 'x' });
    expect(fields(unknown)).toEqual(['body', 'nickname']); // no contact field given, and one unknown
    const noToken = await post('/subscribers/update', tenant.live, { email: 'a@example.com' });
    expect(fields(noToken)).toEqual(['token']);
  });

  it('rejects merged attributes over the cap and leaves the row unchanged', async () => {
    const { id } = await register(tenant);
    expect((await patch(id, tenant.live, { attributes: { a: 'x'.repeat(10_000) } })).statusCode).toBe(200);
    const res = await patch(id, tenant.live, { attributes: { b: 'y'.repeat(10_000) } });
    expect(res.statusCode).toBe(422);
    expect(fields(res)).toEqual(['attributes']);
    expect(Object.keys((await getSub(id)).attributes)).toEqual(['a']);
  });

  it('answers attributes nested deeper than JSON can be written with 422, and stores deep ones within the cap', async () => {
    const { id } = await register(tenant);
    const nested = (depth: number) =>
      `{"attributes":{"deep":${'['.repeat(depth)}1${']'.repeat(depth)}}}`;
    const send = (body: string) =>
      t.app.inject({ method: 'PATCH', url: `/subscribers/${id}`, headers: { ...tenant.live, 'content-type': 'application/json' }, payload: body });
    const tooDeep = await send(nested(100_000));
    expect(tooDeep.statusCode, tooDeep.body).toBe(422);
    expect(fields(tooDeep)).toEqual(['attributes']);
    const deep = await send(nested(1_000));
    expect(deep.statusCode, deep.body.slice(0, 300)).toBe(200);
  });

  it('merges attributes key by key; null removes a key', async () => {
    const { id } = await register(tenant);
    await patch(id, tenant.live, { attributes: { firstName: 'Ada', lastName: 'Lovelace', score: 1 } });
    const res = await patch(id, tenant.live, { attributes: { lastName: null, score: 2, city: 'London' } });
    expect(res.json<Sub>().attributes).toEqual({ firstName: 'Ada', score: 2, city: 'London' });
  });

  it('merges preference flags one by one', async () => {
    const { id } = await register(tenant);
    await patch(id, tenant.live, { preferences: { channels: { email: false, push: true } } });
    const res = await patch(id, tenant.live, { preferences: { channels: { sms: true, email: true } } });
    expect(res.json<Sub>().preferences).toEqual({ channels: { email: true, push: true, sms: true } });
    const off = await patch(id, tenant.live, { preferences: { channels: { whatsapp: false } } });
    expect(off.json<Sub>().preferences).toEqual({ channels: { email: true, push: true, sms: true, whatsapp: false } });
  });

  it('clears email, phone, timezone and language with null', async () => {
    const { id } = await register(tenant);
    await patch(id, tenant.live, { email: 'x@example.com', phone: '+14155550123', timezone: 'UTC', language: 'de' });
    const res = await patch(id, tenant.live, { email: null, phone: null, timezone: null, language: null });
    expect(res.json()).toMatchObject({ email: null, phone: null, timezone: null, language: null, emailStatus: 'none' });
  });
});

describe('emailStatus transitions', () => {
  /** The address's state on the suppression list, as a person, a provider or the project records it. */
  const suppress = async (tenant: Tenant, email: string, reason: string) => {
    const res = await post(`/projects/${tenant.projectId}/suppressions`, tenant.live, { email, reason });
    expect(res.statusCode, res.body).toBe(201);
  };

  it('none → active when an email is set; → none when cleared', async () => {
    const { id } = await register(tenant);
    expect((await getSub(id)).emailStatus).toBe('none');
    expect((await patch(id, tenant.live, { email: 'a@example.com' })).json<Sub>().emailStatus).toBe('active');
    expect((await patch(id, tenant.live, { email: null })).json<Sub>().emailStatus).toBe('none');
  });

  it.each(['unsubscribed', 'bounced', 'complained'])(
    'is the address’s: %s stays when the same address is sent again (any case), a new address is active, the old one still %s',
    async (status) => {
      const address = `same-${status}-${uid()}@example.com`;
      const { id, token } = await register(tenant);
      await patch(id, tenant.live, { email: address });
      await suppress(tenant, address, status);
      expect((await getSub(id)).emailStatus).toBe(status);
      expect((await patch(id, tenant.live, { email: address.toUpperCase() })).json<Sub>().emailStatus).toBe(status);
      expect((await post('/subscribers/update', tenant.live, { token, email: address })).json<Sub>().emailStatus).toBe(status);
      // Other fields leave it alone too.
      expect((await patch(id, tenant.live, { phone: '+14155550123' })).json<Sub>().emailStatus).toBe(status);
      const changed = await patch(id, tenant.live, { email: `new-${uid()}@example.com` });
      expect(changed.json()).toMatchObject({ emailStatus: 'active' });
      expect((await patch(id, tenant.live, { email: address })).json<Sub>().emailStatus).toBe(status);
    },
  );

  it('a manual suppression leaves the status active; another project’s word about the same address changes nothing here', async () => {
    const address = `shared-${uid()}@example.com`;
    const mine = (await post('/contacts', tenant.live, { projectId: tenant.projectId, email: address })).json<Sub>();
    const theirs = (await post('/contacts', other.live, { projectId: other.projectId, email: address })).json<Sub>();
    await suppress(tenant, address, 'manual');
    await suppress(other, address, 'unsubscribed');
    const [here, there] = [await getSub(mine.id, tenant.live), await getSub(theirs.id, other.live)];
    expect(here).toMatchObject({ emailStatus: 'active', marketingConsent: { email: 'subscribed' } });
    expect(there).toMatchObject({ emailStatus: 'unsubscribed', marketingConsent: { email: 'unsubscribed' } });
  });
});

describe('POST /contacts', () => {
  it('creates an email-only contact, active, without a push endpoint', async () => {
    const res = await post('/contacts', tenant.live, {
      projectId: tenant.projectId,
      email: 'grace@example.com',
      externalId: 'user-grace',
      timezone: 'America/New_York',
      language: 'en-us',
      tags: ['vip', 'vip', 'beta'],
      attributes: { firstName: 'Grace', lastName: 'Hopper', dropped: null },
      preferences: { channels: { sms: false } },
    });
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json<Sub>();
    expect(body).toMatchObject({
      projectId: tenant.projectId,
      endpoint: null,
      status: 'active',
      emailStatus: 'active',
      email: 'grace@example.com',
      externalId: 'user-grace',
      language: 'en-US',
      tags: ['vip', 'beta'],
      attributes: { firstName: 'Grace', lastName: 'Hopper' },
      preferences: { channels: { sms: false } },
      sandbox: false,
    });
    expect(body.token).toMatch(/^st_/);
    expect((await getSub(body.id)).email).toBe('grace@example.com');
  });

  it('creates a phone-only contact (emailStatus none) and one with a JWT', async () => {
    const phoneOnly = await post('/contacts', tenant.live, { projectId: tenant.projectId, phone: '+33 6 12 34 56 78' });
    expect(phoneOnly.statusCode, phoneOnly.body).toBe(201);
    expect(phoneOnly.json()).toMatchObject({ phone: '+33612345678', emailStatus: 'none', email: null });
    const byJwt = await post('/contacts', tenant.jwt, { projectId: tenant.projectId, externalId: 'jwt-made' });
    expect(byJwt.statusCode, byJwt.body).toBe(201);
  });

  it('needs one of externalId, email or phone, and validates the fields', async () => {
    const none = await post('/contacts', tenant.live, { projectId: tenant.projectId, timezone: 'UTC' });
    expect(none.statusCode).toBe(422);
    const bad = await post('/contacts', tenant.live, { projectId: tenant.projectId, email: 'nope', phone: '12', tags: [''] });
    expect(bad.statusCode).toBe(422);
    expect(fields(bad)).toEqual(['email', 'phone', 'tags.0']);
  });

  it('creates a sandbox contact with a test key', async () => {
    const res = await post('/contacts', tenant.test, { projectId: tenant.projectId, email: 'sandbox@example.com' });
    expect(res.statusCode).toBe(201);
    expect(res.json<Sub>().sandbox).toBe(true);
  });
});

describe('POST /contacts/import (JSON)', () => {
  const importJson = (who: Tenant, body: Record<string, unknown>, headers: Headers = who.live) =>
    post('/contacts/import', headers, { projectId: who.projectId, ...body });

  it('creates then updates by externalId, updating every device of the user', async () => {
    const key = uid();
    const device = await register(tenant);
    await post('/subscribers/identify', tenant.live, { token: device.token, externalId: `${key}-1` });
    const res = await importJson(tenant, {
      upsertBy: 'externalId',
      contacts: [
        { externalId: `${key}-1`, email: `one-${key}@example.com`, tags: ['imported'], attributes: { firstName: 'One' } },
        { externalId: `${key}-2`, phone: '+14155550124', attributes: { firstName: 'Two' } },
        { externalId: `${key}-3` },
      ],
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ created: 2, updated: 1, total: 3 });
    expect(await getSub(device.id)).toMatchObject({
      email: `one-${key}@example.com`,
      emailStatus: 'active',
      tags: ['imported'],
      attributes: { firstName: 'One' },
    });

    const again = await importJson(tenant, {
      contacts: [
        { externalId: `${key}-2`, attributes: { firstName: null, lastName: 'Deux' }, tags: ['a'] },
        { externalId: `${key}-4`, email: `four-${key}@example.com` },
      ],
    });
    expect(again.json()).toEqual({ created: 1, updated: 1, total: 2 });
    const list = await t.app.inject({
      method: 'GET',
      url: `/subscribers/project/${tenant.projectId}/external-id/${key}-2`,
      headers: tenant.live,
    });
    const [two] = list.json<{ data: Sub[] }>().data;
    expect(two).toMatchObject({ phone: '+14155550124', attributes: { lastName: 'Deux' }, tags: ['a'], endpoint: null });
  });

  it('upserts by email case-insensitively and keeps a suppressed status', async () => {
    const key = uid();
    const created = await post('/contacts', tenant.live, { projectId: tenant.projectId, email: `Case-${key}@Example.com` });
    const id = created.json<Sub>().id;
    expect((await post(`/projects/${tenant.projectId}/suppressions`, tenant.live, { email: `case-${key}@example.com`, reason: 'unsubscribed' })).statusCode).toBe(201);
    const res = await importJson(tenant, {
      upsertBy: 'email',
      contacts: [
        { email: `case-${key}@example.com`, externalId: `ext-${key}`, preferences: { channels: { email: false } } },
        { email: `new-${key}@example.com` },
      ],
    });
    expect(res.json()).toEqual({ created: 1, updated: 1, total: 2 });
    expect(await getSub(id)).toMatchObject({
      externalId: `ext-${key}`,
      emailStatus: 'unsubscribed',
      preferences: { channels: { email: false } },
    });
  });

  it('rejects the whole import when one row is bad, and writes nothing', async () => {
    const before = await countRows(tenant.projectId);
    const key = uid();
    const res = await importJson(tenant, {
      contacts: [
        { externalId: `${key}-ok`, email: `ok-${key}@example.com` },
        { externalId: `${key}-bad`, email: 'not-an-email', phone: '123', nickname: 'x' },
        { email: `nokey-${key}@example.com` },
        { externalId: `${key}-ok` },
        'not an object',
      ],
    });
    expect(res.statusCode).toBe(422);
    expect(fields(res)).toEqual(['rows[1].email', 'rows[1].nickname', 'rows[1].phone', 'rows[2].externalId', 'rows[3].externalId', 'rows[4]']);
    expect(await countRows(tenant.projectId)).toBe(before);
  });

  it('validates the envelope: upsertBy, empty and oversized lists, query parameters with JSON', async () => {
    expect(fields(await importJson(tenant, { upsertBy: 'phone', contacts: [{ externalId: 'x' }] }))).toEqual(['upsertBy']);
    expect(fields(await importJson(tenant, { contacts: [] }))).toEqual(['contacts']);
    const big = Array.from({ length: 10_001 }, (_, i) => ({ externalId: `x${i}` }));
    expect(fields(await importJson(tenant, { contacts: big }))).toEqual(['contacts']);
    const withQuery = await t.app.inject({
      method: 'POST',
      url: `/contacts/import?projectId=${tenant.projectId}`,
      headers: tenant.live,
      payload: { projectId: tenant.projectId, contacts: [{ externalId: 'x' }] },
    });
    expect(fields(withQuery)).toEqual(['query.projectId']);
  });

  it('imports 10,000 rows in one go', async () => {
    const key = uid();
    const contacts = Array.from({ length: 10_000 }, (_, i) => ({
      externalId: `${key}-${i}`,
      email: `bulk-${i}-${key}@example.com`,
      tags: ['bulk'],
      attributes: { n: i },
    }));
    const res = await importJson(tenant, { contacts });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ created: 10_000, updated: 0, total: 10_000 });
    const again = await importJson(tenant, { contacts });
    expect(again.json()).toEqual({ created: 0, updated: 10_000, total: 10_000 });
  }, 60_000);
});

describe('POST /contacts/import (CSV)', () => {
  const importCsv = (csv: string, query: string, headers: Headers = tenant.live) =>
    t.app.inject({
      method: 'POST',
      url: `/contacts/import?${query}`,
      headers: { ...headers, 'content-type': 'text/csv' },
      payload: csv,
    });

  it('imports rows with quoted fields, tags, attributes and formula-looking cells verbatim', async () => {
    const key = uid();
    const csv = [
      'externalId,email,phone,timezone,language,tags,attributes.firstName,attributes.note,preferences.channels.email',
      `${key}-1,a-${key}@example.com,+14155550125,Europe/Paris,fr,"vip, beta",Ada,"=HYPERLINK(""http://evil"")",false`,
      `${key}-2,,,,,"x|y|x",@SUM(A1),"+1, ""quoted""\nmultiline",`,
    ].join('\r\n');
    const res = await importCsv(csv, `projectId=${tenant.projectId}`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ created: 2, updated: 0, total: 2 });
    const one = await t.app.inject({ method: 'GET', url: `/subscribers/project/${tenant.projectId}/external-id/${key}-1`, headers: tenant.live });
    expect(one.json<{ data: Sub[] }>().data[0]).toMatchObject({
      email: `a-${key}@example.com`,
      phone: '+14155550125',
      timezone: 'Europe/Paris',
      language: 'fr',
      tags: ['vip', 'beta'],
      attributes: { firstName: 'Ada', note: '=HYPERLINK("http://evil")' },
      preferences: { channels: { email: false } },
      emailStatus: 'active',
    });
    const two = await t.app.inject({ method: 'GET', url: `/subscribers/project/${tenant.projectId}/external-id/${key}-2`, headers: tenant.live });
    expect(two.json<{ data: Sub[] }>().data[0]).toMatchObject({
      email: null,
      emailStatus: 'none',
      tags: ['x', 'y'],
      attributes: { firstName: '@SUM(A1)', note: '+1, "quoted"\nmultiline' },
      preferences: {},
    });
  });

  it('upserts by email from the query', async () => {
    const key = uid();
    const first = await importCsv(`email,attributes.plan\nB-${key}@example.com,free\n`, `projectId=${tenant.projectId}&upsertBy=email`);
    expect(first.json()).toEqual({ created: 1, updated: 0, total: 1 });
    const second = await importCsv(`email,attributes.plan\nb-${key}@EXAMPLE.com,pro\n`, `projectId=${tenant.projectId}&upsertBy=email`);
    expect(second.json()).toEqual({ created: 0, updated: 1, total: 1 });
  });

  it('reports bad rows and unknown columns with 422, malformed CSV with 400, and writes nothing', async () => {
    const before = await countRows(tenant.projectId);
    const bad = await importCsv(`externalId,email,phone\nok-${uid()},ok@example.com,\n,x@example.com,\nb-${uid()},nope,12\n`, `projectId=${tenant.projectId}`);
    expect(bad.statusCode).toBe(422);
    expect(fields(bad)).toEqual(['rows[1].externalId', 'rows[2].email', 'rows[2].phone']);
    const columns = await importCsv('externalId,nickname\nx,y\n', `projectId=${tenant.projectId}`);
    expect(columns.statusCode).toBe(422);
    expect(fields(columns)).toEqual(['columns.nickname']);
    const flag = await importCsv('externalId,preferences.channels.email\nx,maybe\n', `projectId=${tenant.projectId}`);
    expect(fields(flag)).toEqual(['rows[0].preferences.channels.email']);
    const malformed = await importCsv('externalId,email\n"unclosed,x\n', `projectId=${tenant.projectId}`);
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json()).toMatchObject({ code: 'invalid_csv' });
    const noProject = await importCsv('externalId\nx\n', '');
    expect(noProject.statusCode).toBe(422);
    expect(fields(noProject)).toEqual(['projectId']);
    expect(await countRows(tenant.projectId)).toBe(before);
  });

  it('takes no push endpoint (only POST /subscribers registers one, behind the endpoint guard): 422, nothing written', async () => {
    const before = await countRows(tenant.projectId);
    const endpoint = 'https://169.254.169.254/latest/meta-data';
    const contact = await post('/contacts', tenant.live, { projectId: tenant.projectId, email: `e-${uid()}@example.com`, endpoint });
    expect(fields(contact)).toEqual(['endpoint']);
    const json = await post('/contacts/import', tenant.live, { projectId: tenant.projectId, contacts: [{ externalId: uid(), endpoint }] });
    expect(fields(json)).toEqual(['rows[0].endpoint']);
    const csv = await importCsv(`externalId,endpoint\n${uid()},${endpoint}\n`, `projectId=${tenant.projectId}`);
    expect(fields(csv)).toEqual(['columns.endpoint']);
    expect(await countRows(tenant.projectId)).toBe(before);
  });

  it('still refuses text/csv on other routes and text/plain here', async () => {
    const contacts = await t.app.inject({
      method: 'POST',
      url: '/contacts',
      headers: { ...tenant.live, 'content-type': 'text/csv' },
      payload: 'email\na@example.com\n',
    });
    expect(contacts.statusCode).toBe(400);
    const plain = await t.app.inject({
      method: 'POST',
      url: `/contacts/import?projectId=${tenant.projectId}`,
      headers: { ...tenant.live, 'content-type': 'text/plain' },
      payload: 'externalId\nx\n',
    });
    expect(plain.statusCode).toBe(400);
  });
});

describe('tenant isolation', () => {
  it('hides another tenant\'s subscriber from PATCH and update by token (404)', async () => {
    const theirs = await register(other);
    expect((await patch(theirs.id, tenant.jwt, { email: 'x@example.com' })).statusCode).toBe(404);
    expect((await patch(theirs.id, tenant.live, { email: 'x@example.com' })).statusCode).toBe(404);
    expect((await post('/subscribers/update', tenant.jwt, { token: theirs.token, email: 'x@example.com' })).statusCode).toBe(404);
    expect((await post('/subscribers/update', tenant.live, { token: theirs.token, email: 'x@example.com' })).statusCode).toBe(404);
    expect((await getSub(theirs.id, other.jwt)).email).toBeNull();
  });

  it('answers another project named in the body with 403 (key) or 404 (JWT)', async () => {
    const before = await countRows(other.projectId);
    for (const url of ['/contacts', '/contacts/import']) {
      const payload = url === '/contacts' ? { projectId: other.projectId, email: 'x@example.com' } : { projectId: other.projectId, contacts: [{ externalId: 'x' }] };
      expect((await post(url, tenant.live, payload)).statusCode).toBe(403);
      expect((await post(url, tenant.test, payload)).statusCode).toBe(403);
      expect((await post(url, tenant.jwt, payload)).statusCode).toBe(404);
    }
    const csv = await t.app.inject({
      method: 'POST',
      url: `/contacts/import?projectId=${other.projectId}`,
      headers: { ...tenant.live, 'content-type': 'text/csv' },
      payload: 'externalId\nx\n',
    });
    expect(csv.statusCode).toBe(403);
    const csvJwt = await t.app.inject({
      method: 'POST',
      url: `/contacts/import?projectId=${other.projectId}`,
      headers: { ...tenant.jwt, 'content-type': 'text/csv' },
      payload: 'externalId\nx\n',
    });
    expect(csvJwt.statusCode).toBe(404);
    expect(await countRows(other.projectId)).toBe(before);
  });

  it('lets a test key see and write only sandbox rows', async () => {
    const live = await register(tenant);
    expect((await patch(live.id, tenant.test, { email: 'x@example.com' })).statusCode).toBe(404);
    expect((await post('/subscribers/update', tenant.test, { token: live.token, email: 'x@example.com' })).statusCode).toBe(404);
    const sandbox = await register(tenant, tenant.test);
    expect((await patch(sandbox.id, tenant.test, { email: 'sb@example.com' })).statusCode).toBe(200);

    // Import with the test key: the live contact with the same externalId is neither matched nor touched.
    const key = uid();
    await post('/contacts', tenant.live, { projectId: tenant.projectId, externalId: key, email: `live-${key}@example.com` });
    const res = await post('/contacts/import', tenant.test, { projectId: tenant.projectId, contacts: [{ externalId: key, email: `sb-${key}@example.com` }] });
    expect(res.json()).toEqual({ created: 1, updated: 0, total: 1 });
    const { rows } = await t.database.db.execute<{ email: string; sandbox: boolean }>(
      sql`select email, sandbox from subscribers where project_id = ${tenant.projectId} and external_id = ${key} order by sandbox`,
    );
    expect(rows).toEqual([
      { email: `live-${key}@example.com`, sandbox: false },
      { email: `sb-${key}@example.com`, sandbox: true },
    ]);
    // And a live import matches only the live contact.
    const liveImport = await post('/contacts/import', tenant.live, { projectId: tenant.projectId, contacts: [{ externalId: key, phone: '+14155550199' }] });
    expect(liveImport.json()).toEqual({ created: 0, updated: 1, total: 1 });
  });

  it('keeps VIEWERs read-only', async () => {
    const viewer = await addMember(t, tenant, 'VIEWER');
    const { id } = await register(tenant);
    expect((await patch(id, viewer.headers, { email: 'v@example.com' })).statusCode).toBe(403);
    expect((await post('/contacts', viewer.headers, { projectId: tenant.projectId, email: 'v@example.com' })).statusCode).toBe(403);
    expect((await post('/contacts/import', viewer.headers, { projectId: tenant.projectId, contacts: [{ externalId: 'v' }] })).statusCode).toBe(403);
  });
});
