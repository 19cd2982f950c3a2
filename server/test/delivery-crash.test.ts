// Crash safety: two worker processes share a campaign, one is killed with SIGKILL midway; exactly once but one window.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DELIVERIES_CHANNEL } from '../src/delivery/delivery-notifications.js';
import { createTrackingTokens } from '../src/delivery/index.js';
import { newId } from '../src/shared/ids.js';
import { createTenant } from './fixtures.js';
import { createTestDatabase, startTestApp, TEST_JWT_SECRET, type TestApp, type TestDatabase } from './harness.js';
import { startPushService, type PushService, type ReceivedPush } from './push-service.js';
import { seedPushRecipients } from './subscriber-seed.js';
import { CRASH_TEST_WORKER_ENV, pauseHoldingDeliveries, startWorkerProcess, stopAllWorkers } from './worker-processes.js';

const RECIPIENTS = 4000;
/** The kill is ordered once this share of recipients got their push. */
const KILL_AT = 0.4;
const SETTLE_TIMEOUT_MS = 120_000;

const workerEnv = {
  ...CRASH_TEST_WORKER_ENV,
  JWT_SECRET: TEST_JWT_SECRET,
  // Few connections to a service answering in 5 ms: ~800 pushes/s per worker, slow enough to stop it where we mean to.
  PUSH_CONNECTIONS_PER_ORIGIN: '4',
};

let database: TestDatabase;
let t: TestApp;
let push: PushService;

beforeAll(async () => {
  database = await createTestDatabase();
  t = await startTestApp({}, { database });
  // A few ms per answer, like a remote service: sends are in flight when the kill lands.
  push = await startPushService({ delayMs: 5 });
});
afterAll(async () => {
  await stopAllWorkers();
  await push?.close();
  await t?.close();
  await database?.drop();
});

const query = async <T>(text: string, params: unknown[] = []) => (await t.database.pool.query(text, params)).rows as T[];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? NaN;

async function queueCampaign(projectId: string): Promise<string> {
  await seedPushRecipients(t.database.pool, push, projectId, RECIPIENTS);
  const messageId = newId('msg');
  await query(
    `INSERT INTO messages (id, project_id, channel, source, sandbox, content, options)
     VALUES ($1, $2, 'push', 'campaign', false, $3, $4)`,
    [messageId, projectId, { title: 'Crash test', body: 'Exactly once?' }, { ttlSeconds: 3600, urgency: 'normal' }],
  );
  await query(`INSERT INTO message_stats (message_id, queued) VALUES ($1, $2)`, [messageId, RECIPIENTS]);
  await query(`INSERT INTO deliveries (project_id, message_id, subscriber_id) SELECT project_id, $1, id FROM subscribers WHERE project_id = $2`, [
    messageId,
    projectId,
  ]);
  await query(`SELECT pg_notify($1, '')`, [DELIVERIES_CHANNEL]);
  return messageId;
}

it(
  'kill -9 of one of two workers midway: every recipient gets the push once, except pushes accepted but not yet recorded',
  async () => {
    const tenant = await createTenant(t);
    const peerPort = Number(new URL(push.origin).port);
    const start = (name: string) => startWorkerProcess({ databaseUrl: database.url, env: workerEnv, name });
    const victim = start('crash-victim');
    const survivor = start('crash-survivor');
    await Promise.all([victim.ready(), survivor.ready()]);

    const startedAt = Date.now();
    const messageId = await queueCampaign(tenant.projectId);

    // The victim's connections to the push service, sampled while it runs: pushes are attributed to it by port.
    const victimPorts = new Set<number>();
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        for (const port of await victim.tcpPortsTo(peerPort)) victimPorts.add(port);
        await sleep(50);
      }
    })();
    const accepted = () => push.received.filter((r) => r.status === 201).length;
    while (accepted() < KILL_AT * RECIPIENTS) {
      if (Date.now() - startedAt > SETTLE_TIMEOUT_MS) throw new Error(`only ${accepted()} pushes accepted before the kill`);
      await sleep(5);
    }
    // Frozen first, holding deliveries, so the port list is complete at the moment of death.
    await pauseHoldingDeliveries(victim, t.database.pool, messageId);
    sampling = false;
    await sampler;
    for (const port of await victim.tcpPortsTo(peerPort)) victimPorts.add(port);
    const acceptedAtKill = accepted();
    await victim.kill();
    const killedAt = Date.now();
    const sendingAtKill = new Set(
      (await query<{ id: number }>(`SELECT id::float8 AS id FROM deliveries WHERE message_id = $1 AND status = 'sending'`, [messageId])).map((r) => r.id),
    );

    const restarted = start('crash-restarted');
    await restarted.ready();
    let open = RECIPIENTS;
    while (open > 0) {
      if (Date.now() - startedAt > SETTLE_TIMEOUT_MS) {
        throw new Error(`${open} deliveries still queued or sending:\n${survivor.output()}\n${restarted.output()}`);
      }
      await sleep(200);
      const [counted] = await query<{ open: number }>(
        `SELECT count(*)::int AS open FROM deliveries WHERE message_id = $1 AND status IN ('queued', 'sending')`,
        [messageId],
      );
      open = counted!.open;
    }
    const settledMs = Date.now() - startedAt;
    await Promise.all([survivor.stop(), restarted.stop()]);
    expect(survivor.output() + restarted.output()).not.toMatch(/"level":(50|60)/);

    const rows = await query<{ id: number; subscriber_id: string; status: string; attempts: number; sent_ms: number }>(
      `SELECT id::float8 AS id, subscriber_id, status, attempts, extract(epoch FROM sent_at)::float8 * 1000 AS sent_ms
       FROM deliveries WHERE message_id = $1`,
      [messageId],
    );
    expect(rows).toHaveLength(RECIPIENTS);
    expect(rows.filter((r) => r.status !== 'sent')).toEqual([]);
    const [stats] = await query<{ sent: number; failed: number }>(`SELECT sent, failed FROM message_stats WHERE message_id = $1`, [messageId]);
    expect(stats).toEqual({ sent: RECIPIENTS, failed: 0 });

    const tracking = createTrackingTokens(TEST_JWT_SECRET);
    const pushesTo = new Map<string, ReceivedPush[]>();
    for (const r of push.received) {
      if (r.status !== 201) continue;
      pushesTo.set(r.id, [...(pushesTo.get(r.id) ?? []), r]);
    }
    const lost: string[] = [];
    const misaddressed: string[] = [];
    const unexplained: string[] = [];
    let duplicates = 0;
    const windowsMs: number[] = [];
    for (const row of rows) {
      const recipient = row.subscriber_id;
      const pushes = pushesTo.get(recipient) ?? [];
      if (pushes.length === 0) {
        lost.push(recipient);
        continue;
      }
      for (const p of pushes) {
        const payload = p.payload as { title: string; track: string };
        if (payload.title !== 'Crash test' || tracking.verify(payload.track.split('/t/')[1] ?? '') !== row.id) misaddressed.push(recipient);
      }
      // The push the row's recorded attempt made is the last one the service accepted.
      windowsMs.push(row.sent_ms - pushes[pushes.length - 1]!.answeredAt!);
      if (pushes.length === 1) continue;
      duplicates++;
      const first = pushes[0]!;
      const tolerated =
        pushes.length === 2 &&
        victimPorts.has(first.remotePort!) &&
        first.answeredAt! <= killedAt &&
        sendingAtKill.has(row.id) &&
        row.attempts >= 2;
      if (!tolerated) unexplained.push(`${recipient}: ${pushes.length} pushes, attempts ${row.attempts}, first from port ${first.remotePort}`);
    }
    // The victim's claims were never recorded: they were taken over after the lease (another attempt).
    const heldByVictim = rows.filter((r) => sendingAtKill.has(r.id) && r.attempts >= 2).length;
    const sentByVictim = push.received.filter((r) => r.status === 201 && victimPorts.has(r.remotePort!)).length;
    windowsMs.sort((a, b) => a - b);

    console.log(
      `delivery crash: ${RECIPIENTS} recipients, 2 worker processes; kill -9 at ${acceptedAtKill} accepted ` +
        `(${Math.round((100 * acceptedAtKill) / RECIPIENTS)}%, ${sentByVictim} by the victim); the victim held ${heldByVictim} deliveries in flight: ${duplicates} already ` +
        `accepted by the push service (sent twice: the tolerated window), ${heldByVictim - duplicates} not yet sent; ` +
        `unexplained duplicates ${unexplained.length}, lost ${lost.length}; accept→recorded window ` +
        `p50 ${Math.round(percentile(windowsMs, 0.5))} ms, p99 ${Math.round(percentile(windowsMs, 0.99))} ms, ` +
        `max ${Math.round(windowsMs[windowsMs.length - 1]!)} ms; all sent after ${(settledMs / 1000).toFixed(1)} s`,
    );
    expect(sentByVictim, 'the victim took part before it was killed').toBeGreaterThan(0);
    expect(heldByVictim, 'the kill landed while the victim held deliveries').toBeGreaterThan(0);
    expect(lost).toEqual([]);
    expect(misaddressed).toEqual([]);
    expect(unexplained).toEqual([]);
  },
  SETTLE_TIMEOUT_MS + 60_000,
);
