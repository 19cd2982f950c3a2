// Real `herald worker` child processes for crash tests and the benchmark: start, wait until ready, kill -9, stop.
import { spawn } from 'node:child_process';
import { readdir, readFile, readlink } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { DELIVERIES_CHANNEL } from '../src/delivery/delivery-notifications.js';

const MAIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../dist/main.js');
const READY_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 30_000;
/** How much of the child's stdout and stderr is kept for error messages. */
const OUTPUT_CHARS = 20_000;

export interface WorkerProcess {
  /** Also its PostgreSQL application_name, so its connections can be told apart. */
  name: string;
  pid: number;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** The tail of its stdout and stderr. */
  output(): string;
  /** Resolves once its delivery engine runs (its LISTEN connection is open); fails if it exits first. */
  ready(): Promise<void>;
  /** SIGSTOP: frozen in place, so its state (its sockets) can be read before it is killed. */
  pause(): void;
  /** SIGCONT: running again after `pause`. */
  resume(): void;
  /** kill -9, and wait until it is gone. */
  kill(): Promise<void>;
  /** SIGTERM (a clean drain), SIGKILL if it has not exited in time. */
  stop(): Promise<void>;
  /** Local ports of its open TCP connections to `remotePort` (Linux /proc). */
  tcpPortsTo(remotePort: number): Promise<number[]>;
}

export interface WorkerProcessOptions {
  databaseUrl: string;
  /** Settings on top of DATABASE_URL (DELIVERY_*, PUSH_*, LOG_LEVEL …), exactly as an operator would set them. */
  env?: Record<string, string>;
  name?: string;
  /** Node's own flags, before the script (the benchmark's --cpu-prof). */
  execArgv?: string[];
}

const CRASH_TEST_LEASE_MS = 3000;

/**
 * Settings of the worker processes in crash tests: a short lease brings a dead worker's rows back quickly, small
 * batches put a kill in the middle of one.
 */
export const CRASH_TEST_WORKER_ENV: Record<string, string> = {
  ALLOW_INSECURE_PUSH_ENDPOINTS: 'true',
  PUBLIC_URL: 'https://herald.example.com',
  DELIVERY_LEASE: `${CRASH_TEST_LEASE_MS / 1000}s`,
  DELIVERY_BATCH_SIZE: '50',
  DELIVERY_POLL_INTERVAL_MS: '200',
  DB_POOL_MAX: '5',
  LOG_LEVEL: 'warn',
};

const running = new Set<WorkerProcess>();
let sequence = 0;

function withApplicationName(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set('application_name', name);
  return parsed.toString();
}

/** `node server/dist/main.js worker` (run `npm run build` first). */
export function startWorkerProcess(options: WorkerProcessOptions): WorkerProcess {
  const name = options.name ?? `herald-worker-${process.pid}-${++sequence}`;
  const child = spawn(process.execPath, [...(options.execArgv ?? []), MAIN, 'worker'], {
    // The local peers listen on loopback: allowed, as in the test harness.
    env: { PATH: process.env.PATH, LOG_LEVEL: 'warn', OUTBOUND_ALLOWED_HOSTS: '127.0.0.1', ...options.env, DATABASE_URL: withApplicationName(options.databaseUrl, name) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-OUTPUT_CHARS));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const gone = () => child.exitCode !== null || child.signalCode !== null;

  const worker: WorkerProcess = {
    name,
    pid: child.pid!,
    exited,
    output: () => output,
    async ready() {
      const client = new pg.Client({ connectionString: options.databaseUrl });
      await client.connect();
      try {
        const deadline = Date.now() + READY_TIMEOUT_MS;
        while (Date.now() < deadline) {
          if (gone()) throw new Error(`${name} exited before it was ready:\n${output}`);
          const { rows } = await client.query(
            `SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND position($2 in query) > 0`,
            [name, `LISTEN ${DELIVERIES_CHANNEL};`],
          );
          if (rows.length > 0) return;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        throw new Error(`${name} not ready after ${READY_TIMEOUT_MS} ms:\n${output}`);
      } finally {
        await client.end();
      }
    },
    pause() {
      child.kill('SIGSTOP');
    },
    resume() {
      child.kill('SIGCONT');
    },
    async kill() {
      if (!gone()) child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (!gone()) {
        child.kill('SIGTERM');
        child.kill('SIGCONT'); // a paused worker acts on SIGTERM only once it runs again
        const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
        await exited;
        clearTimeout(timer);
      }
    },
    tcpPortsTo: (remotePort) => tcpPortsOf(child.pid!, remotePort),
  };
  running.add(worker);
  void exited.then(() => running.delete(worker));
  return worker;
}

/** Stops every worker this process started that still runs (an afterAll, so a failed test leaks none). */
export async function stopAllWorkers(): Promise<void> {
  await Promise.all([...running].map((worker) => worker.stop()));
}

/** Socket inodes the process holds, matched against the kernel's TCP tables (IPv4 and IPv6). */
async function tcpPortsOf(pid: number, remotePort: number): Promise<number[]> {
  const inodes = new Set<string>();
  for (const fd of await readdir(`/proc/${pid}/fd`).catch(() => [])) {
    const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
    const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
    if (inode) inodes.add(inode);
  }
  const ports: number[] = [];
  for (const table of ['tcp', 'tcp6']) {
    const lines = (await readFile(`/proc/${pid}/net/${table}`, 'utf8').catch(() => '')).split('\n').slice(1);
    for (const line of lines) {
      // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
      const fields = line.trim().split(/\s+/);
      if (fields.length < 10 || !inodes.has(fields[9]!)) continue;
      const port = (address: string) => parseInt(address.split(':')[1]!, 16);
      if (port(fields[2]!) === remotePort) ports.push(port(fields[1]!));
    }
  }
  return ports;
}

/**
 * Freezes `worker` at a moment it holds claimed deliveries of `messageId`, so a kill that follows lands mid-batch, and
 * returns how many it holds. A running worker renews its leases every third of the lease; a frozen one does not, so
 * once a frozen worker's last renewal is half a lease old, the rows still `sending` whose lease ends sooner than any
 * renewed lease could are its. A worker caught between two batches runs a moment longer and is frozen again.
 */
export async function pauseHoldingDeliveries(worker: WorkerProcess, pool: pg.Pool, messageId: string, attempts = 10): Promise<number> {
  for (let attempt = 1; attempt <= attempts; attempt++) {
    worker.pause();
    await new Promise((resolve) => setTimeout(resolve, CRASH_TEST_LEASE_MS / 2));
    const { rows } = await pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM deliveries
       WHERE message_id = $1 AND status = 'sending' AND lease_until < now() + make_interval(secs => $2)`,
      [messageId, (0.6 * CRASH_TEST_LEASE_MS) / 1000],
    );
    if (rows[0]!.n > 0) return rows[0]!.n;
    worker.resume();
    await new Promise((resolve) => setTimeout(resolve, 20 + Math.random() * 200));
  }
  throw new Error(`${worker.name} held no deliveries in ${attempts} tries:\n${worker.output()}`);
}
