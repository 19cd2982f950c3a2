// Transactional SMS: POST /transactional/sms through the API and workers to a local Twilio at the sender's rate; then
// 100,000 queued SMS over many senders, sent by two workers, each sender's rate checked at Twilio's side.
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { openDatabase } from '../../server/src/db/database.js';
import { announceDeliveries } from '../../server/src/delivery/delivery-notifications.js';
import { insertMessage, insertMessageStats } from '../../server/src/delivery/delivery.repository.js';
import { newId } from '../../server/src/shared/ids.js';
import { newTwilioAccount } from '../../server/test/twilio-peer.js';
import type { WorkerProcess } from '../../server/test/worker-processes.js';
import { loadTest, log, measure, tenths, type CaseResult } from '../lib/harness.js';
import { startHerald, startHeraldWorker, startTwilioSink, type Child } from '../lib/process.js';
import { JWT_SECRET, PUBLIC_URL } from '../lib/push-bench.js';

export interface SmsContext {
  databaseUrl: string;
  owner: { email: string; password: string };
  runs: number;
  /** Requests a run (BENCH_SMS_N) from this many connections (BENCH_SMS_CONNECTIONS). */
  n: number;
  connections: number;
  /** The API case's sender: one US number at this rate (BENCH_SMS_RATE, per second). */
  rate: number;
  /** The lane case: SMS queued (BENCH_SMS_LANE_N, 100,000; 0 skips it) over this many senders (BENCH_SMS_SENDERS) at this rate each (BENCH_SMS_SENDER_RATE). */
  laneN: number;
  senders: number;
  senderRate: number;
}

const WARMUP_N = 200;
const SETTLE_MS = 15 * 60_000;
const MESSAGE = 'Your code is 482913. It expires in 10 minutes.';

/** A valid US number per request (exchanges start at 2). */
const number = (base: number, i: number) => `+1415${2_000_000 + base + i}`;

export async function smsCases(ctx: SmsContext): Promise<CaseResult[]> {
  const account = newTwilioAccount();
  const peer = await startTwilioSink(account);
  const pool = new pg.Pool({ connectionString: ctx.databaseUrl, max: 2 });
  const database = openDatabase(ctx.databaseUrl, 2);
  const env = { TWILIO_BASE_URL: peer.url, PUBLIC_URL, JWT_SECRET, LOG_LEVEL: 'warn' };
  let api: Child | undefined;
  const workers: WorkerProcess[] = [];
  try {
    api = await startHerald({ DATABASE_URL: ctx.databaseUrl, ...env, RATE_LIMIT_TRANSACTIONAL: '100000000', RATE_LIMIT_DEFAULT: '100000000' });
    const server = api;
    const call = async <T>(method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<T> => {
      const res = await fetch(`${server.url}${path}`, { method, headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body ?? {}) });
      if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
      return (await res.json()) as T;
    };
    // Set up as an owner would: a project, a live key, the Twilio account, a US number at the rate.
    const login = await call<{ access_token: string; user: { organizations: { id: string }[] } }>('POST', '/auth/login', {}, ctx.owner);
    const jwt = { authorization: `Bearer ${login.access_token}`, 'x-org-id': login.user.organizations[0]!.id };
    const project = await call<{ id: string }>('POST', '/projects', jwt, { name: 'Bench SMS' });
    const { key } = await call<{ key: string }>('POST', `/projects/${project.id}/api-keys`, jwt, { name: 'bench', mode: 'live' });
    await call('PUT', `/projects/${project.id}/channels/sms`, jwt, { provider: 'twilio', settings: { accountSid: account.accountSid }, credentials: { authToken: account.authToken } });
    const apiSender = '+14155550100';
    await call('POST', `/projects/${project.id}/channels/sms/senders`, jwt, { country: 'US', kind: 'long_code', sender: apiSender, ratePerSecond: ctx.rate });
    // Two workers send what the API leaves queued, and the lane case's SMS.
    const delivery = Object.fromEntries(Object.entries(process.env).filter(([name]) => /^DELIVERY_/.test(name)) as [string, string][]);
    for (let i = 0; i < 2; i++) workers.push(await startHeraldWorker(ctx.databaseUrl, { ...env, ...delivery }));
    log(`sms: API pid ${server.pid}, workers ${workers.map((w) => w.pid).join(', ')}, local Twilio ${peer.url}; one US number at ${ctx.rate}/s`);

    const sentTo = async (count: number) => {
      const deadline = Date.now() + SETTLE_MS;
      for (let received = await peer.count(); received < count; received = await peer.count()) {
        if (Date.now() > deadline) throw new Error(`Twilio received ${received} of ${count} SMS`);
        await sleep(100);
      }
    };
    let base = 0;
    const p99s: number[] = [];
    const accepted = await measure(`sms: POST /transactional/sms accepted, 1 number at ${ctx.rate}/s (N=${ctx.n})`, { unit: 'req/s', runs: ctx.runs }, async (run) => {
      const count = run < 0 ? WARMUP_N : ctx.n;
      const from = await peer.count();
      const first = base;
      base += count;
      let sequence = 0;
      const statuses: Record<string, number> = {};
      const started = performance.now();
      const result = await loadTest({
        url: server.url,
        connections: ctx.connections,
        amount: count,
        requests: [
          {
            method: 'POST',
            path: '/transactional/sms',
            headers: { 'content-type': 'application/json', 'x-api-key': key },
            setupRequest: (request) => ({ ...request, body: JSON.stringify({ to: number(first, sequence++), message: MESSAGE }) }),
            onResponse: (status, body) => {
              const answer = status === 200 ? (/"status":"(\w+)"/.exec(body)?.[1] ?? 'unreadable') : `http_${status}`;
              statuses[answer] = (statuses[answer] ?? 0) + 1;
            },
          },
        ],
      });
      const seconds = (result.lastResponseAt - started) / 1000;
      if ((statuses.sent ?? 0) + (statuses.queued ?? 0) !== count) throw new Error(`POST /transactional/sms: ${JSON.stringify(statuses)}`);
      // Every request reaches Twilio once, at the number's rate.
      await sentTo(from + count);
      const drained = (performance.now() - started) / 1000;
      await sleep(1000);
      const bursts = await peer.stats(from);
      if (bursts.count !== count) throw new Error(`Twilio received ${bursts.count} SMS for ${count} requests`);
      if (run >= 0) p99s.push(result.latency.p99);
      return {
        value: count / seconds,
        extra: { ...statuses, seconds: tenths(seconds), p50ms: result.latency.p50, p99ms: result.latency.p99, allAtTwilioS: tenths(drained), twilioPerS: tenths(count / drained), maxInOneSecond: bursts.maxPerSecond },
      };
    });
    const latency = await measure(`sms: POST /transactional/sms p99 at ${ctx.connections} connections`, { unit: 'ms', runs: p99s.length, warmup: 0 }, async (run) => ({ value: p99s[run]! }));
    const results = [accepted, latency];

    if (ctx.laneN > 0) {
      // Queued SMS as a burst of sends leaves them: one message per sender, its deliveries due now, two workers.
      const { n, senders, senderRate } = { n: ctx.laneN, senders: ctx.senders, senderRate: ctx.senderRate };
      const from = await peer.count();
      const perSender = Math.ceil(n / senders);
      for (let s = 0; s < senders; s++) {
        const messageId = newId('msg');
        const count = Math.min(perSender, n - s * perSender);
        await insertMessage(database.db, {
          id: messageId,
          projectId: project.id,
          channel: 'sms',
          source: 'transactional',
          campaignId: null,
          sandbox: false,
          content: { body: MESSAGE },
          options: { from: `+1628555${String(s).padStart(4, '0')}`, ratePerSecond: senderRate },
        });
        await insertMessageStats(database.db, messageId);
        await pool.query(
          `WITH s AS (
             INSERT INTO subscribers (id, project_id, token, phone)
             SELECT 'sub_sl' || $3::int || '_' || g, $1, 'st_sl' || $3::int || '_' || g, '+1212' || (2000000 + $3::int * 100000 + g)
             FROM generate_series(1, $4::int) g RETURNING id, phone)
           INSERT INTO deliveries (project_id, message_id, subscriber_id, channel, destination) SELECT $1, $2, s.id, 'sms', s.phone FROM s`,
          [project.id, messageId, s, count],
        );
        await pool.query('UPDATE message_stats SET queued = $2 WHERE message_id = $1', [messageId, count]);
      }
      log(`sms: ${n.toLocaleString('en')} SMS queued over ${senders} senders at ${senderRate}/s each; two workers send them`);
      const lane = await measure(`sms: ${n} queued over ${senders} senders × ${senderRate}/s, two workers`, { unit: 'SMS/s', runs: 1, warmup: 0 }, async () => {
        const started = performance.now();
        await announceDeliveries(database.db);
        await sentTo(from + n);
        const seconds = (performance.now() - started) / 1000;
        await sleep(2000);
        const bursts = await peer.stats(from, senderRate);
        if (bursts.count !== n) throw new Error(`Twilio received ${bursts.count} SMS for ${n} queued`);
        if (bursts.refusals > 0) throw new Error(`Twilio refused ${bursts.refusals} requests`);
        if (bursts.senders !== senders) throw new Error(`${bursts.senders} senders reached Twilio of ${senders}`);
        return {
          value: n / seconds,
          extra: {
            seconds: tenths(seconds),
            configuredPerS: senders * senderRate,
            ofConfigured: Math.round((n / seconds / (senders * senderRate)) * 1000) / 1000,
            maxOneSenderInOneSecond: bursts.maxPerSecond,
            senderRate,
            minGapMs: bursts.minGapMs,
            overRate: bursts.overRate,
          },
        };
      });
      const held = Number(lane.notes!.maxOneSenderInOneSecond);
      log(`sms: busiest second of any sender ${held} (rate ${senderRate}/s); ${Object.entries(lane.notes!).map(([k, v]) => `${k} ${v}`).join(', ')}`);
      if (held > senderRate) throw new Error(`a sender sent ${held} SMS within one second, over its rate of ${senderRate}`);
      results.push(lane);
    }
    return results;
  } finally {
    for (const worker of workers) await worker.stop();
    await api?.stop();
    await peer.stop();
    await pool.end();
    await database.close();
  }
}
