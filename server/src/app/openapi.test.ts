// The OpenAPI 3.1 document at /docs/json and the local Swagger UI at /docs.
import SwaggerParser from '@apidevtools/swagger-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../test/harness.js';
import { contactFields } from '../modules/subscribers/contact.schemas.js';

interface Schema {
  type?: string;
  title?: string;
  properties?: Record<string, Schema>;
  items?: Schema;
  additionalProperties?: boolean | Schema;
}
type Content = Record<string, { schema: Schema }>;
interface Operation {
  summary?: string;
  security?: Record<string, string[]>[];
  responses?: Record<string, { content?: Content }>;
  requestBody?: { content: Content };
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
  // With METRICS_TOKEN, /metrics is served on the API port and documented with the rest.
  t = await startTestApp({ METRICS_TOKEN: 'metrics-token-0123456789abcdef0123456789' });
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
      expect.arrayContaining(['POST /auth/login', 'GET /auth/me', 'GET /projects', 'POST /projects', 'GET /projects/{id}', 'POST /invitations', 'POST /invitations/accept', 'GET /healthz']),
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
    expect(doc.paths['/invitations/accept']!.post!.security).toEqual([{}, { bearerAuth: [] }]);
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

  it('documents a 413 on every route that takes a body (over its size limit)', () => {
    const bodies = operations().filter(([, , op]) => op.requestBody);
    expect(bodies.length).toBeGreaterThan(10);
    for (const [method, path, op] of bodies) {
      expect(op.responses!['413']?.content, `${method} ${path}`).toEqual({ 'application/json': { schema: { $ref: '#/components/schemas/Error' } } });
    }
  });

  it('leaks no placeholder of the Zod conversion', () => {
    expect(JSON.stringify(doc)).not.toContain('__SCHEMA__PLACEHOLDER__');
  });

  it('answers every error in JSON, whatever the route produces on success', () => {
    for (const [method, path, op] of operations()) {
      for (const [status, response] of Object.entries(op.responses ?? {})) {
        // A redirect (email's tracked links) is no error, and has no body.
        if (/^[45]/.test(status)) expect(Object.keys(response.content ?? {}), `${method} ${path} ${status}`).toEqual(['application/json']);
      }
    }
  });

  it.each([
    ['/segments/project/{projectId}/export.csv', 'text/csv'],
    ['/campaigns/export/project/{projectId}.csv', 'text/csv'],
    ['/campaigns/{id}/stream', 'text/event-stream'],
    ['/metrics', 'text/plain'],
  ])('answers GET %s with %s text on success and the JSON Error on failure', (path, mediaType) => {
    const { 200: success, ...errors } = doc.paths[path]!.get!.responses!;
    expect(Object.keys(success!.content!)).toEqual([mediaType]);
    expect(success!.content![mediaType]!.schema.type).toBe('string');
    for (const error of Object.values(errors)) {
      expect(error.content).toEqual({ 'application/json': { schema: { $ref: '#/components/schemas/Error' } } });
    }
  });
});

describe('POST /contacts/import in the document', () => {
  it('offers the JSON body and the CSV upload the route reads', () => {
    const content = doc.paths['/contacts/import']!.post!.requestBody!.content;
    expect(Object.keys(content).sort()).toEqual(['application/json', 'text/csv']);
    expect(Object.keys(content['application/json']!.schema.properties!)).toEqual(['projectId', 'upsertBy', 'contacts']);
    expect(content['application/json']!.schema.title).toBeUndefined();
    expect(content['text/csv']!.schema.type).toBe('string');
  });

  it('documents the fields of a row', () => {
    const body = doc.paths['/contacts/import']!.post!.requestBody!.content['application/json']!.schema;
    const row = body.properties!.contacts!.items!;
    expect(row).toMatchObject({ type: 'object', additionalProperties: false });
    expect(Object.keys(row.properties!)).toEqual(Object.keys(contactFields));
    expect(row.properties!.preferences!.properties!.channels!.properties).toHaveProperty('whatsapp');
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
