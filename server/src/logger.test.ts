// Log redaction: credentials, passwords and key secrets never reach the log output.
import { Writable } from 'node:stream';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant, type Tenant } from '../test/fixtures.js';
import { startTestApp, type TestApp } from '../test/harness.js';
import { createLogger, redactUrl } from './logger.js';

/** A stream that keeps every line pino writes. */
function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  return { stream, lines, text: () => lines.join('\n') };
}

const PERSONAL = 'jane.doe+secret@example.com';

const flush = () => new Promise((resolve) => setImmediate(resolve));

const SECRETS = {
  bearer: 'eyJhbGciOiJIUzI1NiJ9.SECRET-JWT-PAYLOAD.sig',
  apiKey: 'hrd_live_SECRETAPIKEY0123456789',
  password: 'SECRET-password-hunter2',
  newPassword: 'SECRET-new-password-42',
  key: 'hrd_test_SECRETKEYVALUE987654',
  accessToken: 'SECRET-ACCESS-TOKEN-abcdef',
  queryToken: 'SECRET-QUERY-TOKEN-xyz',
  jwtSecret: 'SECRET-jwt-secret-0123456789-0123456789',
};

describe('createLogger redaction', () => {
  it('redacts headers, passwords, keys, tokens and secret query parameters', async () => {
    const out = capture();
    const logger = createLogger('info', out.stream);

    logger.info({ req: { method: 'GET', url: `/track?id=1&token=${SECRETS.queryToken}`, headers: { authorization: `Bearer ${SECRETS.bearer}`, 'x-api-key': SECRETS.apiKey } } }, 'incoming request');
    logger.info({ headers: { authorization: `Bearer ${SECRETS.bearer}`, 'x-api-key': SECRETS.apiKey } }, 'outgoing call');
    logger.info({ request: { headers: { Authorization: `Bearer ${SECRETS.bearer}`, 'x-api-key': SECRETS.apiKey } } }, 'nested headers');
    logger.info({ password: SECRETS.password, body: { password: SECRETS.password, newPassword: SECRETS.newPassword } }, 'passwords');
    logger.info({ key: SECRETS.key, apiKey: { key: SECRETS.key } }, 'key created');
    logger.info({ access_token: SECRETS.accessToken, result: { access_token: SECRETS.accessToken } }, 'login');
    logger.info({ config: { jwtSecret: SECRETS.jwtSecret } }, 'config');
    logger.info({ req: { method: 'GET', url: `/x?access_token=${SECRETS.accessToken}&api_key=${SECRETS.apiKey}` } }, 'query');
    await flush();

    expect(out.lines.length).toBe(8);
    for (const secret of Object.values(SECRETS)) expect(out.text()).not.toContain(secret);
    // The lines are still useful: non-secret fields and the redaction marker remain.
    expect(out.text()).toContain('[redacted]');
    expect(out.text()).toContain('/track?id=1&token=[redacted]');
    expect(JSON.parse(out.lines[0]!)).toMatchObject({ msg: 'incoming request', req: { method: 'GET' } });
  });

  it('redacts secret query parameters by name, whatever their position', () => {
    expect(redactUrl('/a?token=s1&b=2&key=s2&password=s3')).toBe('/a?token=[redacted]&b=2&key=[redacted]&password=[redacted]');
    expect(redactUrl('/a?API_KEY=s1')).toBe('/a?API_KEY=[redacted]');
    expect(redactUrl('/a?access_token=s1')).toBe('/a?access_token=[redacted]');
    expect(redactUrl('/a?page=2&tokens=1')).toBe('/a?page=2&tokens=1');
    expect(redactUrl(undefined)).toBeUndefined();
  });

  it('matches a parameter by its name as the route reads it: percent-encoded or with + for spaces', () => {
    expect(redactUrl('/s?%74oken=s1&t%6Fken=s2&%6FrgId=org_1')).toBe('/s?%74oken=[redacted]&t%6Fken=[redacted]&%6FrgId=org_1');
    expect(redactUrl('/s?%54OKEN=s1&api%5Fkey=s2&access%5ftoken=s3')).toBe('/s?%54OKEN=[redacted]&api%5Fkey=[redacted]&access%5ftoken=[redacted]');
    expect(redactUrl('/s?to+ken=s1&%zz=2&token')).toBe('/s?to+ken=s1&%zz=2&token');
    expect(redactUrl('/s?a=1&token=s1=s2&b=%74oken')).toBe('/s?a=1&token=[redacted]&b=%74oken');
    expect(redactUrl('/no/query')).toBe('/no/query');
  });
});

describe('app logs', () => {
  const out = capture();
  let t: TestApp;
  let tenant: Tenant;

  beforeAll(async () => {
    t = await startTestApp(
      {},
      {
        logger: createLogger('info', out.stream),
        beforeReady: (app) => {
          app.get('/test/fail', { config: { access: { auth: 'public' } } }, async () => {
            throw new Error('unexpected');
          });
          // A query PostgreSQL refuses, quoting the personal data it was given.
          app.get('/test/db-fail', { config: { access: { auth: 'public' } } }, async () => {
            await t.database.db.execute(sql`select ${PERSONAL}::int as n`);
          });
        },
      },
    );
    tenant = await createTenant(t);
  });
  afterAll(() => t.close());

  it('never writes the credentials of a request', async () => {
    const before = out.lines.length;
    const headers = { 'x-api-key': tenant.liveKey, authorization: `Bearer ${tenant.token}`, 'x-request-id': 'log-check-1' };
    const withQuery = await t.app.inject({ method: 'GET', url: `/projects/${tenant.projectId}?token=${SECRETS.queryToken}`, headers });
    // The route declares no query parameters, so it refuses them (422) — and still logs the URL, redacted.
    expect(withQuery.statusCode).toBe(422);
    const byKey = await t.app.inject({ method: 'GET', url: `/projects/${tenant.projectId}`, headers: { 'x-api-key': tenant.liveKey } });
    expect(byKey.statusCode).toBe(200);
    const byJwt = await t.app.inject({ method: 'GET', url: '/projects', headers: tenant.jwt });
    expect(byJwt.statusCode).toBe(200);
    const failed = await t.app.inject({ method: 'GET', url: '/test/fail', headers });
    expect(failed.statusCode).toBe(500);
    await flush();

    const written = out.lines.slice(before).join('\n');
    expect(written).toContain('log-check-1'); // the request id is on the log lines
    expect(written).toContain(`/projects/${tenant.projectId}?token=[redacted]`);
    for (const secret of [tenant.liveKey, tenant.token, SECRETS.queryToken]) expect(written).not.toContain(secret);
  });

  it('never writes the token of a stream URL, however its name is percent-encoded', async () => {
    const before = out.lines.length;
    const jwt = encodeURIComponent(tenant.token);
    for (const name of ['%74oken', 't%6Fken', '%74%6F%6B%65%6E']) {
      const res = await t.app.inject({ method: 'GET', url: `/campaigns/cmp_none/stream?${name}=${jwt}&%6FrgId=${tenant.orgId}`, headers: { accept: 'text/event-stream' } });
      // The route read the token: it authenticated the caller, and the campaign is simply not found.
      expect(res.statusCode, res.body).toBe(404);
    }
    await flush();
    const written = out.lines.slice(before).join('\n');
    expect(written).toContain(`/campaigns/cmp_none/stream?%74oken=[redacted]&%6FrgId=${tenant.orgId}`);
    expect(written).toContain('t%6Fken=[redacted]');
    expect(written).not.toContain(tenant.token);
    expect(written).not.toContain(tenant.token.split('.')[2]!);
  });

  it('never writes a password or the issued token of a login', async () => {
    const before = out.lines.length;
    const res = await t.app.inject({ method: 'POST', url: '/auth/login', payload: { email: tenant.email, password: tenant.password } });
    expect(res.statusCode).toBe(200);
    const wrong = await t.app.inject({ method: 'POST', url: '/auth/login', payload: { email: tenant.email, password: SECRETS.password } });
    expect(wrong.statusCode).toBe(401);
    await flush();

    const written = out.lines.slice(before).join('\n');
    expect(out.lines.length).toBeGreaterThan(before);
    for (const secret of [tenant.password, SECRETS.password, res.json<{ access_token: string }>().access_token]) {
      expect(written).not.toContain(secret);
    }
  });

  it('logs a failed query by its SQLSTATE and statement, not its parameters or the value PostgreSQL quotes', async () => {
    const before = out.lines.length;
    const res = await t.app.inject({ method: 'GET', url: '/test/db-fail', headers: { 'x-request-id': 'log-check-sql' } });
    expect(res.statusCode).toBe(500);
    await flush();
    const written = out.lines.slice(before).join('\n');
    expect(written).not.toContain(PERSONAL);
    const failure = out.lines.slice(before).map((line) => JSON.parse(line) as Record<string, unknown>).find((line) => line.msg === 'request failed');
    expect(failure).toMatchObject({
      reqId: 'log-check-sql',
      err: { code: '22P02', statement: 'select $1::int as n', message: 'database error 22P02', stack: expect.stringContaining('at ') },
    });
  });

  it('logs a 500 with its request id and error, not the request credentials', async () => {
    const before = out.lines.length;
    await t.app.inject({ method: 'GET', url: '/test/fail', headers: { 'x-request-id': 'log-check-500', 'x-api-key': tenant.liveKey } });
    await flush();
    const lines = out.lines.slice(before).map((line) => JSON.parse(line) as Record<string, unknown>);
    const failure = lines.find((line) => line.msg === 'request failed');
    expect(failure).toMatchObject({ level: 50, reqId: 'log-check-500', err: { message: 'unexpected' } });
    expect(JSON.stringify(lines)).not.toContain(tenant.liveKey);
  });
});
