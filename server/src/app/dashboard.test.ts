// The dashboard under /app/: cache headers, the client-side route fallback, the redirect from /, and its CSP.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../test/harness.js';
import { DASHBOARD_CSP } from './dashboard.js';

const INDEX = '<!doctype html><script type="module" src="/app/assets/index-Ab12Cd34.js"></script>';
let t: TestApp;
let dir: string;

beforeAll(async () => {
  // A build of its own, so the test does not depend on `npm run build` having run.
  dir = await mkdtemp(join(tmpdir(), 'herald-dashboard-'));
  await mkdir(join(dir, 'assets'));
  await writeFile(join(dir, 'index.html'), INDEX);
  await writeFile(join(dir, 'assets', 'index-Ab12Cd34.js'), 'console.log("dashboard")');
  t = await startTestApp({}, { dashboardDir: dir });
});
afterAll(async () => {
  await t.close();
  await rm(dir, { recursive: true, force: true });
});

describe('GET /app/', () => {
  it('answers index.html, revalidated on every load, under a strict CSP', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/app/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toBe(INDEX);
    expect(res.headers['cache-control']).toBe('no-cache');
    expect(res.headers['content-security-policy']).toBe(DASHBOARD_CSP);
    expect(DASHBOARD_CSP).toContain("default-src 'self'");
    expect(DASHBOARD_CSP).toContain("script-src 'self';");
    expect(DASHBOARD_CSP).toContain("connect-src 'self';");
    expect(DASHBOARD_CSP).not.toMatch(/script-src[^;]*unsafe/);
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });

  it('answers index.html for client-side routes, whatever their search parameters', async () => {
    for (const url of ['/app/projects', '/app/projects/p1/subscribers?status=active&page=2', '/app/login']) {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(200);
      expect(res.body, url).toBe(INDEX);
      expect(res.headers['cache-control'], url).toBe('no-cache');
    }
  });

  it('serves hashed assets for a year, immutable', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/app/assets/index-Ab12Cd34.js' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/javascript/);
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(res.headers['content-security-policy']).toBe(DASHBOARD_CSP);
  });

  it('answers a missing asset 404 in the error envelope, not index.html', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/app/assets/index-gone.js' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ statusCode: 404, code: 'route_not_found' });
    expect(res.body).not.toContain('<!doctype');
  });

  it('does not serve files outside the build', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/app/assets/..%2f..%2fpackage.json' });
    // @fastify/send refuses a path that climbs out of the root (403), in the envelope like any error.
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ statusCode: 403 });
    expect(res.body).not.toContain('herald');
  });
});

describe('outside /app/', () => {
  it('redirects / and /app to /app/', async () => {
    for (const url of ['/', '/app']) {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBeGreaterThanOrEqual(301);
      expect(res.statusCode, url).toBeLessThanOrEqual(302);
      expect(res.headers.location, url).toBe('/app/');
    }
  });

  it('leaves API paths alone: an unknown one is a JSON 404, not the dashboard', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/projects-nope' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ statusCode: 404 });
    const api = await t.app.inject({ method: 'GET', url: '/projects' });
    expect(api.statusCode).toBe(401);
    expect(api.headers['content-security-policy']).toBeUndefined();
  });

  it('keeps the dashboard out of the OpenAPI document', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/docs/json' })).json<{ paths: Record<string, unknown> }>();
    expect(Object.keys(doc.paths).filter((path) => path === '/' || path.startsWith('/app'))).toEqual([]);
  });
});

describe('without a build', () => {
  it('answers /app/ with a 404 envelope', async () => {
    const empty = await mkdtemp(join(tmpdir(), 'herald-no-dashboard-'));
    const bare = await startTestApp({}, { dashboardDir: empty });
    try {
      const res = await bare.app.inject({ method: 'GET', url: '/app/projects' });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ statusCode: 404 });
    } finally {
      await bare.close();
      await rm(empty, { recursive: true, force: true });
    }
  });
});
