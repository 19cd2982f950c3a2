// The OpenAPI 3.1 document at /docs/json, the local Swagger UI at /docs, and Prometheus metrics at /metrics.
import SwaggerParser from '@apidevtools/swagger-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../test/harness.js';

interface Operation {
  summary?: string;
  security?: Record<string, string[]>[];
  responses?: Record<string, unknown>;
  requestBody?: { content: Record<string, { schema: { type?: string; properties?: Record<string, unknown> } }> };
}
interface Document {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, Record<string, unknown>> };
}

const METHODS = new Set(['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace']);

let t: TestApp;
let doc: Document;

beforeAll(async () => {
  t = await startTestApp();
  const res = await t.app.inject({ method: 'GET', url: '/docs/json' });
  expect(res.statusCode).toBe(200);
  doc = res.json<Document>();
});
afterAll(() => t.close());

function operations(): [string, string, Operation][] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.has(method))
      .map(([method, op]): [string, string, Operation] => [method.toUpperCase(), path, op]),
  );
}

describe('GET /docs/json', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    expect(doc.openapi).toMatch(/^3\.1\./);
    // The validator dereferences in place, so it gets a copy.
    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeDefined();
  });

  it('documents the routes', () => {
    const ops = operations().map(([method, path]) => `${method} ${path}`);
    expect(ops).toEqual(
      expect.arrayContaining(['POST /auth/login', 'GET /auth/me', 'GET /projects', 'POST /projects', 'GET /projects/{id}', 'POST /members', 'GET /healthz']),
    );
    expect(ops.some((op) => op.includes('/docs'))).toBe(false);
  });

  it('declares the apiKey, bearerAuth and orgId security schemes', () => {
    const schemes = doc.components.securitySchemes;
    expect(schemes.apiKey).toMatchObject({ type: 'apiKey', in: 'header', name: 'x-api-key' });
    expect(schemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(schemes.orgId).toMatchObject({ type: 'apiKey', in: 'header', name: 'x-org-id' });
  });

  it('gives each route the security its access declares', () => {
    expect(doc.paths['/auth/login']!.post!.security).toEqual([]);
    expect(doc.paths['/healthz']!.get!.security).toEqual([]);
    expect(doc.paths['/auth/me']!.get!.security).toEqual([{ bearerAuth: [] }]);
    expect(doc.paths['/projects']!.get!.security).toEqual([{ bearerAuth: [], orgId: [] }]);
    expect(doc.paths['/projects/{id}']!.get!.security).toEqual(expect.arrayContaining([{ apiKey: [] }, { bearerAuth: [], orgId: [] }]));
  });

  it('gives every operation a summary and security', () => {
    const ops = operations();
    expect(ops.length).toBeGreaterThan(10);
    for (const [method, path, op] of ops) {
      expect(op.summary, `${method} ${path} has no summary`).toMatch(/\S/);
      expect(Array.isArray(op.security), `${method} ${path} has no security`).toBe(true);
    }
  });

  it('documents the error envelope on a 422', () => {
    const responses = doc.paths['/projects']!.post!.responses!;
    expect(Object.keys(responses)).toEqual(expect.arrayContaining(['201', '401', '403', '422']));
  });
});

describe('POST /contacts/import in the document', () => {
  it('offers the JSON body and the CSV upload the route reads', () => {
    const content = doc.paths['/contacts/import']!.post!.requestBody!.content;
    expect(Object.keys(content).sort()).toEqual(['application/json', 'text/csv']);
    expect(Object.keys(content['application/json']!.schema.properties!)).toEqual(['projectId', 'upsertBy', 'contacts']);
    expect(content['text/csv']!.schema.type).toBe('string');
  });
});

describe('GET /docs', () => {
  it('serves the Swagger UI from local assets', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/docs' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toContain('swagger-ui');
    expect(res.body).not.toMatch(/https?:\/\//);

    const scripts = [...res.body.matchAll(/<script src="([^"]+)"/g)].map((m) => m[1]!);
    expect(scripts.length).toBeGreaterThan(0);
    for (const src of scripts) {
      const url = src.startsWith('/') ? src : `/docs/${src.replace(/^\.\//, '')}`;
      const asset = await t.app.inject({ method: 'GET', url });
      expect(asset.statusCode, url).toBe(200);
      expect(asset.body).not.toMatch(/https?:\/\/(unpkg\.com|cdn\.jsdelivr\.net|cdnjs\.cloudflare\.com)/);
    }
  });
});

describe('GET /metrics', () => {
  it('answers Prometheus text with request counts', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    const res = await t.app.inject({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.body).toContain('# TYPE herald_http_requests_total counter');
    expect(res.body).toMatch(/herald_http_requests_total\{method="GET",route="\/healthz",status="200"\} [1-9]/);
    expect(res.body).toContain('herald_http_request_duration_seconds_bucket');
  });
});
