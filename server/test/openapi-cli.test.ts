// `herald openapi` prints the document /docs/json serves, with no database anywhere (the dashboard's types build on it).
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './harness.js';

const MAIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../dist/main.js');
let t: TestApp;

beforeAll(async () => {
  t = await startTestApp({ PUBLIC_URL: 'https://herald.example.com' });
});
afterAll(() => t.close());

it('prints the OpenAPI document of a running server without starting or reaching a database', async () => {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'herald-openapi-'));
  try {
    // No DATABASE_URL and an empty DATA_DIR: serve would start an embedded PostgreSQL here; openapi must not.
    const { stdout } = await promisify(execFile)(process.execPath, [MAIN, 'openapi'], {
      env: { PATH: process.env.PATH, DATA_DIR: dataDir, PUBLIC_URL: 'https://herald.example.com' },
      timeout: 30_000,
      // The document is past a megabyte (execFile's default buffer) since automations and events joined it.
      maxBuffer: 16 * 1024 * 1024,
    });
    const served = (await t.app.inject({ method: 'GET', url: '/docs/json' })).json<Record<string, unknown>>();
    expect(JSON.parse(stdout)).toEqual(served);
    expect(await readdir(dataDir)).toEqual([]);
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});
