// The benchmark harness: cases, repeated runs, statistics, the printed table and the JSON written to bench/results/.
import { mkdir, writeFile } from 'node:fs/promises';
import type { IncomingHttpHeaders } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

export interface Measurement {
  /** The figure the case is judged on (ms for latency, req/s for throughput). */
  value: number;
  /** Peak resident memory of the server process during the run, in MB, when measured. */
  peakRssMb?: number | undefined;
  extra?: Record<string, number | string> | undefined;
}

export interface Target {
  /** `max`: value must stay below; `min`: value must reach. */
  kind: 'max' | 'min';
  value: number;
}

export interface CaseResult {
  name: string;
  unit: string;
  runs: number[];
  median: number;
  min: number;
  max: number;
  peakRssMb?: number | undefined;
  target?: Target | undefined;
  rssTargetMb?: number | undefined;
  pass?: boolean | undefined;
  notes?: Record<string, number | string> | undefined;
}

export const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

const round = (n: number) => (Math.abs(n) >= 100 ? Math.round(n) : Math.round(n * 100) / 100);

/** A ratio of two throughput cases, run by run, judged on the ratio of their medians (3 decimals); `target` the least it should be. */
export function ratio(name: string, numerator: CaseResult, denominator: CaseResult, target?: number): CaseResult {
  const round = (value: number) => Math.round(value * 1000) / 1000;
  const runs = numerator.runs.map((value, i) => round(value / (denominator.runs[i] ?? denominator.median)));
  const value = round(numerator.median / denominator.median);
  return {
    name,
    unit: 'ratio',
    runs,
    median: value,
    min: Math.min(...runs),
    max: Math.max(...runs),
    ...(target !== undefined && { target: { kind: 'min', value: target }, pass: value >= target }),
  };
}

export interface MeasureOptions {
  unit: string;
  runs: number;
  warmup?: number;
  target?: Target;
  rssTargetMb?: number;
}

/** One case of `measureInTurns`: what `measure` takes. */
export interface TurnCase {
  name: string;
  options: MeasureOptions;
  once: (run: number) => Promise<Measurement>;
}

/** Runs `once` warmup + runs times and summarises it. */
export async function measure(name: string, options: MeasureOptions, once: (run: number) => Promise<Measurement>): Promise<CaseResult> {
  const [result] = await measureInTurns([{ name, options, once }]);
  return result!;
}

/**
 * Runs cases in turns: every warmup, then run 0 of each case, run 1 of each … so that the runs of one index met the
 * same machine — a neighbour's load takes from all of them, not from whichever case it overlapped — and a ratio taken
 * run by run (`ratio`) compares like with like.
 */
export async function measureInTurns(cases: readonly TurnCase[]): Promise<CaseResult[]> {
  for (const { options, once } of cases) {
    for (let i = 0; i < (options.warmup ?? 1); i++) await once(-1 - i);
  }
  const results: Measurement[][] = cases.map(() => []);
  const rounds = Math.max(...cases.map(({ options }) => options.runs));
  for (let run = 0; run < rounds; run++) {
    for (const [c, { options, once }] of cases.entries()) if (run < options.runs) results[c]!.push(await once(run));
  }
  return cases.map(({ name, options }, c) => summarize(name, options, results[c]!));
}

function summarize(name: string, options: MeasureOptions, results: Measurement[]): CaseResult {
  const values = results.map((r) => r.value);
  const rss = results.map((r) => r.peakRssMb).filter((v): v is number => v !== undefined);
  const result: CaseResult = {
    name,
    unit: options.unit,
    runs: values.map(round),
    median: round(median(values)),
    min: round(Math.min(...values)),
    max: round(Math.max(...values)),
    peakRssMb: rss.length ? round(Math.max(...rss)) : undefined,
    target: options.target,
    rssTargetMb: options.rssTargetMb,
    notes: results[results.length - 1]?.extra,
  };
  result.pass = passes(result);
  return result;
}

export function passes(result: Pick<CaseResult, 'median' | 'target' | 'peakRssMb' | 'rssTargetMb'>): boolean | undefined {
  const checks: boolean[] = [];
  if (result.target) checks.push(result.target.kind === 'max' ? result.median < result.target.value : result.median >= result.target.value);
  if (result.rssTargetMb !== undefined && result.peakRssMb !== undefined) checks.push(result.peakRssMb < result.rssTargetMb);
  return checks.length ? checks.every(Boolean) : undefined;
}

export function printTable(results: CaseResult[]): string {
  const header = ['case', 'unit', 'median', 'min', 'max', 'peak RSS MB', 'target', 'ok'];
  const rows = results.map((r) => [
    r.name,
    r.unit,
    String(r.median),
    String(r.min),
    String(r.max),
    r.peakRssMb === undefined ? '' : String(r.peakRssMb),
    [r.target ? `${r.target.kind === 'max' ? '<' : '≥'} ${r.target.value}` : '', r.rssTargetMb ? `RSS < ${r.rssTargetMb}` : '']
      .filter(Boolean)
      .join(', '),
    r.pass === undefined ? '' : r.pass ? 'yes' : 'NO',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

export const resultsDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../results');

export async function writeResults(meta: Record<string, unknown>, results: CaseResult[]): Promise<string> {
  await mkdir(resultsDir, { recursive: true });
  const file = path.join(resultsDir, `${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  const machine = { cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model, memoryMb: Math.round(os.totalmem() / 2 ** 20), node: process.version };
  await writeFile(file, `${JSON.stringify({ ...meta, machine, results }, null, 2)}\n`);
  return file;
}

export const log = (message: string) => console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}`);

/** One autocannon run, as a promise. */
type OnResponse = (status: number, body: string, context: object, headers: IncomingHttpHeaders | undefined) => void;

/**
 * An autocannon run. `lastResponseAt`: performance.now() at its last response — a run of a fixed `amount` ends on
 * autocannon's next one-second tick after it, so its own duration can be up to a second long.
 */
export function loadTest(options: autocannon.Options): Promise<autocannon.Result & { lastResponseAt: number }> {
  let lastResponseAt = 0;
  const requests = options.requests?.map((request) => ({
    ...request,
    onResponse: (...args: Parameters<OnResponse>) => {
      lastResponseAt = performance.now();
      (request.onResponse as OnResponse | undefined)?.(...args);
    },
  }));
  return new Promise((resolve, reject) => {
    autocannon({ ...options, ...(requests && { requests }) }, (error, result) =>
      error ? reject(error) : resolve({ ...result, lastResponseAt: lastResponseAt || performance.now() }),
    );
  });
}

/** A figure of the notes, to one decimal. */
export const tenths = (n: number) => Math.round(n * 10) / 10;

/** Microseconds per item, one decimal: `seconds` spent on `count` items. */
export const microsPer = (seconds: number, count: number) => Math.round((seconds * 1e7) / Math.max(1, count)) / 10;
