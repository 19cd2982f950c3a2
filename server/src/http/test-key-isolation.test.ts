// What a test key may do to live data, resource by resource through HTTP: it reads and writes only sandbox rows, so a
// leaked test key cannot change what a live campaign sends or to whom (docs/CONTEXT.md, "Sandbox vs live").
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWithTenant, type Tenant } from '../../test/fixtures.js';
import type { TestApp } from '../../test/harness.js';
import { seedSubscribers } from '../../test/subscriber-seed.js';

let t: TestApp;
let tenant: Tenant;

beforeAll(async () => {
  ({ t, tenant } = await startWithTenant());
});
afterAll(() => t.close());

type Headers = Record<string, string>;
const request = (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, headers: Headers, payload?: unknown) =>
  t.app.inject({ method, url, headers, ...(payload !== undefined && { payload: payload as Record<string, unknown> }) });
const row = async (sql: string, params: unknown[]) => (await t.database.pool.query(sql, params)).rows[0] as Record<string, unknown> | undefined;

function expectNotFound(res: Awaited<ReturnType<typeof request>>, what: string) {
  expect(res.statusCode, res.body).toBe(404);
  expect(res.json()).toMatchObject({ statusCode: 404, message: `${what} not found` });
}

async function segment(headers: Headers, name: string, filters: Record<string, unknown> = { tags: ['vip'] }) {
  const res = await request('POST', '/segments', headers, { projectId: tenant.projectId, name, filters });
  expect(res.statusCode, res.body).toBe(201);
  return res.json<{ id: string; sandbox: boolean }>();
}

async function campaign(headers: Headers, overrides: Record<string, unknown> = {}) {
  const res = await request('POST', '/campaigns', headers, {
    projectId: tenant.projectId,
    name: 'Live campaign',
    content: { title: 'Hello', body: 'World' },
    segment: { filters: {} },
    schedule: { mode: 'draft' },
    ...overrides,
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json<{ id: string; status: string; sandbox: boolean }>();
}

describe('saved segments', () => {
  it('a test key cannot read, list, rewrite, delete, count or export a live segment', async () => {
    const live = await segment(tenant.jwt, 'Live VIPs');
    expect(live.sandbox).toBe(false);
    const before = await row('SELECT name, filters, updated_at FROM segments WHERE id = $1', [live.id]);

    expectNotFound(await request('GET', `/segments/${live.id}`, tenant.test), 'Segment');
    expectNotFound(await request('PATCH', `/segments/${live.id}`, tenant.test, { name: 'Hijacked', filters: {} }), 'Segment');
    expectNotFound(await request('DELETE', `/segments/${live.id}`, tenant.test), 'Segment');
    expectNotFound(await request('POST', '/segments/reach', tenant.test, { projectId: tenant.projectId, segmentId: live.id }), 'Segment');
    expectNotFound(
      await request('GET', `/segments/project/${tenant.projectId}/export.csv?segmentId=${live.id}`, tenant.test),
      'Segment',
    );
    const listed = await request('GET', `/segments/project/${tenant.projectId}`, tenant.test);
    expect(listed.json<{ data: { id: string }[] }>().data.map((s) => s.id)).not.toContain(live.id);

    expect(await row('SELECT name, filters, updated_at FROM segments WHERE id = $1', [live.id])).toEqual(before);
  });

  it('a test key saves sandbox segments and changes them; live keys and dashboard users see both environments', async () => {
    const sandbox = await segment(tenant.test, 'Sandbox VIPs');
    expect(sandbox.sandbox).toBe(true);
    expect((await row('SELECT sandbox FROM segments WHERE id = $1', [sandbox.id]))?.sandbox).toBe(true);
    const live = await segment(tenant.live, 'Live key VIPs');
    expect(live.sandbox).toBe(false);

    const ids = async (headers: Headers) =>
      (await request('GET', `/segments/project/${tenant.projectId}?pageSize=100`, headers)).json<{ data: { id: string }[] }>().data.map((s) => s.id);
    expect(await ids(tenant.test)).toContain(sandbox.id);
    expect(await ids(tenant.test)).not.toContain(live.id);
    expect(await ids(tenant.live)).toEqual(expect.arrayContaining([sandbox.id, live.id]));
    expect(await ids(tenant.jwt)).toEqual(expect.arrayContaining([sandbox.id, live.id]));

    const renamed = await request('PATCH', `/segments/${sandbox.id}`, tenant.test, { name: 'Renamed' });
    expect(renamed.statusCode, renamed.body).toBe(200);
    expect(renamed.json()).toMatchObject({ name: 'Renamed', sandbox: true });
    expect((await request('GET', `/segments/${sandbox.id}`, tenant.live)).statusCode).toBe(200);
    expect((await request('GET', `/segments/${sandbox.id}`, tenant.jwt)).statusCode).toBe(200);
    expect((await request('DELETE', `/segments/${sandbox.id}`, tenant.test)).statusCode).toBe(204);
  });

  it('a campaign uses a saved segment of its own environment only, so a test key cannot steer a live campaign', async () => {
    const live = await segment(tenant.jwt, 'Live only');
    const sandbox = await segment(tenant.test, 'Sandbox only');
    const refused = { field: 'segment.savedSegmentId', error: 'is not a saved segment of this project and environment' };
    for (const [headers, segmentId] of [
      [tenant.jwt, sandbox.id],
      [tenant.live, sandbox.id],
      [tenant.test, live.id],
    ] as const) {
      const res = await request('POST', '/campaigns', headers, {
        projectId: tenant.projectId,
        name: 'C',
        content: { title: 'Hello', body: 'World' },
        segment: { savedSegmentId: segmentId },
        schedule: { mode: 'scheduled', sendAt: new Date(Date.now() + 3_600_000).toISOString() },
      });
      expect(res.statusCode, res.body).toBe(422);
      expect(res.json().details).toEqual([refused]);
    }
    expect((await campaign(tenant.jwt, { segment: { savedSegmentId: live.id } })).sandbox).toBe(false);
    expect((await campaign(tenant.live, { segment: { savedSegmentId: live.id } })).sandbox).toBe(false);
    expect((await campaign(tenant.test, { segment: { savedSegmentId: sandbox.id } })).sandbox).toBe(true);

    // Editing a live draft onto a sandbox segment is refused the same way, and so is a re-send of a live campaign.
    const draft = await campaign(tenant.jwt);
    const edit = await request('PATCH', `/campaigns/${draft.id}`, tenant.jwt, { segment: { savedSegmentId: sandbox.id } });
    expect(edit.statusCode, edit.body).toBe(422);
    const scheduled = await campaign(tenant.jwt, { schedule: { mode: 'scheduled', sendAt: new Date(Date.now() + 3_600_000).toISOString() } });
    expect((await request('POST', `/campaigns/${scheduled.id}/cancel`, tenant.jwt)).statusCode).toBe(200);
    const resend = await request('POST', `/campaigns/${scheduled.id}/send`, tenant.live, { segment: { savedSegmentId: sandbox.id } });
    expect(resend.statusCode, resend.body).toBe(422);
    expect(resend.json().details).toEqual([refused]);
  });

  it('a live campaign keeps its audience: the test key cannot touch the segment it will read', async () => {
    const [liveVip] = await seedSubscribers(t.database.pool, tenant.projectId, [{ tags: ['gold'] }]);
    await seedSubscribers(t.database.pool, tenant.projectId, [{ tags: ['silver'] }]);
    const live = await segment(tenant.jwt, 'Gold', { tags: ['gold'] });
    const scheduled = await campaign(tenant.jwt, {
      segment: { savedSegmentId: live.id },
      schedule: { mode: 'scheduled', sendAt: new Date(Date.now() + 1_000).toISOString() },
    });
    expectNotFound(await request('PATCH', `/segments/${live.id}`, tenant.test, { filters: { tags: ['silver'] } }), 'Segment');
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    await t.services.campaigns.dispatch(tenant.projectId, scheduled.id);
    const recipients = await t.database.pool.query<{ subscriber_id: string }>(
      'SELECT d.subscriber_id FROM deliveries d JOIN campaigns c ON c.message_id = d.message_id WHERE c.id = $1',
      [scheduled.id],
    );
    expect(recipients.rows.map((r) => r.subscriber_id)).toEqual([liveVip]);
  });
});

describe('campaigns', () => {
  it('a test key cannot read, edit, delete, cancel, archive or re-send a live campaign', async () => {
    const draft = await campaign(tenant.jwt);
    const scheduled = await campaign(tenant.live, { schedule: { mode: 'scheduled', sendAt: new Date(Date.now() + 3_600_000).toISOString() } });
    const cancelled = await campaign(tenant.jwt, { schedule: { mode: 'scheduled', sendAt: new Date(Date.now() + 3_600_000).toISOString() } });
    expect((await request('POST', `/campaigns/${cancelled.id}/cancel`, tenant.jwt)).statusCode).toBe(200);
    const snapshot = async () =>
      (await t.database.pool.query('SELECT id, status, name, segment, updated_at FROM campaigns WHERE project_id = $1 ORDER BY id', [tenant.projectId]))
        .rows;
    const before = await snapshot();

    expectNotFound(await request('GET', `/campaigns/${draft.id}`, tenant.test), 'Campaign');
    expectNotFound(await request('PATCH', `/campaigns/${draft.id}`, tenant.test, { name: 'Hijacked' }), 'Campaign');
    expectNotFound(await request('DELETE', `/campaigns/${draft.id}`, tenant.test), 'Campaign');
    expectNotFound(await request('DELETE', `/campaigns/${scheduled.id}`, tenant.test), 'Campaign');
    expectNotFound(await request('POST', `/campaigns/${scheduled.id}/cancel`, tenant.test), 'Campaign');
    expectNotFound(await request('POST', `/campaigns/${cancelled.id}/archive`, tenant.test), 'Campaign');
    expectNotFound(await request('POST', `/campaigns/${cancelled.id}/send`, tenant.test), 'Campaign');
    const listed = await request('GET', `/campaigns/project/${tenant.projectId}?pageSize=100`, tenant.test);
    expect(listed.json<{ data: { sandbox: boolean }[] }>().data.every((c) => c.sandbox)).toBe(true);

    expect(await snapshot()).toEqual(before);
  });
});

describe('transactional send log', () => {
  it('a test key lists only sandbox sends', async () => {
    const sendTo = (headers: Headers, token: string) =>
      request('POST', '/transactional/send', headers, { token, title: 'Hello', body: 'World' });
    expect((await sendTo(tenant.live, 'st_live_nobody')).statusCode).toBe(200);
    expect((await sendTo(tenant.test, 'st_test_nobody')).statusCode).toBe(200);
    const tokens = async (headers: Headers) =>
      (await request('GET', `/transactional/sends/project/${tenant.projectId}`, headers))
        .json<{ data: { recipient: { token?: string } }[] }>()
        .data.map((s) => s.recipient.token);
    expect(await tokens(tenant.test)).toEqual(['st_test_nobody']);
    expect(await tokens(tenant.live)).toEqual(expect.arrayContaining(['st_live_nobody', 'st_test_nobody']));
  });

  it('an Idempotency-Key used by a live key is not replayed to a test key', async () => {
    const payload = { token: 'st_idem_nobody', title: 'Hello', body: 'World' };
    const send = (headers: Headers) =>
      t.app.inject({ method: 'POST', url: '/transactional/send', headers: { ...headers, 'idempotency-key': 'same-key' }, payload });
    expect((await send(tenant.live)).statusCode).toBe(200);
    const replay = await send(tenant.live);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    const fromTest = await send(tenant.test);
    expect(fromTest.statusCode).toBe(200);
    expect(fromTest.headers['idempotent-replayed']).toBeUndefined();
    const { rows } = await t.database.pool.query(
      `SELECT sandbox FROM transactional_sends WHERE recipient->>'token' = 'st_idem_nobody' ORDER BY sandbox`,
    );
    expect(rows).toEqual([{ sandbox: false }, { sandbox: true }]);
  });
});

describe('subscribers and contacts', () => {
  it('a test key cannot read or change a live subscriber, by id or by token, nor match it in an import', async () => {
    const [id] = await seedSubscribers(t.database.pool, tenant.projectId, [{ tags: ['live'] }]);
    const token = `st_${id}`;
    await t.database.pool.query(`UPDATE subscribers SET email = 'live@example.com', external_id = 'live-user' WHERE id = $1`, [id]);
    const before = await row('SELECT * FROM subscribers WHERE id = $1', [id]);

    expectNotFound(await request('GET', `/subscribers/${id}`, tenant.test), 'Subscriber');
    expectNotFound(await request('GET', `/subscribers/token/${token}`, tenant.test), 'Subscriber');
    expectNotFound(await request('PATCH', `/subscribers/${id}`, tenant.test, { email: 'hijack@example.com' }), 'Subscriber');
    expectNotFound(await request('DELETE', `/subscribers/${id}`, tenant.test), 'Subscriber');
    expectNotFound(await request('POST', '/subscribers/update', tenant.test, { token, email: 'hijack@example.com' }), 'Subscriber');
    expectNotFound(await request('POST', '/subscribers/tag', tenant.test, { token, tags: ['x'] }), 'Subscriber');
    expectNotFound(await request('POST', '/subscribers/untag', tenant.test, { token, tags: ['live'] }), 'Subscriber');
    expectNotFound(await request('POST', '/subscribers/identify', tenant.test, { token, externalId: 'hijack' }), 'Subscriber');
    expectNotFound(await request('POST', '/subscribers/seen', tenant.test, { token }), 'Subscriber');
    const listed = await request('GET', `/subscribers/project/${tenant.projectId}?pageSize=100`, tenant.test);
    expect(listed.json<{ data: { id: string }[] }>().data.map((s) => s.id)).not.toContain(id);
    const byExternal = await request('GET', `/subscribers/project/${tenant.projectId}/external-id/live-user`, tenant.test);
    expect(byExternal.json()).toEqual({ data: [] });

    const imported = await request('POST', '/contacts/import', tenant.test, {
      projectId: tenant.projectId,
      upsertBy: 'email',
      contacts: [{ email: 'LIVE@example.com', tags: ['imported'] }],
    });
    expect(imported.statusCode, imported.body).toBe(200);
    expect(imported.json()).toMatchObject({ created: 1, updated: 0 });

    expect(await row('SELECT * FROM subscribers WHERE id = $1', [id])).toEqual(before);
  });
});

describe('email templates', () => {
  it('a test key cannot read, list, rewrite, preview or delete a live template, and a send renders its own environment only', async () => {
    const created = await request('POST', '/email-templates', tenant.live, {
      projectId: tenant.projectId,
      name: 'Live receipt',
      subject: 'Receipt',
      html: '<p>Thanks, {{ first_name }}</p>',
    });
    expect(created.statusCode, created.body).toBe(201);
    const live = created.json<{ id: string; sandbox: boolean }>();
    expect(live.sandbox).toBe(false);
    const before = await row('SELECT name, html, updated_at FROM email_templates WHERE id = $1', [live.id]);

    expectNotFound(await request('GET', `/email-templates/${live.id}`, tenant.test), 'Email template');
    expectNotFound(await request('PATCH', `/email-templates/${live.id}`, tenant.test, { html: '<p>Pay here</p>' }), 'Email template');
    expectNotFound(await request('POST', `/email-templates/${live.id}/preview`, tenant.test, { variables: {} }), 'Email template');
    expectNotFound(await request('DELETE', `/email-templates/${live.id}`, tenant.test), 'Email template');
    const listed = await request('GET', `/email-templates/project/${tenant.projectId}`, tenant.test);
    expect(listed.json().data.map((item: { id: string }) => item.id)).not.toContain(live.id);
    expect(await row('SELECT name, html, updated_at FROM email_templates WHERE id = $1', [live.id])).toEqual(before);

    const scope = { organizationId: tenant.orgId, projectId: tenant.projectId, sandbox: true };
    expect(await t.services.emailTemplates.render(scope, live.id, { first_name: 'Ada' })).toEqual({ ok: false, reason: 'template_not_found' });
  });
});

describe('what a send reads', () => {
  it('a test key reads the live settings a send uses but cannot change them, and keeps its own suppression list', async () => {
    const p = `/projects/${tenant.projectId}`;
    const wa = await request('POST', `${p}/whatsapp-templates`, tenant.jwt, { name: 'order_ready', language: 'en', category: 'UTILITY', status: 'APPROVED' });
    expect(wa.statusCode, wa.body).toBe(201);
    const waId = wa.json<{ id: string }>().id;
    const domain = await request('POST', `${p}/email-domains`, tenant.jwt, { domain: 'isolation.example.com' });
    expect(domain.statusCode, domain.body).toBe(201);
    const domainId = domain.json<{ id: string }>().id;
    const liveSuppression = await request('POST', `${p}/suppressions`, tenant.jwt, { email: 'live-only@example.com', reason: 'manual' });
    expect(liveSuppression.statusCode, liveSuppression.body).toBe(201);
    const before = async () => ({
      wa: await row('SELECT status, provider_template_id, category FROM whatsapp_templates WHERE id = $1', [waId]),
      domain: await row('SELECT domain FROM email_domains WHERE id = $1', [domainId]),
    });
    const kept = await before();

    const forbidden = { status: 403, code: 'test_key_forbidden' };
    const jwtOnly = { status: 401 };
    const cases: [string, 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', string, unknown, { status: number; code?: string }][] = [
      ['list WhatsApp templates', 'GET', `${p}/whatsapp-templates`, undefined, { status: 200 }],
      ['read a WhatsApp template', 'GET', `${p}/whatsapp-templates/${waId}`, undefined, { status: 200 }],
      ['create a WhatsApp template', 'POST', `${p}/whatsapp-templates`, { name: 'sneaky', language: 'en', category: 'UTILITY', status: 'APPROVED' }, forbidden],
      ['change a WhatsApp template', 'PATCH', `${p}/whatsapp-templates/${waId}`, { status: 'PAUSED', providerTemplateId: `HX${'0'.repeat(32)}` }, forbidden],
      ['delete a WhatsApp template', 'DELETE', `${p}/whatsapp-templates/${waId}`, undefined, forbidden],
      ['sync WhatsApp templates', 'POST', `${p}/whatsapp-templates/sync`, undefined, forbidden],
      ['list sending domains', 'GET', `${p}/email-domains`, undefined, { status: 200 }],
      ['read a sending domain', 'GET', `${p}/email-domains/${domainId}`, undefined, { status: 200 }],
      ['add a sending domain', 'POST', `${p}/email-domains`, { domain: 'sneaky.example.com' }, forbidden],
      ['delete a sending domain', 'DELETE', `${p}/email-domains/${domainId}`, undefined, forbidden],
      ['configure email', 'PUT', `${p}/channels/email`, { provider: 'smtp' }, jwtOnly],
      ['configure WhatsApp', 'PUT', `${p}/channels/whatsapp`, { provider: 'meta' }, jwtOnly],
      ['configure SMS', 'PUT', `${p}/channels/sms`, { provider: 'twilio' }, jwtOnly],
      ['add an SMS sender', 'POST', `${p}/channels/sms/senders`, { country: 'GB', kind: 'alphanumeric', sender: 'Sneaky' }, jwtOnly],
      ['list SMS senders', 'GET', `${p}/channels/sms/senders`, undefined, { status: 200 }],
      ['read a live suppression', 'GET', `${p}/suppressions/live-only@example.com`, undefined, { status: 200 }],
      ['lift a live suppression', 'DELETE', `${p}/suppressions/live-only@example.com`, undefined, { status: 404 }],
    ];
    for (const [what, method, url, body, expected] of cases) {
      const res = await request(method, url, tenant.test, body);
      expect(res.statusCode, `${what}: ${res.body}`).toBe(expected.status);
      if (expected.code) expect(res.json(), what).toMatchObject({ code: expected.code });
    }

    expect(await before()).toEqual(kept);
    const sandboxList = await request('GET', `${p}/suppressions/live-only@example.com`, tenant.test);
    expect(sandboxList.json(), 'a test key reads the sandbox list').toMatchObject({ suppressed: false });
    const live = await request('GET', `${p}/suppressions/live-only@example.com`, tenant.jwt);
    expect(live.json(), 'the live suppression stands').toMatchObject({ email: 'live-only@example.com' });
  });
});
