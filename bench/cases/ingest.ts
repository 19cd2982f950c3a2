// POST /subscribers throughput with autocannon against the real API process, compared with a bare Fastify.
import { createECDH, randomBytes } from 'node:crypto';
import autocannon from 'autocannon';
import { measure, ratio, type CaseResult } from '../lib/harness.js';
import { cpuSecondsOf, machineCpuSeconds, startBareFastify, type Child } from '../lib/process.js';

export interface IngestContext {
  server: Child;
  projectId: string;
  key: string;
  runs: number;
  seconds: number;
  connections: number;
}

const USER_AGENT =
  'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36';

async function load(options: autocannon.Options): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon(options, (error, result) => (error ? reject(error) : resolve(result)));
  });
}

async function storedSubscribers(ctx: IngestContext): Promise<number> {
  const response = await fetch(`${ctx.server.url}/subscribers/project/${ctx.projectId}?pageSize=1`, { headers: { 'x-api-key': ctx.key } });
  if (!response.ok) throw new Error(`counting subscribers: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { total: number }).total;
}

export async function ingestCases(ctx: IngestContext): Promise<CaseResult[]> {
  const ecdh = createECDH('prime256v1');
  ecdh.generateKeys();
  const keys = { p256dh: ecdh.getPublicKey().toString('base64url'), auth: randomBytes(16).toString('base64url') };
  const prefix = randomBytes(6).toString('hex');
  let sequence = 0;
  const bare = await startBareFastify();
  try {
    const bareResult = await measure('bare Fastify hello-world', { unit: 'req/s', runs: ctx.runs }, async () => {
      const result = await load({ url: bare.url, connections: ctx.connections, duration: ctx.seconds });
      return { value: result.requests.average };
    });
    let rejected = 0;
    let created = 0;
    const heraldResult = await measure('POST /subscribers', { unit: 'req/s', runs: ctx.runs }, async () => {
      const [apiCpu, machineCpu] = [await cpuSecondsOf(ctx.server.pid), await machineCpuSeconds()];
      const result = await load({
        url: ctx.server.url,
        connections: ctx.connections,
        duration: ctx.seconds,
        requests: [
          {
            method: 'POST',
            path: '/subscribers',
            headers: { 'content-type': 'application/json', 'x-api-key': ctx.key, 'accept-language': 'de-DE,de;q=0.9' },
            // Every request registers a new endpoint: duplicates would measure the 409 path instead.
            setupRequest: (request) => ({
              ...request,
              body: JSON.stringify({
                projectId: ctx.projectId,
                endpoint: `https://fcm.googleapis.com/fcm/send/${prefix}-${++sequence}`,
                ...keys,
                userAgent: USER_AGENT,
              }),
            }),
          },
        ],
      });
      rejected += result.non2xx;
      created += result['2xx'];
      // CPU per registration: the API process, and the whole machine (API, PostgreSQL and autocannon share it).
      const perRegistration = (seconds: number) => Math.round((seconds * 1e6) / Math.max(1, result['2xx'])) / 1000;
      return {
        value: result.requests.average,
        extra: {
          non2xx: result.non2xx,
          p99ms: result.latency.p99,
          apiCpuMs: perRegistration((await cpuSecondsOf(ctx.server.pid)) - apiCpu),
          machineCpuMs: perRegistration((await machineCpuSeconds()) - machineCpu),
        },
      };
    });
    if (rejected > 0) throw new Error(`POST /subscribers answered ${rejected} non-2xx responses: raise RATE_LIMIT_INGEST`);
    // A 201 promises a committed row: every one must be in the (otherwise untouched) ingest project. There may be a
    // few more rows: requests still in flight when autocannon stopped are committed without being counted.
    const stored = await storedSubscribers(ctx);
    if (stored < created) throw new Error(`POST /subscribers answered ${created} × 201 but the project holds ${stored} subscribers`);
    return [bareResult, heraldResult, ratio('ingest ratio (Herald / bare)', heraldResult, bareResult, 0.3)];
  } finally {
    await bare.stop();
  }
}
