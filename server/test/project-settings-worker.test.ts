// Project settings changed through one process apply at once in a `herald worker` process that keeps them in memory.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTenant } from './fixtures.js';
import { createTestDatabase, startTestApp, TEST_JWT_SECRET, type TestApp, type TestDatabase } from './harness.js';
import { createFakeBrowser, startPushService, type PushService } from './push-service.js';
import { seedSubscribers } from './subscriber-seed.js';
import { CRASH_TEST_WORKER_ENV, startWorkerProcess, stopAllWorkers } from './worker-processes.js';

let database: TestDatabase;
let t: TestApp;
let push: PushService;

beforeAll(async () => {
  database = await createTestDatabase();
  // The API side: no job runner and no delivery engine here, so the worker process dispatches and sends.
  t = await startTestApp({ ALLOW_INSECURE_PUSH_ENDPOINTS: 'true' }, { database });
  push = await startPushService();
});
afterAll(async () => {
  await stopAllWorkers();
  await push?.close();
  await t?.close();
  await database?.drop();
});

const query = async <T>(text: string, values: unknown[] = []) => (await t.database.pool.query(text, values)).rows as T[];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

it('quiet hours switched on through the API hold the next campaign in a worker process that already sent for the project', async () => {
  const worker = startWorkerProcess({ databaseUrl: database.url, env: { ...CRASH_TEST_WORKER_ENV, JWT_SECRET: TEST_JWT_SECRET } });
  await worker.ready();
  const tenant = await createTenant(t);
  const browser = createFakeBrowser();
  await seedSubscribers(t.database.pool, tenant.projectId, [{ endpoint: push.endpointFor(browser), p256dh: browser.p256dh, auth: browser.auth }]);

  const campaign = async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/campaigns',
      headers: tenant.jwt,
      payload: { name: 'Now', projectId: tenant.projectId, content: { title: 'Hello', body: 'World' }, segment: { filters: {} }, schedule: { mode: 'immediate' } },
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json<{ id: string }>().id;
  };
  const decided = async (campaignId: string) => {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const rows = await query<{ status: string; reason: string | null }>(
        `SELECT d.status, d.reason FROM deliveries d JOIN messages m ON m.id = d.message_id WHERE m.campaign_id = $1`,
        [campaignId],
      );
      if (rows.length > 0 && rows.every((r) => r.status !== 'sending' && (r.status !== 'queued' || r.reason !== null))) return rows;
      if (Date.now() > deadline) throw new Error(`deliveries of ${campaignId} not decided: ${JSON.stringify(rows)}\n${worker.output()}`);
      await sleep(25);
    }
  };

  // The worker sends a first campaign, reading the project's sending settings.
  expect(await decided(await campaign())).toEqual([{ status: 'sent', reason: null }]);
  expect(push.requestsFor(browser.id)).toHaveLength(1);

  // Quiet hours from an hour ago to an hour from now, in UTC (the zone of a project and subscribers without one).
  const hhmm = (offsetMs: number) => new Date(Date.now() + offsetMs).toISOString().slice(11, 16);
  const patched = await t.app.inject({
    method: 'PATCH',
    url: `/projects/${tenant.projectId}`,
    headers: tenant.jwt,
    payload: { settings: { deliveryPolicy: { quietHours: { start: hhmm(-3_600_000), end: hhmm(3_600_000) } } } },
  });
  expect(patched.statusCode, patched.body).toBe(200);
  const held = await campaign();

  expect(await decided(held)).toEqual([{ status: 'queued', reason: 'quiet_hours' }]);
  await sleep(300);
  expect(push.requestsFor(browser.id)).toHaveLength(1);
  await worker.stop();
  expect(await worker.exited).toEqual({ code: 0, signal: null });
});
