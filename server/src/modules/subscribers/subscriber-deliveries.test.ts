// GET /subscribers/:id/deliveries through HTTP: a subscriber's campaign pushes and transactional sends, newest first,
// paginated, seen only by those who may see the subscriber.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBackground, type Background } from '../../../test/background.js';
import { CHROME_UA, createTenant, pushSubscription, type Tenant } from '../../../test/fixtures.js';
import { startTestApp, type TestApp } from '../../../test/harness.js';

let t: TestApp;
let background: Background;
let tenant: Tenant;
let other: Tenant;

beforeAll(async () => {
  t = await startTestApp({ DELIVERY_POLL_INTERVAL_MS: '50' });
  background = await startBackground(t);
  [tenant, other] = await Promise.all([createTenant(t), createTenant(t)]);
});
afterAll(async () => {
  await background?.stop();
  await t?.close();
});

type Headers = Record<string, string>;
const request = (method: 'GET' | 'POST', url: string, headers: Headers, payload?: Record<string, unknown>) =>
  t.app.inject({ method, url, headers, ...(payload !== undefined && { payload }) });

async function register(headers: Headers, projectId: string): Promise<{ id: string; token: string }> {
  const res = await request('POST', '/subscribers', headers, { projectId, ...pushSubscription(), userAgent: CHROME_UA });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

describe('GET /subscribers/:id/deliveries', () => {
  it("lists a subscriber's campaign pushes and transactional sends, newest first, with status, reason and campaign", async () => {
    const subscriber = await register(tenant.test, tenant.projectId);
    const bystander = await register(tenant.test, tenant.projectId);

    const created = await request('POST', '/campaigns', tenant.test, {
      name: 'Spring sale',
      projectId: tenant.projectId,
      content: { title: 'Sale', body: 'Now on' },
      segment: { filters: {} },
      schedule: { mode: 'immediate' },
    });
    expect(created.statusCode, created.body).toBe(201);
    const campaign = created.json<{ id: string }>();
    await expect
      .poll(async () => (await request('GET', `/campaigns/${campaign.id}`, tenant.test)).json<{ status: string }>().status, { timeout: 15_000 })
      .toBe('sent');
    const sent = await request('POST', '/transactional/send', tenant.test, { token: subscriber.token, title: 'Your order', body: 'Shipped' });
    expect(sent.json()).toMatchObject({ delivered: false, reason: 'sandbox' });

    const res = await request('GET', `/subscribers/${subscriber.id}/deliveries`, tenant.jwt);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json<{ data: Record<string, unknown>[]; total: number; page: number; pageSize: number }>();
    expect(body).toMatchObject({ total: 2, page: 1, pageSize: 20 });
    expect(body.data).toEqual([
      expect.objectContaining({ source: 'transactional', channel: 'push', campaignId: null, campaignName: null, status: 'sent', reason: null }),
      expect.objectContaining({ source: 'campaign', channel: 'push', campaignId: campaign.id, campaignName: 'Spring sale', status: 'sent' }),
    ]);
    expect(body.data[0]!.sentAt).toEqual(expect.any(String));
    expect(body.data[0]!).not.toHaveProperty('id'); // the instance-wide delivery counter is not shown

    // Pagination; the test key that sees this sandbox subscriber sees its history too.
    const second = (await request('GET', `/subscribers/${subscriber.id}/deliveries?pageSize=1&page=2`, tenant.test)).json<typeof body>();
    expect(second).toMatchObject({ total: 2, page: 2, pageSize: 1, data: [expect.objectContaining({ source: 'campaign' })] });
    // Only this subscriber's: the bystander got the campaign alone.
    const theirs = (await request('GET', `/subscribers/${bystander.id}/deliveries`, tenant.live)).json<typeof body>();
    expect(theirs.data.map((row) => row.source)).toEqual(['campaign']);
  });

  it("is a 404 for another organization's or project's subscriber, and for a live subscriber asked with a test key", async () => {
    const subscriber = await register(tenant.live, tenant.projectId);
    for (const headers of [other.jwt, other.live, other.test]) {
      const res = await request('GET', `/subscribers/${subscriber.id}/deliveries`, headers);
      expect(res.statusCode, res.body).toBe(404);
      expect(res.json()).toMatchObject({ statusCode: 404, message: 'Subscriber not found' });
    }
    expect((await request('GET', `/subscribers/${subscriber.id}/deliveries`, tenant.test)).statusCode).toBe(404);
    expect((await request('GET', `/subscribers/${subscriber.id}/deliveries`, tenant.live)).statusCode).toBe(200);
    expect((await request('GET', `/subscribers/sub_nope/deliveries`, tenant.jwt)).statusCode).toBe(404);
  });
});
