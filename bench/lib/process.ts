// Child processes the benchmarks measure (Herald api and worker, a bare Fastify, the push peer, the SMTP sink), their memory and CPU.
import { execFile, fork, spawn, type ChildProcess, type Serializable } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import type pg from 'pg';
import { freePort } from '../../server/src/db/embedded-postgres.js';
import type { TwilioTestAccount } from '../../server/test/twilio-peer.js';
import { startWorkerProcess, type WorkerProcess } from '../../server/test/worker-processes.js';
import type { TwilioSinkStats } from './twilio-sink.js';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface Child {
  pid: number;
  url: string;
  /** SIGTERM, then SIGKILL after 10 s; resolves with how it exited. */
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

async function waitForHttp(url: string, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`process exited (${child.exitCode}) before listening:\n${output()}`);
    try {
      await fetch(url);
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  throw new Error(`${url} did not answer within 60 s:\n${output()}`);
}

/** BENCH_CPU_PROF=<dir> writes a V8 CPU profile of every Herald process started here into <dir> when it exits. */
const profileFlags = () => (process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []);

async function startChild(args: string[], env: Record<string, string>, probePath: string, port: number): Promise<Child> {
  const child = spawn(process.execPath, [...profileFlags(), ...args], { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(`${url}${probePath}`, child, () => output);
  return {
    pid: child.pid!,
    url,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve({ code: child.exitCode, signal: child.signalCode });
        child.once('exit', (code, signal) => resolve({ code, signal }));
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
      }),
  };
}

/** The real Herald API process; every setting through its environment, as in production. */
export async function startHerald(env: Record<string, string>): Promise<Child> {
  const port = await freePort();
  // The SMTP sink listens on loopback: an allowed outbound host, as a self-hoster's own relay would be.
  return startChild([path.join(root, 'server/dist/main.js'), 'api'], { OUTBOUND_ALLOWED_HOSTS: '127.0.0.1', ...env, PORT: String(port), HOST: '127.0.0.1' }, '/healthz', port);
}

/** The real Herald worker process (the delivery engine), ready once its engine listens for work. */
export async function startHeraldWorker(databaseUrl: string, env: Record<string, string>): Promise<WorkerProcess> {
  const worker = startWorkerProcess({ databaseUrl, env, name: 'herald-bench-worker', execArgv: profileFlags() });
  await worker.ready();
  return worker;
}

export interface PushPeer {
  pid: number;
  origin: string;
  /** The subscription keys of the peer's fake browsers: subscriber g uses browsers[g % length]. */
  browsers: { p256dh: string; auth: string }[];
  /** Its self-signed certificate (PEM): clients trust it through NODE_EXTRA_CA_CERTS or an agent's `ca`. */
  caFile: string;
  ca: Buffer;
  /**
   * Answers given so far by status, how many sampled pushes were decrypted, and with `countEach` the subscriptions
   * that got a push and those that got more than one.
   */
  stats(): Promise<{ statuses: Record<string, number>; decrypted: number; each?: { distinct: number; twice: number } }>;
  stop(): Promise<void>;
}

/**
 * A bench peer in a process of its own (`bench/lib/<script>`): waits for the hello it sends once it listens, then
 * answers `ask` one request at a time; `stop` disconnects it and waits for its exit.
 */
async function forkPeer<Hello>(script: string, env: Record<string, string>, what: string) {
  const child = fork(path.join(root, 'bench/lib', script), [], { cwd: root, execArgv: ['--import', 'tsx'], env: { ...process.env, ...env } });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const hello = await new Promise<Hello>((resolve, reject) => {
    child.once('message', (message) => resolve(message as Hello));
    child.once('exit', (code) => reject(new Error(`${what} exited (${code}) before it listened`)));
  });
  return {
    pid: child.pid!,
    hello,
    ask: <T>(request: Serializable) =>
      new Promise<T>((resolve) => {
        child.once('message', (message) => resolve(message as T));
        child.send(request);
      }),
    async stop() {
      if (child.connected) child.disconnect();
      await exited;
    },
  };
}

/**
 * The local push service in its own process (`bench/lib/push-peer.ts`), over HTTPS with a certificate made for the
 * run by `openssl`: every real push service is HTTPS, and the web-push library speaks nothing else.
 */
export async function startPushPeer(options: { browsers: number; sampleEvery: number; sampleMax: number; countEach?: boolean }): Promise<PushPeer> {
  const dir = await mkdtemp(path.join(tmpdir(), 'herald-push-peer-'));
  const keyFile = path.join(dir, 'key.pem');
  const caFile = path.join(dir, 'cert.pem');
  await promisify(execFile)('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
    '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', keyFile, '-out', caFile,
  ]);
  const peer = await forkPeer<{ origin: string; browsers: PushPeer['browsers'] }>(
    'push-peer.ts',
    {
      PUSH_PEER_KEY: keyFile,
      PUSH_PEER_CERT: caFile,
      PUSH_PEER_BROWSERS: String(options.browsers),
      PUSH_PEER_SAMPLE_EVERY: String(options.sampleEvery),
      PUSH_PEER_SAMPLE_MAX: String(options.sampleMax),
      ...(options.countEach && { PUSH_PEER_COUNT_EACH: '1' }),
    },
    'push peer',
  );
  return {
    pid: peer.pid,
    ...peer.hello,
    caFile,
    ca: await readFile(caFile),
    stats: () => peer.ask('stats'),
    async stop() {
      await peer.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export interface SmtpSinkStats {
  /** Messages accepted, and their bytes as transmitted (DATA). */
  messages: number;
  bytes: number;
  /** Connections open now, and opened since the start. */
  open: number;
  connections: number;
  /** The sampled messages' DKIM verdicts by signing domain: `{ 'example.com': { pass: 3 } }`. */
  dkim: Record<string, Record<string, number>>;
  /** With `countEach`: the recipient addresses that got a message, and those that got more than one. */
  each?: { distinct: number; twice: number };
}

export interface SmtpSink {
  pid: number;
  host: string;
  port: number;
  stats(): Promise<SmtpSinkStats>;
  stop(): Promise<void>;
}

/**
 * The local SMTP sink in its own process (`bench/lib/smtp-sink.ts`): accepts and discards, counting, and DKIM-checks
 * one message in `sampleEvery` against the records on the DNS server at `dns`.
 */
export async function startSmtpSink(options: { dns: string; sampleEvery: number; countEach?: boolean }): Promise<SmtpSink> {
  const sink = await forkPeer<{ port: number }>(
    'smtp-sink.ts',
    { SMTP_SINK_DNS: options.dns, SMTP_SINK_SAMPLE_EVERY: String(options.sampleEvery), ...(options.countEach && { SMTP_SINK_COUNT_EACH: '1' }) },
    'SMTP sink',
  );
  return { pid: sink.pid, host: '127.0.0.1', port: sink.hello.port, stats: () => sink.ask('stats'), stop: sink.stop };
}

export interface TwilioSink {
  pid: number;
  /** TWILIO_BASE_URL. */
  url: string;
  /** Messages accepted so far. */
  count(): Promise<number>;
  /** Messages accepted from the `from`-th on: how many, and the busiest sliding second of any one sender (of `rate`). */
  stats(from: number, rate?: number): Promise<TwilioSinkStats>;
  stop(): Promise<void>;
}

/** The tests' Twilio fake in a process of its own (`bench/lib/twilio-sink.ts`), for `account`. */
export async function startTwilioSink(account: TwilioTestAccount): Promise<TwilioSink> {
  const sink = await forkPeer<{ url: string }>('twilio-sink.ts', { TWILIO_SINK_ACCOUNT: JSON.stringify(account) }, 'Twilio sink');
  return {
    pid: sink.pid,
    url: sink.hello.url,
    count: async () => (await sink.ask<{ count: number }>('count')).count,
    stats: (from, rate) => sink.ask({ stats: from, ...(rate !== undefined && { rate }) }),
    stop: sink.stop,
  };
}

/** USER_HZ: 100 on every Linux build that matters here. */
const CLOCK_TICKS = 100;

/** CPU seconds a process has used so far (user + system, /proc/<pid>/stat). */
export async function cpuSecondsOf(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  if (!stat) return 0; // exited in between
  // Fields after the command name (which may contain spaces): utime and stime are the 12th and 13th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

/**
 * CPU seconds PostgreSQL has used so far, by pid: each live child of the postmaster (backends, walwriter, autovacuum …)
 * and the postmaster itself with the CPU of every child it reaped (cutime + cstime), so connections and autovacuum
 * workers that come and go between two readings are counted. Empty when PostgreSQL runs on another machine.
 */
export async function postgresCpu(pool: pg.Pool): Promise<Map<number, number>> {
  const { rows } = await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  const fields = async (pid: number) => {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
    return stat ? stat.slice(stat.lastIndexOf(')') + 2).split(' ').map(Number) : undefined;
  };
  const postmaster = (await fields(rows[0]!.pid))?.[1];
  const own = postmaster === undefined ? undefined : await fields(postmaster);
  if (!own) return new Map();
  const children = (await readFile(`/proc/${postmaster}/task/${postmaster}/children`, 'utf8')).trim().split(/\s+/).filter(Boolean).map(Number);
  const cpu = new Map([[postmaster!, (own[11]! + own[12]! + own[13]! + own[14]!) / CLOCK_TICKS]]);
  for (const pid of children) cpu.set(pid, await cpuSecondsOf(pid));
  return cpu;
}

/** CPU seconds PostgreSQL used between two readings: a child that exited in between moved its CPU to the postmaster's. */
export function postgresCpuUsed(before: Map<number, number>, after: Map<number, number>): number {
  const total = (cpu: Map<number, number>) => [...cpu.values()].reduce((sum, seconds) => sum + seconds, 0);
  return total(after) - total(before);
}

/** CPU seconds the whole machine has been busy (every core, /proc/stat). */
export async function machineCpuSeconds(): Promise<number> {
  const [user, nice, system, , , irq, softirq, steal] = (await readFile('/proc/stat', 'utf8')).split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  return (user! + nice! + system! + irq! + softirq! + steal!) / CLOCK_TICKS;
}

/** A bare Fastify hello-world: the ceiling ingest throughput is compared with. */
export async function startBareFastify(): Promise<Child> {
  const port = await freePort();
  const script = path.join(root, 'bench/lib/hello-fastify.ts');
  return startChild(['--import', 'tsx', script], { PORT: String(port) }, '/', port);
}

/** Peak (VmHWM) and current (VmRSS) resident memory of a process, in MB (Linux). */
export async function memoryOf(pid: number): Promise<{ peakMb: number; rssMb: number } | undefined> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => undefined);
  if (!status) return undefined;
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? NaN);
  return { peakMb: kb('VmHWM') / 1024, rssMb: kb('VmRSS') / 1024 };
}

/**
 * Measures the peak RSS of a process while `work` runs: resets VmHWM first (writing 5 to clear_refs, Linux ≥ 4.0)
 * and samples VmRSS every 20 ms in case the reset is not permitted.
 */
export async function peakRssDuring<T>(pid: number, work: () => Promise<T>): Promise<{ result: T; peakRssMb: number | undefined }> {
  const reset = await writeFile(`/proc/${pid}/clear_refs`, '5').then(
    () => true,
    () => false,
  );
  let sampled = 0;
  const timer = setInterval(() => {
    void memoryOf(pid).then((m) => {
      if (m) sampled = Math.max(sampled, m.rssMb);
    });
  }, 20);
  try {
    const result = await work();
    const after = await memoryOf(pid);
    const peak = Math.max(sampled, after?.rssMb ?? 0, reset && after ? after.peakMb : 0);
    return { result, peakRssMb: peak > 0 ? peak : undefined };
  } finally {
    clearInterval(timer);
  }
}
