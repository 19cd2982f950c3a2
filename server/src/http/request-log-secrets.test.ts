// The request log of a full run holds none of the secrets its requests carried, in paths, queries or headers.
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTenant, type Tenant } from '../../test/fixtures.js';
import { startTestApp, type TestApp } from '../../test/harness.js';
import { seedSubscribers } from '../../test/subscriber-seed.js';
import { createLogger } from '../logger.js';

const lines: string[] = [];
const stream = new Writable({
  write(chunk: Buffer, _encoding, done) {
    lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    done();
  },
});

let t: TestApp;
let tenant: Tenant;

beforeAll(async () => {
  t = await startTestApp({}, { logger: createLogger('info', stream) });
  tenant = await createTenant(t);
});
afterAll(() => t.close());

const secret = (what: string) => `${what}${randomBytes(12).toString('hex')}`;

it('writes [redacted] for every credential a request carried, whatever the answer', async () => {
  const [subscriberId] = await seedSubscribers(t.database.pool, tenant.projectId, [{}]);
  const { rows } = await t.database.pool.query<{ token: string }>('SELECT token FROM subscribers WHERE id = $1', [subscriberId]);
  const subscriberToken = rows[0]!.token;
  const invited = await t.app.inject({ method: 'POST', url: '/invitations', headers: tenant.jwt, payload: { email: 'new-member@example.com', role: 'VIEWER' } });
  expect(invited.statusCode, invited.body).toBe(202);
  const invitationToken = invited.json<{ token: string }>().token;

  const used = {
    subscriberToken,
    invitationToken,
    unknownToken: secret('tok'),
    preferenceToken: secret('pref'),
    signature: secret('sig'),
    verifyToken: secret('verify'),
    streamToken: secret('jwt'),
    jwt: tenant.token,
    liveKey: tenant.liveKey,
    testKey: tenant.testKey,
  };
  const calls: { method: 'GET' | 'POST'; url: string; headers?: Record<string, string>; payload?: Record<string, unknown>; status?: number }[] = [
    { method: 'GET', url: `/subscribers/token/${subscriberToken}`, headers: tenant.live, status: 200 },
    { method: 'GET', url: `/subscribers/token/${used.unknownToken}`, headers: tenant.live, status: 404 },
    { method: 'GET', url: `/subscribers/token/${subscriberToken}`, headers: { 'x-api-key': `${tenant.liveKey}x` }, status: 401 },
    { method: 'POST', url: `/t/${subscriberToken}/delivered`, payload: {} },
    { method: 'POST', url: `/t/${used.unknownToken}/clicked`, payload: {} },
    { method: 'GET', url: `/u/${used.preferenceToken}` },
    { method: 'POST', url: `/u/${used.preferenceToken}/preferences`, payload: {} },
    { method: 'GET', url: `/e/open/cmp_1/${subscriberId}?s=${used.signature}` },
    { method: 'GET', url: `/e/click/cmp_1/${subscriberId}?u=${encodeURIComponent('https://example.com/')}&s=${used.signature}` },
    { method: 'GET', url: `/whatsapp/webhook/${tenant.projectId}?hub.mode=subscribe&hub.verify_token=${used.verifyToken}&hub.challenge=42` },
    { method: 'GET', url: `/campaigns/cmp_1/stream?token=${used.streamToken}&orgId=${tenant.orgId}` },
    { method: 'POST', url: '/invitations/accept', payload: { token: invitationToken, name: 'New', password: 'correct horse battery staple' }, status: 200 },
    { method: 'GET', url: `/projects/${tenant.projectId}`, headers: tenant.test },
  ];
  for (const call of calls) {
    const res = await t.app.inject({ method: call.method, url: call.url, headers: call.headers ?? {}, ...(call.payload && { payload: call.payload }) });
    if (call.status) expect(res.statusCode, `${call.url}: ${res.body}`).toBe(call.status);
  }
  await new Promise((resolve) => setImmediate(resolve));

  const log = lines.join('\n');
  expect(log).toContain('[redacted]');
  expect(log).toContain('/subscribers/token/[redacted]');
  expect(log).toContain('hub.verify_token=[redacted]');
  for (const [name, value] of Object.entries(used)) expect(log.includes(value), `${name} in the log`).toBe(false);
});
