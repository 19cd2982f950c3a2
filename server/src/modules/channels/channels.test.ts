// Channel configurations through HTTP: listed without secrets, a VAPID pair brought in and used for the next push,
// credentials sealed in the database (read raw), redacted in logs, sealed after a migration, and resealed by a rotation.
import { createECDH } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, CHROME_UA, createTenant, publishableKey, type Tenant } from '../../../test/fixtures.js';
import { startTestApp, type TestApp } from '../../../test/harness.js';
import { createFakeBrowser, startPushService, type PushService } from '../../../test/push-service.js';
import { createLogger } from '../../logger.js';
import { createSecretBox } from '../../shared/secret-box.js';
import { ChannelConfigService } from './channel-config.service.js';
import { createKeyring } from './secret-keyring.js';

let t: TestApp;
let owner: Tenant;
let push: PushService;
const logLines: string[] = [];

beforeAll(async () => {
  push = await startPushService();
  t = await startTestApp(
    { ALLOW_INSECURE_PUSH_ENDPOINTS: 'true', PUBLIC_URL: 'https://herald.example.com', HERALD_SECRET_KEY: 'k'.repeat(40) },
    { logger: createLogger('info', { write: (line: string) => void logLines.push(line) }) },
  );
  owner = await createTenant(t);
});
afterAll(async () => {
  await t.close();
  await push.close();
});

const vapidPair = () => {
  const ecdh = createECDH('prime256v1');
  ecdh.generateKeys();
  return { publicKey: ecdh.getPublicKey('base64url'), privateKey: ecdh.getPrivateKey('base64url') };
};

const rawPush = async (projectId: string) =>
  (await t.database.pool.query<{ credentials: string }>(`SELECT credentials FROM channel_configs WHERE project_id = $1 AND channel = 'push'`, [projectId]))
    .rows[0]!.credentials;

const putPush = (headers: Record<string, string>, pair: { publicKey: string; privateKey: string }, projectId = owner.projectId) =>
  t.app.inject({
    method: 'PUT',
    url: `/projects/${projectId}/channels/push`,
    headers,
    payload: { settings: { vapidPublicKey: pair.publicKey }, credentials: { vapidPrivateKey: pair.privateKey } },
  });

describe('GET /projects/:id/channels', () => {
  it('lists the push configuration with its public settings and the names of its credentials only', async () => {
    const project = (await t.app.inject({ method: 'GET', url: `/projects/${owner.projectId}`, headers: owner.jwt })).json<{ vapidPublicKey: string }>();
    for (const headers of [owner.jwt, owner.live]) {
      const res = await t.app.inject({ method: 'GET', url: `/projects/${owner.projectId}/channels`, headers });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({
        data: [
          {
            channel: 'push',
            provider: 'web-push',
            settings: { vapidPublicKey: project.vapidPublicKey },
            credentials: ['vapidPrivateKey'],
            createdAt: expect.any(String),
            updatedAt: expect.any(String),
          },
        ],
      });
    }
  });

  it('is a server route: a publishable key is refused, another tenant does not see it', async () => {
    const res = await t.app.inject({ method: 'GET', url: `/projects/${owner.projectId}/channels`, headers: await publishableKey(t, owner) });
    expect(res.statusCode).toBe(403);
    const other = await createTenant(t);
    expect((await t.app.inject({ method: 'GET', url: `/projects/${owner.projectId}/channels`, headers: other.jwt })).statusCode).toBe(404);
  });
});

describe('PUT /projects/:id/channels/push', () => {
  it('takes a VAPID pair brought from elsewhere: sealed at rest, never shown, and signing the very next push', async () => {
    const pair = vapidPair();
    const res = await putPush(owner.jwt, pair);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ channel: 'push', settings: { vapidPublicKey: pair.publicKey }, credentials: ['vapidPrivateKey'] });
    expect(res.body).not.toContain(pair.privateKey);

    const raw = await rawPush(owner.projectId);
    expect(raw).toMatch(/^hsb1\.[\w-]{8}\.[\w-]+\.[\w-]+$/);
    expect(raw).not.toContain(pair.privateKey);
    expect(await t.services.channels.open(raw)).toEqual({ vapidPrivateKey: pair.privateKey });

    const config = await t.app.inject({ method: 'GET', url: `/projects/${owner.projectId}/push-config`, headers: owner.live });
    expect(config.json()).toMatchObject({ vapidPublicKey: pair.publicKey });

    const browser = createFakeBrowser();
    const registered = await t.app.inject({
      method: 'POST',
      url: '/subscribers',
      headers: owner.live,
      payload: { projectId: owner.projectId, endpoint: push.endpointFor(browser), p256dh: browser.p256dh, auth: browser.auth, userAgent: CHROME_UA },
    });
    const sent = await t.app.inject({
      method: 'POST',
      url: '/transactional/send',
      headers: owner.live,
      payload: { token: registered.json<{ token: string }>().token, title: 'Signed', body: 'with the brought key' },
    });
    expect(sent.json()).toMatchObject({ delivered: true });
    const [received] = push.requestsFor(browser.id);
    expect(received!.headers.authorization).toContain(`k=${pair.publicKey}`);
    expect(received!.vapid).toBeDefined();
  });

  it('refuses a pair whose halves do not match (422), a MEMBER (403) and an API key (401: dashboard users only)', async () => {
    const mismatched = { publicKey: vapidPair().publicKey, privateKey: vapidPair().privateKey };
    const res = await putPush(owner.jwt, mismatched);
    expect(res.statusCode).toBe(422);
    expect(res.json().details).toEqual([expect.objectContaining({ field: 'credentials.vapidPrivateKey' })]);
    const member = await addMember(t, owner, 'MEMBER');
    expect((await putPush(member.headers, vapidPair())).statusCode).toBe(403);
    expect((await putPush(owner.live, vapidPair())).statusCode).toBe(401);
  });
});

describe('PUT /projects/:id/channels/email', () => {
  const smtp = { provider: 'smtp', settings: { host: 'smtp.example.com', port: 587, secure: false, ratePerSecond: 14 }, credentials: { user: 'herald', pass: 'smtp-p4ss-w0rd' } };
  const putEmail = (tenant: Tenant, headers: Record<string, string>, payload: Record<string, unknown>) =>
    t.app.inject({ method: 'PUT', url: `/projects/${tenant.projectId}/channels/email`, headers, payload });
  const rawEmail = async (projectId: string) =>
    (await t.database.pool.query(`SELECT provider, settings, credentials FROM channel_configs WHERE project_id = $1 AND channel = 'email'`, [projectId])).rows[0];

  it('chooses an SMTP server: settings shown, the account sealed and named only, the sending domain kept', async () => {
    const tenant = await createTenant(t);
    // emailConfig.domain names a verified sending domain only: one added, and marked as a passing check marks it.
    const added = await t.app.inject({ method: 'POST', url: `/projects/${tenant.projectId}/email-domains`, headers: tenant.jwt, payload: { domain: 'mail.example.com' } });
    expect(added.statusCode, added.body).toBe(201);
    await t.database.pool.query(`UPDATE email_domains SET status = 'verified', verified_at = now() WHERE project_id = $1`, [tenant.projectId]);
    const patched = await t.app.inject({ method: 'PATCH', url: `/projects/${tenant.projectId}`, headers: tenant.jwt, payload: { emailConfig: { domain: 'mail.example.com' } } });
    expect(patched.statusCode, patched.body).toBe(200);
    const res = await putEmail(tenant, tenant.jwt, smtp);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      channel: 'email',
      provider: 'smtp',
      // Neither tls nor secure: true asked for, TLS is required (the host is no operator-allowed relay).
      settings: { domain: 'mail.example.com', host: 'smtp.example.com', port: 587, tls: 'required', secure: false, ratePerSecond: 14 },
      credentials: ['user', 'pass'],
    });
    expect(res.body).not.toContain(smtp.credentials.pass);
    const raw = await rawEmail(tenant.projectId);
    expect(raw.credentials).toMatch(/^hsb1\./);
    expect(raw.credentials).not.toContain(smtp.credentials.pass);
    expect(await t.services.channels.open(raw.credentials)).toEqual(smtp.credentials);

    // Another server replaces the first as a whole: its rate is gone, the project's domain stays; an open relay needs no account.
    const relay = await putEmail(tenant, tenant.jwt, { provider: 'smtp', settings: { host: '192.0.2.25', port: 465, secure: true } });
    expect(relay.json()).toMatchObject({ settings: { domain: 'mail.example.com', host: '192.0.2.25', port: 465, tls: 'implicit', secure: true }, credentials: [] });
    expect(relay.json().settings).not.toHaveProperty('ratePerSecond');
    const project = await t.app.inject({ method: 'GET', url: `/projects/${tenant.projectId}`, headers: tenant.jwt });
    expect(project.json()).toMatchObject({ emailConfig: { domain: 'mail.example.com' } });
  });

  it('is read by the engine at once: the next send goes through the new server', async () => {
    const tenant = await createTenant(t);
    expect((await t.services.delivery.sendingProjects([tenant.projectId])).get(tenant.projectId)!.channels.email).toBeUndefined();
    await putEmail(tenant, tenant.jwt, smtp);
    expect((await t.services.delivery.sendingProjects([tenant.projectId])).get(tenant.projectId)!.channels.email).toEqual({
      provider: 'smtp',
      settings: { ...smtp.settings, tls: 'required' },
      credentials: smtp.credentials,
    });
  });

  it('refuses what is not an SMTP server (422), a MEMBER (403) and an API key (401: dashboard users only)', async () => {
    const tenant = await createTenant(t);
    for (const payload of [
      { ...smtp, provider: 'ses' },
      { ...smtp, settings: { ...smtp.settings, port: 0 } },
      { ...smtp, settings: { ...smtp.settings, host: 'smtp example com' } },
      { ...smtp, settings: { ...smtp.settings, domain: 'other.example.com' } },
      { ...smtp, credentials: { user: 'herald' } },
    ]) {
      expect((await putEmail(tenant, tenant.jwt, payload)).statusCode).toBe(422);
    }
    const member = await addMember(t, tenant, 'MEMBER');
    expect((await putEmail(tenant, member.headers, smtp)).statusCode).toBe(403);
    expect((await putEmail(tenant, tenant.live, smtp)).statusCode).toBe(401);
    expect(await rawEmail(tenant.projectId)).toBeUndefined();
  });

  it('logs no SMTP password', async () => {
    t.app.log.info({ smtp: { host: 'smtp.example.com', pass: smtp.credentials.pass } }, 'smtp pool');
    expect(logLines.join('\n')).toContain('smtp pool');
    expect(logLines.join('\n')).not.toContain(smtp.credentials.pass);
  });
});

describe('sealing', () => {
  it('logs no credential, opened or as sent', async () => {
    const pair = vapidPair();
    await putPush(owner.jwt, pair);
    t.app.log.info({ credentials: { vapidPrivateKey: pair.privateKey }, item: { vapid: { privateKey: pair.privateKey } } }, 'provider call');
    expect(logLines.join('\n')).toContain('provider call');
    expect(logLines.join('\n')).not.toContain(pair.privateKey);
  });

  it('seals credentials a migration copied in the clear, at start-up', async () => {
    const project = await createTenant(t);
    await t.database.pool.query(`UPDATE channel_configs SET credentials = $2 WHERE project_id = $1`, [
      project.projectId,
      'plain:{"vapidPrivateKey":"copied-by-0011"}',
    ]);
    expect(await t.services.channels.open(await rawPush(project.projectId))).toEqual({ vapidPrivateKey: 'copied-by-0011' });
    expect(await t.services.channels.sealUnsealed()).toBeGreaterThanOrEqual(1);
    const sealed = await rawPush(project.projectId);
    expect(sealed).toMatch(/^hsb1\./);
    expect(await t.services.channels.open(sealed)).toEqual({ vapidPrivateKey: 'copied-by-0011' });
    expect(await t.services.channels.sealUnsealed()).toBe(0);
  });

  it('rotates HERALD_SECRET_KEY: rotate-secret-key reseals under the new key what the previous one sealed', async () => {
    const before = await rawPush(owner.projectId);
    const plain = await t.services.channels.open(before);
    const rotated = new ChannelConfigService(t.database.db, createKeyring(t.database.db, { current: 'n'.repeat(40), previous: 'k'.repeat(40) }));
    expect(await rotated.rotate()).toBeGreaterThanOrEqual(1);
    const after = await rawPush(owner.projectId);
    expect(after.split('.')[1]).not.toBe(before.split('.')[1]);
    expect(createSecretBox('n'.repeat(40)).open(after)).toBe(JSON.stringify(plain));
    expect(() => createSecretBox('k'.repeat(40)).open(after)).toThrow(/neither HERALD_SECRET_KEY/);
    expect(await rotated.rotate()).toBe(0);
  });
});

describe('secret box', () => {
  const box = createSecretBox('s'.repeat(32));

  it('seals with a fresh IV each time and opens what it sealed', () => {
    const a = box.seal('hello');
    expect(a).not.toBe(box.seal('hello'));
    expect(box.open(a)).toBe('hello');
  });

  it('refuses an altered value and one of another key', () => {
    const sealed = box.seal('hello');
    const [version, kid, iv, body] = sealed.split('.');
    const flipped = Buffer.from(body!, 'base64url');
    flipped[0]! ^= 1;
    expect(() => box.open([version, kid, iv, flipped.toString('base64url')].join('.'))).toThrow();
    expect(() => createSecretBox('t'.repeat(32)).open(sealed)).toThrow(/sealed by key/);
    expect(() => box.open('plain text')).toThrow(/not a sealed secret/);
  });
});
