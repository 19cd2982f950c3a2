// A push 410 retires the device, not the person: someone with push, email and phone whose browser subscription is gone
// is still enrolled by a schedule trigger and gets the email (SMTP peer) and SMS (Twilio peer) steps, is counted in
// email reach and exported — through HTTP, the real executor and the local peers.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startDnsServer, type DnsServer } from '../../../test/dns-server.js';
import { dkimRecordOf, useSmtpPeer, verifiedDomain } from '../../../test/email-setup.js';
import { CHROME_UA, createTenant, type Tenant } from '../../../test/fixtures.js';
import { startTestApp, type TestApp } from '../../../test/harness.js';
import { createFakeBrowser, startPushService, type PushService } from '../../../test/push-service.js';
import { startSmtpPeer, type SmtpPeer } from '../../../test/smtp-peer.js';
import { newTwilioAccount, startTwilioPeer, type TwilioPeer } from '../../../test/twilio-peer.js';

const DOMAIN = 'mail.shop.example.com';
const EMAIL = 'ada@example.org';
const PHONE = '+12025550143';

let t: TestApp;
let dns: DnsServer;
let smtp: SmtpPeer;
let twilio: TwilioPeer;
let push: PushService;
let tenant: Tenant;
const account = newTwilioAccount();

type Headers = Record<string, string>;
const request = (method: 'GET' | 'POST' | 'PUT' | 'PATCH', url: string, headers: Headers, payload?: unknown) =>
  t.app.inject({ method, url, headers, ...(payload !== undefined && { payload: payload as Record<string, unknown> }) });
const query = async <T = Record<string, unknown>>(text: string, values: unknown[] = []) => (await t.database.pool.query(text, values)).rows as T[];

beforeAll(async () => {
  dns = await startDnsServer();
  twilio = await startTwilioPeer([account]);
  push = await startPushService();
  t = await startTestApp({
    DNS_SERVERS: dns.address,
    PUBLIC_URL: 'https://herald.example.com',
    DELIVERY_POLL_INTERVAL_MS: '50',
    TWILIO_BASE_URL: twilio.url,
    ALLOW_INSECURE_PUSH_ENDPOINTS: 'true',
  });
  tenant = await createTenant(t);
  smtp = await startSmtpPeer({ dkim: dkimRecordOf(await verifiedDomain(t, dns, tenant, DOMAIN)) });
  await useSmtpPeer(t, tenant, smtp);
  const sms = await request('PUT', `/projects/${tenant.projectId}/channels/sms`, tenant.jwt, { provider: 'twilio', settings: { accountSid: account.accountSid }, credentials: { authToken: account.authToken } });
  expect(sms.statusCode, sms.body).toBe(200);
  const sender = await request('POST', `/projects/${tenant.projectId}/channels/sms/senders`, tenant.jwt, { country: 'US', kind: 'long_code', sender: '+14155550100', ratePerSecond: 1000 });
  expect(sender.statusCode, sender.body).toBe(201);
  t.services.delivery.start();
});
afterAll(async () => {
  await t?.services.delivery.stop();
  await t?.close();
  await Promise.all([smtp?.close(), twilio?.close(), push?.close(), dns?.close()]);
});

/** Runs executor passes until none finds due work. */
async function runDue() {
  for (let i = 0; i < 50; i++) if ((await t.services.automationExecutor.runOnce()).claimed === 0) return;
  throw new Error('due work never ran out');
}

it('a person whose push endpoint answered 410 is still enrolled, mailed, texted, counted in email reach and exported', async () => {
  // One person: a browser registered by the SDK, then their email and phone set on the same row.
  const browser = createFakeBrowser();
  const registered = await request('POST', '/subscribers', tenant.live, {
    projectId: tenant.projectId,
    endpoint: push.endpointFor(browser),
    p256dh: browser.p256dh,
    auth: browser.auth,
    userAgent: CHROME_UA,
  });
  expect(registered.statusCode, registered.body).toBe(201);
  const { id, token } = registered.json<{ id: string; token: string }>();
  const updated = await request('PATCH', `/subscribers/${id}`, tenant.live, { email: EMAIL, phone: PHONE });
  expect(updated.statusCode, updated.body).toBe(200);

  // Their browser subscription is gone: the push service answers 410, and the device is retired.
  push.respond(browser.id, 410);
  const sent = await request('POST', '/transactional/send', tenant.live, { token, title: 'Hi', body: 'x' });
  expect(sent.json()).toMatchObject({ delivered: false, deactivated: true });
  expect(await query(`SELECT status, status_reason FROM subscribers WHERE id = $1`, [id])).toEqual([{ status: 'unsubscribed', status_reason: 'push_subscription_gone' }]);

  // Reach and export still count the person by their address.
  const reach = async (channel?: string) => {
    const res = await request('POST', '/segments/reach', tenant.live, { projectId: tenant.projectId, filters: {}, ...(channel && { channel }) });
    expect(res.statusCode, res.body).toBe(200);
    return res.json<{ count: number }>().count;
  };
  expect([await reach('email'), await reach('sms'), await reach('push'), await reach()]).toEqual([1, 1, 0, 1]);
  const segment = await request('POST', '/segments', tenant.jwt, { projectId: tenant.projectId, name: 'Everyone', filters: {} });
  expect(segment.statusCode, segment.body).toBe(201);
  const exported = await request('GET', `/segments/project/${tenant.projectId}/export.csv?segmentId=${segment.json<{ id: string }>().id}`, tenant.jwt);
  expect(exported.statusCode, exported.body).toBe(200);
  const lines = exported.body.trimEnd().split('\n');
  expect(lines).toHaveLength(2);
  expect(lines[1]).toContain(`,${token},${EMAIL},`);

  // A schedule that fired this minute (UTC, the person has no zone) enrolls them; each channel's step runs on its own.
  const firedAt = new Date(Date.now() - 60_000);
  const created = await request('POST', '/automations', tenant.jwt, {
    projectId: tenant.projectId,
    name: 'Weekly news',
    trigger: { type: 'schedule', cron: `${firedAt.getUTCMinutes()} ${firedAt.getUTCHours()} * * *` },
    steps: [
      { id: 'push', type: 'send_push', content: { title: 'News', body: 'On push' }, next: 'mail' },
      { id: 'mail', type: 'send_email', content: { from: { email: `news@${DOMAIN}`, name: 'Shop' }, subject: 'This week', html: '<p>The news</p>' }, next: 'text' },
      { id: 'text', type: 'send_sms', content: { body: 'The news, by text' }, next: null },
    ],
  });
  expect(created.statusCode, created.body).toBe(201);
  const flowId = created.json<{ id: string }>().id;
  const activated = await request('POST', `/automations/${flowId}/activate`, tenant.jwt);
  expect(activated.statusCode, activated.body).toBe(200);
  await query(`UPDATE automations SET evaluated_until = now() - interval '3 minutes' WHERE id = $1`, [flowId]);
  await t.services.automations.evaluateTriggers();
  expect(await query(`SELECT subscriber_id FROM automation_enrollments WHERE automation_id = $1`, [flowId])).toEqual([{ subscriber_id: id }]);
  // Enrollments of a tick are spread over the minute after it.
  await query(`UPDATE automation_enrollments SET due_at = due_at - interval '60 seconds' WHERE automation_id = $1`, [flowId]);
  await runDue();

  await expect.poll(() => [smtp.received(EMAIL).length, twilio.messages.filter((m) => m.to === PHONE).length], { timeout: 15_000 }).toEqual([1, 1]);
  expect(smtp.received(EMAIL)[0]!.parsed.subject).toBe('This week');
  expect(twilio.messages.find((m) => m.to === PHONE)!.body).toBe('The news, by text');
  const enrollment = (await request('GET', `/automations/${flowId}/enrollments?subscriberId=${id}`, tenant.jwt)).json<{ data: { id: string }[] }>().data[0]!;
  const history = (await request('GET', `/automations/${flowId}/enrollments/${enrollment.id}`, tenant.jwt)).json<{ history: { stepId: string; outcome: string | null }[] }>().history;
  expect(history.map((h) => [h.stepId, h.outcome])).toEqual([
    ['push', 'skipped:subscriber_unsubscribed'],
    ['mail', 'sent'],
    ['text', 'sent'],
  ]);
  // The retired device got nothing after the 410.
  expect(push.requestsFor(browser.id)).toHaveLength(1);
});
