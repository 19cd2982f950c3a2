// graphile-worker wiring: jobs added to the graphile_worker schema run with their payload, and stop() is graceful.
import { makeWorkerUtils, quickAddJob, type Runner, type Task, type WorkerUtils } from 'graphile-worker';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/harness.js';
import { openDatabase, type Database } from '../db/database.js';
import { startWorker, WORKER_SCHEMA } from './worker.js';

function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
    }),
  ]);
}

let testDb: TestDatabase;
let database: Database;
let utils: WorkerUtils;
const runners: Runner[] = [];
const logLines: { msg: string }[] = [];
const logger = pino(
  { level: 'debug' },
  { write: (line: string) => void logLines.push(JSON.parse(line) as { msg: string }) },
);

beforeAll(async () => {
  testDb = await createTestDatabase();
  database = openDatabase(testDb.url, 10);
  utils = await makeWorkerUtils({ connectionString: testDb.url, schema: WORKER_SCHEMA });
});

afterEach(async () => {
  for (const runner of runners.splice(0)) await runner.stop().catch(() => undefined);
});

afterAll(async () => {
  await utils?.release();
  await database?.close();
  await testDb?.drop();
});

describe('startWorker', () => {
  it('runs a job added with quickAddJob, with its payload', async () => {
    const ran = deferred<unknown>();
    const runner = await startWorker({ pool: database.pool, logger, concurrency: 2, taskList: { greet: async (payload) => ran.resolve(payload) } });
    runners.push(runner);

    await quickAddJob({ connectionString: testDb.url, schema: WORKER_SCHEMA }, 'greet', { name: 'Ada', n: 1 });
    expect(await withTimeout(ran.promise, 10_000, 'the job')).toEqual({ name: 'Ada', n: 1 });
  });

  it('runs jobs added through worker utils, retries a failing one, and leaves no job behind', async () => {
    const seen: unknown[] = [];
    let attempts = 0;
    const done = deferred();
    const taskList: Record<string, Task> = {
      collect: async (payload) => {
        seen.push(payload);
        if (seen.length === 3) done.resolve();
      },
      flaky: async () => {
        attempts += 1;
        if (attempts === 1) throw new Error('first attempt fails');
      },
    };
    const runner = await startWorker({ pool: database.pool, logger, concurrency: 4, taskList });
    runners.push(runner);

    const flaky = await utils.addJob('flaky', {}, { maxAttempts: 2 });
    for (const i of [1, 2, 3]) await utils.addJob('collect', { i });
    await withTimeout(done.promise, 10_000, 'three jobs');
    expect(seen).toHaveLength(3);
    expect(seen).toEqual(expect.arrayContaining([{ i: 1 }, { i: 2 }, { i: 3 }]));

    // The failed attempt is rescheduled with a back-off; run it now instead of waiting.
    await utils.rescheduleJobs([flaky.id], { runAt: new Date() });
    const deadline = Date.now() + 10_000;
    while (attempts < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(attempts).toBe(2);
    const { rows } = await database.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${WORKER_SCHEMA}.jobs`);
    // Completed jobs are deleted; allow a moment for the last completion to land.
    const settle = Date.now() + 5_000;
    let remaining = rows[0]!.n;
    while (remaining > 0 && Date.now() < settle) {
      await new Promise((r) => setTimeout(r, 50));
      remaining = (await database.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${WORKER_SCHEMA}.jobs`)).rows[0]!.n;
    }
    expect(remaining).toBe(0);
  });

  it('stop() waits for a running job to finish', async () => {
    const started = deferred();
    const release = deferred();
    let finished = false;
    const runner = await startWorker({
      pool: database.pool,
      logger,
      concurrency: 1,
      taskList: {
        slow: async () => {
          started.resolve();
          await release.promise;
          await new Promise((r) => setTimeout(r, 200));
          finished = true;
        },
      },
    });
    await utils.addJob('slow', {});
    await withTimeout(started.promise, 10_000, 'the job to start');

    let stopped = false;
    const stopping = runner.stop().then(() => (stopped = true));
    await new Promise((r) => setTimeout(r, 300));
    expect(stopped).toBe(false); // still waiting for the job
    release.resolve();
    await withTimeout(stopping, 10_000, 'runner.stop()');
    expect(finished).toBe(true);

    // The job completed (it was not abandoned and left locked for a retry).
    const { rows } = await database.pool.query(`SELECT * FROM ${WORKER_SCHEMA}._private_jobs`);
    expect(rows).toEqual([]);
  });

  it('does not read a crontab file from the working directory', () => {
    expect(logLines.map((line) => line.msg).filter((msg) => /crontab/i.test(msg))).toEqual([]);
  });
});
