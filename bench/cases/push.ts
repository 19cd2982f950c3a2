// Push delivery throughput: the real worker process against web-push ×50 and encryption alone, same peer; RSS at 1M.
import { Agent } from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import webpush from 'web-push';
import { DELIVERIES_CHANNEL } from '../../server/src/delivery/delivery-notifications.js';
import { encryptPushPayload } from '../../server/src/delivery/channels/push/push-encryption.js';
import { pushPayload } from '../../server/src/delivery/channels/push/push-payload.js';
import { createTrackingTokens } from '../../server/src/delivery/index.js';
import { newId } from '../../server/src/shared/ids.js';
import type { WorkerProcess } from '../../server/test/worker-processes.js';
import { log, measure, ratio, tenths, type CaseResult, type Measurement } from '../lib/harness.js';
import { cpuSecondsOf, machineCpuSeconds, peakRssDuring, postgresCpu, postgresCpuUsed, startPushPeer } from '../lib/process.js';
import { BROWSERS, JWT_SECRET, PUBLIC_URL, SAMPLE_EVERY, VAPID_SUBJECT, checkAnswers, seedAudience, startPushWorker, subscriberId } from '../lib/push-bench.js';

export interface PushContext {
  databaseUrl: string;
  projectId: string;
  runs: number;
  /** Deliveries per engine run (BENCH_PUSH_N). */
  n: number;
  /** Sends per web-push run: its rate is the metric, so fewer keep the run short. */
  webPushN: number;
  /** Recipients of the one memory run (BENCH_PUSH_RSS_N); 0 skips it. */
  rssN: number;
  /** The project's VAPID pair, for web-push's baseline (Herald keeps the private key sealed). */
  vapid: { publicKey: string; privateKey: string };
}

const WEB_PUSH_CONCURRENCY = 50;
const WARMUP_N = 5_000;
const PREFIX = 'push';
const CONTENT = { title: 'Flash sale', body: 'Everything 20% off until midnight — tap to see what is new today.', url: 'https://shop.example.com/sale' };
const OPTIONS = { ttlSeconds: 3600, urgency: 'normal' as const };

export async function pushCases(ctx: PushContext): Promise<CaseResult[]> {
  const total = Math.max(ctx.n, ctx.webPushN, ctx.rssN);
  const peer = await startPushPeer({ browsers: BROWSERS, sampleEvery: SAMPLE_EVERY, sampleMax: total });
  const pool = new pg.Pool({ connectionString: ctx.databaseUrl, max: 2 });
  let worker: WorkerProcess | undefined;
  try {
    log(`push: seeding ${total.toLocaleString('en')} subscribers on the local push service (pid ${peer.pid}, ${peer.origin})`);
    await seedAudience(pool, ctx.projectId, peer, total, PREFIX);
    worker = await startPushWorker(ctx.databaseUrl, peer);
    log(`push: Herald worker pid ${worker.pid}`);
    const engineWorker = worker;

    /** One message to the first `count` subscribers, queued in one statement; timed from its commit to the last outcome. */
    const deliver = async (count: number): Promise<Measurement> => {
      const messageId = newId('msg');
      await pool.query(
        `INSERT INTO messages (id, project_id, channel, source, sandbox, content, options) VALUES ($1, $2, 'push', 'campaign', false, $3, $4)`,
        [messageId, ctx.projectId, CONTENT, OPTIONS],
      );
      await pool.query(`INSERT INTO message_stats (message_id, queued) VALUES ($1, $2)`, [messageId, count]);
      const answers = await peer.stats();
      const cpu = {
        worker: await cpuSecondsOf(engineWorker.pid),
        peer: await cpuSecondsOf(peer.pid),
        postgres: await postgresCpu(pool),
        machine: await machineCpuSeconds(),
      };
      const { result, peakRssMb } = await peakRssDuring(engineWorker.pid, async () => {
        const insertStart = Date.now();
        await pool.query(
          `INSERT INTO deliveries (project_id, message_id, subscriber_id)
           SELECT project_id, $1, id FROM subscribers WHERE project_id = $2 AND id <= $3`,
          [messageId, ctx.projectId, subscriberId(PREFIX, count)],
        );
        const queuedAt = Date.now();
        await pool.query(`SELECT pg_notify($1, '')`, [DELIVERIES_CHANNEL]);
        // The message's counters move with every recorded batch: one row to poll, not the deliveries.
        for (;;) {
          await sleep(100);
          const { rows } = await pool.query<{ done: number; at: number }>(
            `SELECT sent + failed + suppressed AS done, extract(epoch FROM updated_at)::float8 * 1000 AS at FROM message_stats WHERE message_id = $1`,
            [messageId],
          );
          if (rows[0]!.done >= count) return { insertMs: queuedAt - insertStart, seconds: (rows[0]!.at - queuedAt) / 1000 };
          if (Date.now() - queuedAt > 30 * 60_000) throw new Error(`only ${rows[0]!.done} of ${count} deliveries done after 30 min`);
        }
      });
      const used = {
        worker: (await cpuSecondsOf(engineWorker.pid)) - cpu.worker,
        peer: (await cpuSecondsOf(peer.pid)) - cpu.peer,
        postgres: postgresCpuUsed(cpu.postgres, await postgresCpu(pool)),
        machine: (await machineCpuSeconds()) - cpu.machine,
      };
      const { rows } = await pool.query<{ sent: number }>(`SELECT count(*)::int AS sent FROM deliveries WHERE message_id = $1 AND status = 'sent'`, [
        messageId,
      ]);
      if (rows[0]!.sent !== count) throw new Error(`${rows[0]!.sent} of ${count} deliveries sent`);
      const sampled = checkAnswers(answers, await peer.stats(), count);
      // Later runs should not walk this run's dead index entries.
      await pool.query('VACUUM deliveries');
      return {
        value: count / result.seconds,
        peakRssMb,
        extra: {
          deliveries: count,
          seconds: tenths(result.seconds),
          insertMs: result.insertMs,
          workerCpuS: tenths(used.worker),
          peerCpuS: tenths(used.peer),
          postgresCpuS: tenths(used.postgres),
          otherCpuS: tenths(used.machine - used.worker - used.peer - used.postgres),
          sampleDecrypted: sampled,
        },
      };
    };

    log(`push: (a) the engine, ${ctx.n.toLocaleString('en')} deliveries a run`);
    const engine = await measure(`push: engine, worker process (N=${ctx.n})`, { unit: 'deliveries/s', runs: ctx.runs }, (run) =>
      deliver(run < 0 ? WARMUP_N : ctx.n),
    );

    log(`push: (b) web-push sendNotification at concurrency ${WEB_PUSH_CONCURRENCY}, ${ctx.webPushN.toLocaleString('en')} a run`);
    const library = await measure(`push: web-push ×${WEB_PUSH_CONCURRENCY} (N=${ctx.webPushN})`, { unit: 'deliveries/s', runs: ctx.runs }, async (run) => {
      const count = run < 0 ? Math.min(WARMUP_N, ctx.webPushN) : ctx.webPushN;
      const { rows: subscriptions } = await pool.query<{ endpoint: string; p256dh: string; auth: string }>(
        `SELECT endpoint, p256dh, auth FROM subscribers WHERE project_id = $1 AND id <= $2 ORDER BY id`,
        [ctx.projectId, subscriberId(PREFIX, count)],
      );
      const vapidDetails = { subject: VAPID_SUBJECT, ...ctx.vapid };
      const tracking = createTrackingTokens(JWT_SECRET);
      const agent = new Agent({ keepAlive: true, maxSockets: WEB_PUSH_CONCURRENCY, ca: peer.ca });
      const answers = await peer.stats();
      const before = await cpuSecondsOf(process.pid);
      const started = performance.now();
      let next = 0;
      await Promise.all(
        Array.from({ length: WEB_PUSH_CONCURRENCY }, async () => {
          for (let i = next++; i < subscriptions.length; i = next++) {
            const s = subscriptions[i]!;
            const payload = JSON.stringify(pushPayload(CONTENT, `${PUBLIC_URL}/t/${tracking.sign(i + 1)}`));
            await webpush.sendNotification({ endpoint: s.endpoint, keys: { p256dh: s.p256dh, auth: s.auth } }, payload, {
              TTL: OPTIONS.ttlSeconds,
              urgency: OPTIONS.urgency,
              vapidDetails,
              agent,
            });
          }
        }),
      );
      const seconds = (performance.now() - started) / 1000;
      const cpu = (await cpuSecondsOf(process.pid)) - before;
      agent.destroy();
      checkAnswers(answers, await peer.stats(), count);
      return { value: count / seconds, extra: { deliveries: count, seconds: tenths(seconds), senderCpuS: tenths(cpu) } };
    });

    log(`push: (c) encryption only, one thread, ${ctx.n.toLocaleString('en')} payloads a run`);
    const plaintext = Buffer.from(JSON.stringify(pushPayload(CONTENT, `${PUBLIC_URL}/t/${createTrackingTokens(JWT_SECRET).sign(1)}`)));
    const browserKeys = peer.browsers.map((b) => ({ p256dh: Buffer.from(b.p256dh, 'base64url'), auth: Buffer.from(b.auth, 'base64url') }));
    const encryption = await measure(`push: encrypt only, 1 thread (N=${ctx.n})`, { unit: 'payloads/s', runs: ctx.runs }, async (run) => {
      const count = run < 0 ? WARMUP_N : ctx.n;
      const started = performance.now();
      for (let i = 0; i < count; i++) {
        const keys = browserKeys[i % BROWSERS]!;
        encryptPushPayload(plaintext, keys.p256dh, keys.auth);
      }
      return { value: count / ((performance.now() - started) / 1000) };
    });

    const results = [engine, library, encryption, ratio('push ratio a/b (engine / web-push)', engine, library, 4), ratio('push ratio a/c (engine / encrypt only)', engine, encryption, 0.6)];
    if (ctx.rssN > 0) {
      log(`push: memory, one run of ${ctx.rssN.toLocaleString('en')} deliveries`);
      results.push(
        await measure(`push: engine memory (N=${ctx.rssN})`, { unit: 'deliveries/s', runs: 1, warmup: 0, rssTargetMb: 300 }, () => deliver(ctx.rssN)),
      );
    }
    return results;
  } finally {
    await worker?.stop();
    await peer.stop();
    await pool.end();
  }
}
