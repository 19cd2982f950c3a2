// The email suppression list through HTTP: what it holds keeps email from an address for every subscriber carrying it,
// lifting restores it (never a complaint), imports are all or nothing, environments and tenants stay apart, and a
// provider's hard bounce lands on it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, createTenant, emailStatuses, publishableKey, startWithTenant, type Tenant } from '../../../test/fixtures.js';
import type { TestApp } from '../../../test/harness.js';
import { loadConfig } from '../../config.js';
import { ProviderError, type ChannelAdapter } from '../../delivery/channel.js';
import { createSandboxProvider, DeliveryEngine } from '../../delivery/index.js';
import { newId } from '../../shared/ids.js';

let t: TestApp;
let tenant: Tenant;

beforeAll(async () => {
  ({ t, tenant } = await startWithTenant());
});
afterAll(() => t.close());

const inject = (method: 'GET' | 'POST' | 'DELETE', url: string, headers: Record<string, string>, payload?: unknown) =>
  t.app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as object }) });
const base = (who: Tenant = tenant) => `/projects/${who.projectId}/suppressions`;

/** A contact with `email`, created through the API; returns its id. */
async function contact(who: Tenant, email: string, headers = who.live): Promise<string> {
  const res = await inject('POST', '/contacts', headers, { projectId: who.projectId, email });
  expect(res.statusCode, res.body).toBe(201);
  return res.json<{ id: string }>().id;
}

const statusesOf = (ids: string[]) => emailStatuses(t, [...ids].sort());

async function emailReach(who: Tenant, filters: Record<string, unknown>, headers = who.live): Promise<number> {
  const res = await inject('POST', '/segments/reach', headers, { projectId: who.projectId, filters, channel: 'email' });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ count: number }>().count;
}
// Each reach below asks with filters of its own, so no answer comes from the 30 s reach cache.
let fresh = 0;
const anyone = () => ({ lastSeenDays: 3650 - fresh++ });

describe('the suppression list', () => {
  it('keeps email from a suppressed address whatever its spelling, and lifting it brings the address back', async () => {
    const who = await createTenant(t);
    const ids = [await contact(who, 'ann@example.com'), await contact(who, 'ANN@example.com'), await contact(who, 'bob@example.com')];
    expect(await emailReach(who, anyone())).toBe(2);

    const added = await inject('POST', base(who), who.live, { email: 'Ann@Example.com', reason: 'unsubscribed' });
    expect(added.statusCode, added.body).toBe(201);
    expect(added.json()).toEqual({ email: 'ann@example.com', reason: 'unsubscribed', source: 'api', suppressedAt: expect.any(String) });
    expect(await statusesOf(ids)).toEqual(['unsubscribed', 'unsubscribed', 'active']);
    expect(await emailReach(who, anyone())).toBe(1);
    expect((await inject('GET', `${base(who)}/ann@example.com`, who.jwt)).json()).toMatchObject({ suppressed: true, reason: 'unsubscribed' });
    // The dashboard asks for every subscriber: an address not on the list is a state, not a failed request.
    const bob = await inject('GET', `${base(who)}/Bob@example.com`, who.jwt);
    expect(bob.statusCode).toBe(200);
    expect(bob.json()).toEqual({ email: 'bob@example.com', suppressed: false, reason: null, source: null, suppressedAt: null });

    const lifted = await inject('DELETE', `${base(who)}/ANN@example.com`, who.live);
    expect(lifted.statusCode, lifted.body).toBe(204);
    expect(await statusesOf(ids)).toEqual(['active', 'active', 'active']);
    expect(await emailReach(who, anyone())).toBe(2);
    expect((await inject('DELETE', `${base(who)}/ann@example.com`, who.live)).statusCode).toBe(404);
  });

  it('a manual suppression keeps emailStatus; a stronger reason replaces a weaker one; a complaint is never lifted', async () => {
    const who = await createTenant(t);
    const id = await contact(who, 'cat@example.com');
    await inject('POST', base(who), who.live, { email: 'cat@example.com' });
    expect(await statusesOf([id])).toEqual(['active']);
    expect(await emailReach(who, anyone())).toBe(0);
    // A bounce is stronger than the project's own suppression (which the project may lift)…
    await inject('POST', base(who), who.live, { email: 'cat@example.com', reason: 'bounced' });
    expect((await inject('GET', `${base(who)}/cat@example.com`, who.live)).json()).toMatchObject({ reason: 'bounced' });
    expect(await statusesOf([id])).toEqual(['bounced']);
    // …a weaker reason does not replace it…
    for (const reason of ['manual', 'unsubscribed']) await inject('POST', base(who), who.live, { email: 'cat@example.com', reason });
    expect((await inject('GET', `${base(who)}/cat@example.com`, who.live)).json()).toMatchObject({ reason: 'bounced' });
    // …and a complaint replaces any, and stays.
    await inject('POST', base(who), who.live, { email: 'cat@example.com', reason: 'complained' });
    expect((await inject('GET', `${base(who)}/cat@example.com`, who.live)).json()).toMatchObject({ reason: 'complained' });
    expect(await statusesOf([id])).toEqual(['complained']);
    const refused = await inject('DELETE', `${base(who)}/cat@example.com`, who.live);
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toMatchObject({ code: 'complaint_permanent' });
    expect(await emailReach(who, anyone())).toBe(0);
  });

  it('shows an address a provider found dead under its own code as bounced, on the list and on its subscribers', async () => {
    const who = await createTenant(t);
    const id = await contact(who, 'gone@example.com');
    // A dead address's state as an adapter without its own word for it records it: the provider's code.
    await t.database.pool.query(
      `INSERT INTO channel_addresses (project_id, sandbox, channel, address, status, status_reason, source) VALUES ($1, false, 'email', 'gone@example.com', 'unreachable', 'smtp_550', 'provider')`,
      [who.projectId],
    );
    const one = await inject('GET', `${base(who)}/gone@example.com`, who.live);
    expect(one.statusCode, one.body).toBe(200);
    expect(one.json()).toMatchObject({ suppressed: true, reason: 'bounced', source: 'provider' });
    expect((await inject('GET', `${base(who)}?reason=bounced`, who.jwt)).json()).toMatchObject({ total: 1, data: [{ email: 'gone@example.com', reason: 'bounced' }] });
    expect(await statusesOf([id])).toEqual(['bounced']);
  });

  it('lists newest first with reason and search filters, paginated', async () => {
    const who = await createTenant(t);
    for (const [email, reason] of [['a1@example.com', 'bounced'], ['a2@example.com', 'manual'], ['zz@other.org', 'bounced']] as const) {
      await inject('POST', base(who), who.live, { email, reason });
    }
    const bounced = await inject('GET', `${base(who)}?reason=bounced`, who.jwt);
    expect(bounced.json()).toMatchObject({ total: 2, page: 1, pageSize: 20 });
    expect(bounced.json<{ data: { email: string }[] }>().data.map((s) => s.email)).toEqual(['zz@other.org', 'a1@example.com']);
    const searched = await inject('GET', `${base(who)}?q=EXAMPLE&pageSize=1&page=2`, who.jwt);
    expect(searched.json()).toMatchObject({ total: 2, data: [{ email: 'a1@example.com' }] });
    expect((await inject('GET', `${base(who)}?reason=spam`, who.jwt)).statusCode).toBe(422);
  });

  it('imports CSV all or nothing, naming each bad row, and exports what it holds', async () => {
    const who = await createTenant(t);
    const csv = (body: string) =>
      t.app.inject({ method: 'POST', url: `${base(who)}/import`, headers: { ...who.live, 'content-type': 'text/csv' }, payload: body });
    const bad = await csv('Email,Reason,Note\ngood@example.com,bounced,x\nnot-an-address,,\nfine@example.com,spam,\n');
    expect(bad.statusCode).toBe(422);
    expect(bad.json<{ details: { field: string }[] }>().details.map((d) => d.field)).toEqual(['rows[1].email', 'rows[2].reason']);
    expect((await inject('GET', base(who), who.live)).json()).toMatchObject({ total: 0 });

    const good = await csv('email,reason\ngood@example.com,bounced\nFine@Example.com,\n');
    expect(good.statusCode, good.body).toBe(200);
    expect(good.json()).toEqual({ received: 2, suppressed: 2 });
    const json = await inject('POST', `${base(who)}/import`, who.live, { suppressions: [{ email: 'good@example.com' }, { email: 'new@example.com', reason: 'unsubscribed' }] });
    expect(json.json()).toEqual({ received: 2, suppressed: 1 });

    const exported = await inject('GET', `${base(who)}/export.csv`, who.jwt);
    expect(exported.statusCode).toBe(200);
    expect(exported.headers['content-type']).toMatch(/^text\/csv/);
    const lines = exported.body.trim().split('\n');
    expect(lines[0]).toBe('email,reason,source,suppressedAt');
    expect(lines.slice(1).map((l) => l.split(',').slice(0, 3).join(','))).toEqual([
      'fine@example.com,manual,import',
      'good@example.com,bounced,import',
      'new@example.com,unsubscribed,import',
    ]);
  });

  it('keeps sandbox and live lists apart', async () => {
    const who = await createTenant(t);
    await contact(who, 'dee@example.com');
    await contact(who, 'dee@example.com', who.test);
    await inject('POST', base(who), who.test, { email: 'dee@example.com', reason: 'unsubscribed' });
    expect((await inject('GET', base(who), who.test)).json()).toMatchObject({ total: 1 });
    expect((await inject('GET', base(who), who.live)).json()).toMatchObject({ total: 0 });
    expect(await emailReach(who, anyone())).toBe(1);
    expect(await emailReach(who, anyone(), who.test)).toBe(0);
    expect((await inject('DELETE', `${base(who)}/dee@example.com`, who.live)).statusCode).toBe(404);
  });

  it('is confined to its project: other tenants, viewers writing and publishable keys are refused', async () => {
    const other = await createTenant(t);
    await inject('POST', base(), tenant.live, { email: 'eve@example.com' });
    expect((await inject('GET', base(), other.live)).statusCode).toBe(403);
    expect((await inject('GET', base(), other.jwt)).statusCode).toBe(404);
    expect((await inject('DELETE', `${base()}/eve@example.com`, other.live)).statusCode).toBe(403);
    const viewer = await addMember(t, tenant, 'VIEWER');
    expect((await inject('GET', base(), viewer.headers)).statusCode).toBe(200);
    expect((await inject('POST', base(), viewer.headers, { email: 'x@example.com' })).statusCode).toBe(403);
    expect((await inject('DELETE', `${base()}/eve@example.com`, viewer.headers)).statusCode).toBe(403);
    const publishable = await publishableKey(t, tenant);
    expect((await inject('GET', base(), publishable)).statusCode).toBe(403);
    expect((await inject('POST', base(), tenant.live, { email: 'not an address' })).statusCode).toBe(422);
  });

  it("takes a provider's hard bounce: the address is suppressed as bounced, its subscribers bounced, push untouched", async () => {
    const who = await createTenant(t);
    const id = await contact(who, 'fay@example.com');
    const gone = new ProviderError('550 no such user', { reason: 'provider_error', retryable: false, providerCode: 'smtp_550', deadRecipient: 'gone' });
    const adapter: ChannelAdapter<{ to: string }, 'email'> = {
      channel: 'email',
      // As the email adapter says: a dead address is a hard bounce, the suppression list's word.
      deadAddressReason: () => 'bounced',
      validate: () => undefined,
      address: ({ recipient }) => (recipient?.status === 'reachable' ? { item: { to: recipient.address } } : { refusal: 'subscriber_unsubscribed' }),
      provider: (sandbox) =>
        sandbox ? createSandboxProvider() : { name: 'bouncing', send: async (items) => items.map(() => ({ ok: false, error: gone })), close: async () => {} },
      close: async () => {},
    };
    const messageId = newId('msg');
    await t.database.pool.query(`INSERT INTO messages (id, project_id, channel, source, sandbox, content, options) VALUES ($1, $2, 'email', 'campaign', false, '{}', '{}')`, [
      messageId,
      who.projectId,
    ]);
    await t.database.pool.query(`INSERT INTO deliveries (project_id, message_id, subscriber_id, channel, destination) VALUES ($1, $2, $3, 'email', 'fay@example.com')`, [
      who.projectId,
      messageId,
      id,
    ]);
    const engine = new DeliveryEngine({
      db: t.database.db,
      config: loadConfig({ DELIVERY_POLL_INTERVAL_MS: '20' }),
      adapters: [adapter],
      openCredentials: (sealed) => t.services.channels.open(sealed),
    });
    engine.start();
    try {
      const deadline = Date.now() + 10_000;
      while ((await inject('GET', `${base(who)}/fay@example.com`, who.live)).statusCode === 404) {
        if (Date.now() > deadline) throw new Error('the bounce never reached the suppression list');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    } finally {
      await engine.stop();
    }
    expect((await inject('GET', `${base(who)}/fay@example.com`, who.live)).json()).toMatchObject({ reason: 'bounced', source: 'provider' });
    const [row] = (await t.database.pool.query(`SELECT status FROM subscribers WHERE id = $1`, [id])).rows;
    expect({ ...row, emailStatus: (await emailStatuses(t, [id]))[0] }).toEqual({ emailStatus: 'bounced', status: 'active' });
  });
});
