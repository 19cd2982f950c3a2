// POST /projects/:projectId/push/test through HTTP: a builder's notification pushed to one browser subscription on a
// local push service that checks VAPID and decrypts — as composed, with no campaign, subscriber or delivery written.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, createTenant, type Tenant } from '../../../test/fixtures.js';
import { startTestApp, type TestApp } from '../../../test/harness.js';
import { createFakeBrowser, startPushService, type FakeBrowser, type PushService } from '../../../test/push-service.js';

let t: TestApp;
let push: PushService;
let tenant: Tenant;
let other: Tenant;

beforeAll(async () => {
  push = await startPushService();
  t = await startTestApp({ ALLOW_INSECURE_PUSH_ENDPOINTS: 'true', PUBLIC_URL: 'https://herald.example.com' });
  [tenant, other] = await Promise.all([createTenant(t), createTenant(t)]);
});
afterAll(async () => {
  await t?.close();
  await push?.close();
});

const subscriptionOf = (browser: FakeBrowser) => ({ endpoint: push.endpointFor(browser), expirationTime: null, keys: { p256dh: browser.p256dh, auth: browser.auth } });
const NOTIFICATION = { title: 'Flash sale', body: 'Everything -20 % until midnight', iconUrl: 'https://shop.example.com/icon.png', clickUrl: 'https://shop.example.com/sale' };

const test = (headers: Record<string, string>, payload: Record<string, unknown>, projectId = tenant.projectId) =>
  t.app.inject({ method: 'POST', url: `/projects/${projectId}/push/test`, headers, payload });

const count = async (table: string) => Number((await t.database.pool.query(`SELECT count(*) FROM ${table} WHERE project_id = $1`, [tenant.projectId])).rows[0].count);

describe('POST /projects/:projectId/push/test', () => {
  it('pushes the notification as composed to that one browser, encrypted and signed with the project keys, writing nothing', async () => {
    const browser = createFakeBrowser();
    const res = await test(tenant.jwt, { subscription: subscriptionOf(browser), notification: NOTIFICATION });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ status: 'sent', reason: null, providerCode: 'http_201' });

    const [received] = push.requestsFor(browser.id);
    expect(received).toMatchObject({ status: 201, vapid: expect.objectContaining({ aud: push.origin }) });
    expect(received!.payload).toMatchObject({ title: 'Flash sale', body: 'Everything -20 % until midnight', icon: 'https://shop.example.com/icon.png', url: 'https://shop.example.com/sale' });
    // No campaign, no subscriber (the browser joins no audience), no message or delivery.
    for (const table of ['campaigns', 'subscribers', 'messages', 'deliveries']) expect(await count(table), table).toBe(0);
  });

  it('says what the push service answered for a subscription that is gone, and refuses a push over 4 KB before sending', async () => {
    const gone = createFakeBrowser();
    push.respond(gone.id, 410);
    const res = await test(tenant.jwt, { subscription: subscriptionOf(gone), notification: NOTIFICATION });
    expect(res.json()).toMatchObject({ status: 'failed', providerCode: 'http_410' });

    const big = createFakeBrowser();
    const oversized = await test(tenant.jwt, { subscription: subscriptionOf(big), notification: { ...NOTIFICATION, body: 'x'.repeat(2000), title: 'y'.repeat(250), imageUrl: `https://shop.example.com/${'z'.repeat(1900)}` } });
    expect(oversized.statusCode, oversized.body).toBe(422);
    expect(oversized.json().details).toEqual([expect.objectContaining({ field: 'notification' })]);
    expect(push.requestsFor(big.id)).toEqual([]);
  });

  it('checks the subscription as a registration does, and who may send: a MEMBER yes, a VIEWER and other projects no', async () => {
    const browser = createFakeBrowser();
    const bad = await test(tenant.jwt, { subscription: { endpoint: push.endpointFor(browser), keys: { p256dh: 'nope', auth: browser.auth } }, notification: NOTIFICATION });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().details).toEqual([expect.objectContaining({ field: 'subscription.keys.p256dh' })]);

    const member = await addMember(t, tenant, 'MEMBER');
    expect((await test(member.headers, { subscription: subscriptionOf(browser), notification: NOTIFICATION })).json()).toMatchObject({ status: 'sent' });
    const viewer = await addMember(t, tenant, 'VIEWER');
    expect((await test(viewer.headers, { subscription: subscriptionOf(browser), notification: NOTIFICATION })).statusCode).toBe(403);
    expect((await test(other.jwt, { subscription: subscriptionOf(browser), notification: NOTIFICATION })).statusCode).toBe(404);
    expect((await test(other.live, { subscription: subscriptionOf(browser), notification: NOTIFICATION })).statusCode).toBe(403);
    expect(push.requestsFor(browser.id)).toHaveLength(1);

    // A test key's test goes to the sandbox: answered sent, and no browser is reached.
    const sandboxed = createFakeBrowser();
    expect((await test(tenant.test, { subscription: subscriptionOf(sandboxed), notification: NOTIFICATION })).json()).toMatchObject({ status: 'sent' });
    expect(push.requestsFor(sandboxed.id)).toEqual([]);
  });

  it('says so in words when the project has no VAPID keys', async () => {
    const bare = await createTenant(t);
    await t.database.pool.query(`DELETE FROM channel_configs WHERE project_id = $1 AND channel = 'push'`, [bare.projectId]);
    const res = await test(bare.jwt, { subscription: subscriptionOf(createFakeBrowser()), notification: NOTIFICATION }, bare.projectId);
    expect(res.statusCode, res.body).toBe(409);
    expect(res.json()).toMatchObject({ code: 'push_not_configured', message: expect.stringContaining('no VAPID keys') });
  });
});
