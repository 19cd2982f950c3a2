// A campaign to thousands of recipients through real `herald worker` processes and the local push service, with one
// worker killed (kill -9) midway and restarted: nobody is lost, nobody gets it twice outside the tolerated window (a
// push accepted by the service but not yet recorded when its worker died), and the campaign reaches `sent`.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTenant } from './fixtures.js';
import { createTestDatabase, startTestApp, TEST_JWT_SECRET, type TestApp, type TestDatabase } from './harness.js';
import { startPushService, type PushService } from './push-service.js';
import { seedPushRecipients } from './subscriber-seed.js';
import { CRASH_TEST_WORKER_ENV, pauseHoldingDeliveries, startWorkerProcess, stopAllWorkers } from './worker-processes.js';

const RECIPIENTS = 3000;
const KILL_AT = 0.3;
const SETTLE_TIMEOUT_MS = 120_000;

const workerEnv = { ...CRASH_TEST_WORKER_ENV, JWT_SECRET: TEST_JWT_SECRET };

let database: TestDatabase;
let t: TestApp;
let push: PushService;

beforeAll(async () => {
  database = await createTestDatabase();
  // The API only: the dispatch job and the deliveries are the worker processes' work.
  t = await startTestApp({}, { database });
  push = await startPushService({ delayMs: 2 });
});
afterAll(async () => {
  await stopAllWorkers();
  await push?.close();
  await t?.close();
  await database?.drop();
});

const query = async <T>(text: string, params: unknown[] = []) => (await t.database.pool.query(text, params)).rows as T[];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

it(
  'kill -9 of one of two workers midway: every recipient gets the campaign once (bar the tolerated window) and it ends sent',
  async () => {
    const tenant = await createTenant(t);
    await seedPushRecipients(t.database.pool, push, tenant.projectId, RECIPIENTS, ['crash']);

    const start = (name: string) => startWorkerProcess({ databaseUrl: database.url, env: workerEnv, name });
    const victim = start('campaign-victim');
    const survivor = start('campaign-survivor');
    await Promise.all([victim.ready(), survivor.ready()]);

    const startedAt = Date.now();
    const res = await t.app.inject({
      method: 'POST',
      url: '/campaigns',
      headers: tenant.jwt,
      payload: {
        name: 'Crash campaign',
        projectId: tenant.projectId,
        content: { title: 'Crash test', body: 'Exactly once?', clickUrl: 'https://shop.example.com/' },
        segment: { filters: { tags: ['crash'] } },
        schedule: { mode: 'immediate' },
        utm: { source: 'herald' },
      },
    });
    expect(res.statusCode, res.body).toBe(201);
    const campaign = res.json<{ id: string; status: string; stats: { queued: number } }>();
    expect(campaign).toMatchObject({ status: 'sending', stats: { queued: RECIPIENTS } });

    const accepted = () => push.received.filter((r) => r.status === 201).length;
    while (accepted() < KILL_AT * RECIPIENTS) {
      if (Date.now() - startedAt > SETTLE_TIMEOUT_MS) throw new Error(`only ${accepted()} pushes accepted before the kill`);
      await sleep(5);
    }
    const [message] = await query<{ id: string }>(`SELECT id FROM messages WHERE campaign_id = $1`, [campaign.id]);
    await pauseHoldingDeliveries(victim, t.database.pool, message!.id);
    const acceptedAtKill = accepted();
    await victim.kill();
    const restarted = start('campaign-restarted');
    await restarted.ready();

    let status = 'sending';
    while (status !== 'sent') {
      if (Date.now() - startedAt > SETTLE_TIMEOUT_MS) {
        throw new Error(`campaign still ${status}:\n${survivor.output()}\n${restarted.output()}`);
      }
      await sleep(200);
      status = (await query<{ status: string }>('SELECT status FROM campaigns WHERE id = $1', [campaign.id]))[0]!.status;
    }
    const settledMs = Date.now() - startedAt;
    await Promise.all([survivor.stop(), restarted.stop()]);
    expect(survivor.output() + restarted.output()).not.toMatch(/"level":(50|60)/);

    const messages = await query<{ id: string }>('SELECT id FROM messages WHERE campaign_id = $1', [campaign.id]);
    expect(messages).toHaveLength(1);
    const rows = await query<{ subscriber_id: string; status: string; attempts: number }>(
      'SELECT subscriber_id, status, attempts FROM deliveries WHERE message_id = $1',
      [messages[0]!.id],
    );
    expect(rows).toHaveLength(RECIPIENTS);
    expect(rows.filter((r) => r.status !== 'sent')).toEqual([]);
    const stats = (await t.app.inject({ method: 'GET', url: `/campaigns/${campaign.id}`, headers: tenant.jwt })).json<{
      stats: Record<string, number>;
      completedAt: string;
    }>();
    expect(stats.stats).toMatchObject({ queued: RECIPIENTS, sent: RECIPIENTS, failed: 0, suppressed: 0 });
    expect(Date.parse(stats.completedAt)).not.toBeNaN();

    const pushes = new Map<string, number>();
    for (const r of push.received) {
      if (r.status !== 201) continue;
      expect(r.payload).toMatchObject({ title: 'Crash test', url: 'https://shop.example.com/?utm_source=herald' });
      pushes.set(r.id, (pushes.get(r.id) ?? 0) + 1);
    }
    const lost: string[] = [];
    const unexplained: string[] = [];
    let duplicates = 0;
    for (const row of rows) {
      const recipient = row.subscriber_id;
      const count = pushes.get(recipient) ?? 0;
      if (count === 0) lost.push(recipient);
      if (count <= 1) continue;
      duplicates++;
      // Tolerated only for a delivery the dead worker held: it was claimed again after its lease (a second attempt).
      if (count > 2 || row.attempts < 2) unexplained.push(`${recipient}: ${count} pushes, attempts ${row.attempts}`);
    }
    const retaken = rows.filter((r) => r.attempts >= 2).length;
    console.log(
      `campaign crash: ${RECIPIENTS} recipients, 2 worker processes; kill -9 at ${acceptedAtKill} accepted ` +
        `(${Math.round((100 * acceptedAtKill) / RECIPIENTS)}%); ${retaken} deliveries taken over after the lease, ` +
        `${duplicates} recipients got it twice (accepted before the kill, not yet recorded), unexplained ${unexplained.length}, ` +
        `lost ${lost.length}; campaign sent after ${(settledMs / 1000).toFixed(1)} s`,
    );
    expect(retaken, 'the kill landed while the victim held deliveries').toBeGreaterThan(0);
    expect(lost).toEqual([]);
    expect(unexplained).toEqual([]);
  },
  SETTLE_TIMEOUT_MS + 60_000,
);
