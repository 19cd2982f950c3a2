// Web push encryption off the event loop: batches of payloads encrypted by worker threads, or inline with none.
import { Worker } from 'node:worker_threads';
import { encryptPushPayload } from './push-encryption.js';

/** One payload for one subscription, as the provider has them: JSON text and the stored base64url keys. */
export interface EncryptionJob {
  plaintext: string;
  p256dh: string;
  auth: string;
}

/** The aes128gcm body, or why the subscription's keys are unusable. */
export type EncryptionResult = { body: Uint8Array } | { error: string };

export function encryptJob(job: EncryptionJob): EncryptionResult {
  try {
    return { body: encryptPushPayload(Buffer.from(job.plaintext), Buffer.from(job.p256dh, 'base64url'), Buffer.from(job.auth, 'base64url')) };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

export interface EncryptionPool {
  /** Results in the jobs' order. Never rejects: a thread that fails leaves its batch to the calling thread. */
  encrypt(jobs: readonly EncryptionJob[]): Promise<EncryptionResult[]>;
  close(): Promise<void>;
}

/** Below this many jobs a batch is not split between threads: the messages would cost more than they save. */
const MIN_SLICE = 16;

interface Thread {
  worker: Worker;
  pending: Map<number, { jobs: readonly EncryptionJob[]; resolve: (results: EncryptionResult[]) => void }>;
}

// Run from the TypeScript sources (tests, the benchmark's imports), a thread loads them through tsx like its parent.
const fromSource = import.meta.url.endsWith('.ts');
const entry = new URL(`./push-encryption-thread.${fromSource ? 'ts' : 'js'}`, import.meta.url);
const startWorker = () =>
  fromSource
    ? new Worker(`import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(entry.href)}); })`, { eval: true })
    : new Worker(entry);

/**
 * ECDH (`computeSecret`) is most of a push's CPU; with `threads` > 0 it runs beside the event loop, which keeps
 * claiming, sending and recording. Threads start at the first batch and do not keep the process alive.
 */
export function createEncryptionPool(threads: number): EncryptionPool {
  if (threads === 0) return { encrypt: async (jobs) => jobs.map(encryptJob), close: async () => {} };
  const pool: (Thread | undefined)[] = Array.from({ length: threads }, () => undefined);
  let sequence = 0;
  let turn = 0;

  const thread = (slot: number): Thread => {
    const existing = pool[slot];
    if (existing) return existing;
    const started: Thread = { worker: startWorker(), pending: new Map() };
    started.worker.unref();
    started.worker.on('message', ({ id, results }: { id: number; results: EncryptionResult[] }) => {
      started.pending.get(id)?.resolve(results);
      started.pending.delete(id);
    });
    const fail = () => {
      if (pool[slot] === started) pool[slot] = undefined;
      for (const { jobs, resolve } of started.pending.values()) resolve(jobs.map(encryptJob));
      started.pending.clear();
    };
    started.worker.on('error', fail);
    started.worker.on('exit', fail);
    pool[slot] = started;
    return started;
  };

  const run = (jobs: readonly EncryptionJob[]) =>
    new Promise<EncryptionResult[]>((resolve) => {
      const target = thread(turn++ % threads);
      const id = ++sequence;
      target.pending.set(id, { jobs, resolve });
      target.worker.postMessage({ id, jobs });
    });

  return {
    async encrypt(jobs) {
      if (jobs.length === 0) return [];
      const size = Math.max(MIN_SLICE, Math.ceil(jobs.length / threads));
      const slices: EncryptionJob[][] = [];
      for (let at = 0; at < jobs.length; at += size) slices.push(jobs.slice(at, at + size));
      return (await Promise.all(slices.map(run))).flat();
    },
    async close() {
      const running = pool.splice(0).filter((t): t is Thread => t !== undefined);
      await Promise.all(running.map((t) => t.worker.terminate()));
    },
  };
}
