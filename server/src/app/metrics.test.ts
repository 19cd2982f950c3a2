// Prometheus metrics reach only a scraper: behind METRICS_TOKEN on the API port, or on the METRICS_PORT listener.
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, startTestApp, TEST_JWT_SECRET, type TestApp, type TestDatabase } from '../../test/harness.js';
import { loadConfig } from '../config.js';
import { createLogger } from '../logger.js';
import { startHerald } from '../runtime.js';

const TOKEN = 'metrics-token-0123456789abcdef0123456789';

function expectPrometheusText(res: { status: number; contentType: string | undefined; body: string }) {
  expect(res.status).toBe(200);
  expect(res.contentType).toMatch(/^text\/plain/);
  expect(res.body).toContain('# TYPE herald_http_requests_total counter');
  expect(res.body).toMatch(/herald_http_requests_total\{method="GET",route="\/healthz",status="200"\} [1-9]/);
  expect(res.body).toContain('herald_http_request_duration_seconds_bucket');
}

function expectEnvelope(res: LightMyRequestResponse, status: number, code: string) {
  expect(res.statusCode).toBe(status);
  expect(res.json()).toEqual({ statusCode: status, code, message: expect.any(String), requestId: res.headers['x-request-id'] });
}

describe('with neither METRICS_TOKEN nor METRICS_PORT', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('does not serve /metrics: 404 in the envelope, and it is not in the document', async () => {
    await t.app.inject({ method: 'GET', url: '/healthz' });
    expectEnvelope(await t.app.inject({ method: 'GET', url: '/metrics' }), 404, 'route_not_found');
    const doc = (await t.app.inject({ method: 'GET', url: '/docs/json' })).json<{ paths: Record<string, unknown> }>();
    expect(doc.paths['/metrics']).toBeUndefined();
  });

  it('keeps /healthz and /readyz public, saying nothing but up and ready', async () => {
    const health = await t.app.inject({ method: 'GET', url: '/healthz' });
    expect(health.statusCode).toBe(200);
    expect(health.json()).toEqual({ status: 'ok' });
    const ready = await t.app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({ status: 'ready' });
  });
});

describe('with METRICS_TOKEN', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ METRICS_TOKEN: TOKEN });
  });
  afterAll(() => t.close());

  it('answers 401 in the envelope without the bearer token, or with a wrong one', async () => {
    for (const authorization of [undefined, `Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(1)}`, TOKEN, `Basic ${TOKEN}`, 'Bearer ']) {
      const res = await t.app.inject({ method: 'GET', url: '/metrics', headers: authorization === undefined ? {} : { authorization } });
      expectEnvelope(res, 401, 'unauthorized');
      expect(res.headers['www-authenticate']).toBe('Bearer');
      expect(res.body).not.toContain('herald_');
    }
  });

  it('serves Prometheus text to the bearer of the token', async () => {
    await t.app.inject({ method: 'GET', url: '/healthz' });
    const res = await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
    expectPrometheusText({ status: res.statusCode, contentType: String(res.headers['content-type']), body: res.body });
  });

  it('documents the token as the route security', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/docs/json' })).json<{
      paths: Record<string, { get: { security: unknown; responses: Record<string, unknown> } }>;
      components: { securitySchemes: Record<string, unknown> };
    }>();
    expect(doc.paths['/metrics']!.get.security).toEqual([{ metricsToken: [] }]);
    expect(doc.paths['/metrics']!.get.responses['401']).toBeDefined();
    expect(doc.components.securitySchemes.metricsToken).toMatchObject({ type: 'http', scheme: 'bearer' });
  });
});

describe('with METRICS_PORT', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());

  const start = (env: Record<string, string> = {}) =>
    startHerald(
      'api',
      loadConfig({ DATABASE_URL: database.url, JWT_SECRET: TEST_JWT_SECRET, PORT: '0', HOST: '127.0.0.1', METRICS_PORT: '0', RATE_LIMIT_ENABLED: 'false', ...env }),
      createLogger('silent'),
    );
  const get = async (url: string, headers: Record<string, string> = {}) => {
    const res = await fetch(url, { headers });
    return { status: res.status, contentType: res.headers.get('content-type') ?? undefined, body: await res.text() };
  };

  it('serves /metrics on its own loopback listener only, and closes it on stop', async () => {
    const herald = await start();
    try {
      expect(new URL(herald.metricsUrl!).hostname).toBe('127.0.0.1');
      expect((await get(`${herald.url}/healthz`)).status).toBe(200);
      expectPrometheusText(await get(`${herald.metricsUrl}/metrics`));
      const onApiPort = await get(`${herald.url}/metrics`);
      expect(onApiPort.status).toBe(404);
      expect(JSON.parse(onApiPort.body)).toMatchObject({ statusCode: 404, code: 'route_not_found' });
      // Nothing else is served on the metrics listener.
      const other = await get(`${herald.metricsUrl}/healthz`);
      expect(other.status).toBe(404);
      expect(JSON.parse(other.body)).toMatchObject({ statusCode: 404, code: 'route_not_found', requestId: expect.any(String) });
    } finally {
      await herald.stop();
    }
    await expect(fetch(`${herald.metricsUrl}/metrics`)).rejects.toThrow();
  });

  it('asks for the token there too when METRICS_TOKEN is set', async () => {
    const herald = await start({ METRICS_TOKEN: TOKEN });
    try {
      const refused = await get(`${herald.metricsUrl}/metrics`);
      expect(refused.status).toBe(401);
      expect(JSON.parse(refused.body)).toMatchObject({ statusCode: 401, code: 'unauthorized' });
      await get(`${herald.url}/healthz`);
      expectPrometheusText(await get(`${herald.metricsUrl}/metrics`, { authorization: `Bearer ${TOKEN}` }));
      expect((await get(`${herald.url}/metrics`, { authorization: `Bearer ${TOKEN}` })).status).toBe(404);
    } finally {
      await herald.stop();
    }
  });
});
