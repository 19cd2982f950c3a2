// The filters tree as its consumers read it: a push campaign to a saved tree segment reaches exactly its people through
// the real delivery path, campaigns check inline trees, and an automation's condition step branches on a tree in SQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBackground, type Background } from '../../../test/background.js';
import { createTenant, type Tenant } from '../../../test/fixtures.js';
import { startTestApp, type TestApp } from '../../../test/harness.js';
import { createFakeBrowser, startPushService, type FakeBrowser, type PushService } from '../../../test/push-service.js';
import { seedSubscribers } from '../../../test/subscriber-seed.js';

let t: TestApp;
let push: PushService;
let background: Background;
let tenant: Tenant;

type Headers = Record<string, string>;
const request = (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, headers: Headers, payload?: unknown) =>
  t.app.inject({ method, url, headers, ...(payload !== undefined && { payload: payload as Record<string, unknown> }) });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  t = await startTestApp({ ALLOW_INSECURE_PUSH_ENDPOINTS: 'true', DELIVERY_POLL_INTERVAL_MS: '50', PUBLIC_URL: 'https://herald.example.com' });
  push = await startPushService();
  background = await startBackground(t);
  tenant = await createTenant(t);
});
afterAll(async () => {
  await background?.stop();
  await push?.close();
  await t?.close();
});

/** A browser subscribed through the local push service, with attributes, and events reported through the API. */
async function person(attributes: Record<string, unknown>, eventNames: string[] = []): Promise<{ browser: FakeBrowser; id: string }> {
  const browser = createFakeBrowser();
  const [id] = await seedSubscribers(t.database.pool, tenant.projectId, [{ endpoint: push.endpointFor(browser), p256dh: browser.p256dh, auth: browser.auth }]);
  await t.database.pool.query('UPDATE subscribers SET attributes = $2 WHERE id = $1', [id, attributes]);
  for (const name of eventNames) {
    const res = await request('POST', '/events', tenant.live, { name, subscriberId: id });
    expect(res.statusCode, res.body).toBe(202);
  }
  return { browser, id: id! };
}

/** The titles of the pushes a browser got, once it has `n` (or after a timeout). */
async function titles(browser: FakeBrowser, n: number): Promise<string[]> {
  const answered = () => push.requestsFor(browser.id).filter((r) => r.answeredAt !== undefined);
  const deadline = Date.now() + 15_000;
  while (answered().length < n && Date.now() < deadline) await sleep(25);
  return answered().map((r) => (r.payload as { title: string }).title);
}

describe('consumers of the filters tree', () => {
  it('a push campaign to a saved tree segment reaches exactly its people', async () => {
    const buyers = [await person({ plan: 'pro', score: '12' }, ['order.completed']), await person({ plan: 'pro', score: 30 }, ['order.completed', 'order.completed'])];
    const others = [await person({ plan: 'pro', score: 12 }), await person({ plan: 'free', score: 50 }, ['order.completed']), await person({ plan: 'pro', score: 'n/a' }, ['order.completed'])];
    const saved = await request('POST', '/segments', tenant.live, {
      projectId: tenant.projectId,
      name: 'pro buyers',
      filters: { all: [{ attribute: 'plan', operator: 'eq', value: 'pro' }, { event: 'order.completed' }, { any: [{ attribute: 'score', operator: 'gte', value: 10 }] }] },
    });
    expect(saved.statusCode, saved.body).toBe(201);
    const reach = await request('POST', '/segments/reach', tenant.live, { projectId: tenant.projectId, segmentId: saved.json().id, channel: 'push' });
    expect(reach.json().count).toBe(2);

    const campaign = await request('POST', '/campaigns', tenant.jwt, {
      name: 'Thanks',
      projectId: tenant.projectId,
      content: { title: 'Thanks', body: 'for buying' },
      segment: { savedSegmentId: saved.json().id },
      schedule: { mode: 'immediate' },
    });
    expect(campaign.statusCode, campaign.body).toBe(201);
    for (const { browser } of buyers) expect(await titles(browser, 1)).toEqual(['Thanks']);
    await sleep(300);
    for (const { browser } of others) expect(await titles(browser, 0)).toEqual([]);
    const read = await request('GET', `/campaigns/${campaign.json().id}`, tenant.jwt);
    expect(read.json().audienceSize ?? read.json().stats.queued).toBe(2);
  });

  it("checks a campaign's inline tree against the attribute list", async () => {
    expect((await request('PUT', `/projects/${tenant.projectId}/attributes/plan`, tenant.live, { type: 'text' })).statusCode).toBe(200);
    const res = await request('POST', '/campaigns', tenant.jwt, {
      name: 'Bad',
      projectId: tenant.projectId,
      content: { title: 'x', body: 'y' },
      segment: { filters: { all: [{ attribute: 'plan', operator: 'gt', value: 3 }] } },
      schedule: { mode: 'draft' },
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().details).toEqual([{ field: 'segment.filters.all.0.operator', error: expect.any(String) }]);
  });

  it("an automation's condition step branches on attribute and event conditions", async () => {
    const flow = await request('POST', '/automations', tenant.jwt, {
      projectId: tenant.projectId,
      name: 'Branch',
      trigger: { type: 'event', eventName: 'check.in' },
      steps: [
        { id: 'c', type: 'condition', criteria: { subscriber: { any: [{ event: 'cart.added', count: { operator: 'gte', value: 2 } }, { attribute: 'vip', operator: 'eq', value: true }] } }, trueBranch: 'yes', falseBranch: 'no' },
        { id: 'yes', type: 'send_push', content: { title: 'Keen', body: 'b' }, next: null },
        { id: 'no', type: 'send_push', content: { title: 'Casual', body: 'b' }, next: null },
      ],
    });
    expect(flow.statusCode, flow.body).toBe(201);
    expect((await request('POST', `/automations/${flow.json().id}/activate`, tenant.jwt)).statusCode).toBe(200);
    const keen = await person({}, ['cart.added', 'cart.added']);
    const vip = await person({ vip: 'true' });
    const casual = await person({ vip: false }, ['cart.added']);
    for (const { id } of [keen, vip, casual]) expect((await request('POST', '/events', tenant.live, { name: 'check.in', subscriberId: id })).statusCode).toBe(202);
    for (let i = 0; i < 20; i++) if ((await t.services.automationExecutor.runOnce()).claimed === 0) break;
    expect(await titles(keen.browser, 1)).toEqual(['Keen']);
    expect(await titles(vip.browser, 1)).toEqual(['Keen']);
    expect(await titles(casual.browser, 1)).toEqual(['Casual']);
  });

  it("an automation's entry rule lets in only the people it matches, and is checked when saved", async () => {
    const steps = [{ id: 'hi', type: 'send_push', content: { title: 'Welcome pro', body: 'b' }, next: null }];
    const missing = await request('POST', '/automations', tenant.jwt, { projectId: tenant.projectId, name: 'Gone', trigger: { type: 'event', eventName: 'joined', segment: { savedSegmentId: 'seg_gone' } }, steps });
    expect(missing.statusCode).toBe(422);
    expect(missing.json().details).toEqual([{ field: 'trigger.segment.savedSegmentId', error: expect.any(String) }]);
    const misfit = await request('POST', '/automations', tenant.jwt, { projectId: tenant.projectId, name: 'Bad', trigger: { type: 'event', eventName: 'joined', segment: { filters: { all: [{ attribute: 'plan', operator: 'gt', value: 1 }] } } }, steps });
    expect(misfit.statusCode).toBe(422);
    expect(misfit.json().details).toEqual([{ field: 'trigger.segment.filters.all.0.operator', error: expect.any(String) }]);

    const flow = await request('POST', '/automations', tenant.jwt, {
      projectId: tenant.projectId,
      name: 'Pro only',
      trigger: { type: 'event', eventName: 'joined', segment: { filters: { all: [{ attribute: 'plan', operator: 'eq', value: 'pro' }, { event: 'joined' }] } } },
      steps,
    });
    expect(flow.statusCode, flow.body).toBe(201);
    expect(flow.json().trigger.segment).toEqual({ filters: { all: [{ attribute: 'plan', operator: 'eq', value: 'pro' }, { event: 'joined' }] } });
    expect((await request('POST', `/automations/${flow.json().id}/activate`, tenant.jwt)).statusCode).toBe(200);
    const pro = await person({ plan: 'pro' });
    const free = await person({ plan: 'free' });
    expect((await request('POST', '/events', tenant.live, { name: 'joined', subscriberId: pro.id })).json()).toMatchObject({ data: [{ enrolled: 1 }] });
    expect((await request('POST', '/events', tenant.live, { name: 'joined', subscriberId: free.id })).json()).toMatchObject({ data: [{ enrolled: 0 }] });
    for (let i = 0; i < 20; i++) if ((await t.services.automationExecutor.runOnce()).claimed === 0) break;
    expect(await titles(pro.browser, 1)).toEqual(['Welcome pro']);
    expect(await titles(free.browser, 0)).toEqual([]);
  });
});
