// The browser SDK under /sdk/: the three files at stable and versioned URLs, their cache rules, readable cross-origin.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../test/harness.js';

const { version } = JSON.parse(await readFile(new URL('../../../sdk/package.json', import.meta.url), 'utf8')) as { version: string };
let t: TestApp;
let dir: string;

beforeAll(async () => {
  // A build of its own, so the test does not depend on `npm run build` having run.
  dir = await mkdtemp(join(tmpdir(), 'herald-sdk-'));
  await mkdir(join(dir, version));
  for (const file of ['herald.js', 'herald.mjs', 'herald-sw.js']) {
    await writeFile(join(dir, file), `/* latest ${file} */`);
    await writeFile(join(dir, version, file), `/* ${version} ${file} */`);
  }
  await writeFile(join(dir, 'secret.txt'), 'not served');
  t = await startTestApp({}, { sdkDir: dir });
});
afterAll(async () => {
  await t.close();
  await rm(dir, { recursive: true, force: true });
});

const get = (url: string, headers: Record<string, string> = {}) => t.app.inject({ method: 'GET', url, headers });

describe('GET /sdk/', () => {
  it.each(['herald.js', 'herald.mjs', 'herald-sw.js'])('serves %s at its stable URL for an hour, to any origin', async (file) => {
    const res = await get(`/sdk/${file}`, { origin: 'https://shop.example' });
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe(`/* latest ${file} */`);
    expect(res.headers['content-type']).toMatch(/javascript/);
    expect(res.headers['cache-control']).toBe('public, max-age=3600');
    // A cross-origin module import needs CORS; a cross-origin-isolated page needs CORP.
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['cross-origin-resource-policy']).toBe('cross-origin');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });

  it("serves this version's files at /sdk/<version>/ for a year, immutable", async () => {
    const res = await get(`/sdk/${version}/herald.js`);
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe(`/* ${version} herald.js */`);
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(res.headers['access-control-allow-origin']).toBe('*');
  });

  it('answers 404 in the error envelope for any other file or version', async () => {
    for (const url of ['/sdk/secret.txt', '/sdk/0.0.0-gone/herald.js', `/sdk/${version}/secret.txt`, '/sdk/..%2Fsecret.txt']) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(404);
      expect(res.json(), url).toMatchObject({ statusCode: 404 });
    }
  });
});
