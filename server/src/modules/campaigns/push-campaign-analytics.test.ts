// GET /campaigns/:id/analytics through HTTP: a push campaign sent to a local push service, delivered and clicked
// through the tracking endpoints its service worker calls — sent, delivered and clicked per bucket; tenancy.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBackground, type Background } from '../../../test/background.js';
import { CHROME_UA, createTenant, type Tenant } from '../../../test/fixtures.js';
import { startTestApp, type TestApp } from '../../../test/harness.js';
import { createFakeBrowser, startPushService, type PushService } from '../../../test/push-service.js';

let t: TestApp;
let push: PushService;
let background: Background;
let tenant: Tenant;
let other: Tenant;

beforeAll(async () => {
  push = await startPushService();
  t = await startTestApp({ ALLOW_INSECURE_PUSH_ENDPOINTS: 'true', DELIVERY_POLL_INTERVAL_MS: '50', PUBLIC_URL: 'https://herald.example.com' });
  background = await startBackground(t);
  [tenant, other] = await Promise.all([createTenant(t), createTenant(t)]);
});
afterAll(async () => {
  await background?.stop();
  await t?.close();
  await push?.close();
});

type Headers = Record<string, string>;
const request = (method: 'GET' | 'POST', url: string, headers: Headers, payload?: Record<string, unknown>) =>
  t.app.inject({ method, url, headers, ...(payload !== undefined && { payload }) });

interface Analytics {
  campaignId: string;
  bucket: string;
  buckets: { start: string; sent: number; delivered: number; clicked: { all: number; unique: number } }[];
  totals: { sent: number; delivered: number; clicked: { all: number; unique: number; human: number }; opened: { all: number } };
}

describe('GET /campaigns/:id/analytics', () => {
  it("charts a push campaign's sends, device confirmations and clicks per bucket", async () => {
    for (let i = 0; i < 3; i++) {
      const browser = createFakeBrowser();
      const res = await request('POST', '/subscribers', tenant.live, {
        projectId: tenant.projectId,
        endpoint: push.endpointFor(browser),
        p256dh: browser.p256dh,
        auth: browser.auth,
        userAgent: CHROME_UA,
      });
      expect(res.statusCode, res.body).toBe(201);
    }
    const created = await request('POST', '/campaigns', tenant.jwt, {
      name: 'Flash sale',
      projectId: tenant.projectId,
      content: { title: 'Sale', body: 'Now on', clickUrl: 'https://shop.example.com/sale' },
      segment: { filters: {} },
      schedule: { mode: 'immediate' },
    });
    expect(created.statusCode, created.body).toBe(201);
    const campaign = created.json<{ id: string }>();
    await expect
      .poll(async () => (await request('GET', `/campaigns/${campaign.id}`, tenant.jwt)).json<{ status: string }>().status, { timeout: 15_000 })
      .toBe('sent');

    // Two devices confirm, as their service workers do; one of them is clicked.
    const { rows } = await t.database.pool.query<{ id: string }>(
      'SELECT d.id FROM deliveries d JOIN campaigns c ON c.message_id = d.message_id WHERE c.id = $1 ORDER BY d.id',
      [campaign.id],
    );
    expect(rows).toHaveLength(3);
    const tracking = rows.map((row) => `/t/${t.services.tracking.sign(Number(row.id))}`);
    expect((await request('POST', `${tracking[0]}/delivered`, {})).statusCode).toBe(204);
    expect((await request('POST', `${tracking[1]}/delivered`, {})).statusCode).toBe(204);
    expect((await request('POST', `${tracking[1]}/clicked`, {})).statusCode).toBe(204);

    const res = await request('GET', `/campaigns/${campaign.id}/analytics`, tenant.jwt);
    expect(res.statusCode, res.body).toBe(200);
    const chart = res.json<Analytics>();
    expect(chart).toMatchObject({ campaignId: campaign.id, bucket: '1m' });
    expect(chart.totals).toMatchObject({ sent: 3, delivered: 2, clicked: { all: 1, unique: 1, human: 1 }, opened: { all: 0 } });
    const busy = chart.buckets.filter((bucket) => bucket.sent > 0);
    expect(busy.reduce((sum, bucket) => sum + bucket.sent, 0)).toBe(3);

    // A live campaign's chart is not a test key's, nor another project's callers'.
    for (const headers of [other.jwt, other.live, tenant.test]) {
      expect((await request('GET', `/campaigns/${campaign.id}/analytics`, headers)).statusCode).toBe(404);
    }
    expect((await request('GET', `/campaigns/${campaign.id}/analytics`, tenant.live)).statusCode).toBe(200);
    // The chart is keyed by channel: a push campaign has none at /email-campaigns/{id}/analytics.
    expect((await request('GET', `/email-campaigns/${campaign.id}/analytics`, tenant.jwt)).statusCode).toBe(404);
  });
});
