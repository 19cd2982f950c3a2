// Automations: 100,000 enrollments through send_push → delay → send_email run by two worker processes to a local push
// service and SMTP sink (each person exactly one of each), against the bare writes as a ceiling; 1,000,000 people enrolled
// by a schedule trigger's minute tick.
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { openDatabase } from '../../server/src/db/database.js';
import { DEFAULT_PUSH_TTL_SECONDS, type MessageRecord } from '../../server/src/delivery/index.js';
import { queueMessages } from '../../server/src/delivery/delivery.repository.js';
import { recordStepRuns, claimDue, type StepRunWrite } from '../../server/src/modules/automations/automation-enrollment.repository.js';
import { startDnsServer } from '../../server/test/dns-server.js';
import type { WorkerProcess } from '../../server/test/worker-processes.js';
import { log, measure, microsPer, ratio, tenths, type CaseResult } from '../lib/harness.js';
import {
  cpuSecondsOf,
  machineCpuSeconds,
  memoryOf,
  postgresCpu,
  postgresCpuUsed,
  startHerald,
  startHeraldWorker,
  startPushPeer,
  startSmtpSink,
  type Child,
} from '../lib/process.js';
import { BROWSERS, JWT_SECRET, PUBLIC_URL, SAMPLE_EVERY, VAPID_SUBJECT } from '../lib/push-bench.js';
import { setUpEmailProject } from './email.js';

export interface AutomationsContext {
  databaseUrl: string;
  owner: { email: string; password: string };
  /** Enrollments through the flow (BENCH_AUTOMATIONS_N, 100,000). */
  n: number;
  /** People a schedule trigger enrolls at once (BENCH_AUTOMATIONS_ENROLL_N, 1,000,000; 0 skips it). */
  enrollN: number;
}

/** The issue's target, with two worker processes and the channel peers on this machine. */
const TARGET_STEPS_PER_S = 2000;
const STEPS = 3;
const DOMAIN = 'bench-flows.example';
const BOUNCE_DOMAIN = 'bounces.herald.example';
const SETTLE_MS = 60 * 60_000;
const POLL_MS = 100;
/** The application_name of the workers' database sessions (startHeraldWorker's). */
const WORKER_NAME = 'herald-bench-worker';
/** The executor's batch, as the workers run it (AUTOMATION_BATCH_SIZE, else Herald's default): the ceiling writes the same. */
const BATCH = Number(process.env.AUTOMATION_BATCH_SIZE ?? 500);

const PUSH = { title: 'Welcome aboard', body: 'Thanks for joining us: here is what is new this week.', clickUrl: 'https://shop.example.com/new' };
const EMAIL = {
  subject: 'What is new this week',
  html: '<p>Hi,</p><p>We have been busy: <a href="https://shop.example.com/new">see what is new</a> and <a href="https://shop.example.com/sale">this week\'s offers</a>.</p>',
  from: { email: `news@${DOMAIN}`, name: 'Bench Shop' },
};
const FLOW = [
  { id: 'hello', type: 'send_push', content: PUSH, next: 'wait' },
  { id: 'wait', type: 'delay', duration: '1d', next: 'follow-up' },
  { id: 'follow-up', type: 'send_email', content: EMAIL, next: null },
];

/** Subscriber ids and tokens of a run: unique in a database the bench has run in before (BENCH_DATABASE_URL). */
const runTag = () => Math.random().toString(36).slice(2, 8);

export async function automationCases(ctx: AutomationsContext): Promise<CaseResult[]> {
  const { n } = ctx;
  const loadBefore = await loadAverage();
  const dns = await startDnsServer();
  const sink = await startSmtpSink({ dns: dns.address, sampleEvery: SAMPLE_EVERY, countEach: true });
  const peer = await startPushPeer({ browsers: BROWSERS, sampleEvery: SAMPLE_EVERY, sampleMax: n, countEach: true });
  const pool = new pg.Pool({ connectionString: ctx.databaseUrl, max: 3 });
  const database = openDatabase(ctx.databaseUrl, 2);
  const env = {
    DNS_SERVERS: dns.address,
    EMAIL_BOUNCE_DOMAIN: BOUNCE_DOMAIN,
    JWT_SECRET,
    PUBLIC_URL,
    VAPID_SUBJECT,
    LOG_LEVEL: 'warn',
  };
  let api: Child | undefined;
  const workers: WorkerProcess[] = [];
  try {
    api = await startHerald({ DATABASE_URL: ctx.databaseUrl, ...env, RATE_LIMIT_DEFAULT: '100000000' });
    const server = api;
    const setup = await setUpEmailProject(server, ctx.owner, dns, sink, { name: 'Bench automations', domain: DOMAIN });
    const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
      const res = await fetch(`${server.url}${path}`, {
        method,
        headers: { ...setup.jwt, ...(body !== undefined && { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
      return (await res.json()) as T;
    };

    log(`automations: seeding ${n.toLocaleString('en')} subscribers (push on the local push service pid ${peer.pid}, email to the sink pid ${sink.pid})`);
    await pool.query(
      `INSERT INTO subscribers (id, project_id, token, endpoint, p256dh, auth, email)
       SELECT 'sub_af' || $7 || lpad(g::text, 8, '0'), $1, 'st_af' || $7 || g, $2 || '/push/b' || g, ($3::text[])[1 + g % $5], ($4::text[])[1 + g % $5],
              'flow-' || g || '@recipients.example.net'
       FROM generate_series(1, $6::int) g`,
      [setup.projectId, peer.origin, peer.browsers.map((b) => b.p256dh), peer.browsers.map((b) => b.auth), BROWSERS, n, runTag()],
    );
    await pool.query('VACUUM (ANALYZE) subscribers');
    const flow = await call<{ id: string }>('POST', '/automations', { projectId: setup.projectId, name: 'Bench flow', trigger: { type: 'event', eventName: 'bench.flow' }, steps: FLOW });
    await call('POST', `/automations/${flow.id}/activate`);
    // The enrollments exist before the ceiling runs: its step rows need them. Not due until the workers run.
    await pool.query(
      `INSERT INTO automation_enrollments (project_id, automation_id, version, subscriber_id, step_id, due_at)
       SELECT project_id, $2, 1, id, 'hello', now() + interval '1 year' FROM subscribers WHERE project_id = $1`,
      [setup.projectId, flow.id],
    );
    await pool.query('VACUUM (ANALYZE) automation_enrollments');
    const { rows: enrolled } = await pool.query<{ id: string; subscriber_id: string }>(
      'SELECT id, subscriber_id FROM automation_enrollments WHERE automation_id = $1 ORDER BY id',
      [flow.id],
    );

    log(`automations: the ceiling, the flow's writes alone (messages, deliveries, step rows; batches of ${BATCH} on two connections)`);
    const ceiling = await measure(`automations: ceiling, bare writes of the flow (N=${n})`, { unit: 'steps/s', runs: 1, warmup: 0 }, async () => {
      const started = performance.now();
      await bareWrites(database.db, setup.projectId, flow.id, enrolled);
      const seconds = (performance.now() - started) / 1000;
      await pool.query(`DELETE FROM messages WHERE id LIKE 'msg_ceil%'`);
      await pool.query(`DELETE FROM automation_step_runs WHERE automation_id = $1`, [flow.id]);
      await pool.query('VACUUM (ANALYZE) messages, deliveries, automation_step_runs');
      return { value: (STEPS * n) / seconds, extra: { seconds: tenths(seconds) } };
    });

    const workerEnv = {
      ...env,
      ALLOW_INSECURE_PUSH_ENDPOINTS: 'true',
      NODE_EXTRA_CA_CERTS: peer.caFile,
      // Executor, engine and provider settings can be tried without code changes: AUTOMATION_BATCH_SIZE=… npm run bench -- automations
      ...Object.fromEntries(Object.entries(process.env).filter(([name]) => /^(AUTOMATION|DELIVERY|PUSH|EMAIL)_|^DB_POOL_MAX$/.test(name)) as [string, string][]),
    };
    for (let i = 0; i < 2; i++) workers.push(await startHeraldWorker(ctx.databaseUrl, workerEnv));
    log(`automations: two workers, pids ${workers.map((w) => w.pid).join(', ')}`);
    const cpuNow = async () => ({
      workers: (await Promise.all(workers.map((w) => cpuSecondsOf(w.pid)))).reduce((a, b) => a + b, 0),
      peers: (await cpuSecondsOf(peer.pid)) + (await cpuSecondsOf(sink.pid)),
      bench: await cpuSecondsOf(process.pid),
      postgres: await postgresCpu(pool),
      machine: await machineCpuSeconds(),
    });
    type Cpu = Awaited<ReturnType<typeof cpuNow>>;
    const cpuPerStep = (from: Cpu, to: Cpu, steps: number) => {
      const workersCpu = to.workers - from.workers;
      const peers = to.peers - from.peers;
      const bench = to.bench - from.bench;
      const postgres = postgresCpuUsed(from.postgres, to.postgres);
      const machine = to.machine - from.machine;
      return {
        workersCpuUs: microsPer(workersCpu, steps),
        postgresCpuUs: microsPer(postgres, steps),
        peersCpuUs: microsPer(peers, steps),
        otherCpuUs: microsPer(machine - workersCpu - peers - bench - postgres, steps),
        machineCpuUs: microsPer(machine, steps),
      };
    };
    const counts = async () => {
      const { rows } = await pool.query<{ state: string; count: number }>(
        'SELECT state, count(*)::int AS count FROM automation_enrollments WHERE automation_id = $1 GROUP BY state',
        [flow.id],
      );
      return Object.fromEntries(rows.map((r) => [r.state, r.count])) as Record<string, number>;
    };
    /** Polls (one index probe) until no enrollment is in `states`; returns the seconds since `since`. */
    const settled = async (states: string[], since: number) => {
      for (;;) {
        const { rows } = await pool.query('SELECT 1 FROM automation_enrollments WHERE automation_id = $1 AND state = ANY($2) LIMIT 1', [flow.id, states]);
        if (rows.length === 0) return (performance.now() - since) / 1000;
        if (performance.now() - since > SETTLE_MS) throw new Error(`enrollments still ${JSON.stringify(await counts())}`);
        await sleep(POLL_MS);
      }
    };
    /**
     * Waits until the peer has had a message for every person, then until the channel's deliveries of the project are
     * all recorded; throws on any not sent. The peer is asked, not the table: counting a growing table this often
     * would be the heaviest query of the run.
     */
    const delivered = async (channel: 'push' | 'email', since: number) => {
      const people = async () => (channel === 'push' ? (await peer.stats()).each! : (await sink.stats()).each!).distinct;
      while ((await people()) < n) {
        if (performance.now() - since > SETTLE_MS) throw new Error(`${channel}: ${await people()} of ${n} people reached`);
        await sleep(250);
      }
      const arrived = (performance.now() - since) / 1000;
      for (;;) {
        const { rows } = await pool.query<{ status: string; count: number }>(
          'SELECT status, count(*)::int AS count FROM deliveries WHERE project_id = $1 AND channel = $2 GROUP BY status',
          [setup.projectId, channel],
        );
        const by = Object.fromEntries(rows.map((r) => [r.status, r.count])) as Record<string, number>;
        if (!by.queued && !by.sending) {
          if (by.sent !== n || Object.keys(by).length !== 1) throw new Error(`${channel} deliveries: ${JSON.stringify(by)}`);
          return arrived;
        }
        if (performance.now() - since > SETTLE_MS) throw new Error(`${channel} deliveries still ${JSON.stringify(by)}`);
        await sleep(1000);
      }
    };
    const waits = sampleLockWaits(pool);

    const run = await measure(`automations: step executions/s, push → delay → email, two workers (N=${n})`, { unit: 'steps/s', runs: 1, warmup: 0, target: { kind: 'min', value: TARGET_STEPS_PER_S } }, async () => {
      // Phase 1: every enrollment due at once; each runs its push and enters the delay.
      let cpu = await cpuNow();
      await pool.query('UPDATE automation_enrollments SET due_at = now() WHERE automation_id = $1', [flow.id]);
      let started = performance.now();
      const first = await settled(['active'], started);
      const firstCpu = cpuPerStep(cpu, await cpuNow(), 2 * n);
      const pushedMeanwhile = (await peer.stats()).each!.distinct;
      const afterFirst = await counts();
      if (afterFirst.waiting !== n) throw new Error(`after the first steps: ${JSON.stringify(afterFirst)}`);
      log(`automations: ${n.toLocaleString('en')} pushes written and delays entered in ${tenths(first)} s (${pushedMeanwhile} pushed meanwhile); waiting for the pushes`);
      const pushesOut = await delivered('push', started);
      // Phase 2: the clock advanced past the delay; each completes it and sends its email.
      cpu = await cpuNow();
      await pool.query(`UPDATE automation_enrollments SET due_at = due_at - interval '1 day' WHERE automation_id = $1`, [flow.id]);
      started = performance.now();
      const second = await settled(['active', 'waiting'], started);
      const secondCpu = cpuPerStep(cpu, await cpuNow(), n);
      const emailedMeanwhile = (await sink.stats()).each!.distinct;
      const afterSecond = await counts();
      if (afterSecond.completed !== n) throw new Error(`after the email step: ${JSON.stringify(afterSecond)}`);
      log(`automations: ${n.toLocaleString('en')} delays completed and emails written in ${tenths(second)} s (${emailedMeanwhile} emailed meanwhile); waiting for the emails`);
      const emailsOut = await delivered('email', started);
      return {
        value: (STEPS * n) / (first + second),
        extra: {
          pushPhaseS: tenths(first),
          pushPhaseEnrollmentsPerS: Math.round(n / first),
          emailPhaseS: tenths(second),
          emailPhaseEnrollmentsPerS: Math.round(n / second),
          pushedDuringPhase: pushedMeanwhile,
          allPushedAfterS: tenths(pushesOut),
          emailedDuringPhase: emailedMeanwhile,
          allEmailedAfterS: tenths(emailsOut),
          ...Object.fromEntries(Object.entries(firstCpu).map(([k, v]) => [`push phase ${k}`, v])),
          ...Object.fromEntries(Object.entries(secondCpu).map(([k, v]) => [`email phase ${k}`, v])),
        },
      };
    });
    const lockWaits = await waits.stop();

    // Exactly one push and one email per person, at the peers; every enrollment claimed once per pass.
    const pushes = await peer.stats();
    const emails = await sink.stats();
    const { rows: claims } = await pool.query<{ extra: number; reclaimed: number }>(
      `SELECT (sum(lock_version) - 2 * count(*))::int AS extra, count(*) FILTER (WHERE lock_version > 2)::int AS reclaimed
       FROM automation_enrollments WHERE automation_id = $1`,
      [flow.id],
    );
    const logged = executorWarnings(workers);
    const duplicates = pushes.each!.twice + emails.each!.twice;
    const checks = {
      pushedPeople: pushes.each!.distinct,
      emailedPeople: emails.each!.distinct,
      duplicates,
      extraClaims: claims[0]!.extra,
      takenOver: logged.takenOver,
      fencedWrites: logged.fenced,
      ...lockWaits,
    };
    log(`automations: ${Object.entries(checks).map(([k, v]) => `${k} ${v}`).join(', ')}`);
    if (pushes.each!.distinct !== n || emails.each!.distinct !== n || duplicates !== 0) throw new Error(`at the peers: ${JSON.stringify(checks)}`);
    const contention = await measure('automations: duplicates at the peers (push + email)', { unit: 'people', runs: 1, warmup: 0, target: { kind: 'max', value: 1 } }, async () => ({
      value: duplicates,
      extra: checks,
    }));
    const results = [run, ceiling, ratio('automations ratio (Herald / bare writes)', run, ceiling, 0), contention];
    if (ctx.enrollN > 0) results.push(...(await scheduleCase(ctx, { call, pool, database, workers })));
    const loadAfter = await loadAverage();
    log(`automations: load average ${loadBefore} before, ${loadAfter} after (2 cores; other agents share the machine)`);
    for (const result of results) result.notes = { ...result.notes, loadBefore, loadAfter };
    return results;
  } finally {
    for (const worker of workers) await worker.stop();
    await api?.stop();
    await peer.stop();
    await sink.stop();
    await dns.close();
    await pool.end();
    await database.close();
  }
}

/**
 * The flow's writes with no executor around them: for every enrollment its push message, delivery and two step rows
 * (the push, the delay entered), then the delay completed, its email message and delivery; each batch one transaction,
 * as the executor writes a pass, two connections at once as two workers.
 */
async function bareWrites(db: ReturnType<typeof openDatabase>['db'], projectId: string, automationId: string, enrolled: readonly { id: string; subscriber_id: string }[]) {
  const message = (channel: 'push' | 'email', i: number): MessageRecord =>
    channel === 'push'
      ? { id: `msg_ceilp${i}`, projectId, channel, source: 'automation', campaignId: null, sandbox: false, content: { title: PUSH.title, body: PUSH.body, url: PUSH.clickUrl }, options: { ttlSeconds: DEFAULT_PUSH_TTL_SECONDS, urgency: 'normal' } }
      : { id: `msg_ceile${i}`, projectId, channel, source: 'automation', campaignId: null, sandbox: false, content: { ...EMAIL, html: `${EMAIL.html}<!-- ${i} -->` }, options: {} };
  const run = (e: { id: string }, stepId: string, stepType: string, completed: boolean, outcome: string | null, messageId: string | null): StepRunWrite => ({
    enrollmentId: e.id,
    automationId,
    stepId,
    stepType,
    completed,
    outcome,
    messageId,
  });
  const batches: number[] = [];
  for (let from = 0; from < enrolled.length; from += BATCH) batches.push(from);
  for (const pass of ['push', 'email'] as const) {
    const queue = [...batches];
    const connection = async () => {
      for (let from = queue.shift(); from !== undefined; from = queue.shift()) {
        const batch = enrolled.slice(from, from + BATCH).map((e, k) => ({ e, i: from + k }));
        await db.transaction(async (tx) => {
          if (pass === 'push') {
            await recordStepRuns(tx, batch.flatMap(({ e, i }) => [run(e, 'hello', 'send_push', true, 'sent', `msg_ceilp${i}`), run(e, 'wait', 'delay', false, null, null)]));
            await queueMessages(tx, batch.map(({ e, i }) => ({ message: message('push', i), recipient: { subscriberId: e.subscriber_id, destination: null } })));
          } else {
            await recordStepRuns(tx, batch.flatMap(({ e, i }) => [run(e, 'wait', 'delay', true, 'waited', null), run(e, 'follow-up', 'send_email', true, 'sent', `msg_ceile${i}`)]));
            await queueMessages(tx, batch.map(({ e, i }) => ({ message: message('email', i), recipient: { subscriberId: e.subscriber_id, destination: `flow-${i}@recipients.example.net` } })));
          }
        });
      }
    };
    await Promise.all([connection(), connection()]);
  }
}

/**
 * A schedule trigger matching `enrollN` people: seeded in a project of their own over six zones (and none), a cron
 * firing every minute in every zone, enrolled by the worker's minute tick in one INSERT … SELECT. Timed from the
 * statement's transaction start (the rows' enrolled_at) to its commit seen here; peak RSS of the workers meanwhile.
 * Its flow waits a day first, and it is paused once enrolled, so the executors do not run a million enrollments here.
 */
async function scheduleCase(
  ctx: AutomationsContext,
  { call, pool, database, workers }: { call: <T>(method: string, path: string, body?: unknown) => Promise<T>; pool: pg.Pool; database: ReturnType<typeof openDatabase>; workers: WorkerProcess[] },
): Promise<CaseResult[]> {
  const n = ctx.enrollN;
  const project = await call<{ id: string }>('POST', '/projects', { name: 'Bench schedule' });
  log(`automations: seeding ${n.toLocaleString('en')} subscribers for the schedule trigger`);
  const chunk = 100_000;
  const tag = runTag();
  for (let from = 1; from <= n; from += chunk) {
    await pool.query(
      `INSERT INTO subscribers (id, project_id, token, timezone)
       SELECT 'sub_as' || $4 || lpad(g::text, 8, '0'), $1, 'st_as' || $4 || g,
              (array['America/New_York','Europe/Berlin','Europe/London','Asia/Kolkata','America/Sao_Paulo','Asia/Tokyo', null])[1 + g % 7]
       FROM generate_series($2::int, $3::int) g`,
      [project.id, from, Math.min(n, from + chunk - 1), tag],
    );
  }
  await pool.query('CHECKPOINT');
  await pool.query('VACUUM (ANALYZE) subscribers');
  const automation = await call<{ id: string }>('POST', '/automations', {
    projectId: project.id,
    name: 'Bench schedule',
    trigger: { type: 'schedule', cron: '* * * * *' },
    steps: [
      { id: 'wait', type: 'delay', duration: '1d', next: 'hello' },
      { id: 'hello', type: 'send_push', content: PUSH, next: null },
    ],
  });
  await call('POST', `/automations/${automation.id}/activate`);
  log('automations: schedule trigger active; the workers\' minute tick enrolls (its first tick only opens the window)');
  const rss = workers.map(() => 0);
  const sampler = setInterval(() => {
    workers.forEach((w, i) => void memoryOf(w.pid).then((m) => (rss[i] = Math.max(rss[i]!, m?.rssMb ?? 0))));
  }, 20);
  const idleRss = (await Promise.all(workers.map((w) => memoryOf(w.pid)))).map((m) => Math.round(m?.rssMb ?? 0));
  let timing: { seconds: number; enrolled: number };
  try {
    const deadline = Date.now() + 4 * 60_000;
    for (;;) {
      const { rows } = await pool.query<{ enrolled_at: Date; seen: Date }>(
        'SELECT enrolled_at, clock_timestamp() AS seen FROM automation_enrollments WHERE automation_id = $1 LIMIT 1',
        [automation.id],
      );
      if (rows[0]) {
        await call('POST', `/automations/${automation.id}/pause`);
        const { rows: count } = await pool.query<{ count: number }>('SELECT count(*)::int AS count FROM automation_enrollments WHERE automation_id = $1', [automation.id]);
        timing = { seconds: (rows[0].seen.getTime() - rows[0].enrolled_at.getTime()) / 1000, enrolled: count[0]!.count };
        break;
      }
      if (Date.now() > deadline) throw new Error('the schedule trigger enrolled nobody within 4 minutes');
      await sleep(50);
    }
  } finally {
    clearInterval(sampler);
  }
  if (timing.enrolled !== n) throw new Error(`the schedule trigger enrolled ${timing.enrolled} of ${n}`);
  const { rows: ran } = await pool.query<{ count: number }>(`SELECT count(*)::int AS count FROM automation_enrollments WHERE automation_id = $1 AND state <> 'active'`, [
    automation.id,
  ]);
  const { rows: spread } = await pool.query<{ first: number; last: number }>(
    `SELECT extract(epoch FROM min(due_at) - min(enrolled_at))::float8 AS first, extract(epoch FROM max(due_at) - min(enrolled_at))::float8 AS last
     FROM automation_enrollments WHERE automation_id = $1`,
    [automation.id],
  );
  log(`automations: ${n.toLocaleString('en')} enrolled in ${tenths(timing.seconds)} s, due ${tenths(spread[0]!.first)}–${tenths(spread[0]!.last)} s after; ${ran[0]!.count} run before the pause`);
  const enrollment = await measure(`automations: schedule trigger enrolls ${n} (one INSERT … SELECT)`, { unit: 's', runs: 1, warmup: 0 }, async () => ({
    value: timing.seconds,
    peakRssMb: Math.max(...rss),
    extra: { enrolled: timing.enrolled, perSecond: Math.round(timing.enrolled / timing.seconds), idleRssMb: idleRss.join(' / '), runBeforePause: ran[0]!.count, dueFromS: tenths(spread[0]!.first), dueToS: tenths(spread[0]!.last) },
  }));
  // A claim that finds nothing runnable once the paused million are all due: what every idle poll of every worker costs.
  await pool.query(`UPDATE automation_enrollments SET due_at = now() WHERE automation_id = $1 AND due_at > now()`, [automation.id]);
  await pool.query('VACUUM (ANALYZE) automation_enrollments');
  const claim = await measure(`automations: idle claim beside ${n} paused due enrollments`, { unit: 'ms', runs: 5, warmup: 1 }, async () => {
    const started = performance.now();
    const claimed = await claimDue(database.db, 'exe_bench', BATCH, 300);
    if (claimed.length > 0) throw new Error(`the claim took ${claimed.length} enrollments of a paused automation`);
    return { value: performance.now() - started };
  });
  return [enrollment, claim];
}

/** Warnings the executors logged: enrollments taken over after an expired lock, and passes' writes fenced off. */
function executorWarnings(workers: readonly WorkerProcess[]) {
  let takenOver = 0;
  let fenced = 0;
  for (const line of workers.flatMap((w) => w.output().split('\n'))) {
    if (!line.startsWith('{')) continue;
    const entry = JSON.parse(line) as { takenOver?: number; fenced?: number };
    takenOver += entry.takenOver ?? 0;
    fenced += entry.fenced ?? 0;
  }
  return { takenOver, fenced };
}

/**
 * Samples the workers' database sessions every 100 ms while the flow runs: how often one waited on a lock (a claim
 * blocked behind another's rows, or a write behind a claim), and how often one was claiming.
 */
function sampleLockWaits(pool: pg.Pool) {
  let samples = 0;
  let lockWaits = 0;
  let claiming = 0;
  let stopped = false;
  const done = (async () => {
    while (!stopped) {
      const { rows } = await pool.query<{ waiting: number; claiming: number }>(
        `SELECT count(*) FILTER (WHERE wait_event_type = 'Lock')::int AS waiting, count(*) FILTER (WHERE query LIKE '%automation_enrollments%SKIP LOCKED%')::int AS claiming
         FROM pg_stat_activity WHERE application_name = $1 AND state = 'active'`,
        [WORKER_NAME],
      );
      samples++;
      lockWaits += rows[0]!.waiting;
      claiming += rows[0]!.claiming;
      await sleep(100);
    }
  })();
  return {
    async stop() {
      stopped = true;
      await done;
      return { activitySamples: samples, sessionsWaitingOnLocks: lockWaits, sessionsClaiming: claiming };
    },
  };
}

async function loadAverage(): Promise<string> {
  return (await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ');
}
