// A tenant's SMTP server through the outbound guard and TLS: refused hosts at save and at connect (no connection made),
// and `tls: required | opportunistic | implicit` against real sinks with and without TLS.
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:net';
import { hostname } from 'node:os';
import { inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant, type Tenant } from '../../../../test/fixtures.js';
import { startTestApp, type TestApp } from '../../../../test/harness.js';
import { startSmtpPeer, type SmtpPeer } from '../../../../test/smtp-peer.js';
import { makeTestCertificates, type TestCertificates } from '../../../../test/test-certificates.js';
import { subscribers, type EmailContent } from '../../../db/schema.js';
import { channelAudience } from '../../../modules/segments/index.js';
import { newId } from '../../../shared/ids.js';
import { announceDeliveries } from '../../delivery-notifications.js';
import { insertMessage, insertMessageStats, snapshotDeliveries } from '../../delivery.repository.js';

const ENV = { PUBLIC_URL: 'https://herald.example.com', EMAIL_BOUNCE_DOMAIN: 'bounces.herald.example.com', DELIVERY_POLL_INTERVAL_MS: '50' };
const content: EmailContent = { subject: 'Hello', html: '<p>Hello</p>', from: { email: 'news@mail.example.com' } };

interface DeliveryRow {
  status: string;
  reason: string | null;
  provider_code: string | null;
  provider_error: string | null;
}

/** Sends one email from `tenant` through the engine of `t` and waits until its delivery settles. */
async function sendOne(t: TestApp, tenant: Tenant): Promise<{ row: DeliveryRow; to: string }> {
  const to = `reader-${randomBytes(6).toString('hex')}@example.org`;
  const contact = await t.app.inject({ method: 'POST', url: '/contacts', headers: tenant.live, payload: { projectId: tenant.projectId, email: to } });
  expect(contact.statusCode, contact.body).toBe(201);
  const messageId = newId('msg');
  await t.database.db.transaction(async (tx) => {
    await insertMessage(tx, { id: messageId, projectId: tenant.projectId, channel: 'email', source: 'campaign', campaignId: null, sandbox: false, content, options: {} });
    await insertMessageStats(tx, messageId);
    const audience = channelAudience({ organizationId: tenant.orgId, projectId: tenant.projectId, sandbox: false }, 'email', inArray(subscribers.id, [contact.json<{ id: string }>().id]));
    await snapshotDeliveries(tx, { id: messageId, projectId: tenant.projectId, channel: 'email' }, audience);
  });
  await announceDeliveries(t.database.db);
  const deadline = Date.now() + 15_000;
  for (;;) {
    const { rows } = await t.database.pool.query<DeliveryRow>(`SELECT status, reason, provider_code, provider_error FROM deliveries WHERE message_id = $1`, [messageId]);
    if (rows[0] && !['queued', 'sending'].includes(rows[0].status)) return { row: rows[0], to };
    if (Date.now() > deadline) throw new Error(`not settled: ${JSON.stringify(rows)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const putSmtp = (t: TestApp, tenant: Tenant, settings: Record<string, unknown>) =>
  t.app.inject({ method: 'PUT', url: `/projects/${tenant.projectId}/channels/email`, headers: tenant.jwt, payload: { provider: 'smtp', settings } });

describe('SMTP servers a tenant names, without OUTBOUND_ALLOWED_HOSTS', () => {
  let t: TestApp;
  let listener: Server;
  let listenerPort: number;
  let connections = 0;

  beforeAll(async () => {
    // What an attacker would aim at: a plain listener on loopback, counting every connection made to it.
    listener = createServer((socket) => {
      connections++;
      socket.end('220 not for Herald\r\n');
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    listenerPort = (listener.address() as { port: number }).port;
    t = await startTestApp({ ...ENV, OUTBOUND_ALLOWED_HOSTS: '' });
    t.services.delivery.start();
  });
  afterAll(async () => {
    await t.services.delivery.stop();
    await t.services.close();
    await t.close();
    await new Promise((resolve) => listener.close(resolve));
  });

  it('refuses loopback, private, link-local, unique-local and metadata hosts at save: 422 naming settings.host, nothing saved', async () => {
    const tenant = await createTenant(t);
    const hosts = ['127.0.0.1', '127.1', '169.254.169.254', '10.0.0.5', '172.16.3.4', '192.168.1.1', '100.100.100.200', '0.0.0.0', '::1', 'fd00:ec2::254', 'fe80::1', '::ffff:127.0.0.1', 'localhost', 'LocalHost', 'smtp.localhost', 'metadata.google.internal', 'metadata.goog', 'instance-data'];
    for (const host of hosts) {
      const res = await putSmtp(t, tenant, { host, port: 25 });
      expect(res.statusCode, `${host}: ${res.body}`).toBe(422);
      expect(res.json().details, host).toEqual([{ field: 'settings.host', error: expect.stringMatching(/^must not (be|resolve to) /) }]);
    }
    const { rows } = await t.database.pool.query(`SELECT 1 FROM channel_configs WHERE project_id = $1 AND channel = 'email'`, [tenant.projectId]);
    expect(rows).toEqual([]);
    expect(connections).toBe(0);
  });

  it('refuses a host name whose DNS answer is a loopback or private address', async () => {
    const tenant = await createTenant(t);
    // The machine's own name: /etc/hosts answers it with a loopback (or the container's private) address.
    const res = await putSmtp(t, tenant, { host: hostname(), port: 25 });
    expect(res.statusCode, res.body).toBe(422);
    expect(res.json().details).toEqual([{ field: 'settings.host', error: expect.stringMatching(new RegExp(`must not resolve to a loopback, private or other non-public address \\(${hostname()} is `)) }]);
  });

  it('takes a public host, with TLS required', async () => {
    const tenant = await createTenant(t);
    const res = await putSmtp(t, tenant, { host: '192.0.2.10', port: 587 });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().settings).toMatchObject({ host: '192.0.2.10', port: 587, tls: 'required', secure: false });
  });

  it('checks again at connect time: settings pointing at loopback (written in the database) fail the send, and no connection is made', async () => {
    for (const host of ['127.0.0.1', 'localhost', hostname()]) {
      const tenant = await createTenant(t);
      expect((await putSmtp(t, tenant, { host: '192.0.2.10', port: 587 })).statusCode).toBe(200);
      // Saved before the guard existed, or while the operator allowed the host.
      await t.database.pool.query(`UPDATE channel_configs SET settings = settings || $2::jsonb WHERE project_id = $1 AND channel = 'email'`, [
        tenant.projectId,
        JSON.stringify({ host, port: listenerPort, tls: 'opportunistic' }),
      ]);
      const { row } = await sendOne(t, tenant);
      expect(row, host).toMatchObject({ status: 'failed', reason: 'provider_error', provider_code: 'blocked_host' });
      expect(row.provider_error, host).toMatch(/SMTP server refused by the outbound guard/);
    }
    expect(connections).toBe(0);
  });
});

describe('SMTP servers the operator allowed (OUTBOUND_ALLOWED_HOSTS)', () => {
  let t: TestApp;
  let relay: SmtpPeer;

  beforeAll(async () => {
    relay = await startSmtpPeer();
    t = await startTestApp({ ...ENV, OUTBOUND_ALLOWED_HOSTS: 'localhost, 10.0.0.0/8' });
    t.services.delivery.start();
  });
  afterAll(async () => {
    await t.services.delivery.stop();
    await t.services.close();
    await t.close();
    await relay.close();
  });

  it('takes an allowed name or subnet (TLS opportunistic by default) and sends through the relay on localhost; the rest stays refused', async () => {
    const tenant = await createTenant(t);
    const inSubnet = await putSmtp(t, tenant, { host: '10.1.2.3', port: 25 });
    expect(inSubnet.statusCode, inSubnet.body).toBe(200);
    expect(inSubnet.json().settings).toMatchObject({ tls: 'opportunistic' });
    for (const host of ['127.0.0.1', '192.168.1.1', 'metadata.google.internal']) expect((await putSmtp(t, tenant, { host, port: 25 })).statusCode, host).toBe(422);

    const local = await putSmtp(t, tenant, { host: 'localhost', port: relay.port });
    expect(local.statusCode, local.body).toBe(200);
    expect(local.json().settings).toMatchObject({ host: 'localhost', tls: 'opportunistic' });
    const { row, to } = await sendOne(t, tenant);
    expect(row).toMatchObject({ status: 'sent', provider_code: 'smtp_250' });
    expect(relay.received(to)).toHaveLength(1);
  });
});

describe('SMTP TLS: required, opportunistic, implicit', () => {
  let t: TestApp;
  let certificates: TestCertificates;
  let startTls: SmtpPeer;
  let plain: SmtpPeer;
  let implicit: SmtpPeer;

  beforeAll(async () => {
    certificates = makeTestCertificates('IP:127.0.0.1');
    const tls = { key: certificates.key, cert: certificates.cert };
    [startTls, plain, implicit] = await Promise.all([startSmtpPeer({ tls }), startSmtpPeer(), startSmtpPeer({ tls: { ...tls, implicit: true } })]);
    // The harness allows 127.0.0.1 (the operator's own relay); the sinks' certificates chain to the test's CA.
    t = await startTestApp({ ...ENV, EMAIL_SMTP_CA_FILE: certificates.caFile });
    t.services.delivery.start();
  });
  afterAll(async () => {
    await t.services.delivery.stop();
    await t.services.close();
    await t.close();
    await Promise.all([startTls.close(), plain.close(), implicit.close()]);
    certificates.remove();
  });

  const sendVia = async (peer: SmtpPeer, settings: Record<string, unknown>) => {
    const tenant = await createTenant(t);
    const saved = await putSmtp(t, tenant, { host: peer.host, port: peer.port, ...settings });
    expect(saved.statusCode, saved.body).toBe(200);
    return { saved: saved.json<{ settings: Record<string, unknown> }>().settings, ...(await sendOne(t, tenant)) };
  };

  it('required: sent over STARTTLS when offered; against a server without it the send fails and the server receives nothing', async () => {
    const secured = await sendVia(startTls, { tls: 'required' });
    expect(secured.row).toMatchObject({ status: 'sent', provider_code: 'smtp_250' });
    expect(startTls.received(secured.to).map((m) => m.secure)).toEqual([true]);

    const refused = await sendVia(plain, { tls: 'required' });
    expect(refused.row).toMatchObject({ status: 'failed', reason: 'provider_error', provider_code: 'smtp_tls_unavailable' });
    expect(refused.row.provider_error).toMatch(/does not offer STARTTLS and this account requires TLS/);
    expect(plain.transmitted(refused.to)).toEqual([]);
    expect(plain.attempts(refused.to)).toBe(0);
  });

  it('opportunistic: STARTTLS when offered, in the clear otherwise', async () => {
    const secured = await sendVia(startTls, { tls: 'opportunistic' });
    expect(secured.row).toMatchObject({ status: 'sent' });
    expect(startTls.received(secured.to).map((m) => m.secure)).toEqual([true]);
    const clear = await sendVia(plain, { tls: 'opportunistic' });
    expect(clear.row).toMatchObject({ status: 'sent' });
    expect(plain.received(clear.to).map((m) => m.secure)).toEqual([false]);
  });

  it('implicit (or the older secure: true): TLS from the first byte', async () => {
    const sent = await sendVia(implicit, { tls: 'implicit' });
    expect(sent.row).toMatchObject({ status: 'sent' });
    expect(implicit.received(sent.to).map((m) => m.secure)).toEqual([true]);
    const older = await sendVia(implicit, { secure: true });
    expect(older.saved).toMatchObject({ tls: 'implicit', secure: true });
    expect(older.row).toMatchObject({ status: 'sent' });
  });

  it('defaults to opportunistic on an operator-allowed host, and refuses a secure that contradicts tls', async () => {
    const allowed = await sendVia(plain, { secure: false });
    expect(allowed.saved).toMatchObject({ tls: 'opportunistic', secure: false });
    expect(allowed.row).toMatchObject({ status: 'sent' });
    const tenant = await createTenant(t);
    const contradiction = await putSmtp(t, tenant, { host: plain.host, port: plain.port, tls: 'required', secure: true });
    expect(contradiction.statusCode).toBe(422);
    expect(contradiction.json().details).toEqual([{ field: 'settings.secure', error: 'secure: true contradicts tls: required (give tls alone)' }]);
  });

  it('refuses a certificate the server shows that chains to no trusted CA', async () => {
    // One attempt: a failed handshake is otherwise retried, as a broken connection is.
    const untrusted = await startTestApp({ ...ENV, DELIVERY_MAX_ATTEMPTS: '1' });
    untrusted.services.delivery.start();
    try {
      const tenant = await createTenant(untrusted);
      expect((await putSmtp(untrusted, tenant, { host: startTls.host, port: startTls.port, tls: 'required' })).statusCode).toBe(200);
      const { row, to } = await sendOne(untrusted, tenant);
      expect(row).toMatchObject({ status: 'failed', reason: 'provider_error' });
      expect(row.provider_error).toMatch(/certificate/);
      expect(startTls.transmitted(to)).toEqual([]);
    } finally {
      await untrusted.services.delivery.stop();
      await untrusted.services.close();
      await untrusted.close();
    }
  });
});
