// Targeting at 1M people and 20M events (docs/TARGETING.md): reach counts of attribute and event conditions through
// POST /segments/reach, POST /events throughput against a bare multi-row INSERT into events, the API's memory in both.
import pg from 'pg';
import { loadTest, measureInTurns, microsPer, ratio, type CaseResult } from '../lib/harness.js';
import { cpuSecondsOf, peakRssDuring, type Child } from '../lib/process.js';

export interface TargetingContext {
  server: Child;
  databaseUrl: string;
  projectId: string;
  key: string;
  /** Seeded people: events name sub_bench0000000001 … */
  people: number;
  runs: number;
  seconds: number;
  connections: number;
}

/** Events per POST /events request, and rows per INSERT statement of the baseline. */
const BATCH = 100;

type Filters = Record<string, unknown>;

const isPro = { attribute: 'plan', operator: 'eq', value: 'pro' };
const ordered30 = { event: 'order.completed', withinLastDays: 30 };

/** The measured filters trees. */
const REACH_FILTERS: Record<string, Filters> = {
  'plan = pro AND order.completed in 30 d': { all: [isPro, ordered30] },
  'plan = pro OR order.completed in 30 d': { any: [isPro, ordered30] },
  'did not order.completed in 30 d': { all: [{ ...ordered30, performed: false }] },
  'order.completed ≥ 3 times (all time)': { all: [{ event: 'order.completed', count: { operator: 'gte', value: 3 } }] },
  'order.completed in 30 d where total > 100': { all: [{ ...ordered30, where: [{ property: 'total', operator: 'gt', value: 100 }] }] },
};

/**
 * The same tree wrapped in groups that change nothing but the 30 s reach cache's key (and parentheses in the SQL): run
 * `run` (-1 the warm-up) never meets a cached answer. Within the 3 levels a tree may nest.
 */
function variant(filters: Filters, run: number): Filters {
  const all = (f: Filters) => ({ all: [f] });
  const any = (f: Filters) => ({ any: [f] });
  const wraps: ((f: Filters) => Filters)[] = [(f) => f, all, any, (f) => all(any(f)), (f) => any(all(f)), (f) => all(all(f)), (f) => any(any(f))];
  if (run + 1 >= wraps.length) throw new Error(`the reach cases have ${wraps.length - 1} uncached runs at most`);
  return wraps[run + 1]!(filters);
}

export async function targetingCases(ctx: TargetingContext): Promise<CaseResult[]> {
  const reach = await measureInTurns(
    Object.entries(REACH_FILTERS).map(([label, filters]) => ({
      name: `reach: ${label}`,
      options: { unit: 'ms', runs: ctx.runs, target: { kind: 'max', value: 300 } },
      once: async (run: number) => {
        const { result, peakRssMb } = await peakRssDuring(ctx.server.pid, async () => {
          const started = performance.now();
          const res = await fetch(`${ctx.server.url}/segments/reach`, {
            method: 'POST',
            headers: { 'x-api-key': ctx.key, 'content-type': 'application/json' },
            body: JSON.stringify({ projectId: ctx.projectId, filters: variant(filters, run) }),
          });
          if (!res.ok) throw new Error(`reach ${label}: ${res.status} ${await res.text()}`);
          const body = (await res.json()) as { count: number; cached: boolean };
          if (body.cached) throw new Error(`reach ${label}: answered from the cache, the measurement would be void`);
          return { ms: performance.now() - started, count: body.count };
        });
        return { value: result.ms, peakRssMb, extra: { count: result.count } };
      },
    })),
  );
  return [...reach, ...(await ingestCases(ctx))];
}

/** An event of the seeded kind: order.completed of seeded person `n`. */
const eventOf = (people: number, n: number, at: string) => ({
  name: 'order.completed',
  subscriberId: `sub_bench${String(1 + (n % people)).padStart(10, '0')}`,
  properties: { total: 10 + (n % 200), currency: 'EUR', items: 1 + (n % 4), shipping: { method: 'standard' } },
  occurredAt: at,
});

/**
 * POST /events with batches of BATCH through HTTP, and the same rows as multi-row INSERTs straight into events from two
 * connections (this machine's cores): the most any API could store. Taken in turns, run by run.
 */
async function ingestCases(ctx: TargetingContext): Promise<CaseResult[]> {
  let sequence = 0;
  const pool = new pg.Pool({ connectionString: ctx.databaseUrl, max: 2 });
  try {
    const [http, insert] = await measureInTurns([
      {
        name: `POST /events (batches of ${BATCH})`,
        options: { unit: 'events/s', runs: ctx.runs },
        once: async () => {
          const apiCpu = await cpuSecondsOf(ctx.server.pid);
          const { result, peakRssMb } = await peakRssDuring(ctx.server.pid, () =>
            loadTest({
              url: ctx.server.url,
              connections: ctx.connections,
              duration: ctx.seconds,
              requests: [
                {
                  method: 'POST',
                  path: '/events',
                  headers: { 'content-type': 'application/json', 'x-api-key': ctx.key },
                  setupRequest: (request) => {
                    const at = new Date().toISOString();
                    return { ...request, body: JSON.stringify({ events: Array.from({ length: BATCH }, () => eventOf(ctx.people, ++sequence, at)) }) };
                  },
                },
              ],
            }),
          );
          if (result.non2xx > 0 || result.errors > 0) throw new Error(`POST /events: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
          const events = result['2xx'] * BATCH;
          return {
            value: (result.requests.average * BATCH),
            peakRssMb,
            extra: { p99ms: result.latency.p99, apiCpuUsPerEvent: microsPer((await cpuSecondsOf(ctx.server.pid)) - apiCpu, events) },
          };
        },
      },
      {
        name: `PostgreSQL alone: INSERT of ${BATCH} events`,
        options: { unit: 'rows/s', runs: ctx.runs },
        once: async () => {
          let rows = 0;
          const started = performance.now();
          const deadline = started + ctx.seconds * 1000;
          const writer = async () => {
            while (performance.now() < deadline) {
              const at = new Date();
              const values: unknown[] = [];
              const tuples = Array.from({ length: BATCH }, (_, i) => {
                const e = eventOf(ctx.people, ++sequence, at.toISOString());
                values.push(`evt_benchins${sequence}`, ctx.projectId, e.name, e.subscriberId, { subscriberId: e.subscriberId }, e.properties, at);
                const p = i * 7;
                return `($${p + 1}, $${p + 2}, false, $${p + 3}, $${p + 4}, $${p + 5}, $${p + 6}, $${p + 7})`;
              });
              await pool.query(
                `INSERT INTO events (id, project_id, sandbox, name, subscriber_id, identity, properties, occurred_at) VALUES ${tuples.join(', ')}`,
                values,
              );
              rows += BATCH;
            }
          };
          await Promise.all([writer(), writer()]);
          return { value: rows / ((performance.now() - started) / 1000) };
        },
      },
    ]);
    return [http!, insert!, ratio('events ingest ratio (HTTP / INSERT alone)', http!, insert!, 0.5)];
  } finally {
    await pool.end();
  }
}
