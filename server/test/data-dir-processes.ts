// The processes of a Herald DATA_DIR, read from /proc (Linux): what a stop must leave behind (nothing), and the
// clean-up after a failed process test.
import { readdir, readFile, readlink, rm } from 'node:fs/promises';
import path from 'node:path';

/** Every live process started in or for the data dir: the postmaster names it, its children run inside it. */
export async function processesOf(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    if (!cmdline) continue; // exited, or a zombie
    const cwd = await readlink(`/proc/${entry}/cwd`).catch(() => '');
    if (cmdline.includes(dir) || cwd === dir || cwd.startsWith(`${dir}/`)) found.push(`${entry}: ${cmdline.replaceAll('\0', ' ')}`);
  }
  return found;
}

/** Waits (bounded) until nothing runs for the data dir any more; returns what is still there. */
export async function settledProcessesOf(dir: string): Promise<string[]> {
  const deadline = Date.now() + 10_000;
  let left = await processesOf(dir);
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    left = await processesOf(dir);
  }
  return left;
}

/** After a failed test: an orphaned postmaster gets an immediate shutdown, then SIGKILL; the data dir is removed. */
export async function killLeftovers(dir: string) {
  const postmasterPid = Number((await readFile(path.join(dir, 'postgres', 'postmaster.pid'), 'utf8').catch(() => '')).split('\n')[0]);
  if (postmasterPid > 0) {
    try {
      process.kill(postmasterPid, 'SIGQUIT');
      await new Promise((r) => setTimeout(r, 1_000));
      process.kill(postmasterPid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  for (const line of await processesOf(dir)) {
    try {
      process.kill(Number(line.split(':')[0]), 'SIGKILL');
    } catch {
      // already gone
    }
  }
  await rm(dir, { recursive: true, force: true });
}

export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
    }),
  ]);
}
