// Email through Amazon SES (a local SES that checks SigV4 and DKIM): the account read when chosen, raw DKIM-signed
// sends that survive SES's own Message-ID and Date, SES's refusals and throttling, and a sandbox account's limits.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type DnsServer } from '../../../../test/dns-server.js';
import { createTenant, type Tenant } from '../../../../test/fixtures.js';
import { startTestApp, type TestApp } from '../../../../test/harness.js';
import { startSesPeer, type SesPeer } from '../../../../test/ses-peer.js';
import type { EmailDomain } from '../../../modules/email-domains/email-domain.service.js';
import { inArray } from 'drizzle-orm';
import { subscribers } from '../../../db/schema.js';
import { channelAudience } from '../../../modules/segments/index.js';
import { newId } from '../../../shared/ids.js';
import { announceDeliveries } from '../../delivery-notifications.js';
import { insertMessage, insertMessageStats, snapshotDeliveries } from '../../delivery.repository.js';

const DOMAIN = 'shop.example.com';
const REGION = 'eu-west-1';
const CREDENTIALS = { accessKeyId: 'AKIAHERALDTEST000001', secretAccessKey: 'ses-secret-key-not-shown-anywhere' };

let t: TestApp;
let dns: DnsServer;
let ses: SesPeer;
let tenant: Tenant;

const query = async <T = Record<string, unknown>>(text: string, params: unknown[] = []) => (await t.database.pool.query(text, params)).rows as T[];

const chooseSes = (settings: Record<string, unknown> = {}, credentials: Record<string, string> = CREDENTIALS) =>
  t.app.inject({
    method: 'PUT',
    url: `/projects/${tenant.projectId}/channels/email`,
    headers: tenant.jwt,
    payload: { provider: 'ses', settings: { region: REGION, configurationSet: 'herald-events', ...settings }, credentials },
  });

beforeAll(async () => {
  dns = await startDnsServer();
  ses = await startSesPeer({ credentials: CREDENTIALS });
  t = await startTestApp({
    DNS_SERVERS: dns.address,
    SES_ENDPOINT: ses.url,
    PUBLIC_URL: 'https://herald.example.com',
    EMAIL_BOUNCE_DOMAIN: 'bounces.herald.example.com',
    DELIVERY_POLL_INTERVAL_MS: '50',
    DELIVERY_RETRY_BASE_MS: '100',
    TRANSACTIONAL_RETRY_BUDGET_MS: '1500',
  });
  tenant = await createTenant(t);
  const added = await t.app.inject({ method: 'POST', url: `/projects/${tenant.projectId}/email-domains`, headers: tenant.jwt, payload: { domain: DOMAIN } });
  const domain = added.json<EmailDomain>();
  for (const record of domain.records) if (record.checked) dns.setTxt(record.name, record.value);
  await t.app.inject({ method: 'POST', url: `/projects/${tenant.projectId}/email-domains/${domain.id}/verify`, headers: tenant.jwt });
  // What receivers see in DNS: the key of the verified domain.
  const dkim = domain.records.find((r) => r.purpose === 'dkim')!;
  ses.dkim = { domain: DOMAIN, selector: dkim.name.split('._domainkey.')[0]!, publicKey: dkim.value.split('p=')[1]! };
  t.services.delivery.start();
});
afterAll(async () => {
  await t.services.delivery.stop();
  await t.services.close();
  await t.close();
  await ses.close();
  await dns.close();
});

let addresses = 0;
const newAddress = () => `reader${++addresses}-${Date.now()}@example.org`;

const sendEmail = async (to: string) => {
  const res = await t.app.inject({
    method: 'POST',
    url: '/transactional/email',
    headers: tenant.live,
    payload: { to, subject: 'Your receipt', htmlContent: '<p>See <a href="https://shop.example.com/orders/42">your order</a>.</p>', senderEmail: `orders@${DOMAIN}` },
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ status: string; messageId: string; reason: string | null }>();
};

const deliveryOf = async (messageId: string) =>
  (await query<{ status: string; reason: string | null; attempts: number; provider_code: string | null; provider_message_id: string | null; next_attempt_at: Date }>(
    'SELECT status, reason, attempts, provider_code, provider_message_id, next_attempt_at FROM deliveries WHERE message_id = $1',
    [messageId],
  ))[0]!;

/** A campaign's message to `count` new contacts, snapshotted and announced as a campaign's is. */
async function queueCampaign(count: number): Promise<{ id: string; email: string; messageId: string }[]> {
  const recipients = await Promise.all(
    Array.from({ length: count }, async () => {
      const email = newAddress();
      const res = await t.app.inject({ method: 'POST', url: '/contacts', headers: tenant.live, payload: { projectId: tenant.projectId, email } });
      return { id: res.json<{ id: string }>().id, email };
    }),
  );
  const messageId = newId('msg');
  await t.database.db.transaction(async (tx) => {
    const content = { subject: 'News', html: '<p>Hello</p>', from: { email: `news@${DOMAIN}` } };
    await insertMessage(tx, { id: messageId, projectId: tenant.projectId, channel: 'email', source: 'campaign', campaignId: null, sandbox: false, content, options: {} });
    await insertMessageStats(tx, messageId);
    const audience = { organizationId: tenant.orgId, projectId: tenant.projectId, sandbox: false };
    await snapshotDeliveries(tx, { id: messageId, projectId: tenant.projectId, channel: 'email' }, channelAudience(audience, 'email', inArray(subscribers.id, recipients.map((r) => r.id))));
  });
  await announceDeliveries(t.database.db);
  return recipients.map((r) => ({ ...r, messageId }));
}

describe('choosing SES', () => {
  it("reads the account with its credentials, keeps SES's figures in the settings and the keys sealed", async () => {
    const res = await chooseSes();
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      provider: 'ses',
      settings: { region: REGION, configurationSet: 'herald-events', sandbox: false, ratePerSecond: 14, per24Hours: 50_000, checkedAt: expect.any(String) },
      credentials: ['accessKeyId', 'secretAccessKey'],
    });
    expect(res.body).not.toContain(CREDENTIALS.secretAccessKey);
    expect(ses.requests.at(-1)).toEqual({ operation: 'GetAccount', region: REGION });
    const [row] = await query<{ credentials: string }>("SELECT credentials FROM channel_configs WHERE project_id = $1 AND channel = 'email'", [tenant.projectId]);
    expect(row!.credentials).not.toContain(CREDENTIALS.secretAccessKey);
    // A lower rate may be asked for, never a higher one.
    expect((await chooseSes({ ratePerSecond: 5 })).json()).toMatchObject({ settings: { ratePerSecond: 5 } });
    expect((await chooseSes({ ratePerSecond: 500 })).json()).toMatchObject({ settings: { ratePerSecond: 14 } });
  });

  it('refuses keys SES refuses, and an account whose sending is disabled, naming why; the provider stays as it was', async () => {
    const forged = ses.forged;
    const wrong = await chooseSes({}, { ...CREDENTIALS, secretAccessKey: 'another-secret-key-entirely-0000' });
    expect(wrong.statusCode).toBe(422);
    expect(wrong.json()).toMatchObject({ details: [{ field: 'credentials', error: expect.stringContaining('SignatureDoesNotMatch') }] });
    expect(ses.forged).toBe(forged + 1);
    ses.account.sendingEnabled = false;
    try {
      expect((await chooseSes()).json()).toMatchObject({ details: [{ field: 'credentials', error: 'sending is disabled for this SES account' }] });
    } finally {
      ses.account.sendingEnabled = true;
    }
    expect((await chooseSes({ region: 'mars' })).statusCode).toBe(422);
    expect((await chooseSes()).statusCode).toBe(200);
  });
});

describe('sending through SES', () => {
  it('sends raw, DKIM-signed over List-Unsubscribe but not over the Message-ID and Date SES replaces, in the configuration set', async () => {
    const to = newAddress();
    const answer = await sendEmail(to);
    expect(answer).toMatchObject({ status: 'sent', reason: null });
    const mail = ses.messages.find((m) => m.to.includes(to))!;
    expect(mail).toMatchObject({ from: `orders@${DOMAIN}`, configurationSet: 'herald-events' });
    expect(mail.dkim).toMatchObject({ result: 'pass', signingDomain: DOMAIN });
    expect(mail.dkim.signedHeaders).toEqual(expect.arrayContaining(['from', 'to', 'subject', 'list-unsubscribe', 'list-unsubscribe-post']));
    expect(mail.dkim.signedHeaders).not.toContain('message-id');
    expect(mail.dkim.signedHeaders).not.toContain('date');
    expect(mail.parsed.headerLines.filter((h) => h.key === 'list-unsubscribe-post').map((h) => h.line)).toEqual(['List-Unsubscribe-Post: List-Unsubscribe=One-Click']);
    expect(mail.parsed.html).toContain('https://herald.example.com/e/click/');
    // Its SES id is what SES's events (SNS → /email/ses-webhook) name it by.
    expect(await deliveryOf(answer.messageId)).toMatchObject({ status: 'sent', provider_code: 'ses_200', provider_message_id: mail.messageId });
  });

  it("retries SES's throttling with the engine's backoff, and fails at once on a message SES rejects", async () => {
    const throttled = newAddress();
    ses.respond(throttled, { status: 429, error: 'TooManyRequestsException' }, { status: 429, error: 'TooManyRequestsException' });
    const answer = await sendEmail(throttled);
    expect(answer).toMatchObject({ status: 'sent', reason: null });
    expect(ses.attempts(throttled)).toBe(3);
    expect(await deliveryOf(answer.messageId)).toMatchObject({ status: 'sent', attempts: 3 });

    const rejected = newAddress();
    ses.respond(rejected, { status: 400, error: 'MessageRejected' });
    expect(await sendEmail(rejected)).toMatchObject({ status: 'failed', reason: 'provider_error' });
    expect(ses.attempts(rejected)).toBe(1);
    const row = await query<{ provider_code: string }>('SELECT provider_code FROM deliveries WHERE destination = $1', [rejected]);
    expect(row[0]!.provider_code).toBe('ses_message_rejected');
  });
});

describe('an account in the SES sandbox (spec 8)', () => {
  beforeAll(async () => {
    Object.assign(ses.account, { productionAccess: false, maxSendRate: 1, max24HourSend: 200 });
    expect((await chooseSes()).json()).toMatchObject({ settings: { sandbox: true, ratePerSecond: 1, per24Hours: 200 } });
  });
  afterAll(() => Object.assign(ses.account, { productionAccess: true, maxSendRate: 14, max24HourSend: 50_000 }));

  it('sends at most one message per second, whoever sends', async () => {
    const recipients = await queueCampaign(3);
    await expect.poll(() => recipients.filter((r) => ses.messages.some((m) => m.to.includes(r.email))).length, { timeout: 15_000 }).toBe(3);
    const times = recipients.map((r) => ses.messages.find((m) => m.to.includes(r.email))!.at).sort((a, b) => a - b);
    // Slots are a second apart on the database's clock; the peer's receipt may lag a little behind either.
    expect(times[1]! - times[0]!).toBeGreaterThan(900);
    expect(times[2]! - times[1]!).toBeGreaterThan(900);
  });

  it('holds it to 200 messages over 24 hours: a transactional send over them fails with sandbox_limit_reached, a campaign waits', async () => {
    // The account has sent 199 of its messages earlier today.
    const key = `ses:${REGION}:${CREDENTIALS.accessKeyId}`;
    await query("DELETE FROM send_windows WHERE key = $1", [key]);
    await query("INSERT INTO send_windows (key, minute, sends) VALUES ($1, date_trunc('minute', now() - interval '3 hours'), 199)", [key]);
    const last = newAddress();
    expect(await sendEmail(last)).toMatchObject({ status: 'sent' });
    const over = newAddress();
    const sent = ses.messages.length;
    const refused = await sendEmail(over);
    expect(refused).toMatchObject({ status: 'failed', reason: 'sandbox_limit_reached' });
    expect(ses.attempts(over)).toBe(0);
    expect(ses.messages.length).toBe(sent);
    const row = await deliveryOf(refused.messageId);
    expect(row).toMatchObject({ status: 'failed', reason: 'sandbox_limit_reached' });
    const [window] = await query<{ sends: number }>('SELECT sum(sends)::int AS sends FROM send_windows WHERE key = $1', [key]);
    expect(window!.sends).toBe(200);

    // A campaign's email waits in the queue, its attempt not counted, until the earliest sends leave the window.
    const [waiting] = await queueCampaign(1);
    await expect.poll(async () => (await deliveryOf(waiting!.messageId)).reason).toBe('sandbox_limit_reached');
    const held = await deliveryOf(waiting!.messageId);
    expect(held).toMatchObject({ status: 'queued', attempts: 0 });
    const freesIn = held.next_attempt_at.getTime() - Date.now();
    expect(freesIn).toBeGreaterThan(20.9 * 3600_000);
    expect(freesIn).toBeLessThan(21.1 * 3600_000);
    expect(ses.attempts(waiting!.email)).toBe(0);
  });
});
