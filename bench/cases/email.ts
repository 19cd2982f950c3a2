// Transactional email: POST /transactional/email to a local SMTP sink against bare nodemailer with DKIM and the in-run
// ceiling (the same sends with the database writes of a durable send); API p99; render cost.
import { generateKeyPairSync } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import nodemailer from 'nodemailer';
import pg from 'pg';
import { loadConfig } from '../../server/src/config.js';
import { openDatabase } from '../../server/src/db/database.js';
import type { EmailContent } from '../../server/src/db/schema.js';
import { renderEmail, type EmailRecipient } from '../../server/src/delivery/channels/email/email-render.js';
import { DKIM_SIGNED_HEADERS } from '../../server/src/delivery/channels/email/mail-composition.js';
import { createEmailLinks } from '../../server/src/delivery/index.js';
import { EmailTemplateService } from '../../server/src/modules/email-templates/index.js';
import { parseTemplate, renderTemplate } from '../../server/src/shared/merge-tags.js';
import { htmlToPlainText, plainTextOf } from '../../server/src/shared/plain-text.js';
import { startDnsServer, type DnsServer } from '../../server/test/dns-server.js';
import { emailCampaignCases } from './email-campaign.js';
import { GroupCommit } from '../../server/src/shared/group-commit.js';
import { loadTest, log, measure, measureInTurns, microsPer, ratio, tenths, type CaseResult, type Measurement, type TurnCase } from '../lib/harness.js';
import {
  cpuSecondsOf,
  machineCpuSeconds,
  peakRssDuring,
  postgresCpu,
  postgresCpuUsed,
  startHerald,
  startSmtpSink,
  type Child,
  type SmtpSink,
  type SmtpSinkStats,
} from '../lib/process.js';
import { JWT_SECRET, PUBLIC_URL } from '../lib/push-bench.js';

export interface EmailContext {
  databaseUrl: string;
  /** The bench organization's owner: the project, its key and its email provider are set up through the API as theirs. */
  owner: { email: string; password: string };
  runs: number;
  /** Messages per run, for Herald and for the baseline (BENCH_EMAIL_N). */
  n: number;
  /** Concurrent API requests, and the baseline's sends in flight (BENCH_EMAIL_CONNECTIONS). */
  connections: number;
  /** Messages rendered in-process for the render cost (BENCH_EMAIL_RENDER_N). */
  renderN: number;
  /** The campaign case's audience and emails timed (BENCH_EMAIL_CAMPAIGN_N, BENCH_EMAIL_CAMPAIGN_SEND): bench/cases/email-campaign.ts. */
  campaignN: number;
  campaignSend: number;
}

/** The issue's target: Herald's throughput at least 0.7 of bare nodemailer's, both signing with DKIM. */
const RATIO_TARGET = 0.7;
const WARMUP_N = 500;
/** Requests from one connection for the latency of a send that waits behind no other. */
const UNLOADED_N = 300;
/** The sink DKIM-verifies one message in this many, Herald's and the baseline's alike. */
const SAMPLE_EVERY = 500;
const DOMAIN = 'bench-shop.example';
const BASELINE_DOMAIN = 'bench-baseline.example';
const BASELINE_SELECTOR = 'bench';
const BOUNCE_DOMAIN = 'bounces.herald.example';
const APPLICATION_NAME = 'herald-bench-email';

const SUBJECT = 'Your order {{ order }} is confirmed';
const ITEMS = ['Linen shirt', 'Canvas tote', 'Wool socks', 'Leather belt', 'Rain jacket', 'Cotton scarf', 'Denim cap', 'Travel mug'];
/** An order confirmation as a shop sends it: a table layout, ~8 KB, nine links, the recipient's name and order number. */
const HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>Order confirmed</title></head>
<body style="margin:0;padding:0;background:#f4f4f5;font-family:Helvetica,Arial,sans-serif;color:#18181b">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="background:#f4f4f5"><tr><td align="center" style="padding:24px">
<table role="presentation" width="600" cellpadding="0" cellspacing="0" style="background:#ffffff;border-radius:8px">
<tr><td style="padding:24px 32px"><a href="https://shop.example.com/?utm_source=email&amp;utm_campaign=order"><img src="https://shop.example.com/logo.png" width="120" alt="Bench Shop"></a></td></tr>
<tr><td style="padding:0 32px"><h1 style="font-size:22px;margin:0 0 12px">Thanks, {{ name }}!</h1>
<p style="font-size:15px;line-height:22px;margin:0 0 16px">We have received your order <strong>{{ order }}</strong> and are getting it ready. You will get another email with the tracking number as soon as it ships, usually within one business day.</p></td></tr>
${ITEMS.map(
  (item, i) => `<tr><td style="padding:8px 32px;border-top:1px solid #e4e4e7"><table role="presentation" width="100%"><tr>
<td width="64"><img src="https://shop.example.com/images/item-${i + 1}.jpg" width="56" height="56" alt="${item}" style="border-radius:4px"></td>
<td style="font-size:14px;line-height:20px"><a href="https://shop.example.com/products/item-${i + 1}?utm_source=email&amp;utm_campaign=order" style="color:#18181b;text-decoration:none">${item}</a><br><span style="color:#71717a">Size M · Colour natural · Quantity 1</span></td>
<td align="right" style="font-size:14px">$${(19 + i * 7).toFixed(2)}</td></tr></table></td></tr>`,
).join('\n')}
<tr><td style="padding:16px 32px;border-top:1px solid #e4e4e7;font-size:15px"><strong>Total: $255.00</strong> · paid with card ending 4242</td></tr>
<tr><td style="padding:8px 32px 24px"><a href="https://shop.example.com/account/orders?utm_source=email&amp;utm_campaign=order" style="display:inline-block;background:#18181b;color:#ffffff;padding:12px 20px;border-radius:6px;text-decoration:none;font-size:15px">View your order</a></td></tr>
<tr><td style="padding:16px 32px;background:#fafafa;font-size:12px;line-height:18px;color:#71717a">Bench Shop Ltd · 1 Example Street · Springfield. Questions? Reply to this email or write to help@bench-shop.example; we answer within a day. Returns are free within 30 days of delivery.</td></tr>
</table></td></tr></table>
</body></html>`;


/** The recipient of message i of a run: a distinct address each, as a shop's customers are. */
const recipient = (tag: string, i: number) => ({ to: `customer-${tag}-${i}@recipients.example.net`, name: `Customer ${i}`, order: `#${tag.toUpperCase()}-${100000 + i}` });

export interface Setup {
  projectId: string;
  key: string;
  /** The owner's dashboard headers (JWT and organization). */
  jwt: Record<string, string>;
}

/** The organization's owner sets up an email project through the API: a live key, a verified sending domain, the sink as SMTP server. */
export async function setUpEmailProject(
  herald: Child,
  owner: EmailContext['owner'],
  dns: DnsServer,
  sink: SmtpSink,
  { name, domain: sendingDomain }: { name: string; domain: string } = { name: 'Bench email', domain: DOMAIN },
): Promise<Setup> {
  const call = async <T>(method: string, path: string, headers: Record<string, string>, body: unknown): Promise<T> => {
    const res = await fetch(`${herald.url}${path}`, { method, headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  };
  const login = await call<{ access_token: string; user: { organizations: { id: string }[] } }>('POST', '/auth/login', {}, owner);
  const jwt = { authorization: `Bearer ${login.access_token}`, 'x-org-id': login.user.organizations[0]!.id };
  const project = await call<{ id: string }>('POST', '/projects', jwt, { name });
  const { key } = await call<{ key: string }>('POST', `/projects/${project.id}/api-keys`, jwt, { name: 'bench', mode: 'live' });
  const apiKey = { 'x-api-key': key };
  type Domain = { id: string; status: string; records: { name: string; value: string; checked: boolean }[] };
  const domain = await call<Domain>('POST', `/projects/${project.id}/email-domains`, apiKey, { domain: sendingDomain });
  for (const record of domain.records) if (record.checked) dns.setTxt(record.name, record.value);
  const verified = await call<Domain>('POST', `/projects/${project.id}/email-domains/${domain.id}/verify`, apiKey, {});
  if (verified.status !== 'verified') throw new Error(`${sendingDomain} is ${verified.status} after publishing its records: ${JSON.stringify(verified)}`);
  await call('PUT', `/projects/${project.id}/channels/email`, jwt, { provider: 'smtp', settings: { host: sink.host, port: sink.port, secure: false } });
  return { projectId: project.id, key, jwt };
}

/** What the sink accepted between two readings; throws unless it is exactly `count` messages. */
async function accepted(sink: SmtpSink, before: SmtpSinkStats, count: number) {
  const after = await sink.stats();
  const messages = after.messages - before.messages;
  if (messages !== count) throw new Error(`the SMTP sink accepted ${messages} messages for ${count} sent`);
  return { bytesPerMessage: Math.round((after.bytes - before.bytes) / count), connections: after.connections - before.connections };
}

/** Herald's process exited by itself on SIGTERM and left no database connection and no SMTP connection behind. */
async function stopAndCheck(herald: Child, pool: pg.Pool, sink: SmtpSink): Promise<void> {
  const exit = await herald.stop();
  if (exit.code !== 0) throw new Error(`Herald exited on SIGTERM with ${exit.signal ?? `code ${exit.code}`}`);
  const deadline = Date.now() + 5000;
  for (;;) {
    const { rows } = await pool.query<{ count: number }>('SELECT count(*)::int AS count FROM pg_stat_activity WHERE application_name = $1', [APPLICATION_NAME]);
    const { open } = await sink.stats();
    if (rows[0]!.count === 0 && open === 0) return;
    if (Date.now() > deadline) throw new Error(`after Herald exited: ${rows[0]!.count} database connections, ${open} SMTP connections left`);
    await sleep(100);
  }
}

export async function emailCases(ctx: EmailContext): Promise<CaseResult[]> {
  // The baseline opens as many connections as Herald's pool: EMAIL_SMTP_CONNECTIONS, passed on to Herald below.
  const smtpConnections = loadConfig({ EMAIL_SMTP_CONNECTIONS: process.env.EMAIL_SMTP_CONNECTIONS }).email.smtpConnections;
  const dns = await startDnsServer();
  const sink = await startSmtpSink({ dns: dns.address, sampleEvery: SAMPLE_EVERY });
  const pool = new pg.Pool({ connectionString: ctx.databaseUrl, max: 2 });
  // The render functions the API calls, in this process; the template service reads no row to render content it is given.
  const database = openDatabase(ctx.databaseUrl, 1);
  const templates = new EmailTemplateService(database.db);
  const url = new URL(ctx.databaseUrl);
  url.searchParams.set('application_name', APPLICATION_NAME);
  let herald: Child | undefined;
  // The API's and the campaign worker's: engine, email and database settings can be tried without code changes
  // (EMAIL_SMTP_CONNECTIONS=10 npm run bench -- email).
  const heraldEnv = {
    DNS_SERVERS: dns.address,
    EMAIL_BOUNCE_DOMAIN: BOUNCE_DOMAIN,
    EMAIL_SMTP_CONNECTIONS: String(smtpConnections),
    ...Object.fromEntries(Object.entries(process.env).filter(([name]) => /^(DELIVERY|EMAIL|TRANSACTIONAL)_|^DB_POOL_MAX$/.test(name)) as [string, string][]),
  };
  try {
    herald = await startHerald({
      DATABASE_URL: url.toString(),
      JWT_SECRET,
      PUBLIC_URL,
      LOG_LEVEL: 'warn',
      RATE_LIMIT_TRANSACTIONAL: '100000000',
      RATE_LIMIT_DEFAULT: '100000000',
      ...heraldEnv,
    });
    const api = herald;
    const setup = await setUpEmailProject(api, ctx.owner, dns, sink);
    log(`email: Herald API pid ${api.pid}, SMTP sink pid ${sink.pid} (port ${sink.port}), ${smtpConnections} SMTP connections, ${ctx.connections} concurrent requests`);

    const fixed = JSON.stringify({ subject: SUBJECT, htmlContent: HTML, senderEmail: `orders@${DOMAIN}`, senderName: 'Bench Shop' }).slice(1, -1);
    const cpuNow = async () => ({
      api: await cpuSecondsOf(api.pid),
      sink: await cpuSecondsOf(sink.pid),
      bench: await cpuSecondsOf(process.pid),
      postgres: await postgresCpu(pool),
      machine: await machineCpuSeconds(),
    });
    type Cpu = Awaited<ReturnType<typeof cpuNow>>;
    /** CPU per message by process, µs. */
    const cpuPerMessage = (from: Cpu, to: Cpu, count: number) => {
      const api = to.api - from.api;
      const sinkCpu = to.sink - from.sink;
      const bench = to.bench - from.bench;
      const postgres = postgresCpuUsed(from.postgres, to.postgres);
      const machine = to.machine - from.machine;
      return {
        apiCpuUs: microsPer(api, count),
        postgresCpuUs: microsPer(postgres, count),
        sinkCpuUs: microsPer(sinkCpu, count),
        benchCpuUs: microsPer(bench, count),
        otherCpuUs: microsPer(machine - api - sinkCpu - bench - postgres, count),
        machineCpuUs: microsPer(machine, count),
      };
    };

    /** `count` sends through the API from `connections` connections; every answer must say `sent`. */
    const send = async (count: number, connections: number, tag: string) => {
      let sequence = 0;
      const statuses: Record<string, number> = {};
      let unexpected: string | undefined;
      const before = await sink.stats();
      const cpu = await cpuNow();
      const started = performance.now();
      const { result, peakRssMb } = await peakRssDuring(api.pid, () =>
        loadTest({
          url: api.url,
          connections,
          amount: count,
          requests: [
            {
              method: 'POST',
              path: '/transactional/email',
              headers: { 'content-type': 'application/json', 'x-api-key': setup.key },
              setupRequest: (request) => {
                const { to, name, order } = recipient(tag, ++sequence);
                return { ...request, body: `{"to":${JSON.stringify(to)},"variables":{"name":${JSON.stringify(name)},"order":${JSON.stringify(order)}},${fixed}}` };
              },
              onResponse: (status, body) => {
                const answer = status === 200 ? (/"status":"(\w+)"/.exec(body)?.[1] ?? 'unreadable') : `http_${status}`;
                statuses[answer] = (statuses[answer] ?? 0) + 1;
                if (answer !== 'sent') unexpected ??= body;
              },
            },
          ],
        }),
      );
      const seconds = (result.lastResponseAt - started) / 1000;
      const used = cpuPerMessage(cpu, await cpuNow(), count);
      if (result.errors > 0 || result.timeouts > 0 || statuses.sent !== count) {
        throw new Error(`POST /transactional/email: ${JSON.stringify(statuses)}, ${result.errors} errors, ${result.timeouts} timeouts; e.g. ${unexpected}`);
      }
      return { seconds, peakRssMb, latency: result.latency, sink: await accepted(sink, before, count), cpu: used };
    };

    const p99s: number[] = [];
    const throughHerald: TurnCase = {
      name: `email: Herald API → SMTP, DKIM (N=${ctx.n})`,
      options: { unit: 'msgs/s', runs: ctx.runs },
      once: async (run) => {
        const count = run < 0 ? WARMUP_N : ctx.n;
        const sent = await send(count, ctx.connections, `h${run < 0 ? 'w' : run}`);
        if (run >= 0) p99s.push(sent.latency.p99);
        return {
          value: count / sent.seconds,
          peakRssMb: sent.peakRssMb,
          extra: { messages: count, seconds: tenths(sent.seconds), p50ms: sent.latency.p50, p99ms: sent.latency.p99, ...sent.sink, ...sent.cpu },
        };
      },
    };
    const senders = await directSenders(ctx, templates, sink, dns, smtpConnections);
    log(
      `email: in turns, ${ctx.n.toLocaleString('en')} messages a run each — (a) Herald; (b) bare nodemailer, pool of ${smtpConnections}, ` +
        'DKIM RSA-2048; (c) the ceiling: (b) with the database writes of a durable send',
    );
    const [viaHerald, baseline, ceiling] = await measureInTurns([throughHerald, senders.baseline, senders.ceiling]).finally(() => senders.close());

    log(`email: API latency from one connection, ${UNLOADED_N} sends`);
    const unloaded = await send(UNLOADED_N, 1, 'u');

    log(`email: rendering, ${ctx.renderN.toLocaleString('en')} messages in this process`);
    const render = await renderCase(ctx, templates);

    const campaign = await emailCampaignCases({
      databaseUrl: ctx.databaseUrl,
      api,
      projectId: setup.projectId,
      key: setup.key,
      sink,
      pool,
      n: ctx.campaignN,
      measured: ctx.campaignSend,
      baseline: baseline!,
      workerEnv: heraldEnv,
      subject: SUBJECT,
      html: HTML,
      from: { email: `news@${DOMAIN}`, name: 'Bench Shop' },
      bounceDomain: BOUNCE_DOMAIN,
      renderN: ctx.renderN,
      runs: ctx.runs,
    });

    // Every sampled message of both senders carried a DKIM signature that verifies against its domain's published key.
    await sleep(500);
    const { dkim } = await sink.stats();
    const verdicts = Object.entries(dkim).flatMap(([domain, results]) => Object.entries(results).map(([result, count]) => `${domain} ${result} × ${count}`));
    const domains = Object.keys(dkim).sort().join();
    if (domains !== [BASELINE_DOMAIN, DOMAIN].sort().join() || Object.values(dkim).some((results) => Object.keys(results).join() !== 'pass')) {
      throw new Error(`DKIM verdicts of the sampled messages: ${verdicts.join(', ')}`);
    }
    log(`email: DKIM of the sample: ${verdicts.join(', ')}`);

    await stopAndCheck(api, pool, sink);
    herald = undefined;
    log('email: Herald stopped on SIGTERM, no database or SMTP connection left');

    const latency = await measure(`email: POST /transactional/email p99 at ${ctx.connections} connections`, { unit: 'ms', runs: p99s.length, warmup: 0 }, async (run) => ({
      value: p99s[run]!,
    }));
    const latencyAlone = await measure('email: POST /transactional/email p99 at 1 connection', { unit: 'ms', runs: 1, warmup: 0 }, async () => ({
      value: unloaded.latency.p99,
      extra: { requests: UNLOADED_N, p50ms: unloaded.latency.p50, averageMs: unloaded.latency.average, maxMs: unloaded.latency.max },
    }));
    return [
      viaHerald!,
      baseline!,
      ceiling!,
      ratio('email ratio (Herald / bare nodemailer)', viaHerald!, baseline!, RATIO_TARGET),
      ratio('email ratio (Herald / ceiling)', viaHerald!, ceiling!),
      ratio('email ceiling ratio (ceiling / bare nodemailer)', ceiling!, baseline!),
      latency,
      latencyAlone,
      render,
      ...campaign,
    ];
  } finally {
    await herald?.stop();
    await sink.stop();
    await dns.close();
    await pool.end();
    await database.close();
  }
}

/** The ceiling's table: what a durable send records at least — its recipient and variables, then its outcome. */
const CEILING_TABLE = 'bench_email_ceiling';

/**
 * Bare nodemailer in this process, and the ceiling: the same sends, each recorded in PostgreSQL before its hand-off
 * and its outcome after it — the least a send that survives a crash writes.
 *
 * The baseline: one pooled transport of Herald's connection count, DKIM (RSA 2048, the same signed header list),
 * `connections` sends in flight. Each message is Herald's rendering of the same content for one recipient (made once,
 * before the clock starts) with the recipient's address, name and order number: the same size and parts,
 * List-Unsubscribe headers included.
 *
 * The ceiling: the baseline's sends, each first inserted (recipient and variables, committed) and then marked sent
 * (committed), both by group commit as Herald writes (`shared/group-commit.ts`, one statement for the sends that
 * arrive together). No HTTP, no rendering, no checks: what this machine can do for a durable send with this sink.
 */
async function directSenders(
  ctx: EmailContext,
  templates: EmailTemplateService,
  sink: SmtpSink,
  dns: DnsServer,
  smtpConnections: number,
): Promise<{ baseline: TurnCase; ceiling: TurnCase; close(): Promise<void> }> {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'der' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  dns.setTxt(`${BASELINE_SELECTOR}._domainkey.${BASELINE_DOMAIN}`, `v=DKIM1; k=rsa; p=${publicKey.toString('base64')}`);
  const sample = recipient('sample', 0);
  const rendered = templates.renderContent({ subject: SUBJECT, html: HTML }, { name: sample.name, order: sample.order });
  if (!rendered.ok) throw new Error(`rendering the baseline's message: ${rendered.reason}`);
  const links = createEmailLinks(PUBLIC_URL, { current: JWT_SECRET, previous: [] });
  const from = { email: `orders@${BASELINE_DOMAIN}`, name: 'Bench Shop' };
  const email = renderEmail(
    { subject: rendered.subject, html: rendered.html, text: rendered.text, from },
    { deliveryId: 1, projectId: 'prj_baseline', source: 'transactional', messageId: 'msg_baseline', campaignId: null, subscriberId: 'sub_baseline', address: sample.to },
    { links, bounceDomain: BOUNCE_DOMAIN },
  );
  const personal = (text: string, r: ReturnType<typeof recipient>) => text.replaceAll(sample.name, r.name).replaceAll(sample.order, r.order);

  const transport = nodemailer.createTransport({
    pool: true,
    host: sink.host,
    port: sink.port,
    secure: false,
    maxConnections: smtpConnections,
    dkim: { domainName: BASELINE_DOMAIN, keySelector: BASELINE_SELECTOR, privateKey, headerFieldNames: DKIM_SIGNED_HEADERS.names.join(':') },
  });
  const sendOne = async (tag: string, i: number, r: ReturnType<typeof recipient>) => {
    const info = await transport.sendMail({
      messageId: `<${tag}.${i}@${BASELINE_DOMAIN}>`,
      from: { address: from.email, name: from.name },
      to: r.to,
      subject: personal(email.subject, r),
      html: personal(email.html!, r),
      text: personal(email.text, r),
      headers: email.headers,
      envelope: { from: email.returnPath, to: [r.to] },
      xMailer: false,
    });
    if (info.accepted.length !== 1) throw new Error(`the sink did not accept ${r.to}: ${info.response}`);
  };

  const pool = new pg.Pool({ connectionString: ctx.databaseUrl, max: 4 });
  await pool.query(`CREATE TABLE IF NOT EXISTS ${CEILING_TABLE} (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, address text NOT NULL,
    variables jsonb NOT NULL, status text NOT NULL, created_at timestamptz NOT NULL DEFAULT now(), sent_at timestamptz)`);
  const recorded = new GroupCommit<ReturnType<typeof recipient>, number>(
    async (sends) => {
      const { rows } = await pool.query<{ id: string; address: string }>(
        `INSERT INTO ${CEILING_TABLE} (address, variables, status) SELECT address, variables, 'sending' FROM unnest($1::text[], $2::jsonb[]) AS x(address, variables) RETURNING id, address`,
        [sends.map((r) => r.to), sends.map((r) => JSON.stringify({ name: r.name, order: r.order }))],
      );
      const ids = new Map(rows.map((row) => [row.address, Number(row.id)]));
      return sends.map((r) => ids.get(r.to)!);
    },
    { maxBatch: 100 },
  );
  const outcomes = new GroupCommit<number, void>(
    async (ids) => {
      await pool.query(`UPDATE ${CEILING_TABLE} SET status = 'sent', sent_at = now() WHERE id = ANY($1::bigint[])`, [ids]);
      return ids.map(() => undefined);
    },
    { maxBatch: 100 },
  );

  /** `count` messages, `connections` in flight; with `durable`, each recorded before its hand-off and its outcome after. */
  const run = async (run: number, prefix: string, durable: boolean): Promise<Measurement> => {
    const count = run < 0 ? WARMUP_N : ctx.n;
    const tag = `${prefix}${run < 0 ? 'w' : run}`;
    const before = await sink.stats();
    const cpuNow = async () => ({
      bench: await cpuSecondsOf(process.pid),
      sink: await cpuSecondsOf(sink.pid),
      postgres: await postgresCpu(pool),
      machine: await machineCpuSeconds(),
    });
    const cpu = await cpuNow();
    const started = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: ctx.connections }, async () => {
        for (let i = next++; i < count; i = next++) {
          const r = recipient(tag, i + 1);
          const id = durable ? await recorded.submit(r) : undefined;
          await sendOne(tag, i, r);
          if (id !== undefined) await outcomes.submit(id);
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const after = await cpuNow();
    const benchCpu = after.bench - cpu.bench;
    const sinkCpu = after.sink - cpu.sink;
    const postgresCpuSeconds = postgresCpuUsed(cpu.postgres, after.postgres);
    const machine = after.machine - cpu.machine;
    return {
      value: count / seconds,
      extra: {
        messages: count,
        seconds: tenths(seconds),
        ...(await accepted(sink, before, count)),
        senderCpuUs: microsPer(benchCpu, count),
        sinkCpuUs: microsPer(sinkCpu, count),
        postgresCpuUs: microsPer(postgresCpuSeconds, count),
        otherCpuUs: microsPer(machine - benchCpu - sinkCpu - postgresCpuSeconds, count),
        machineCpuUs: microsPer(machine, count),
      },
    };
  };
  return {
    baseline: { name: `email: bare nodemailer ×${smtpConnections}, DKIM (N=${ctx.n})`, options: { unit: 'msgs/s', runs: ctx.runs }, once: (i) => run(i, 'b', false) },
    ceiling: {
      name: `email: ceiling, bare nodemailer + durable writes (N=${ctx.n})`,
      options: { unit: 'msgs/s', runs: ctx.runs },
      once: (i) => run(i, 'c', true),
    },
    close: async () => {
      transport.close();
      await pool.query(`DROP TABLE IF EXISTS ${CEILING_TABLE}`);
      await pool.end();
    },
  };
}

/**
 * What rendering costs Herald per message, in this process: the request's content rendered with its variables
 * (liquid, and the plain part made from the HTML) as POST /transactional/email does, then `renderEmail` for the
 * recipient (signed links, pixel, footer, headers) as the email adapter does. One thread, no I/O. The notes time the
 * liquid renders and the plain part apart.
 */
async function renderCase(ctx: EmailContext, templates: EmailTemplateService): Promise<CaseResult> {
  const context = { links: createEmailLinks(PUBLIC_URL, { current: JWT_SECRET, previous: [] }), bounceDomain: BOUNCE_DOMAIN };
  const from = { email: `orders@${DOMAIN}`, name: 'Bench Shop' };
  const parsed = (source: string, format: 'html' | 'text') => {
    const outcome = parseTemplate(source, format);
    if (!outcome.ok) throw new Error(`parse: ${JSON.stringify(outcome.problems)}`);
    return outcome.template;
  };
  const subject = parsed(SUBJECT, 'text');
  const html = parsed(HTML, 'html');
  const perMessage = (started: number, count: number) => ((performance.now() - started) * 1000) / count;
  return measure(`email: render per message (N=${ctx.renderN})`, { unit: 'µs/msg', runs: ctx.runs }, async (run) => {
    const count = run < 0 ? Math.min(WARMUP_N, ctx.renderN) : ctx.renderN;
    const tag = `r${run < 0 ? 'w' : run}`;
    const contents: EmailContent[] = [];
    let started = performance.now();
    for (let i = 0; i < count; i++) {
      const { name, order } = recipient(tag, i);
      const rendered = templates.renderContent({ subject: SUBJECT, html: HTML }, { name, order });
      if (!rendered.ok) throw new Error(`render: ${rendered.reason}`);
      contents.push({ subject: rendered.subject, html: rendered.html, text: rendered.text, from });
    }
    const contentUs = perMessage(started, count);
    started = performance.now();
    contents.forEach((content, i) => {
      const to: EmailRecipient = { deliveryId: i + 1, projectId: 'prj_bench', source: 'transactional', messageId: `msg_${tag}`, campaignId: null, subscriberId: `sub_${tag}${i}`, address: recipient(tag, i).to };
      renderEmail(content, to, context);
    });
    const renderEmailUs = perMessage(started, count);
    started = performance.now();
    for (let i = 0; i < count; i++) {
      const { name, order } = recipient(tag, i);
      renderTemplate(subject, { name, order });
      renderTemplate(html, { name, order });
    }
    const liquidUs = perMessage(started, count);
    started = performance.now();
    contents.forEach((content, i) => {
      const { name, order } = recipient(tag, i);
      plainTextOf(html, { name, order }, content.html!);
    });
    const plainTextUs = perMessage(started, count);
    started = performance.now();
    for (const content of contents) htmlToPlainText(content.html!);
    const convertUs = perMessage(started, count);
    return {
      value: contentUs + renderEmailUs,
      extra: { contentUs: tenths(contentUs), liquidUs: tenths(liquidUs), plainTextUs: tenths(plainTextUs), convertUs: tenths(convertUs), renderEmailUs: tenths(renderEmailUs), htmlBytes: contents[0]!.html!.length },
    };
  });
}
