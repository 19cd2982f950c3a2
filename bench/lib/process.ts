// Child processes the benchmarks measure: the Herald server (`node server/dist/main.js api`) and a bare Fastify.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../server/src/db/embedded-postgres.js';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface Child {
  pid: number;
  url: string;
  stop(): Promise<void>;
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

async function startChild(args: string[], env: Record<string, string>, probePath: string, port: number): Promise<Child> {
  const child = spawn(process.execPath, args, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
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
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
      }),
  };
}

/** The real Herald API process; every setting through its environment, as in production. */
export async function startHerald(env: Record<string, string>): Promise<Child> {
  const port = await freePort();
  return startChild([path.join(root, 'server/dist/main.js'), 'api'], { ...env, PORT: String(port), HOST: '127.0.0.1' }, '/healthz', port);
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
