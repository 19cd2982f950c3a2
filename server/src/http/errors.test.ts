// The error envelope (spec 7) on every non-2xx answer, through HTTP on a real database.
import { connect } from 'node:net';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROME_UA, createTenant, pushSubscription, type Tenant } from '../../test/fixtures.js';
import { startTestApp, type TestApp } from '../../test/harness.js';

const INTERNAL = 'connection to 10.1.2.3:5432 refused for user herald_internal';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let t: TestApp;
let tenant: Tenant;

beforeAll(async () => {
  t = await startTestApp(
    {},
    {
      beforeReady: (app) => {
        app.get('/test/boom', { config: { access: { auth: 'public' } } }, async () => {
          throw new Error(INTERNAL);
        });
      },
    },
  );
  tenant = await createTenant(t);
});
afterAll(() => t.close());

/** Asserts the exact envelope: statusCode, code, message, requestId, and details only on 422. */
function expectEnvelope(res: LightMyRequestResponse, status: number, code: string) {
  expect(res.statusCode).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  const body = res.json<Record<string, unknown>>();
  const keys = ['statusCode', 'code', 'message', 'requestId', ...(status === 422 ? ['details'] : [])];
  expect(Object.keys(body).sort()).toEqual(keys.sort());
  expect(body).toMatchObject({ statusCode: status, code });
  expect(typeof body.message).toBe('string');
  expect(body.message).not.toBe('');
  expect(body.requestId).toBe(res.headers['x-request-id']);
  return body;
}

describe('400 malformed request', () => {
  it('answers invalid JSON with 400 invalid_json', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/auth/login',
      headers: { 'content-type': 'application/json' },
      payload: '{"email": "a@example.com", ',
    });
    expectEnvelope(res, 400, 'invalid_json');
  });

  it('answers an empty JSON body with 400 body_required', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/auth/login', headers: { 'content-type': 'application/json' }, payload: '' });
    expectEnvelope(res, 400, 'body_required');
  });

  it('answers a POST without a body with 400 body_required, not a 422 naming a field called body', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/auth/login' });
    const body = expectEnvelope(res, 400, 'body_required');
    expect(body.message).toBe('Request body is required: send a JSON object');
    expectEnvelope(await t.app.inject({ method: 'POST', url: '/auth/login', headers: { 'content-type': 'application/json' }, payload: 'null' }), 400, 'body_required');
  });

  it('answers 400 body_required on every route whose body is required, and runs those whose body is optional', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/docs/json' })).json<{
      paths: Record<string, Record<string, { requestBody?: { required?: boolean }; security?: Record<string, string[]>[] }>>;
    }>();
    const checked: string[] = [];
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        if (!operation.requestBody) continue;
        const url = path.replace(/\{[^}]+\}/g, 'x_1');
        const apiKeyOnly = operation.security?.length === 1 && 'apiKey' in operation.security[0]!;
        const headers = apiKeyOnly ? tenant.live : tenant.jwt;
        for (const payload of [undefined, '']) {
          const res = await t.app.inject({
            method: method.toUpperCase() as 'POST',
            url,
            headers: payload === undefined ? headers : { ...headers, 'content-type': 'application/json' },
            ...(payload !== undefined && { payload }),
          });
          if (operation.requestBody.required === false) {
            expect(res.json().code, `${method} ${path}`).not.toBe('body_required');
            expect(res.statusCode, `${method} ${path}`).not.toBe(422);
          } else {
            expect(res.statusCode, `${method} ${path}`).toBe(400);
            expect(res.json().code, `${method} ${path}`).toBe('body_required');
          }
        }
        checked.push(`${method.toUpperCase()} ${path} ${operation.requestBody.required === false ? 'optional' : 'required'}`);
      }
    }
    expect(checked).toContain('POST /auth/login required');
    expect(checked).toContain('POST /campaigns/{id}/send optional');
    expect(checked.length).toBeGreaterThan(20);
  });

  it.each([
    ['text/plain', 'email=a@example.com'],
    ['application/xml', '<login/>'],
    ['application/x-www-form-urlencoded', 'email=a%40example.com&password=x'],
  ])('answers a %s body with 400 unsupported_content_type', async (contentType, payload) => {
    const res = await t.app.inject({ method: 'POST', url: '/auth/login', headers: { 'content-type': contentType }, payload });
    const body = expectEnvelope(res, 400, 'unsupported_content_type');
    expect(body.message).toMatch(/application\/json/);
  });

  it('answers a body over the size limit with 413 in the envelope', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/auth/login',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ email: 'a@example.com', password: 'x'.repeat(1024 * 1024 + 10) }),
    });
    expectEnvelope(res, 413, 'body_too_large');
  });
});

describe('404', () => {
  it('answers an unknown route with the envelope', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/no/such/route?token=abc' });
    const body = expectEnvelope(res, 404, 'route_not_found');
    expect(body.message).toBe('Route GET /no/such/route not found');
  });

  it('answers an unknown method on a known path with 404', async () => {
    const res = await t.app.inject({ method: 'PUT', url: '/auth/login', payload: {} });
    expectEnvelope(res, 404, 'route_not_found');
  });

  it('answers a missing resource with 404 not_found', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/projects/prj_does_not_exist', headers: tenant.jwt });
    expectEnvelope(res, 404, 'not_found');
  });
});

describe('422 Validation failed', () => {
  it('lists one detail per failing body field, unknown fields included', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/projects', headers: tenant.jwt, payload: { bogus: 1 } });
    const body = expectEnvelope(res, 422, 'validation_failed');
    expect(body.message).toBe('Validation failed');
    const details = body.details as { field: string; error: string }[];
    expect(details.map((d) => d.field).sort()).toEqual(['bogus', 'name']);
    for (const detail of details) {
      expect(Object.keys(detail).sort()).toEqual(['error', 'field']);
      expect(detail.error).not.toBe('');
    }
    expect(details.find((d) => d.field === 'bogus')!.error).toBe('is not an allowed field');
  });

  it('names nested body fields by their path', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/projects',
      headers: tenant.jwt,
      payload: { name: 'P', settings: { timezone: 'Mars/Olympus' }, emailConfig: { domain: 'not a domain' } },
    });
    const body = expectEnvelope(res, 422, 'validation_failed');
    const fields = (body.details as { field: string }[]).map((d) => d.field).sort();
    expect(fields).toEqual(['emailConfig.domain', 'settings.timezone']);
  });

  it('prefixes querystring fields with query.', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/projects?pageSize=500', headers: tenant.jwt });
    const body = expectEnvelope(res, 422, 'validation_failed');
    expect(body.details).toEqual([{ field: 'query.pageSize', error: expect.any(String) }]);
  });

  it('rejects unknown query parameters rather than dropping them', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/projects?page=0&sort=name', headers: tenant.jwt });
    const body = expectEnvelope(res, 422, 'validation_failed');
    expect((body.details as { field: string }[]).map((d) => d.field).sort()).toEqual(['query.page', 'query.sort']);
  });

  it('rejects query parameters on a route that declares none', async () => {
    const res = await t.app.inject({ method: 'GET', url: `/projects/${tenant.projectId}?expand=keys`, headers: tenant.jwt });
    const body = expectEnvelope(res, 422, 'validation_failed');
    expect(body.details).toEqual([{ field: 'query.expand', error: 'is not an allowed field' }]);
  });
});

describe('401, 403 and 409', () => {
  it('answers a missing token with 401', async () => {
    expectEnvelope(await t.app.inject({ method: 'GET', url: '/auth/me' }), 401, 'unauthorized');
  });

  it('answers an unknown API key with 401', async () => {
    const res = await t.app.inject({ method: 'GET', url: `/projects/${tenant.projectId}`, headers: { 'x-api-key': 'hrd_live_nope' } });
    const body = expectEnvelope(res, 401, 'unauthorized');
    expect(body.message).toBe('Invalid API key');
  });

  it('answers a missing x-org-id with 403', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/projects', headers: { authorization: tenant.jwt.authorization! } });
    expect(res.statusCode).toBe(403);
    expectEnvelope(res, 403, res.json<{ code: string }>().code);
  });

  it('answers inviting an existing member with 409', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/invitations',
      headers: tenant.jwt,
      payload: { email: tenant.email, role: 'ADMIN' },
    });
    expectEnvelope(res, 409, 'already_member');
  });
});

describe('what the router and the HTTP parser refuse', () => {
  it('answers an overlong path parameter with 414 in the envelope', async () => {
    const res = await t.app.inject({ method: 'GET', url: `/projects/${'p'.repeat(2296)}`, headers: { ...tenant.jwt, 'x-request-id': 'rid-414' } });
    const body = expectEnvelope(res, 414, 'uri_too_long');
    expect(body.requestId).toBe('rid-414');
  });

  it('answers a malformed percent-encoding in the path with 400 in the envelope', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/projects/%E0%A4%A', headers: tenant.jwt });
    expectEnvelope(res, 400, 'bad_url');
  });

  it('reads back every externalId identify accepts, up to 255 characters, whatever they are', async () => {
    for (const externalId of ['u'.repeat(255), '日'.repeat(255), '%/?#'.repeat(63) + 'end']) {
      const keys = pushSubscription();
      const registered = await t.app.inject({
        method: 'POST',
        url: '/subscribers',
        headers: tenant.live,
        payload: { projectId: tenant.projectId, ...keys, userAgent: CHROME_UA },
      });
      expect(registered.statusCode, registered.body).toBe(201);
      const identified = await t.app.inject({
        method: 'POST',
        url: '/subscribers/identify',
        headers: tenant.live,
        payload: { token: registered.json().token, externalId },
      });
      expect(identified.statusCode, identified.body).toBe(200);
      const read = await t.app.inject({
        method: 'GET',
        url: `/subscribers/project/${tenant.projectId}/external-id/${encodeURIComponent(externalId)}`,
        headers: tenant.live,
      });
      expect(read.statusCode, read.body).toBe(200);
      expect(read.json<{ data: { id: string; externalId: string }[] }>().data).toEqual([
        expect.objectContaining({ id: registered.json().id, externalId }),
      ]);
    }
  });

  it('documents the 414 on every route with a path parameter', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/docs/json' })).json<{
      paths: Record<string, Record<string, { responses: Record<string, { content?: unknown }> }>>;
    }>();
    const withParams = Object.entries(doc.paths).filter(([path]) => path.includes('{'));
    expect(withParams.length).toBeGreaterThan(10);
    for (const [path, operations] of withParams) {
      for (const [method, operation] of Object.entries(operations)) {
        expect(operation.responses['414']?.content, `${method} ${path}`).toEqual({ 'application/json': { schema: { $ref: '#/components/schemas/Error' } } });
      }
    }
  });

  describe('on a real listener', () => {
    let url: URL;
    beforeAll(async () => {
      url = new URL(await t.app.listen({ port: 0, host: '127.0.0.1' }));
    });

    /** Sends raw bytes and reads the whole answer (the server closes the connection after these errors). */
    const raw = (request: string) =>
      new Promise<{ status: number; headers: string; body: string }>((resolve, reject) => {
        const socket = connect(Number(url.port), url.hostname, () => socket.end(request));
        let data = '';
        socket.on('data', (chunk: Buffer) => (data += chunk.toString('utf8')));
        socket.on('error', reject);
        socket.on('close', () => {
          const [head = '', body = ''] = data.split('\r\n\r\n');
          resolve({ status: Number(head.split(' ')[1]), headers: head.toLowerCase(), body });
        });
      });

    it('answers headers over 16 KB with 431 in the envelope', async () => {
      const res = await raw(`GET /healthz HTTP/1.1\r\nHost: x\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`);
      expect(res.status).toBe(431);
      expect(res.headers).toContain('content-type: application/json');
      const body = JSON.parse(res.body) as Record<string, unknown>;
      expect(body).toEqual({ statusCode: 431, code: 'headers_too_large', message: expect.any(String), requestId: expect.stringMatching(UUID) });
      expect(res.headers).toContain(`x-request-id: ${String(body.requestId)}`);
    });

    it('answers a request that is not HTTP with 400 in the envelope', async () => {
      const res = await raw('NOT HTTP AT ALL\r\n\r\n');
      expect(res.status).toBe(400);
      expect(JSON.parse(res.body)).toEqual({ statusCode: 400, code: 'bad_request', message: expect.any(String), requestId: expect.stringMatching(UUID) });
    });

    it('answers an overlong path parameter with 414 in the envelope through the socket as well', async () => {
      const res = await fetch(new URL(`/projects/${'p'.repeat(3000)}`, url), { headers: tenant.jwt });
      expect(res.status).toBe(414);
      expect(await res.json()).toEqual({ statusCode: 414, code: 'uri_too_long', message: expect.any(String), requestId: res.headers.get('x-request-id') });
    });
  });
});

describe('500', () => {
  it('answers an unexpected error with Internal server error and no internals', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/test/boom' });
    const body = expectEnvelope(res, 500, 'internal_error');
    expect(body.message).toBe('Internal server error');
    expect(res.body).not.toContain('10.1.2.3');
    expect(res.body).not.toContain('herald_internal');
    expect(res.body).not.toMatch(/stack|at .*\.ts:\d+|Error:/);
  });
});

describe('request id', () => {
  it('echoes a client x-request-id in the header and the envelope', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/nope', headers: { 'x-request-id': 'client-req.42:a_b' } });
    expect(res.headers['x-request-id']).toBe('client-req.42:a_b');
    expect(res.json().requestId).toBe('client-req.42:a_b');
  });

  it('echoes it on validation errors and on 500 too', async () => {
    const invalid = await t.app.inject({ method: 'GET', url: '/projects?pageSize=500', headers: { ...tenant.jwt, 'x-request-id': 'rid-422' } });
    expect(invalid.json().requestId).toBe('rid-422');
    const boom = await t.app.inject({ method: 'GET', url: '/test/boom', headers: { 'x-request-id': 'rid-500' } });
    expect(boom.headers['x-request-id']).toBe('rid-500');
    expect(boom.json().requestId).toBe('rid-500');
  });

  it('sets the header on success as well', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'rid-ok' } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-request-id']).toBe('rid-ok');
  });

  it('generates a unique id when none is given', async () => {
    const a = await t.app.inject({ method: 'GET', url: '/nope' });
    const b = await t.app.inject({ method: 'GET', url: '/nope' });
    expect(a.json().requestId).toMatch(UUID);
    expect(a.headers['x-request-id']).toBe(a.json().requestId);
    expect(b.json().requestId).not.toBe(a.json().requestId);
  });

  it('replaces an unsafe or oversized x-request-id with a generated one', async () => {
    for (const given of ['has spaces and <script>', 'x'.repeat(129)]) {
      const res = await t.app.inject({ method: 'GET', url: '/nope', headers: { 'x-request-id': given } });
      expect(res.json().requestId).toMatch(UUID);
      expect(res.headers['x-request-id']).toBe(res.json().requestId);
    }
  });
});
