// Stopping Herald under npm by signalling its whole process group (a terminal's Ctrl-C, `systemctl stop`,
// `kill -TERM -<pgid>`): the signal reaches Herald twice, and the embedded PostgreSQL is never left running.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../src/db/embedded-postgres.js';
import { killLeftovers, processesOf, settledProcessesOf, within } from './data-dir-processes.js';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const MAIN = path.join(REPO_ROOT, 'server/dist/main.js');
const BOOT_TIMEOUT = 60_000;
const EXIT_TIMEOUT = 30_000;
/** The grace period of a repeated signal in main.ts, and a margin. */
const AFTER_GRACE_MS = 3_500;
/** What the start after a clean stop may take on a busy test machine (about 2 s when idle). */
const PROMPT_START_MS = 20_000;

interface NpmHerald {
  npm: ChildProcess;
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves once Herald logs "herald started", with its pid and the time since the spawn. */
  started(): Promise<{ pid: number; ms: number }>;
  /** Sends a signal to npm's process group: npm and Herald, as a terminal or systemd does. */
  signalGroup(signal: NodeJS.Signals): void;
}

const groups: ChildProcess[] = [];
let dataDir: string;

/**
 * `npm run serve`: the `npm start` script without its build (a build per start would make these twenty starts
 * take minutes; the tree built it before the run), so the same npm → node process tree, in a process group of its own.
 */
function startNpm(port: number, extraEnv: Record<string, string> = {}): NpmHerald {
  const spawnedAt = Date.now();
  const npm = spawn('npm', ['run', 'serve'], {
    cwd: REPO_ROOT,
    detached: true,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info', ...extraEnv },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  groups.push(npm);
  let output = '';
  npm.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  npm.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    npm.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return {
    npm,
    output: () => output,
    exited,
    async started() {
      const line = await waitForLog(() => output, exited, 'herald started', BOOT_TIMEOUT);
      return { pid: (JSON.parse(line) as { pid: number }).pid, ms: Date.now() - spawnedAt };
    },
    signalGroup(signal) {
      process.kill(-npm.pid!, signal);
    },
  };
}

/** The first log line whose message starts so; fails if the process exits without it. */
async function waitForLog(output: () => string, exited: Promise<unknown>, msg: string, timeout: number): Promise<string> {
  let gone = false;
  void exited.then(() => (gone = true));
  const deadline = Date.now() + timeout;
  for (;;) {
    const line = output()
      .split('\n')
      .find((l) => l.includes(`"msg":"${msg}`));
    if (line) return line;
    if (gone) throw new Error(`exited before logging "${msg}":\n${output()}`);
    if (Date.now() > deadline) throw new Error(`no "${msg}" after ${timeout} ms:\n${output()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A client that sends a request's headers and half its body, then nothing: the graceful stop waits for it. */
async function slowRequest(port: number): Promise<Socket> {
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  socket.on('error', () => undefined); // reset when Herald exits
  socket.write('POST /auth/login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"email":');
  return socket;
}

/** Starts on the data dir, at once: no PostgreSQL left running by the previous stop to recover from. */
async function startPromptly(port: number, extraEnv: Record<string, string> = {}) {
  const herald = startNpm(port, extraEnv);
  const { pid, ms } = await herald.started();
  expect(herald.output()).not.toMatch(/left running by a previous Herald process/);
  expect(ms).toBeLessThan(PROMPT_START_MS);
  return { herald, pid, ms };
}

async function expectNothingLeft(heraldPid: number) {
  expect(isRunning(heraldPid)).toBe(false);
  expect(await settledProcessesOf(dataDir)).toEqual([]);
  expect(existsSync(path.join(dataDir, 'postgres', 'postmaster.pid'))).toBe(false);
}

beforeAll(async () => {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run \`npm run build\` first (npm test does)`);
  dataDir = await mkdtemp(path.join(tmpdir(), 'herald-signals-'));
  // The first start initialises the cluster: not one whose time counts.
  const herald = startNpm(await freePort());
  await herald.started();
  herald.signalGroup('SIGTERM');
  expect(await within(herald.exited, EXIT_TIMEOUT, 'npm to exit')).toEqual({ code: 0, signal: null });
}, BOOT_TIMEOUT + EXIT_TIMEOUT);

afterAll(async () => {
  for (const npm of groups) {
    if (npm.exitCode !== null || npm.signalCode !== null) continue;
    try {
      process.kill(-npm.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  if (dataDir) await killLeftovers(dataDir);
}, 30_000);

describe('npm start signalled as a process group', { timeout: 180_000 }, () => {
  it("stops on the group's SIGINT and SIGTERM with exit code 0, ten times each, and the next start is up at once", async () => {
    let repeatsIgnored = 0;
    const startTimes: number[] = [];
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      for (let run = 0; run < 10; run++) {
        const { herald, pid, ms } = await startPromptly(await freePort());
        startTimes.push(ms);
        herald.signalGroup(signal);
        expect(await within(herald.exited, EXIT_TIMEOUT, `npm to exit after the group's ${signal}`)).toEqual({ code: 0, signal: null });
        expect(herald.output()).toMatch(/"msg":"herald stopped"/);
        expect(herald.output()).not.toMatch(/exiting now/);
        if (herald.output().includes('"msg":"already shutting down: signal ignored"')) repeatsIgnored++;
        await expectNothingLeft(pid);
      }
    }
    console.log(`group signals: ${repeatsIgnored} of 20 stops ignored a repeat; starts took ${startTimes.join(', ')} ms`);
    // Herald did get the signal twice (npm passes on what the group got) in some of the stops, not in all: two that
    // arrive before it runs are one, the kernel does not queue them (13 of 20 here).
    expect(repeatsIgnored).toBeGreaterThan(0);
  });

  it("stops once up on the group's SIGINT during the start (after PostgreSQL's), exit code 0", async () => {
    const herald = startNpm(await freePort());
    await waitForLog(herald.output, herald.exited, 'embedded PostgreSQL listening on ', BOOT_TIMEOUT);
    herald.signalGroup('SIGINT');
    expect(await within(herald.exited, EXIT_TIMEOUT, "npm to exit after the group's SIGINT")).toEqual({ code: 0, signal: null });
    const messages = herald
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => (JSON.parse(line) as { msg: string }).msg);
    // Asked while migrations ran: before "herald started", not Node's default (killed, PostgreSQL left running).
    expect(messages.indexOf('shutting down')).toBeGreaterThan(-1);
    expect(messages.indexOf('shutting down')).toBeLessThan(messages.indexOf('herald started'));
    expect(messages.at(-1)).toBe('herald stopped');
    expect(await settledProcessesOf(dataDir)).toEqual([]);
    expect(existsSync(path.join(dataDir, 'postgres', 'postmaster.pid'))).toBe(false);
  });

  it('ignores a repeat within the grace period while the stop hangs, forces the exit on a later one, PostgreSQL stopped', async () => {
    const port = await freePort();
    const { herald, pid } = await startPromptly(port);
    const client = await slowRequest(port);
    try {
      await waitForLog(herald.output, herald.exited, 'incoming request', 10_000);
      herald.signalGroup('SIGTERM');
      await waitForLog(herald.output, herald.exited, 'shutting down', 10_000);
      const stopAskedAt = Date.now();

      await new Promise((r) => setTimeout(r, 1_000));
      herald.signalGroup('SIGINT');
      await waitForLog(herald.output, herald.exited, 'already shutting down: signal ignored', 5_000);
      await new Promise((r) => setTimeout(r, stopAskedAt + AFTER_GRACE_MS - Date.now()));
      // Still draining the slow request: the stop hangs, as one does that a person presses Ctrl-C again on.
      expect(isRunning(pid)).toBe(true);

      herald.signalGroup('SIGINT');
      expect(await within(herald.exited, EXIT_TIMEOUT, 'npm to exit after the forced exit')).toMatchObject({ code: 1 });
      expect(herald.output()).toMatch(/"signal":"SIGINT","msg":"signal repeated while shutting down: exiting now"/);
      expect(herald.output()).toMatch(/"msg":"embedded PostgreSQL stopped"/);
      expect(herald.output()).not.toMatch(/"msg":"herald stopped"/);
      // Gone before Herald was: not left to stop itself later.
      expect(await processesOf(dataDir)).toEqual([]);
      await expectNothingLeft(pid);
    } finally {
      client.destroy();
    }

    const next = await startPromptly(await freePort());
    next.herald.signalGroup('SIGTERM');
    expect(await within(next.herald.exited, EXIT_TIMEOUT, 'npm to exit')).toEqual({ code: 0, signal: null });
    await expectNothingLeft(next.pid);
  });

  it('stops PostgreSQL when the stop outlasts SHUTDOWN_TIMEOUT', async () => {
    const port = await freePort();
    const { herald, pid } = await startPromptly(port, { SHUTDOWN_TIMEOUT: '2s' });
    const client = await slowRequest(port);
    try {
      await waitForLog(herald.output, herald.exited, 'incoming request', 10_000);
      herald.signalGroup('SIGTERM');
      expect(await within(herald.exited, EXIT_TIMEOUT, 'npm to exit after the shutdown timeout')).toMatchObject({ code: 1 });
      expect(herald.output()).toMatch(/"msg":"shutdown timed out"/);
      expect(herald.output()).toMatch(/"msg":"embedded PostgreSQL stopped"/);
      expect(await processesOf(dataDir)).toEqual([]);
      await expectNothingLeft(pid);
    } finally {
      client.destroy();
    }

    const next = await startPromptly(await freePort());
    next.herald.signalGroup('SIGINT');
    expect(await within(next.herald.exited, EXIT_TIMEOUT, 'npm to exit')).toEqual({ code: 0, signal: null });
    await expectNothingLeft(next.pid);
  });
});
