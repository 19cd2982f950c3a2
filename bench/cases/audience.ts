// Cases on the seeded audience: reach counts, live analytics, the subscriber list's pages and a 100k-row CSV export
// (latency and server RSS).
import { EXPORT_TAG } from '../lib/database.js';
import { measure, type CaseResult } from '../lib/harness.js';
import { peakRssDuring, type Child } from '../lib/process.js';

export interface AudienceContext {
  server: Child;
  projectId: string;
  key: string;
  runs: number;
}

type Filter = Record<string, unknown>;

/** Reach filters; each holds a three-value list whose permutations give six cache keys with the same SQL. */
const REACH_FILTERS: Record<string, Filter> = {
  'country any of 3': { country: ['US', 'DE', 'FR'] },
  'platform+browser': { platform: ['mobile', 'tablet'], browser: ['Chrome', 'Safari', 'Firefox'] },
  'tags any of 3': { tags: { any: ['news', 'vip', 'beta'] } },
  'os, last seen 30 d': { os: ['Android', 'iOS', 'Windows'], lastSeenDays: 30 },
  'country+platform+tags': { country: ['US', 'GB', 'IN'], platform: ['desktop', 'mobile'], tags: { any: ['promo', 'tech'] } },
};

const PERMUTATIONS = [
  [0, 1, 2],
  [0, 2, 1],
  [1, 0, 2],
  [1, 2, 0],
  [2, 0, 1],
  [2, 1, 0],
];

/** The same filter with its first three-value list permuted: defeats the 30 s reach cache without changing the query. */
function variant(filter: Filter, run: number): Filter {
  const order = PERMUTATIONS[(run + PERMUTATIONS.length) % PERMUTATIONS.length]!;
  let done = false;
  const visit = (value: unknown): unknown => {
    if (Array.isArray(value)) {
      if (!done && value.length === 3) {
        done = true;
        return order.map((i) => value[i]);
      }
      return value;
    }
    if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, visit(v)]));
    return value;
  };
  return visit(filter) as Filter;
}

async function timed<T>(work: () => Promise<T>): Promise<{ ms: number; result: T }> {
  const start = performance.now();
  const result = await work();
  return { ms: performance.now() - start, result };
}

async function call(ctx: AudienceContext, method: string, path: string, body?: unknown): Promise<Response> {
  const res = await fetch(`${ctx.server.url}${path}`, {
    method,
    headers: { 'x-api-key': ctx.key, ...(body !== undefined && { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res;
}

export async function reachCases(ctx: AudienceContext): Promise<CaseResult[]> {
  const results: CaseResult[] = [];
  for (const [label, filter] of Object.entries(REACH_FILTERS)) {
    results.push(
      await measure(`reach: ${label}`, { unit: 'ms', runs: ctx.runs, target: { kind: 'max', value: 300 } }, async (run) => {
        const { result, peakRssMb } = await peakRssDuring(ctx.server.pid, () =>
          timed(async () => {
            const res = await call(ctx, 'POST', '/segments/reach', { projectId: ctx.projectId, filters: variant(filter, run) });
            return (await res.json()) as { count: number; cached: boolean };
          }),
        );
        if (result.result.cached) throw new Error(`reach ${label}: answered from the cache, the measurement would be void`);
        return { value: result.ms, peakRssMb, extra: { count: result.result.count } };
      }),
    );
  }
  return results;
}

export async function analyticsCase(ctx: AudienceContext): Promise<CaseResult> {
  return measure('analytics (6 dimensions)', { unit: 'ms', runs: ctx.runs, target: { kind: 'max', value: 300 } }, async () => {
    const { result, peakRssMb } = await peakRssDuring(ctx.server.pid, () =>
      timed(async () => (await call(ctx, 'GET', `/subscribers/analytics/project/${ctx.projectId}`)).json() as Promise<Record<string, unknown[]>>),
    );
    return { value: result.ms, peakRssMb, extra: { cities: result.result.city?.length ?? 0 } };
  });
}

/**
 * The request the dashboard's subscribers page makes for its first page (25 rows and the total), and a deep page:
 * the page shows its rows when this answers, so it carries the page's < 1 s budget (docs/DASHBOARD.md).
 */
export async function listCases(ctx: AudienceContext): Promise<CaseResult[]> {
  const results: CaseResult[] = [];
  for (const [label, page] of [
    ['first page', 1],
    ['page 2,000', 2_000],
  ] as const) {
    results.push(
      await measure(`subscriber list: ${label}`, { unit: 'ms', runs: ctx.runs, target: { kind: 'max', value: 1000 } }, async () => {
        const { ms, result } = await timed(async () => {
          const res = await call(ctx, 'GET', `/subscribers/project/${ctx.projectId}?page=${page}&pageSize=25`);
          return (await res.json()) as { data: unknown[]; total: number };
        });
        if (result.data.length !== 25) throw new Error(`subscriber list ${label}: ${result.data.length} rows`);
        return { value: ms, extra: { total: result.total } };
      }),
    );
  }
  return results;
}

export async function exportCase(ctx: AudienceContext, runs: number): Promise<CaseResult> {
  const segment = (await (
    await call(ctx, 'POST', '/segments', { projectId: ctx.projectId, name: 'bench export tenth', filters: { tags: [EXPORT_TAG] } })
  ).json()) as { id: string };
  return measure(
    'export CSV (tenth of audience)',
    { unit: 'ms', runs, warmup: 0, rssTargetMb: 150 },
    async () => {
      const { result, peakRssMb } = await peakRssDuring(ctx.server.pid, () =>
        timed(async () => {
          const res = await call(ctx, 'GET', `/segments/project/${ctx.projectId}/export.csv?segmentId=${segment.id}`);
          let bytes = 0;
          let lines = 0;
          for await (const chunk of res.body!) {
            const buffer = chunk as Uint8Array;
            bytes += buffer.length;
            for (const byte of buffer) if (byte === 10) lines++;
          }
          return { bytes, rows: lines - 1 };
        }),
      );
      return { value: result.ms, peakRssMb, extra: { rows: result.result.rows, megabytes: Math.round(result.result.bytes / 2 ** 20) } };
    },
  );
}
