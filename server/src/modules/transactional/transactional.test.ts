// POST /transactional/send through HTTP on a real database and a local push service: every reason, the sandbox,
// the delivery policy with an injected clock, Idempotency-Key, and the send log.
import { parseCronItems } from 'graphile-worker';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { addMember, CHROME_UA, createTenant, type Tenant } from '../../../test/fixtures.js';
import { startTestApp, type TestApp } from '../../../test/harness.js';
import { createFakeBrowser, startPushService, type FakeBrowser, type PushService } from '../../../test/push-service.js';
import { createTaskList, cronItems } from '../../app/task-list.js';

let t: TestApp;
let push: PushService;
let tenant: Tenant;
let other: Tenant;
/** The clock the delivery policy reads; null: the real time. */
let now: Date | null = null;

beforeAll(async () => {
  push = await startPushService();
  t = await startTestApp(
    {
      ALLOW_INSECURE_PUSH_ENDPOINTS: 'true',
      DELIVERY_RETRY_BASE_MS: '20',
      TRANSACTIONAL_RETRY_BUDGET_MS: '400',
      PUSH_TIMEOUT_MS: '1500',
      PUBLIC_URL: 'https://herald.example.com',
    },
    { clock: () => now ?? new Date() },
  );
  [tenant, other] = await Promise.all([createTenant(t), createTenant(t)]);
});
afterAll(async () => {
  await t.close();
  await push.close();
});
beforeEach(() => {
  now = null;
});

type Headers = Record<string, string>;

const query = async <T = Record<string, unknown>>(text: string, params: unknown[] = []) =>
  (await t.database.pool.query(text, params)).rows as T[];

interface Device {
  id: string;
  token: string;
  browser: FakeBrowser;
}

/** Registers a fake browser with the local push service as a subscriber of `who`'s project. */
async function device(who: Tenant, headers: Headers = who.live, extra: Record<string, unknown> = {}): Promise<Device> {
  const browser = createFakeBrowser();
  const res = await t.app.inject({
    method: 'POST',
    url: '/subscribers',
    headers,
    payload: {
      projectId: who.projectId,
      endpoint: push.endpointFor(browser),
      p256dh: browser.p256dh,
      auth: browser.auth,
      userAgent: CHROME_UA,
      ...extra,
    },
  });
  expect(res.statusCode, res.body).toBe(201);
  const { id, token } = res.json<{ id: string; token: string }>();
  return { id, token, browser };
}

async function identify(d: Device, externalId: string, headers: Headers) {
  const res = await t.app.inject({ method: 'POST', url: '/subscribers/identify', headers, payload: { token: d.token, externalId } });
  expect(res.statusCode, res.body).toBe(200);
}

const uid = () => `user-${Math.random().toString(36).slice(2)}`;

const send = (headers: Headers, payload: Record<string, unknown>) =>
  t.app.inject({ method: 'POST', url: '/transactional/send', headers, payload });

async function sent(headers: Headers, payload: Record<string, unknown>) {
  const res = await send(headers, { title: 'Hello', body: 'World', ...payload });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ success: boolean; subscriberFound: boolean; delivered: boolean; deactivated: boolean; reason: string | null }>();
}

const outcome = (subscriberFound: boolean, delivered: boolean, deactivated: boolean, reason: string | null) => ({
  success: true,
  subscriberFound,
  delivered,
  deactivated,
  reason,
});

const deliveriesOf = (subscriberId: string) =>
  query<{ id: string; status: string; reason: string | null; provider_code: string | null; attempts: number; message_id: string }>(
    'SELECT id, status, reason, provider_code, attempts, message_id FROM deliveries WHERE subscriber_id = $1 ORDER BY id',
    [subscriberId],
  );

const lastSend = async (projectId: string) =>
  (await query('SELECT * FROM transactional_sends WHERE project_id = $1 ORDER BY created_at DESC, id DESC LIMIT 1', [projectId]))[0]!;

async function setPolicy(who: Tenant, settings: Record<string, unknown>) {
  const res = await t.app.inject({ method: 'PATCH', url: `/projects/${who.projectId}`, headers: who.jwt, payload: { settings } });
  expect(res.statusCode, res.body).toBe(200);
}

describe('validation and credentials', () => {
  let d: Device;
  beforeAll(async () => {
    d = await device(tenant, tenant.test);
  });

  it('accepts only an API key: a JWT, no credentials or a revoked key → 401', async () => {
    const jwt = await send(tenant.jwt, { token: d.token, title: 'a', body: 'b' });
    expect(jwt.statusCode).toBe(401);
    expect(jwt.json()).toMatchObject({ statusCode: 401, message: 'Invalid API key', requestId: expect.any(String) });
    expect((await send({}, { token: d.token, title: 'a', body: 'b' })).statusCode).toBe(401);
    expect((await send({ 'x-api-key': 'hrd_live_nope' }, { token: d.token, title: 'a', body: 'b' })).statusCode).toBe(401);
  });

  it.each([
    [{ title: 'a', body: 'b' }, ['externalId']],
    [{ token: 'st_x', body: 'b' }, ['title']],
    [{ token: 'st_x', title: '  ', body: '\n' }, ['body', 'title']],
    [
      { token: 'st_x', title: 'a', body: 'b', url: 'javascript:alert(1)', iconUrl: 'ftp://x.example/i.png', imageUrl: 'nope', badge: '/b.png' },
      ['badge', 'iconUrl', 'imageUrl', 'url'],
    ],
    [{ token: 'st_x', title: 'a', body: 'b', ttl: -1, urgency: 'urgent', topic: 'no spaces allowed' }, ['topic', 'ttl', 'urgency']],
    [{ token: 'st_x', title: 'a', body: 'b', ttl: 28 * 24 * 3600 + 1 }, ['ttl']],
    [{ token: 'st_x', title: 'a', body: 'b', actions: ['a', 'b', 'c'].map((action) => ({ action: `https://x.example/${action}`, title: action })) }, ['actions']],
    [{ token: 'st_x', title: 'a', body: 'b', actions: [{ action: 'track', title: 'Track' }] }, ['actions.0.action']],
    [{ token: 'st_x', title: 'a', body: 'b', subject: 'x' }, ['subject']],
  ])('422 naming the fields: %j', async (payload, fields) => {
    const before = await query('SELECT count(*)::int AS n FROM transactional_sends');
    const res = await send(tenant.test, payload);
    expect(res.statusCode, res.body).toBe(422);
    expect(res.json()).toMatchObject({ statusCode: 422, message: 'Validation failed' });
    expect(res.json<{ details: { field: string }[] }>().details.map((e) => e.field).sort()).toEqual(fields);
    expect(await query('SELECT count(*)::int AS n FROM transactional_sends')).toEqual(before);
  });

  it('invalid JSON → 400 with the error envelope', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/transactional/send',
      headers: { ...tenant.test, 'content-type': 'application/json' },
      payload: '{"token":',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ statusCode: 400, code: 'invalid_json' });
  });
});

describe('recipients and reasons', () => {
  it('subscriber_not_found for an unknown externalId or token, logged with the recipient as given', async () => {
    expect(await sent(tenant.live, { externalId: 'nobody' })).toEqual(outcome(false, false, false, 'subscriber_not_found'));
    expect(await lastSend(tenant.projectId)).toMatchObject({
      recipient: { externalId: 'nobody' },
      message_id: null,
      reason: 'subscriber_not_found',
      sandbox: false,
      channel: 'push',
      outcome: outcome(false, false, false, 'subscriber_not_found'),
    });
    expect(await sent(tenant.test, { token: 'st_unknown' })).toEqual(outcome(false, false, false, 'subscriber_not_found'));
    expect(await lastSend(tenant.projectId)).toMatchObject({ recipient: { token: 'st_unknown' }, sandbox: true });
  });

  it('externalId is preferred: given both, the send goes to the externalId’s devices and the token is ignored', async () => {
    const externalId = uid();
    const [user, other] = [await device(tenant, tenant.test), await device(tenant, tenant.test)];
    await identify(user, externalId, tenant.test);
    expect(await sent(tenant.test, { externalId, token: other.token })).toEqual(outcome(true, false, false, 'sandbox'));
    expect(await deliveriesOf(user.id)).toHaveLength(1);
    expect(await deliveriesOf(other.id)).toHaveLength(0);
    expect(await lastSend(tenant.projectId)).toMatchObject({ recipient: { externalId } });
    // An externalId nobody carries is not found, even next to a valid token.
    expect(await sent(tenant.test, { externalId: uid(), token: other.token })).toEqual(outcome(false, false, false, 'subscriber_not_found'));
    expect(await deliveriesOf(other.id)).toHaveLength(0);
  });

  it('another project’s subscriber is not found, whatever it is called by', async () => {
    const theirs = await device(other);
    const externalId = uid();
    await identify(theirs, externalId, other.live);
    expect(await sent(tenant.live, { token: theirs.token })).toEqual(outcome(false, false, false, 'subscriber_not_found'));
    expect(await sent(tenant.live, { externalId })).toEqual(outcome(false, false, false, 'subscriber_not_found'));
    expect(push.requestsFor(theirs.browser.id)).toHaveLength(0);
  });

  it('subscriber_inactive on a sandbox/live mismatch, either way, with nothing sent or created', async () => {
    const live = await device(tenant, tenant.live);
    const sandbox = await device(tenant, tenant.test);
    expect(await sent(tenant.test, { token: live.token })).toEqual(outcome(true, false, false, 'subscriber_inactive'));
    expect(await sent(tenant.live, { token: sandbox.token })).toEqual(outcome(true, false, false, 'subscriber_inactive'));
    expect(await deliveriesOf(live.id)).toEqual([]);
    expect(await deliveriesOf(sandbox.id)).toEqual([]);
    expect((await lastSend(tenant.projectId)).message_id).toBeNull();
  });

  it('subscriber_unsubscribed for a revoked device or a contact without a push subscription; subscriber_inactive for an inactive one', async () => {
    const revoked = await device(tenant, tenant.test);
    await query("UPDATE subscribers SET status = 'unsubscribed', status_reason = 'permission_revoked' WHERE id = $1", [revoked.id]);
    expect(await sent(tenant.test, { token: revoked.token })).toEqual(outcome(true, false, false, 'subscriber_unsubscribed'));

    const contact = await t.app.inject({
      method: 'POST',
      url: '/contacts',
      headers: tenant.test,
      payload: { projectId: tenant.projectId, email: 'c@example.com' },
    });
    expect(contact.statusCode, contact.body).toBe(201);
    expect(await sent(tenant.test, { token: contact.json().token })).toEqual(outcome(true, false, false, 'subscriber_unsubscribed'));

    const inactive = await device(tenant, tenant.test);
    await query("UPDATE subscribers SET status = 'inactive' WHERE id = $1", [inactive.id]);
    expect(await sent(tenant.test, { token: inactive.token })).toEqual(outcome(true, false, false, 'subscriber_inactive'));
    expect(await deliveriesOf(revoked.id)).toEqual([]);
    expect(await deliveriesOf(inactive.id)).toEqual([]);
  });

  it('several devices in mixed states: an unsubscribed and an inactive device → the closer reason, subscriber_unsubscribed', async () => {
    const externalId = uid();
    const [a, b] = [await device(tenant, tenant.test), await device(tenant, tenant.test)];
    await identify(a, externalId, tenant.test);
    await identify(b, externalId, tenant.test);
    await query("UPDATE subscribers SET status = 'unsubscribed' WHERE id = $1", [a.id]);
    await query("UPDATE subscribers SET status = 'inactive' WHERE id = $1", [b.id]);
    expect(await sent(tenant.test, { externalId })).toEqual(outcome(true, false, false, 'subscriber_unsubscribed'));
  });
});

describe('sandbox (test key)', () => {
  it('is recorded — message, delivery, log — and never delivered: reason sandbox', async () => {
    const d = await device(tenant, tenant.test);
    const res = await sent(tenant.test, { token: d.token, title: ' Order shipped ', body: 'It is on its way', url: 'https://shop.example/o/1' });
    expect(res).toEqual(outcome(true, false, false, 'sandbox'));
    expect(push.requestsFor(d.browser.id)).toHaveLength(0);

    const [delivery] = await deliveriesOf(d.id);
    expect(delivery).toMatchObject({ status: 'sent', provider_code: 'sandbox', reason: null, attempts: 1 });
    const [message] = await query('SELECT * FROM messages WHERE id = $1', [delivery!.message_id]);
    expect(message).toMatchObject({
      project_id: tenant.projectId,
      channel: 'push',
      source: 'transactional',
      sandbox: true,
      content: { title: 'Order shipped', body: 'It is on its way', url: 'https://shop.example/o/1' },
      options: { ttlSeconds: 86400, urgency: 'normal' },
    });
    const log = await lastSend(tenant.projectId);
    expect(log).toMatchObject({ message_id: delivery!.message_id, sandbox: true, reason: 'sandbox', recipient: { token: d.token } });
    const [key] = await query<{ id: string }>("SELECT id FROM api_keys WHERE project_id = $1 AND mode = 'test'", [tenant.projectId]);
    expect(log.api_key_id).toBe(key!.id);
  });

  it('sends to every active sandbox device of an externalId and ignores the live ones', async () => {
    const externalId = uid();
    const [a, b, live] = [await device(tenant, tenant.test), await device(tenant, tenant.test), await device(tenant, tenant.live)];
    await identify(a, externalId, tenant.test);
    await identify(b, externalId, tenant.test);
    await identify(live, externalId, tenant.live);
    await query("UPDATE subscribers SET status = 'unsubscribed' WHERE id = $1", [b.id]);
    expect(await sent(tenant.test, { externalId })).toEqual(outcome(true, false, false, 'sandbox'));
    expect(await deliveriesOf(a.id)).toHaveLength(1);
    expect(await deliveriesOf(b.id)).toHaveLength(0);
    expect(await deliveriesOf(live.id)).toHaveLength(0);
  });

  it('stores the Herald extras as message options', async () => {
    const d = await device(tenant, tenant.test);
    await sent(tenant.test, {
      token: d.token,
      ttl: 60,
      urgency: 'high',
      topic: 'order-1',
      actions: [{ action: `https://shop.example/track/${'o'.repeat(200)}`, title: 'Track' }],
      iconUrl: 'https://shop.example/i.png',
      imageUrl: 'http://shop.example/big.jpg',
      badge: 'https://shop.example/b.png',
    });
    const [message] = await query('SELECT m.* FROM messages m JOIN deliveries d ON d.message_id = m.id WHERE d.subscriber_id = $1', [d.id]);
    expect(message).toMatchObject({
      options: { ttlSeconds: 60, urgency: 'high', topic: 'order-1' },
      content: {
        actions: [{ action: `https://shop.example/track/${'o'.repeat(200)}`, title: 'Track' }],
        iconUrl: 'https://shop.example/i.png',
        imageUrl: 'http://shop.example/big.jpg',
        badge: 'https://shop.example/b.png',
      },
    });
  });
});

describe('live delivery through the push service', () => {
  it('delivers: the decrypted push carries the content and a track URL that works', async () => {
    const d = await device(tenant);
    const content = { title: 'Your code', body: '123456', url: 'https://shop.example/login', iconUrl: 'https://shop.example/i.png' };
    const res = await sent(tenant.live, { token: d.token, ...content });
    expect(res).toEqual(outcome(true, true, false, null));

    const [request] = push.requestsFor(d.browser.id);
    expect(request).toMatchObject({ status: 201, headers: { ttl: '86400', urgency: 'normal' } });
    const payload = request!.payload as Record<string, string>;
    expect(payload).toMatchObject({ title: 'Your code', body: '123456', url: 'https://shop.example/login', icon: 'https://shop.example/i.png' });
    expect(payload.track).toMatch(/^https:\/\/herald\.example\.com\/t\/[\w-]{22}$/);

    const [delivery] = await deliveriesOf(d.id);
    expect(delivery).toMatchObject({ status: 'sent', provider_code: 'http_201', attempts: 1 });
    const path = new URL(payload.track!).pathname;
    expect((await t.app.inject({ method: 'POST', url: `${path}/delivered` })).statusCode).toBe(204);
    expect((await t.app.inject({ method: 'POST', url: `${path}/clicked` })).statusCode).toBe(204);
    const [row] = await query('SELECT status, delivered_at, clicked_at FROM deliveries WHERE id = $1', [delivery!.id]);
    expect(row).toMatchObject({ status: 'clicked', delivered_at: expect.any(Date), clicked_at: expect.any(Date) });
  });

  it('track tokens are opaque: consecutive deliveries share no readable counter; tampered ones are refused, valid ones recorded', async () => {
    const [a, b] = [await device(tenant), await device(tenant)];
    await sent(tenant.live, { token: a.token });
    await sent(tenant.live, { token: b.token });
    const [da, db] = [(await deliveriesOf(a.id))[0]!, (await deliveriesOf(b.id))[0]!];
    const tokenOf = (d: Device) => new URL((push.requestsFor(d.browser.id)[0]!.payload as { track: string }).track).pathname.slice('/t/'.length);
    const [ta, tb] = [tokenOf(a), tokenOf(b)];

    // Two deliveries in a row (nothing else sends in between in this file's database).
    expect(Number(db.id)).toBe(Number(da.id) + 1);
    for (const [token, id] of [[ta, da.id], [tb, db.id]] as const) {
      expect(token).toHaveLength(22);
      const bytes = Buffer.from(token, 'base64url');
      const counter = Buffer.alloc(8);
      counter.writeBigUInt64BE(BigInt(id));
      // Neither the id nor its low bytes, in either byte order, appear in the token.
      for (const shown of [counter, counter.subarray(4), Buffer.from(counter).reverse().subarray(0, 4)]) expect(bytes.includes(shown)).toBe(false);
    }
    // One step of the counter changes about half of the 128 bits (a readable id changes one or two).
    const [ba, bb] = [Buffer.from(ta, 'base64url'), Buffer.from(tb, 'base64url')];
    const differing = ba.reduce((n, byte, i) => n + [...((byte ^ bb[i]!) >>> 0).toString(2)].filter((c) => c === '1').length, 0);
    expect(differing).toBeGreaterThan(32);

    const report = (token: string, event: string) => t.app.inject({ method: 'POST', url: `/t/${token}/${event}` });
    const tampered = `${ta.slice(0, 8)}${ta[8] === 'A' ? 'B' : 'A'}${ta.slice(9)}`;
    expect((await report(tampered, 'clicked')).statusCode).toBe(404);
    expect((await report(ta, 'clicked')).statusCode).toBe(204);
    expect((await report(tb, 'dismissed')).statusCode).toBe(204);
    const rows = await query('SELECT id::int, status FROM deliveries WHERE id = ANY($1) ORDER BY id', [[da.id, db.id]]);
    expect(rows).toEqual([
      { id: Number(da.id), status: 'clicked' },
      { id: Number(db.id), status: 'dismissed' },
    ]);
  });

  it('passes ttl, urgency and topic to the push service', async () => {
    const d = await device(tenant);
    await sent(tenant.live, { token: d.token, ttl: 0, urgency: 'high', topic: 'otp' });
    expect(push.requestsFor(d.browser.id)[0]?.headers).toMatchObject({ ttl: '0', urgency: 'high', topic: 'otp' });
  });

  it.each([404, 410])('%i → deactivated, subscriber_unsubscribed; the subscriber is unsubscribed and not tried again', async (status) => {
    const d = await device(tenant);
    push.respond(d.browser.id, status);
    expect(await sent(tenant.live, { token: d.token })).toEqual(outcome(true, false, true, 'subscriber_unsubscribed'));
    const [subscriber] = await query('SELECT status, status_reason FROM subscribers WHERE id = $1', [d.id]);
    expect(subscriber).toEqual({ status: 'unsubscribed', status_reason: 'push_subscription_gone' });
    expect(await deliveriesOf(d.id)).toMatchObject([{ status: 'failed', reason: 'subscriber_unsubscribed', provider_code: `http_${status}` }]);

    expect(await sent(tenant.live, { token: d.token })).toEqual(outcome(true, false, false, 'subscriber_unsubscribed'));
    expect(push.requestsFor(d.browser.id)).toHaveLength(1);
  });

  it('a gone subscriber whose browser registers the endpoint again with new keys: 409 showing it active, then delivered with the new keys', async () => {
    const d = await device(tenant);
    push.respond(d.browser.id, 410);
    expect(await sent(tenant.live, { token: d.token })).toEqual(outcome(true, false, true, 'subscriber_unsubscribed'));

    // Same endpoint, new subscription keys: what a browser holds after subscribing again.
    const renewed: FakeBrowser = { ...createFakeBrowser(), id: d.browser.id };
    const res = await t.app.inject({
      method: 'POST',
      url: '/subscribers',
      headers: tenant.live,
      payload: { projectId: tenant.projectId, endpoint: push.endpointFor(renewed), p256dh: renewed.p256dh, auth: renewed.auth, userAgent: CHROME_UA },
    });
    expect(res.statusCode, res.body).toBe(409);
    expect(res.json()).toMatchObject({ code: 'subscriber_exists', subscriber: { id: d.id, token: d.token, status: 'active' } });

    expect(await sent(tenant.live, { token: d.token, title: 'Back' })).toEqual(outcome(true, true, false, null));
    const [, again] = push.requestsFor(d.browser.id);
    expect(again).toMatchObject({ status: 201, payload: { title: 'Back' } });
  });

  it('an endpoint the endpoint guard refuses → provider_error, deactivated; the subscriber is inactive and not tried again', async () => {
    const d = await device(tenant);
    // Stored before registration refused such endpoints, or a host name that now resolves to a private address.
    await query("UPDATE subscribers SET endpoint = 'https://192.168.1.20/push/x' WHERE id = $1", [d.id]);
    expect(await sent(tenant.live, { token: d.token })).toEqual(outcome(true, false, true, 'provider_error'));
    expect(await deliveriesOf(d.id)).toMatchObject([{ status: 'failed', reason: 'provider_error', provider_code: 'blocked_endpoint', attempts: 1 }]);
    const [subscriber] = await query('SELECT status, status_reason FROM subscribers WHERE id = $1', [d.id]);
    expect(subscriber).toEqual({ status: 'inactive', status_reason: 'push_endpoint_refused' });

    expect(await sent(tenant.live, { token: d.token })).toEqual(outcome(true, false, false, 'subscriber_inactive'));
    expect(await deliveriesOf(d.id)).toHaveLength(1);
  });

  it('413 from the push service → payload_too_large', async () => {
    const d = await device(tenant);
    push.respond(d.browser.id, 413);
    expect(await sent(tenant.live, { token: d.token })).toEqual(outcome(true, false, false, 'payload_too_large'));
  });

  it('a payload over 4 KB → payload_too_large, without a request to the push service', async () => {
    const d = await device(tenant);
    expect(await sent(tenant.live, { token: d.token, body: 'x'.repeat(4000) })).toEqual(outcome(true, false, false, 'payload_too_large'));
    expect(push.requestsFor(d.browser.id)).toHaveLength(0);
    expect(await deliveriesOf(d.id)).toMatchObject([{ status: 'failed', reason: 'payload_too_large' }]);
    expect(await lastSend(tenant.projectId)).toMatchObject({ reason: 'payload_too_large', message_id: expect.any(String) });
  });

  it('500 then 201 → delivered after an inline retry', async () => {
    const d = await device(tenant);
    push.respond(d.browser.id, 500);
    expect(await sent(tenant.live, { token: d.token })).toEqual(outcome(true, true, false, null));
    expect(push.requestsFor(d.browser.id).map((r) => r.status)).toEqual([500, 201]);
    expect(await deliveriesOf(d.id)).toMatchObject([{ status: 'sent', attempts: 2, reason: null }]);
  });

  it('a push service failing past the retry budget → provider_error', async () => {
    const d = await device(tenant);
    push.respond(d.browser.id, ...Array<number>(20).fill(503));
    expect(await sent(tenant.live, { token: d.token })).toEqual(outcome(true, false, false, 'provider_error'));
    expect(push.requestsFor(d.browser.id).length).toBeGreaterThan(1);
    expect(await deliveriesOf(d.id)).toMatchObject([{ status: 'failed', reason: 'provider_error', provider_code: 'http_503' }]);
    expect(await lastSend(tenant.projectId)).toMatchObject({ reason: 'provider_error' });
  });

  it('an externalId with three devices, one gone: delivered, deactivated, one envelope', async () => {
    const externalId = uid();
    const devices = [await device(tenant), await device(tenant), await device(tenant)];
    for (const d of devices) await identify(d, externalId, tenant.live);
    push.respond(devices[1]!.browser.id, 410);
    expect(await sent(tenant.live, { externalId })).toEqual(outcome(true, true, true, null));
    for (const d of devices) expect(push.requestsFor(d.browser.id)).toHaveLength(1);
    const statuses = await query<{ id: string; status: string }>('SELECT id, status FROM subscribers WHERE id = ANY($1)', [
      devices.map((d) => d.id),
    ]);
    expect(statuses.filter((s) => s.status === 'unsubscribed').map((s) => s.id)).toEqual([devices[1]!.id]);
    const [message] = await query<{ n: number }>(
      'SELECT count(DISTINCT message_id)::int AS n FROM deliveries WHERE subscriber_id = ANY($1)',
      [devices.map((d) => d.id)],
    );
    expect(message!.n).toBe(1);
  });

  it('no device delivered: the most informative reason wins (provider_error over a gone device), deactivated still true', async () => {
    const externalId = uid();
    const [gone, failing] = [await device(tenant), await device(tenant)];
    await identify(gone, externalId, tenant.live);
    await identify(failing, externalId, tenant.live);
    push.respond(gone.browser.id, 410);
    push.respond(failing.browser.id, ...Array<number>(20).fill(500));
    expect(await sent(tenant.live, { externalId })).toEqual(outcome(true, false, true, 'provider_error'));
  });
});

describe('delivery policy', () => {
  let policyTenant: Tenant;
  beforeAll(async () => {
    policyTenant = await createTenant(t);
  });

  it('quiet hours in the subscriber zone, else the project zone, else UTC', async () => {
    await setPolicy(policyTenant, { timezone: 'America/New_York', deliveryPolicy: { quietHours: { start: '22:00', end: '07:00' } } });
    const kolkata = await device(policyTenant, policyTenant.test, { timezone: 'Asia/Kolkata' });
    const unknown = await device(policyTenant, policyTenant.test);
    now = new Date('2024-06-01T18:00:00Z'); // 23:30 in Kolkata, 14:00 in New York
    expect(await sent(policyTenant.test, { token: kolkata.token })).toEqual(outcome(true, false, false, 'quiet_hours'));
    expect(await sent(policyTenant.test, { token: unknown.token })).toEqual(outcome(true, false, false, 'sandbox'));
    expect(await deliveriesOf(kolkata.id)).toEqual([]);
    expect(await lastSend(policyTenant.projectId)).toMatchObject({ reason: 'sandbox' });

    now = new Date('2024-06-02T03:00:00Z'); // 08:30 in Kolkata, 23:00 in New York
    expect(await sent(policyTenant.test, { token: kolkata.token })).toEqual(outcome(true, false, false, 'sandbox'));
    expect(await sent(policyTenant.test, { token: unknown.token })).toEqual(outcome(true, false, false, 'quiet_hours'));

    // Without a project zone, a subscriber without one is read in UTC.
    const bare = await createTenant(t);
    await setPolicy(bare, { deliveryPolicy: { quietHours: { start: '22:00', end: '07:00' } } });
    const utc = await device(bare, bare.test);
    now = new Date('2024-06-02T12:00:00Z');
    expect(await sent(bare.test, { token: utc.token })).toEqual(outcome(true, false, false, 'sandbox'));
    now = new Date('2024-06-02T23:00:00Z');
    expect(await sent(bare.test, { token: utc.token })).toEqual(outcome(true, false, false, 'quiet_hours'));
  });

  it('quiet hours on the New York spring-forward night end at 07:00 EDT', async () => {
    const ny = await createTenant(t);
    await setPolicy(ny, { timezone: 'America/New_York', deliveryPolicy: { quietHours: { start: '22:00', end: '07:00' } } });
    const d = await device(ny, ny.test);
    now = new Date('2024-03-10T10:59:00Z'); // 06:59 EDT
    expect(await sent(ny.test, { token: d.token })).toEqual(outcome(true, false, false, 'quiet_hours'));
    now = new Date('2024-03-10T11:00:00Z'); // 07:00 EDT (06:00 at the standard offset)
    expect(await sent(ny.test, { token: d.token })).toEqual(outcome(true, false, false, 'sandbox'));
  });

  it('a user whose devices are in different zones: the awake device gets it', async () => {
    const p = await createTenant(t);
    await setPolicy(p, { deliveryPolicy: { quietHours: { start: '21:00', end: '08:00' } } });
    const externalId = uid();
    const asleep = await device(p, p.live, { timezone: 'Pacific/Auckland' });
    const awake = await device(p, p.live, { timezone: 'Europe/London' });
    await identify(asleep, externalId, p.live);
    await identify(awake, externalId, p.live);
    now = new Date('2024-04-06T10:00:00Z'); // 23:00 NZDT, 11:00 BST
    expect(await sent(p.live, { externalId })).toEqual(outcome(true, true, false, null));
    expect(push.requestsFor(asleep.browser.id)).toHaveLength(0);
    expect(push.requestsFor(awake.browser.id)).toHaveLength(1);
  });

  it('frequency cap: max pushes per device per window, counted again once the window has passed', async () => {
    const p = await createTenant(t);
    await setPolicy(p, { deliveryPolicy: { frequencyCap: { max: 2, windowSeconds: 3600 } } });
    const d = await device(p, p.test);
    expect(await sent(p.test, { token: d.token })).toEqual(outcome(true, false, false, 'sandbox'));
    expect(await sent(p.test, { token: d.token })).toEqual(outcome(true, false, false, 'sandbox'));
    expect(await sent(p.test, { token: d.token })).toEqual(outcome(true, false, false, 'frequency_capped'));
    expect(await deliveriesOf(d.id)).toHaveLength(2);
    expect(await lastSend(p.projectId)).toMatchObject({ reason: 'frequency_capped', message_id: null });

    now = new Date(Date.now() + 3601 * 1000);
    expect(await sent(p.test, { token: d.token })).toEqual(outcome(true, false, false, 'sandbox'));
  });

  it('frequency cap: devices count separately, and failed sends do not count', async () => {
    const p = await createTenant(t);
    await setPolicy(p, { deliveryPolicy: { frequencyCap: { max: 1, windowSeconds: 3600 } } });
    const [a, b] = [await device(p), await device(p)];
    push.respond(a.browser.id, 413);
    expect(await sent(p.live, { token: a.token })).toEqual(outcome(true, false, false, 'payload_too_large'));
    expect(await sent(p.live, { token: a.token })).toEqual(outcome(true, true, false, null));
    expect(await sent(p.live, { token: a.token })).toEqual(outcome(true, false, false, 'frequency_capped'));
    expect(await sent(p.live, { token: b.token })).toEqual(outcome(true, true, false, null));
  });

  it('frequency cap holds under concurrent sends to the same device', async () => {
    const p = await createTenant(t);
    await setPolicy(p, { deliveryPolicy: { frequencyCap: { max: 1, windowSeconds: 3600 } } });
    const d = await device(p, p.test);
    const results = await Promise.all(Array.from({ length: 6 }, () => sent(p.test, { token: d.token })));
    expect(results.map((r) => r.reason).sort()).toEqual([...Array<string>(5).fill('frequency_capped'), 'sandbox']);
    expect(await deliveriesOf(d.id)).toHaveLength(1);
  });

  it('quiet hours are reported before the cap', async () => {
    const p = await createTenant(t);
    await setPolicy(p, { deliveryPolicy: { frequencyCap: { max: 1, windowSeconds: 3600 }, quietHours: { start: '00:00', end: '23:59' } } });
    const d = await device(p, p.test);
    now = new Date('2030-01-01T12:00:00Z');
    expect(await sent(p.test, { token: d.token })).toEqual(outcome(true, false, false, 'quiet_hours'));
  });
});

describe('Idempotency-Key', () => {
  const keyed = (key: string, headers: Headers = tenant.live) => ({ ...headers, 'idempotency-key': key });
  const logCount = async (key: string) =>
    (await query<{ n: number }>('SELECT count(*)::int AS n FROM transactional_sends WHERE idempotency_key = $1', [key]))[0]!.n;

  it('a repeat within 24 h gets the first response, marked replayed, and sends nothing', async () => {
    const d = await device(tenant);
    const key = `order-${uid()}`;
    const payload = { token: d.token, title: 'Paid', body: 'Thanks' };
    const first = await send(keyed(key), payload);
    expect(first.statusCode).toBe(200);
    expect(first.json()).toEqual(outcome(true, true, false, null));
    expect(first.headers['idempotent-replayed']).toBeUndefined();

    const second = await send(keyed(key), { body: 'Thanks', title: 'Paid', token: d.token });
    expect(second.statusCode).toBe(200);
    expect(second.body).toBe(first.body);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(push.requestsFor(d.browser.id)).toHaveLength(1);
    expect(await deliveriesOf(d.id)).toHaveLength(1);
    expect(await logCount(key)).toBe(1);
  });

  it('replays non-delivery outcomes too', async () => {
    const key = uid();
    const first = await send(keyed(key), { externalId: 'ghost', title: 'a', body: 'b' });
    const second = await send(keyed(key), { externalId: 'ghost', title: 'a', body: 'b' });
    expect(second.json()).toEqual(first.json());
    expect(second.json().reason).toBe('subscriber_not_found');
    expect(await logCount(key)).toBe(1);
  });

  it('the same key with a different body → 422 naming the header', async () => {
    const key = uid();
    expect((await send(keyed(key), { externalId: 'ghost', title: 'a', body: 'b' })).statusCode).toBe(200);
    const res = await send(keyed(key), { externalId: 'ghost', title: 'a', body: 'c' });
    expect(res.statusCode).toBe(422);
    expect(res.json()).toMatchObject({
      statusCode: 422,
      details: [{ field: 'headers.idempotency-key', error: expect.stringMatching(/different request/) }],
    });
    expect(await logCount(key)).toBe(1);
  });

  it('a key over 255 characters → 422 naming the header', async () => {
    const res = await send(keyed('k'.repeat(256)), { externalId: 'ghost', title: 'a', body: 'b' });
    expect(res.statusCode).toBe(422);
    expect(res.json().details).toEqual([{ field: 'headers.idempotency-key', error: expect.any(String) }]);
    expect((await send(keyed('k'.repeat(255)), { externalId: 'ghost', title: 'a', body: 'b' })).statusCode).toBe(200);
  });

  it('keys are scoped per project and environment', async () => {
    const key = uid();
    const payload = { externalId: 'ghost', title: 'a', body: 'b' };
    for (const headers of [tenant.live, tenant.test, other.live]) expect((await send(keyed(key, headers), payload)).statusCode).toBe(200);
    expect(await logCount(key)).toBe(3);
  });

  it('a duplicate while the first is still in flight → 409 idempotency_key_in_use', async () => {
    const d = await device(tenant);
    push.respond(d.browser.id, 'hang');
    const key = uid();
    const payload = { token: d.token, title: 'a', body: 'b' };
    const first = send(keyed(key), payload);
    await expect.poll(() => push.requestsFor(d.browser.id).length).toBe(1);
    const duplicate = await send(keyed(key), payload);
    expect(duplicate.statusCode).toBe(409);
    expect(duplicate.json()).toMatchObject({ statusCode: 409, code: 'idempotency_key_in_use' });
    expect((await first).statusCode).toBe(200);
    expect((await send(keyed(key), payload)).headers['idempotent-replayed']).toBe('true');
  });

  it('a key older than 24 h is forgotten: the request is processed again and replaces it', async () => {
    const key = uid();
    const payload = { externalId: 'ghost', title: 'a', body: 'b' };
    await send(keyed(key), payload);
    await query("UPDATE idempotency_keys SET created_at = now() - interval '24 hours 1 minute' WHERE key = $1", [key]);
    const again = await send(keyed(key), { ...payload, body: 'a different body is fine now' });
    expect(again.statusCode).toBe(200);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    expect(await logCount(key)).toBe(2);
  });

  it('a claim left unanswered by a dead process is taken over after 10 minutes', async () => {
    const key = uid();
    await query(
      `INSERT INTO idempotency_keys (project_id, route, key, request_hash, created_at)
       VALUES ($1, 'live POST /transactional/send', $2, 'x', now() - interval '11 minutes')`,
      [tenant.projectId, key],
    );
    const res = await send(keyed(key), { externalId: 'ghost', title: 'a', body: 'b' });
    expect(res.statusCode).toBe(200);
    expect(await logCount(key)).toBe(1);
  });

  it('a failed request releases its key, so a retry is processed', async () => {
    const ref = { projectId: tenant.projectId, scope: 'live POST /test', key: uid() };
    await expect(t.services.idempotency.run(ref, { a: 1 }, () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await query('SELECT 1 FROM idempotency_keys WHERE key = $1', [ref.key])).toEqual([]);
    const retried = await t.services.idempotency.run(ref, { a: 1 }, async () => ({ statusCode: 200, body: { ok: true } }));
    expect(retried).toEqual({ statusCode: 200, body: { ok: true }, replayed: false });
  });

  it('the hourly job deletes keys older than 24 h and keeps the others', async () => {
    const [fresh, old] = [uid(), uid()];
    await send(keyed(fresh), { externalId: 'ghost', title: 'a', body: 'b' });
    await send(keyed(old), { externalId: 'ghost', title: 'a', body: 'b' });
    await query("UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE key = $1", [old]);
    const task = createTaskList(t.services).expire_idempotency_keys!;
    await task({}, { logger: { info: () => undefined } } as never);
    const left = await query<{ key: string }>('SELECT key FROM idempotency_keys WHERE key = ANY($1)', [[fresh, old]]);
    expect(left.map((r) => r.key)).toEqual([fresh]);
    expect(parseCronItems(cronItems).map((item) => item.task)).toContain('expire_idempotency_keys');
  });
});

describe('GET /transactional/sends/project/:projectId', () => {
  let logTenant: Tenant;
  beforeAll(async () => {
    logTenant = await createTenant(t);
    const live = await device(logTenant);
    const sandbox = await device(logTenant, logTenant.test);
    push.respond(live.browser.id, ...Array<number>(20).fill(500));
    await sent(logTenant.live, { externalId: 'nobody' }); // subscriber_not_found
    await sent(logTenant.live, { token: live.token }); // provider_error
    await sent(logTenant.test, { token: sandbox.token }); // sandbox
    await query(
      "UPDATE transactional_sends SET created_at = now() - interval '2 days' WHERE project_id = $1 AND reason = 'subscriber_not_found'",
      [logTenant.projectId],
    );
  });

  const list = (headers: Headers, qs = '', projectId = logTenant.projectId) =>
    t.app.inject({ method: 'GET', url: `/transactional/sends/project/${projectId}${qs}`, headers });

  it('lists every send newest first with what was answered', async () => {
    const res = await list(logTenant.jwt);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ page: 1, pageSize: 20, total: 3 });
    expect(body.data.map((s: { reason: string }) => s.reason)).toEqual(['sandbox', 'provider_error', 'subscriber_not_found']);
    expect(body.data[2]).toEqual({
      id: expect.stringMatching(/^txs_/),
      channel: 'push',
      apiKeyId: expect.stringMatching(/^key_/),
      sandbox: false,
      recipient: { externalId: 'nobody' },
      messageId: null,
      idempotencyKey: null,
      outcome: outcome(false, false, false, 'subscriber_not_found'),
      reason: 'subscriber_not_found',
      // A push send names no delivery of its own: its devices' are on the message.
      delivery: null,
      createdAt: expect.any(String),
    });
    expect(body.data[1].messageId).toMatch(/^msg_/);
    expect(body.data[1].delivery).toBeNull();
  });

  it('filters by reason, delivered and time; paginates', async () => {
    const reasons = async (qs: string) => (await list(logTenant.live, qs)).json().data.map((s: { reason: string }) => s.reason);
    expect(await reasons('?reason=provider_error')).toEqual(['provider_error']);
    expect(await reasons('?delivered=false')).toEqual(['sandbox', 'provider_error', 'subscriber_not_found']);
    expect(await reasons('?delivered=true')).toEqual([]);
    const yesterday = new Date(Date.now() - 24 * 3600 * 1000).toISOString();
    expect(await reasons(`?from=${encodeURIComponent(yesterday)}`)).toEqual(['sandbox', 'provider_error']);
    expect(await reasons(`?to=${encodeURIComponent(yesterday)}`)).toEqual(['subscriber_not_found']);
    const page = (await list(logTenant.live, '?page=2&pageSize=2')).json();
    expect(page).toMatchObject({ page: 2, pageSize: 2, total: 3 });
    expect(page.data).toHaveLength(1);
    expect((await list(logTenant.live, '?reason=bogus')).statusCode).toBe(422);
    expect((await list(logTenant.live, '?delivered=yes')).statusCode).toBe(422);
  });

  it('a test key sees only sandbox sends; a VIEWER may read', async () => {
    expect((await list(logTenant.test)).json().data.map((s: { reason: string }) => s.reason)).toEqual(['sandbox']);
    const viewer = await addMember(t, logTenant, 'VIEWER');
    expect((await list(viewer.headers)).json().total).toBe(3);
  });

  it('tenant isolation: another project’s key → 403, another organization’s user → 404', async () => {
    const byKey = await list(other.live);
    expect(byKey.statusCode).toBe(403);
    expect(byKey.json()).toMatchObject({ message: 'Resource belongs to a different project' });
    const byJwt = await list(other.jwt);
    expect(byJwt.statusCode).toBe(404);
    expect(byJwt.json()).toMatchObject({ message: 'Project not found' });
    expect((await list({})).statusCode).toBe(401);
  });
});

describe('deleting a subscriber', () => {
  it('blanks its name in the send log: its token at once, its externalId once no other device carries it', async () => {
    const who = await createTenant(t);
    const externalId = uid();
    const [a, b] = [await device(who, who.test), await device(who, who.test)];
    await identify(a, externalId, who.test);
    await identify(b, externalId, who.test);
    await sent(who.test, { externalId });
    await sent(who.test, { token: a.token });
    await sent(who.test, { token: b.token });
    await sent(who.test, { externalId: 'someone-else' });
    const recipients = async () =>
      (await query<{ recipient: Record<string, string> }>('SELECT recipient FROM transactional_sends WHERE project_id = $1 ORDER BY created_at, id', [who.projectId])).map(
        (row) => row.recipient,
      );
    const remove = async (d: Device) => expect((await t.app.inject({ method: 'DELETE', url: `/subscribers/${d.id}`, headers: who.live })).statusCode).toBe(204);

    await remove(a);
    expect(await recipients()).toEqual([{ externalId }, {}, { token: b.token }, { externalId: 'someone-else' }]);
    await remove(b);
    expect(await recipients()).toEqual([{}, {}, {}, { externalId: 'someone-else' }]);
    const [{ reasons }] = await query<{ reasons: string[] }>(
      'SELECT array_agg(reason ORDER BY created_at, id) AS reasons FROM transactional_sends WHERE project_id = $1',
      [who.projectId],
    ) as [{ reasons: string[] }];
    expect(reasons).toEqual(['sandbox', 'sandbox', 'sandbox', 'subscriber_not_found']);
  });
});

describe('OpenAPI', () => {
  it('documents the send: API key security, the Idempotency-Key header, the envelope and its reasons', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/docs/json' })).json();
    const op = doc.paths['/transactional/send'].post;
    expect(op.security).toEqual([{ apiKey: [] }]);
    expect(op.parameters).toEqual(expect.arrayContaining([expect.objectContaining({ in: 'header', name: 'idempotency-key', required: false })]));
    expect(op.description).toMatch(/"sandbox"/);
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '401', '409', '422', '429']));
    expect(doc.paths['/transactional/sends/project/{projectId}'].get.security).toEqual(
      expect.arrayContaining([{ apiKey: [] }, { bearerAuth: [], orgId: [] }]),
    );
    expect(doc.paths['/t/{token}/clicked'].post.security).toEqual([]);
    expect(doc.paths['/projects/{id}/push-config'].get.summary).toMatch(/VAPID/);
  });
});
