// The real `herald serve` process on a fresh DATA_DIR: first boot, the DATA_DIR lock, SIGTERM, kill -9 and recovery;
// `npm start` stopped through npm alone.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { lstat, mkdtemp, readdir, readFile, readlink, writeFile } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTransport } from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../src/db/embedded-postgres.js';
import { killLeftovers, processesOf, settledProcessesOf, within } from './data-dir-processes.js';

const MAIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../dist/main.js');
const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const BOOT_TIMEOUT = 90_000;
const EXIT_TIMEOUT = 40_000;

interface Herald {
  child: ChildProcess;
  port: number;
  /** Everything written to stdout and stderr so far. */
  stdout: string;
  stderr: string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const spawned: ChildProcess[] = [];
/** Processes started indirectly (Herald under `npm start`), killed after a failed test. */
const grandchildren: number[] = [];
const dataDirs: string[] = [];
let dataDir: string;

function startHerald(port: number, dir = dataDir, extraEnv: Record<string, string> = {}): Herald {
  const child = spawn(process.execPath, [MAIN, 'serve'], {
    env: { PATH: process.env.PATH, DATA_DIR: dir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info', ...extraEnv },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  spawned.push(child);
  const herald: Herald = {
    child,
    port,
    stdout: '',
    stderr: '',
    exited: new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal }))),
  };
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (herald.stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (herald.stderr += chunk));
  return herald;
}

async function get(port: number, url: string) {
  return fetch(`http://127.0.0.1:${port}${url}`, { signal: AbortSignal.timeout(5_000) });
}

/** Polls /readyz until it answers 200; fails early when the process exits. Returns the time it took. */
async function waitReady(herald: Herald, since = Date.now()): Promise<number> {
  let exited = false;
  void herald.exited.then(() => (exited = true));
  const deadline = since + BOOT_TIMEOUT;
  while (Date.now() < deadline) {
    if (exited) throw new Error(`herald exited before it was ready:\n${herald.stdout}\n${herald.stderr}`);
    const status = await get(herald.port, '/readyz').then(
      (res) => res.status,
      () => 0,
    );
    if (status === 200) return Date.now() - since;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`herald not ready after ${BOOT_TIMEOUT} ms:\n${herald.stdout}\n${herald.stderr}`);
}

async function login(port: number, email: string, password: string) {
  return fetch(`http://127.0.0.1:${port}/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
    signal: AbortSignal.timeout(10_000),
  });
}

async function stop(herald: Herald) {
  herald.child.kill('SIGTERM');
  return within(herald.exited, EXIT_TIMEOUT, 'exit after SIGTERM');
}

interface Credentials {
  email: string;
  password: string;
  liveKey: string;
  testKey: string;
  publishableKey: string;
}

function parseCredentials(stdout: string): Credentials {
  const field = (pattern: RegExp) => {
    const match = pattern.exec(stdout);
    if (!match) throw new Error(`first-run output lacks ${pattern}:\n${stdout}`);
    return match[1]!;
  };
  return {
    email: field(/Dashboard login\s+(\S+)/),
    password: field(/Password\s+(\S+)/),
    liveKey: field(/Live API key\s+(hrd_live_\S+)/),
    testKey: field(/Test API key\s+(hrd_test_\S+)/),
    publishableKey: field(/Publishable key\s+(hrd_pub_live_\S+)/),
  };
}

/**
 * Polls a directory that exists only for a moment (every 5 ms) and records the permission bits of `names` in it
 * ('' is the directory itself) the first time each is seen; stop() returns them.
 */
function sampleModes(dir: string, names: string[]) {
  const seen: Record<string, number> = {};
  let sampling = true;
  const done = (async () => {
    while (sampling) {
      for (const name of names) {
        if (name in seen) continue;
        const info = await lstat(path.join(dir, name)).catch(() => undefined);
        if (info) seen[name] = info.mode & 0o777;
      }
      await new Promise((r) => setTimeout(r, 5));
    }
  })();
  return {
    async stop() {
      sampling = false;
      await done;
      return seen;
    },
  };
}

function occurrences(text: string, secret: string) {
  return text.split(secret).length - 1;
}

beforeAll(async () => {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run \`npm run build\` first (npm test does)`);
  dataDir = await newDataDir();
});

async function newDataDir() {
  const dir = await mkdtemp(path.join(tmpdir(), 'herald-process-'));
  dataDirs.push(dir);
  return dir;
}

afterAll(async () => {
  for (const child of spawned) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  for (const pid of grandchildren) {
    // Only if the pid still names that Herald (a pid is reused once its process is gone).
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    const cwd = await readlink(`/proc/${pid}/cwd`).catch(() => '');
    if (cmdline.includes('server/dist/main.js') && cwd === REPO_ROOT) process.kill(pid, 'SIGKILL');
  }
  for (const dir of dataDirs) await killLeftovers(dir);
}, 30_000);

describe('herald serve', { timeout: 120_000 }, () => {
  let first: Herald;
  let credentials: Credentials;
  const timings: Record<string, number> = {};

  it('boots on a fresh DATA_DIR and prints the first-run credentials once', async () => {
    const initdbPassword = sampleModes(path.join(dataDir, 'initdb'), ['', 'pwfile']);
    first = startHerald(await freePort());
    timings.firstBoot = await waitReady(first);
    // The password initdb read existed only while it ran: owner-only, in an owner-only directory.
    expect(await initdbPassword.stop()).toEqual({ '': 0o700, pwfile: 0o600 });
    expect(existsSync(path.join(dataDir, 'initdb'))).toBe(false);

    credentials = parseCredentials(first.stdout);
    expect(credentials.email).toBe('admin@localhost');
    expect(credentials.liveKey).toMatch(/^hrd_live_[0-9a-z]{32}$/);
    expect(credentials.testKey).toMatch(/^hrd_test_[0-9a-z]{32}$/);
    expect(credentials.publishableKey).toMatch(/^hrd_pub_live_[0-9a-z]{32}$/);
    expect(credentials.password.length).toBeGreaterThanOrEqual(16);
    expect(occurrences(first.stdout, 'shown once and never again')).toBe(1);
    // Where to use them: the dashboard, served by this process (the build is in dashboard/dist).
    expect(first.stdout).toContain(`Dashboard: http://localhost:${first.port}/app/`);
    const app = await get(first.port, '/app/login');
    expect(app.status).toBe(200);
    expect(await app.text()).toMatch(/<script type="module" crossorigin src="\/app\/assets\/index-[\w-]+\.js">/);

    const ready = await get(first.port, '/readyz');
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready' });
    expect((await get(first.port, '/healthz')).status).toBe(200);

    const res = await login(first.port, credentials.email, credentials.password);
    expect(res.status).toBe(200);
  });

  it('keeps every secret under DATA_DIR from other users', async () => {
    const password = (await readFile(path.join(dataDir, 'postgres-password'), 'utf8')).trim();
    const modes = Object.fromEntries(
      await Promise.all(['postgres-password', 'postgres.log', 'postgres'].map(async (name) => [name, (await lstat(path.join(dataDir, name))).mode & 0o777])),
    );
    expect(modes).toEqual({ 'postgres-password': 0o600, 'postgres.log': 0o600, postgres: 0o700 });
    // Nothing else others may read but the lock file, and it holds no secret.
    const readable: string[] = [];
    const walk = async (dir: string) => {
      for (const entry of await readdir(dir, { withFileTypes: true })) {
        const file = path.join(dir, entry.name);
        if (((await lstat(file)).mode & 0o004) !== 0) readable.push(path.relative(dataDir, file));
        if (entry.isDirectory()) await walk(file);
      }
    };
    await walk(dataDir);
    expect(readable).toEqual(['herald.pid']);
    expect(await readFile(path.join(dataDir, 'herald.pid'), 'utf8')).not.toContain(password);
  });

  it('refuses a second serve on the same DATA_DIR with a clear message, the first keeps running', async () => {
    const second = startHerald(await freePort());
    const { code } = await within(second.exited, EXIT_TIMEOUT, 'second serve to exit');
    expect(code).not.toBe(0);
    expect(code).not.toBeNull();
    expect(second.stderr).toContain('DATA_DIR');
    expect(second.stderr).toContain(dataDir);
    expect(second.stderr).toMatch(/already running/);
    expect(second.stderr).not.toMatch(/\n\s+at /); // a message, not a stack trace
    expect(second.stdout).not.toContain('hrd_live_');

    expect((await get(first.port, '/readyz')).status).toBe(200);
    expect(first.child.exitCode).toBeNull();
  });

  it('stops on SIGTERM with exit code 0 and leaves no process behind', async () => {
    expect(await stop(first)).toEqual({ code: 0, signal: null });
    expect(await settledProcessesOf(dataDir)).toEqual([]);
    expect(existsSync(path.join(dataDir, 'herald.pid'))).toBe(false);

    // The secrets were printed once, in the credentials block, and in no log line.
    const output = first.stdout + first.stderr;
    for (const secret of [credentials.password, credentials.liveKey, credentials.testKey, credentials.publishableKey]) {
      expect(occurrences(output, secret)).toBe(1);
    }
    const logLines = output.split('\n').filter((line) => line.startsWith('{'));
    expect(logLines.length).toBeGreaterThan(3);
    for (const line of logLines) {
      for (const secret of [credentials.password, credentials.liveKey, credentials.testKey, credentials.publishableKey]) expect(line).not.toContain(secret);
    }
    expect(first.stdout).toMatch(/"msg":"herald stopped"/);
  });

  it('recovers after kill -9 of the node process, without printing the credentials again', async () => {
    const second = startHerald(await freePort());
    await waitReady(second);
    expect(second.stdout).not.toContain('shown once');
    expect(second.stdout).not.toContain('hrd_');

    second.child.kill('SIGKILL');
    expect(await within(second.exited, EXIT_TIMEOUT, 'exit after SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });
    // Its PostgreSQL is orphaned, still holding the data dir: the situation a restart must recover from.
    expect((await processesOf(dataDir)).join('\n')).toMatch(/postgres -D/);

    const startedAt = Date.now();
    const third = startHerald(await freePort());
    timings.restartAfterKill = await waitReady(third, startedAt);
    expect(third.stdout).toMatch(/left running by a previous Herald process/);

    const res = await login(third.port, credentials.email, credentials.password);
    expect(res.status).toBe(200);
    const output = second.stdout + second.stderr + third.stdout + third.stderr;
    expect(output).not.toContain('shown once');
    for (const secret of [credentials.password, credentials.liveKey, credentials.testKey, credentials.publishableKey]) expect(output).not.toContain(secret);

    expect(await stop(third)).toEqual({ code: 0, signal: null });
    expect(await settledProcessesOf(dataDir)).toEqual([]);
    expect(existsSync(path.join(dataDir, 'herald.pid'))).toBe(false);
    console.log(`herald serve timings: first boot ${timings.firstBoot} ms, restart after kill -9 ${timings.restartAfterKill} ms`);
  });

  it('takes over a herald.pid whose pid now belongs to another process', async () => {
    // After a crash or reboot the recorded pid can be reused; here it names this (live) test process, with a start
    // time that is not this process's.
    await writeFile(path.join(dataDir, 'herald.pid'), `${process.pid} 1`);
    const herald = startHerald(await freePort());
    await waitReady(herald);
    expect(await stop(herald)).toEqual({ code: 0, signal: null });
    expect(await settledProcessesOf(dataDir)).toEqual([]);
  });

  it('lets exactly one of two serves started at once on a fresh DATA_DIR run', async () => {
    const dir = await newDataDir();
    const [a, b] = [startHerald(await freePort(), dir), startHerald(await freePort(), dir)];
    const loser = await within(
      Promise.race([a.exited.then(() => a), b.exited.then(() => b)]),
      BOOT_TIMEOUT,
      'one of the two to give up',
    );
    const winner = loser === a ? b : a;
    expect(loser.child.exitCode).not.toBe(0);
    expect(loser.stderr).toContain(`DATA_DIR ${dir}`);
    await waitReady(winner);
    expect(occurrences(winner.stdout, 'shown once and never again')).toBe(1);
    expect(await stop(winner)).toEqual({ code: 0, signal: null });
    expect(await settledProcessesOf(dir)).toEqual([]);
  });

  it('runs the inbound SMTP listener with SMTP_IN_PORT, relaying nothing, and closes it on SIGTERM', async () => {
    const smtpPort = await freePort();
    const dir = await newDataDir();
    const herald = startHerald(await freePort(), dir, { SMTP_IN_PORT: String(smtpPort), SMTP_IN_HOST: '127.0.0.1' });
    await waitReady(herald);
    const transport = createTransport({ host: '127.0.0.1', port: smtpPort, secure: false, ignoreTLS: true });
    await expect(transport.sendMail({ envelope: { from: '', to: 'someone@example.org' }, raw: 'Subject: hi\r\n\r\nhi\r\n' })).rejects.toMatchObject({
      responseCode: 550,
    });
    expect(herald.stdout).toContain(`"smtpIn":"127.0.0.1:${smtpPort}"`);
    expect(await stop(herald)).toEqual({ code: 0, signal: null });
    const refused = await new Promise<string | undefined>((resolve) =>
      connect(smtpPort, '127.0.0.1')
        .on('connect', function (this: Socket) {
          this.destroy();
          resolve(undefined);
        })
        .on('error', (error: NodeJS.ErrnoException) => resolve(error.code)),
    );
    expect(refused).toBe('ECONNREFUSED');
    expect(await settledProcessesOf(dir)).toEqual([]);
  });
});

describe('npm start', { timeout: 180_000 }, () => {
  it('stops Herald and its PostgreSQL when only npm is sent SIGTERM (a process manager, docker stop)', async () => {
    const dir = await newDataDir();
    const port = await freePort();
    // The script builds first: a no-op here, as `npm test` built already (incremental).
    const npm = spawn('npm', ['start'], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, DATA_DIR: dir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    spawned.push(npm);
    const herald: Herald = {
      child: npm,
      port,
      stdout: '',
      stderr: '',
      exited: new Promise((resolve) => npm.once('exit', (code, signal) => resolve({ code, signal }))),
    };
    npm.stdout!.setEncoding('utf8').on('data', (chunk: string) => (herald.stdout += chunk));
    npm.stderr!.setEncoding('utf8').on('data', (chunk: string) => (herald.stderr += chunk));
    await waitReady(herald);
    expect((await get(port, '/healthz')).status).toBe(200);
    const heraldPid = Number((await readFile(path.join(dir, 'herald.pid'), 'utf8')).split(' ')[0]);
    expect(heraldPid).toBeGreaterThan(0);
    grandchildren.push(heraldPid);
    expect(heraldPid).not.toBe(npm.pid);
    expect((await readFile(`/proc/${heraldPid}/cmdline`, 'utf8')).replaceAll('\0', ' ')).toContain('server/dist/main.js serve');

    process.kill(npm.pid!, 'SIGTERM');
    expect(await within(herald.exited, EXIT_TIMEOUT, 'npm to exit after SIGTERM')).toEqual({ code: 0, signal: null });
    // npm passes the signal on and exits once its child has: Herald has drained and stopped by then (what a
    // container runtime needs before it tears the rest down).
    expect(await readFile(`/proc/${heraldPid}/cmdline`, 'utf8').catch(() => '')).toBe('');
    expect(herald.stdout).toMatch(/"msg":"herald stopped"/);
    expect(await settledProcessesOf(dir)).toEqual([]);
    expect(existsSync(path.join(dir, 'herald.pid'))).toBe(false);
  });
});

describe('herald serve with bad configuration', () => {
  it('exits 2 listing every bad key', async () => {
    const child = spawn(process.execPath, [MAIN, 'serve'], {
      env: { PATH: process.env.PATH, PORT: 'abc', JWT_SECRET: 'short', DATABASE_URL: 'mysql://x', LOG_LEVEL: 'loud' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    spawned.push(child);
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const [code] = await within(
      new Promise<[number | null]>((resolve) => child.once('exit', (c) => resolve([c]))),
      EXIT_TIMEOUT,
      'exit on bad configuration',
    );
    expect(code).toBe(2);
    expect(stderr).toMatch(/^Invalid configuration:/);
    for (const key of ['PORT', 'JWT_SECRET', 'DATABASE_URL', 'LOG_LEVEL']) expect(stderr).toMatch(new RegExp(`^\\s+- ${key}: `, 'm'));
    expect(stderr).not.toMatch(/\n\s+at /);
  });
});
