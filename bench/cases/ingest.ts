// POST /subscribers throughput with autocannon against the real API process, compared with a bare Fastify; and the
// ceiling any implementation has on this machine: the CPU of a bare JSON POST plus that of PostgreSQL storing the row.
import { createECDH, randomBytes } from 'node:crypto';
import os from 'node:os';
import autocannon from 'autocannon';
import pg from 'pg';
import { insertRegistrations, type NewRegistration } from '../../server/src/modules/subscribers/subscriber.repository.js';
import { newId } from '../../server/src/shared/ids.js';
import { loadTest, measure, microsPer, ratio, type CaseResult } from '../lib/harness.js';
import { cpuSecondsOf, machineCpuSeconds, postgresCpu, postgresCpuUsed, startBareFastify, type Child } from '../lib/process.js';

export interface IngestContext {
  server: Child;
  databaseUrl: string;
  projectId: string;
  key: string;
  runs: number;
  seconds: number;
  connections: number;
}

const USER_AGENT =
  'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36';
/** Rows per INSERT in the PostgreSQL-alone case: the largest batch the API's group commit writes. */
const INSERT_BATCH = 100;
const INSERT_ROWS = 30_000;

async function storedSubscribers(ctx: IngestContext): Promise<number> {
  const response = await fetch(`${ctx.server.url}/subscribers/project/${ctx.projectId}?pageSize=1`, { headers: { 'x-api-key': ctx.key } });
  if (!response.ok) throw new Error(`counting subscribers: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { total: number }).total;
}

/** Microseconds, one decimal. */

export async function ingestCases(ctx: IngestContext): Promise<CaseResult[]> {
  const ecdh = createECDH('prime256v1');
  ecdh.generateKeys();
  const keys = { p256dh: ecdh.getPublicKey().toString('base64url'), auth: randomBytes(16).toString('base64url') };
  const prefix = randomBytes(6).toString('hex');
  let sequence = 0;
  // Every request registers a new endpoint: duplicates would measure the 409 path instead.
  const registration = (headers: Record<string, string>): autocannon.Request => ({
    method: 'POST',
    path: '/subscribers',
    headers: { 'content-type': 'application/json', 'accept-language': 'de-DE,de;q=0.9', ...headers },
    setupRequest: (request) => ({
      ...request,
      body: JSON.stringify({ projectId: ctx.projectId, endpoint: `https://fcm.googleapis.com/fcm/send/${prefix}-${++sequence}`, ...keys, userAgent: USER_AGENT }),
    }),
  });
  /** One autocannon run, with the machine's CPU per answered request (autocannon's own included). */
  const run = async (url: string, requests?: autocannon.Request[]) => {
    const before = await machineCpuSeconds();
    const result = await loadTest({ url, connections: ctx.connections, duration: ctx.seconds, ...(requests && { requests }) });
    if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
    return { result, machineCpuUs: microsPer((await machineCpuSeconds()) - before, result.requests.total) };
  };

  const bare = await startBareFastify();
  let bareGet: CaseResult;
  let barePost: CaseResult;
  try {
    bareGet = await measure('bare Fastify hello-world', { unit: 'req/s', runs: ctx.runs }, async () => {
      const { result, machineCpuUs } = await run(bare.url);
      return { value: result.requests.average, extra: { machineCpuUs } };
    });
    barePost = await measure('bare Fastify JSON POST (parse only)', { unit: 'req/s', runs: ctx.runs }, async () => {
      const { result, machineCpuUs } = await run(bare.url, [registration({})]);
      return { value: result.requests.average, extra: { machineCpuUs } };
    });
  } finally {
    await bare.stop();
  }

  let created = 0;
  const herald = await measure('POST /subscribers', { unit: 'req/s', runs: ctx.runs }, async () => {
    const apiCpu = await cpuSecondsOf(ctx.server.pid);
    const { result, machineCpuUs } = await run(ctx.server.url, [registration({ 'x-api-key': ctx.key })]);
    created += result['2xx'];
    return {
      value: result.requests.average,
      extra: { p99ms: result.latency.p99, apiCpuUs: microsPer((await cpuSecondsOf(ctx.server.pid)) - apiCpu, result['2xx']), machineCpuUs },
    };
  });
  // A 201 promises a committed row: every one must be in the (otherwise untouched) ingest project. There may be a
  // few more rows: requests still in flight when autocannon stopped are committed without being counted.
  const stored = await storedSubscribers(ctx);
  if (stored < created) throw new Error(`POST /subscribers answered ${created} × 201 but the project holds ${stored} subscribers`);

  // PostgreSQL alone: the API's own INSERT statement, batches of INSERT_BATCH from one connection, no HTTP at all.
  const pool = new pg.Pool({ connectionString: ctx.databaseUrl, max: 1 });
  let insertOnly: CaseResult;
  try {
    const row = (at: Date): NewRegistration => ({
      id: newId('sub'),
      projectId: ctx.projectId,
      token: randomBytes(24).toString('base64url'),
      endpoint: `https://fcm.googleapis.com/fcm/send/${prefix}-db-${++sequence}`,
      ...keys,
      userAgent: USER_AGENT,
      platform: 'mobile',
      browser: 'Chrome',
      os: 'Android',
      device: 'Pixel 8',
      country: null,
      city: null,
      language: 'de',
      timezone: null,
      sandbox: false,
      registeredAt: at,
    });
    insertOnly = await measure(`PostgreSQL alone: INSERT of ${INSERT_BATCH} rows`, { unit: 'rows/s', runs: ctx.runs }, async () => {
      const batches = Array.from({ length: INSERT_ROWS / INSERT_BATCH }, () => Array.from({ length: INSERT_BATCH }, () => row(new Date())));
      const cpu = await postgresCpu(pool);
      const started = performance.now();
      for (const batch of batches) await insertRegistrations(pool, batch);
      const seconds = (performance.now() - started) / 1000;
      return { value: INSERT_ROWS / seconds, extra: { postgresCpuUs: microsPer(postgresCpuUsed(cpu, await postgresCpu(pool)), INSERT_ROWS) } };
    });
  } finally {
    await pool.end();
  }

  // The least CPU a registration can cost here is a bare JSON POST plus PostgreSQL storing the row; with every core
  // busy on nothing else, that is the best rate any implementation of POST /subscribers could reach on this machine.
  const floorUs = Number(barePost.notes!.machineCpuUs) + Number(insertOnly.notes!.postgresCpuUs);
  const ceilingRatio = Math.round(((os.availableParallelism() * 1e6) / floorUs / bareGet.median) * 1000) / 1000;
  const ceiling: CaseResult = {
    name: 'ceiling ratio (JSON POST + INSERT only)',
    unit: 'ratio',
    runs: [ceilingRatio],
    median: ceilingRatio,
    min: ceilingRatio,
    max: ceilingRatio,
    notes: { floorCpuUs: Math.round(floorUs * 10) / 10, cores: os.availableParallelism() },
  };
  return [bareGet, barePost, herald, insertOnly, ratio('ingest ratio (Herald / bare)', herald, bareGet, 0.3), ceiling];
}
