// Every installed package supports the Node versions Herald runs on, and the two pinned back for Node 20 still work.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import semver from 'semver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './harness.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

interface Manifest {
  version?: string;
  engines?: { node?: string };
}

describe('package-lock.json', () => {
  it('holds no package whose engines refuse this Node or the oldest one Herald supports (npm ci warns EBADENGINE)', async () => {
    const lock = JSON.parse(await readFile(path.join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, Manifest> };
    const root = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')) as Manifest;
    const oldest = semver.minVersion(root.engines!.node!)!.version;
    const refusing = Object.entries(lock.packages)
      .filter(([, pkg]) => typeof pkg.engines?.node === 'string')
      .filter(([, pkg]) => [process.version, oldest].some((node) => !semver.satisfies(node, pkg.engines!.node!)))
      .map(([name, pkg]) => `${name}@${pkg.version}: node ${pkg.engines!.node}`);
    expect(refusing).toEqual([]);
  });
});

describe('the packages pinned for Node 20 (docs/ARCHITECTURE.md, Dependencies)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(
      {},
      {
        beforeReady: (app) => {
          app.get('/test/cookie', { config: { access: { auth: 'public' } } }, async (request) => ({ cookie: request.headers.cookie }));
        },
      },
    );
  });
  afterAll(async () => {
    await t?.close();
  });

  it('cookie: app.inject sends the cookies it is given', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/test/cookie', cookies: { session: 'a b;c', theme: 'dark' } });
    expect(res.json()).toEqual({ cookie: 'session=a%20b%3Bc; theme=dark' });
  });

  it('content-disposition: @fastify/static serves the docs UI files', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/docs/static/swagger-ui.css' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/css/);
    expect(res.body.length).toBeGreaterThan(1000);
  });
});
