// An email campaign to 1,000,000 recipients: POST /email-campaigns through the API, a worker process rendering each
// recipient's merge tags, wrapping its links and DKIM-signing it to the local SMTP sink; the cost per message apart.
import { generateKeyPairSync } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import type { EmailContent } from '../../server/src/db/schema.js';
import { personalizeEmail, recipientVariables, renderEmail } from '../../server/src/delivery/channels/email/email-render.js';
import { composeSigned, DKIM_SIGNED_HEADERS, type DkimKey } from '../../server/src/delivery/channels/email/mail-composition.js';
import { createEmailLinks } from '../../server/src/delivery/index.js';
import type { WorkerProcess } from '../../server/test/worker-processes.js';
import { log, measure, microsPer, ratio, tenths, type CaseResult, type Measurement } from '../lib/harness.js';
import { cpuSecondsOf, machineCpuSeconds, peakRssDuring, postgresCpu, postgresCpuUsed, startHeraldWorker, type Child, type SmtpSink } from '../lib/process.js';
import { JWT_SECRET, PUBLIC_URL } from '../lib/push-bench.js';

export interface EmailCampaignContext {
  databaseUrl: string;
  api: Child;
  /** The email project the transactional case set up (verified domain, the sink as its SMTP server), and its live key. */
  projectId: string;
  key: string;
  sink: SmtpSink;
  pool: pg.Pool;
  /** Recipients (BENCH_EMAIL_CAMPAIGN_N, 1,000,000); 0 skips the case. */
  n: number;
  /**
   * Emails timed once sending is under way (BENCH_EMAIL_CAMPAIGN_SEND): the campaign is then cancelled. At n it runs
   * to the end (at a few hundred emails a second on this machine, about an hour for a million).
   */
  measured: number;
  /** Bare nodemailer's run of the same HTML, for the ratio. */
  baseline: CaseResult;
  /** The worker's settings beyond the bench's own: DNS_SERVERS, EMAIL_*, DELIVERY_* … */
  workerEnv: Record<string, string>;
  subject: string;
  html: string;
  from: { email: string; name: string };
  bounceDomain: string;
  renderN: number;
  runs: number;
}

/** The issue's targets: at least 0.7 of bare nodemailer's emails/s; the worker under 300 MB. */
const RATIO_TARGET = 0.7;
const RSS_TARGET_MB = 300;
/** Sent before the clock starts: the pools are open and the engine's batches flowing. */
const RAMP = 2_000;
const SINK_POLL_MS = 25;
const TAG = 'bench-readers';


/** Subscribers 1…n of the project, each with an address and the attributes the content's merge tags name. Set-based. */
async function seedReaders(pool: pg.Pool, projectId: string, n: number): Promise<void> {
  const chunk = 100_000;
  for (let from = 1; from <= n; from += chunk) {
    await pool.query(
      `INSERT INTO subscribers (id, project_id, token, email, tags, attributes)
       SELECT 'sub_er' || lpad(g::text, 8, '0'), $1, 'st_er' || g, 'reader-' || g || '@recipients.example.net', ARRAY[$4],
              jsonb_build_object('name', 'Reader ' || g, 'order', '#ER-' || (100000 + g))
       FROM generate_series($2::int, $3::int) g`,
      [projectId, from, Math.min(n, from + chunk - 1), TAG],
    );
  }
  await pool.query('VACUUM (ANALYZE) subscribers');
  await pool.query('CHECKPOINT');
}

export async function emailCampaignCases(ctx: EmailCampaignContext): Promise<CaseResult[]> {
  if (ctx.n === 0) return [];
  const { n, pool, sink } = ctx;
  const measured = Math.min(Math.max(1, ctx.measured), n - RAMP);
  log(`email campaign: seeding ${n.toLocaleString('en')} email subscribers`);
  await seedReaders(pool, ctx.projectId, n);
  let worker: WorkerProcess | undefined;
  try {
    worker = await startHeraldWorker(ctx.databaseUrl, { JWT_SECRET, PUBLIC_URL, LOG_LEVEL: 'warn', ...ctx.workerEnv });
    const engine = worker;
    log(`email campaign: worker pid ${engine.pid}; ${measured.toLocaleString('en')} emails timed after the first ${RAMP.toLocaleString('en')}`);
    const api = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
      const res = await fetch(`${ctx.api.url}${path}`, {
        method,
        headers: { 'x-api-key': ctx.key, ...(body !== undefined && { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
      return (await res.json()) as T;
    };
    const sinkCount = async () => (await sink.stats()).messages;
    /** Resolves when the sink has accepted `count` messages, with the time it saw that. */
    const sinkReaches = async (count: number) => {
      while ((await sinkCount()) < count) await sleep(SINK_POLL_MS);
      return performance.now();
    };
    const cpuNow = async () => ({
      worker: await cpuSecondsOf(engine.pid),
      sink: await cpuSecondsOf(sink.pid),
      postgres: await postgresCpu(pool),
      machine: await machineCpuSeconds(),
    });

    type Campaign = { id: string; status: string; stats: { totalTargeted: number; sent: number; failed: number; suppressed: number } };
    const endToEnd = await measure(
      `email campaign: emails/s, worker → SMTP, DKIM, per-recipient merge tags (N=${n})`,
      { unit: 'msgs/s', runs: 1, warmup: 0, rssTargetMb: RSS_TARGET_MB },
      async (): Promise<Measurement> => {
        await api('GET', `/email-campaigns/project/${ctx.projectId}`); // the key looked up and cached, the connection open
        const before = await sinkCount();
        const { result, peakRssMb } = await peakRssDuring(engine.pid, async () => {
          const started = performance.now();
          const created = await api<Campaign>('POST', '/email-campaigns', {
            projectId: ctx.projectId,
            name: `Bench campaign of ${n}`,
            content: { subject: ctx.subject, html: ctx.html, from: ctx.from },
            segment: { filters: { tags: [TAG] } },
            schedule: { mode: 'immediate' },
            utm: { source: 'herald', medium: 'email', campaign: 'bench' },
          });
          const postMs = performance.now() - started;
          log(`email campaign: created ${created.id} in ${Math.round(postMs)} ms, ${created.status}`);
          const firstAt = await sinkReaches(before + 1);
          log(`email campaign: first email at the sink ${Math.round(firstAt - started)} ms after the POST`);
          const windowStart = await sinkReaches(before + RAMP);
          const cpuStart = await cpuNow();
          const windowEnd = await sinkReaches(before + RAMP + measured);
          const cpuEnd = await cpuNow();
          return { created, started, postMs, firstAt, windowStart, windowEnd, cpuStart, cpuEnd };
        });
        const { created, started, postMs, firstAt, windowStart, windowEnd, cpuStart, cpuEnd } = result;

        // The rest cancelled (or all sent); then every email the sink took is exactly one delivery recorded sent.
        let campaign = await api<Campaign>('GET', `/email-campaigns/${created.id}`);
        if (campaign.status === 'sending') campaign = await api<Campaign>('POST', `/email-campaigns/${created.id}/cancel`);
        const settled = Date.now() + 180_000;
        let recorded = 0;
        for (;;) {
          const { rows } = await pool.query<{ sent: number; open: number }>(
            `SELECT count(*) FILTER (WHERE d.status = 'sent')::int AS sent, count(*) FILTER (WHERE d.status IN ('queued', 'sending'))::int AS open
             FROM deliveries d JOIN campaigns c ON c.message_id = d.message_id WHERE c.id = $1`,
            [created.id],
          );
          recorded = rows[0]!.sent;
          if (rows[0]!.open === 0 && (await sinkCount()) - before === recorded) break;
          if (Date.now() > settled) throw new Error(`after cancelling: ${rows[0]!.open} deliveries open, ${recorded} sent, the sink took ${(await sinkCount()) - before}`);
          await sleep(200);
        }
        if (campaign.stats.totalTargeted !== n) throw new Error(`the campaign targeted ${campaign.stats.totalTargeted} of ${n}`);
        const seconds = (windowEnd - windowStart) / 1000;
        const machine = cpuEnd.machine - cpuStart.machine;
        const worker = cpuEnd.worker - cpuStart.worker;
        const sinkCpu = cpuEnd.sink - cpuStart.sink;
        const postgres = postgresCpuUsed(cpuStart.postgres, cpuEnd.postgres);
        return {
          value: measured / seconds,
          peakRssMb,
          extra: {
            recipients: n,
            postMs: tenths(postMs),
            firstEmailMs: Math.round(firstAt - started),
            timed: measured,
            seconds: tenths(seconds),
            sentThenCancelled: recorded,
            workerCpuUs: microsPer(worker, measured),
            postgresCpuUs: microsPer(postgres, measured),
            sinkCpuUs: microsPer(sinkCpu, measured),
            otherCpuUs: microsPer(machine - worker - sinkCpu - postgres, measured),
            machineCpuUs: microsPer(machine, measured),
          },
        };
      },
    );
    const notes = endToEnd.notes!;
    log(`email campaign: ${Object.entries(notes).map(([k, v]) => `${k} ${v}`).join(', ')}`);
    const post = await measure(`email campaign: POST /email-campaigns latency (N=${n})`, { unit: 'ms', runs: 1, warmup: 0 }, async () => ({
      value: Number(notes.postMs),
    }));
    const first = await measure(`email campaign: POST → first email at the sink (N=${n})`, { unit: 'ms', runs: 1, warmup: 0 }, async () => ({
      value: Number(notes.firstEmailMs),
    }));
    return [post, first, endToEnd, ratio('email campaign ratio (Herald / bare nodemailer)', endToEnd, ctx.baseline, RATIO_TARGET), await perMessageCase(ctx)];
  } finally {
    await worker?.stop();
  }
}

/**
 * What one campaign email costs the worker, in this process, step by step as the email adapter and SMTP provider do
 * it: the recipient's merge tags (liquid, and the plain part from the HTML), links wrapped with UTM and signed
 * tracking URLs plus pixel, footer and headers, then composition and the RSA-2048 DKIM signature. One thread, no I/O.
 */
async function perMessageCase(ctx: EmailCampaignContext): Promise<CaseResult> {
  const context = { links: createEmailLinks(PUBLIC_URL, { current: JWT_SECRET, previous: [] }), bounceDomain: ctx.bounceDomain };
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048, privateKeyEncoding: { type: 'pkcs8', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } });
  const dkim: DkimKey = { domainName: ctx.from.email.split('@')[1]!, keySelector: 'bench', privateKey };
  const content: EmailContent = { subject: ctx.subject, html: ctx.html, from: ctx.from };
  const count = ctx.renderN;
  return measure(`email campaign: CPU per message, render + wrap + sign (N=${count})`, { unit: 'µs CPU/msg', runs: ctx.runs }, async (run) => {
    // CPU time, not wall time: composition awaits nodemailer's streams, and other processes share the cores.
    let personalizeUs = 0;
    let wrapUs = 0;
    let signUs = 0;
    const cpuUs = () => {
      const { user, system } = process.cpuUsage();
      return user + system;
    };
    for (let i = 0; i < count; i++) {
      const g = (run + 1) * count + i + 1;
      const address = `reader-${g}@recipients.example.net`;
      let t = cpuUs();
      const personalized = personalizeEmail(content, recipientVariables(address, fieldsOf(g)));
      if ('refusal' in personalized) throw new Error(`personalize: ${personalized.refusal}`);
      personalizeUs += cpuUs() - t;
      t = cpuUs();
      const email = renderEmail(personalized.content, { deliveryId: g, projectId: 'prj_bench', source: 'campaign', messageId: 'msg_bench', campaignId: 'cmp_bench', subscriberId: `sub_er${g}`, address }, context);
      wrapUs += cpuUs() - t;
      t = cpuUs();
      await composeSigned(email, dkim, DKIM_SIGNED_HEADERS);
      signUs += cpuUs() - t;
    }
    const perMessage = (total: number) => Math.round((total * 10) / count) / 10;
    return {
      value: perMessage(personalizeUs + wrapUs + signUs),
      extra: { personalizeUs: perMessage(personalizeUs), wrapUs: perMessage(wrapUs), composeAndSignUs: perMessage(signUs) },
    };
  });
}

const fieldsOf = (g: number) => ({
  attributes: { name: `Reader ${g}`, order: `#ER-${100000 + g}` },
  externalId: null,
  country: null,
  city: null,
  language: null,
  timezone: null,
});
