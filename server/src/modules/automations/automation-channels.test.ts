// Automation send steps through the real channels' local peers: email to an SMTP peer that checks DKIM (merge tags
// from attributes and the event, a template copied at save), SMS to a local Twilio (the sender per country), WhatsApp
// to a local Cloud API (approved and pending templates), the skips and the flow going on after them, the sandbox,
// the delivery policy, per-step sent and clicked, and conditions on segments and subscriber fields.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type DnsServer } from '../../../test/dns-server.js';
import { dkimRecordOf, useSmtpPeer, verifiedDomain } from '../../../test/email-setup.js';
import { createTenant, type Tenant } from '../../../test/fixtures.js';
import { startTestApp, type TestApp } from '../../../test/harness.js';
import { createFakeBrowser, startPushService, type FakeBrowser, type PushService } from '../../../test/push-service.js';
import { startSmtpPeer, type SmtpPeer } from '../../../test/smtp-peer.js';
import { seedSubscribers } from '../../../test/subscriber-seed.js';
import { newTwilioAccount, startTwilioPeer, type TwilioPeer } from '../../../test/twilio-peer.js';
import { startWhatsAppPeer, webhookBody, type WhatsAppPeer } from '../../../test/whatsapp-peer.js';

const PUBLIC_URL = 'https://herald.example.com';
const DOMAIN = 'mail.shop.example.com';
const FROM = { email: `orders@${DOMAIN}`, name: 'Shop' };
const US_LONG_CODE = '+14155550100';
const GB_LONG_CODE = '+447400000001';
const WHATSAPP = { phoneNumberId: '1098765432101', wabaId: '2098765432102' };
const WHATSAPP_SECRETS = { accessToken: 'EAAG-test-access-token', appSecret: 'app-secret-0123456789abcdef', verifyToken: 'verify-me-please' };
const BROWSER_UA = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15';

let t: TestApp;
let dns: DnsServer;
let smtp: SmtpPeer;
let twilio: TwilioPeer;
let whatsapp: WhatsAppPeer;
let push: PushService;
let tenant: Tenant;
/** The services' clock: the real time unless a test pins it. */
let pinned: Date | undefined;
const account = newTwilioAccount();

type Headers = Record<string, string>;
const request = (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, headers: Headers, payload?: unknown) =>
  t.app.inject({ method, url, headers, ...(payload !== undefined && { payload: payload as Record<string, unknown> }) });
const query = async <T = Record<string, unknown>>(text: string, values: unknown[] = []) => (await t.database.pool.query(text, values)).rows as T[];

beforeAll(async () => {
  dns = await startDnsServer();
  twilio = await startTwilioPeer([account]);
  whatsapp = await startWhatsAppPeer({ accessToken: WHATSAPP_SECRETS.accessToken, ...WHATSAPP });
  push = await startPushService();
  t = await startTestApp(
    {
      DNS_SERVERS: dns.address,
      PUBLIC_URL,
      DELIVERY_POLL_INTERVAL_MS: '50',
      DELIVERY_RETRY_BASE_MS: '200',
      TWILIO_BASE_URL: twilio.url,
      WHATSAPP_GRAPH_URL: whatsapp.url,
      WHATSAPP_GRAPH_VERSION: whatsapp.version,
      ALLOW_INSECURE_PUSH_ENDPOINTS: 'true',
    },
    { clock: () => pinned ?? new Date() },
  );
  tenant = await createTenant(t);
  smtp = await startSmtpPeer({ dkim: dkimRecordOf(await verifiedDomain(t, dns, tenant, DOMAIN)) });
  await useSmtpPeer(t, tenant, smtp);
  const sms = await request('PUT', `/projects/${tenant.projectId}/channels/sms`, tenant.jwt, { provider: 'twilio', settings: { accountSid: account.accountSid }, credentials: { authToken: account.authToken } });
  expect(sms.statusCode, sms.body).toBe(200);
  for (const sender of [
    { country: 'US', kind: 'long_code', sender: US_LONG_CODE, ratePerSecond: 1000 },
    { country: 'GB', kind: 'long_code', sender: GB_LONG_CODE, ratePerSecond: 1000 },
    { country: 'GB', kind: 'alphanumeric', sender: 'Shop' },
  ]) {
    const added = await request('POST', `/projects/${tenant.projectId}/channels/sms/senders`, tenant.jwt, sender);
    expect(added.statusCode, added.body).toBe(201);
  }
  const wa = await request('PUT', `/projects/${tenant.projectId}/channels/whatsapp`, tenant.jwt, { provider: 'meta', settings: WHATSAPP, credentials: WHATSAPP_SECRETS });
  expect(wa.statusCode, wa.body).toBe(200);
  whatsapp.templates.set(WHATSAPP.wabaId, [
    { name: 'order_update', language: 'en_US', category: 'UTILITY', status: 'APPROVED' },
    { name: 'spring_sale', language: 'en_US', category: 'MARKETING', status: 'PENDING' },
  ]);
  const synced = await request('POST', `/projects/${tenant.projectId}/whatsapp-templates/sync`, tenant.live);
  expect(synced.statusCode, synced.body).toBe(200);
  t.services.delivery.start();
});
afterAll(async () => {
  await t?.services.delivery.stop();
  await t?.close();
  await Promise.all([smtp?.close(), twilio?.close(), whatsapp?.close(), push?.close(), dns?.close()]);
});

interface Automation {
  id: string;
  steps: { id: string; type: string; content?: Record<string, unknown> }[];
}

async function create(who: Tenant, headers: Headers, trigger: Record<string, unknown>, steps: unknown[]): Promise<Automation> {
  const res = await request('POST', '/automations', headers, { projectId: who.projectId, name: 'Flow', trigger, steps });
  expect(res.statusCode, res.body).toBe(201);
  const activated = await request('POST', `/automations/${res.json<Automation>().id}/activate`, headers);
  expect(activated.statusCode, activated.body).toBe(200);
  return activated.json<Automation>();
}

/** An active automation of `tenant` started by the event `name`. */
const onEvent = (name: string, steps: unknown[]) => create(tenant, tenant.jwt, { type: 'event', eventName: name }, steps);

let people = 0;
const uniqueEmail = () => `person${++people}-${randomBytes(3).toString('hex')}@example.org`;
/** Fresh valid numbers: US (+1 202 555 …), GB mobiles (+44 7400 …), France (+33 6 12 …). */
const usNumber = () => `+1202555${String(1000 + ++people).padStart(4, '0')}`;
const gbNumber = () => `+4474001${String(10000 + ++people).padStart(5, '0')}`;
const frNumber = () => `+336123${String(10000 + ++people).padStart(5, '0')}`;

async function contact(fields: Record<string, unknown>, headers: Headers = tenant.live, who: Tenant = tenant): Promise<string> {
  const res = await request('POST', '/contacts', headers, { projectId: who.projectId, ...fields });
  expect(res.statusCode, res.body).toBe(201);
  return res.json<{ id: string }>().id;
}

async function fire(name: string, subscriberId: string, properties: Record<string, unknown> = {}, headers: Headers = tenant.live) {
  const res = await request('POST', '/events', headers, { name, subscriberId, properties });
  expect(res.statusCode, res.body).toBe(202);
  return res.json<{ data: { enrolled: number }[] }>().data[0]!.enrolled;
}

/** Runs executor passes until none finds due work. */
async function runDue() {
  for (let i = 0; i < 50; i++) if ((await t.services.automationExecutor.runOnce()).claimed === 0) return;
  throw new Error('due work never ran out');
}

interface Enrollment {
  id: string;
  state: string;
  history: { stepId: string; outcome: string | null; messageId: string | null }[];
}

/** The subscriber's enrollment in the automation, with its step history. */
async function enrollmentOf(automationId: string, subscriberId: string, headers: Headers = tenant.jwt): Promise<Enrollment> {
  const list = await request('GET', `/automations/${automationId}/enrollments?subscriberId=${subscriberId}`, headers);
  const [enrollment] = list.json<{ data: { id: string }[] }>().data;
  expect(enrollment, list.body).toBeDefined();
  return (await request('GET', `/automations/${automationId}/enrollments/${enrollment!.id}`, headers)).json<Enrollment>();
}
const outcomes = async (automationId: string, subscriberId: string) => (await enrollmentOf(automationId, subscriberId)).history.map((h) => [h.stepId, h.outcome]);

/** Waits until every delivery of the messages is no longer queued or sending; returns their rows. */
async function settled(messageIds: string[]) {
  const rows = () =>
    query<{ message_id: string; status: string; reason: string | null; provider_code: string | null }>(
      'SELECT message_id, status, reason, provider_code FROM deliveries WHERE message_id = ANY($1::text[]) ORDER BY message_id',
      [messageIds],
    );
  await expect.poll(async () => (await rows()).filter((r) => r.status === 'queued' || r.status === 'sending').length, { timeout: 15_000 }).toBe(0);
  return rows();
}

const stats = async (automationId: string, headers: Headers = tenant.jwt) =>
  (await request('GET', `/automations/${automationId}/stats`, headers)).json<{ steps: { stepId: string; entered: number; sent: number; clicked: number; completed: number }[] }>().steps;

const smsTo = (to: string) => twilio.messages.filter((m) => m.to === to);
/** The SMS delivery to a number: its status callback URL names it. */
const deliveryOf = async (phone: string) => (await query<{ id: string }>(`SELECT id FROM deliveries WHERE channel = 'sms' AND destination = $1`, [phone]))[0]!.id;
const whatsappTo = (to: string) => whatsapp.messages.filter((m) => m.to === to || `+${m.to}` === to);

/** The person at `from` writes to the business number at `at`: Meta's signed webhook. */
async function inbound(from: string, at: Date) {
  const raw = JSON.stringify(
    webhookBody(
      { messages: [{ from: from.slice(1), id: `wamid.in-${from}-${at.getTime()}`, timestamp: String(Math.floor(at.getTime() / 1000)), type: 'text', text: { body: 'Hello' } }] },
      WHATSAPP.phoneNumberId,
    ),
  );
  const res = await t.app.inject({
    method: 'POST',
    url: `/whatsapp/webhook/${tenant.projectId}`,
    headers: { 'content-type': 'application/json', 'x-hub-signature-256': whatsapp.sign(raw, WHATSAPP_SECRETS.appSecret) },
    payload: raw,
  });
  expect(res.statusCode, res.body).toBe(200);
}

describe('send_email', () => {
  it("renders merge tags from the subscriber's attributes and the event's properties, signed on the verified domain", async () => {
    const template = await request('POST', '/email-templates', tenant.jwt, {
      projectId: tenant.projectId,
      name: 'Receipt',
      subject: 'Receipt {{ event.order_id }}',
      html: '<p>{{ first_name }}, we received {{ event.total }} {{ event.currency }}.</p>',
    });
    expect(template.statusCode, template.body).toBe(201);
    const templateId = template.json<{ id: string }>().id;
    const flow = await onEvent('order.placed', [
      {
        id: 'thanks',
        type: 'send_email',
        content: {
          from: FROM,
          subject: 'Thanks, {{ first_name }}',
          html: '<p>Hello {{ first_name }} ({{ plan | default: "free" }}), your total is {{ event.total }} {{ event.currency }}. Note: {{ event.note }}. <a href="https://shop.example.com/orders/{{ event.order_id }}">Your order</a></p>',
        },
        next: 'receipt',
      },
      { id: 'receipt', type: 'send_email', content: { from: FROM, templateId }, next: null },
    ]);
    // The template's parts were copied at save: changing the template later changes nothing here.
    expect(flow.steps[1]!.content).toMatchObject({ templateId, subject: 'Receipt {{ event.order_id }}', html: '<p>{{ first_name }}, we received {{ event.total }} {{ event.currency }}.</p>' });
    expect((await request('PATCH', `/email-templates/${templateId}`, tenant.jwt, { html: '<p>Changed</p>' })).statusCode).toBe(200);

    const email = uniqueEmail();
    const id = await contact({ email, attributes: { first_name: 'Ada' } });
    expect(await fire('order.placed', id, { total: 80, currency: 'EUR', order_id: 'A-17', note: '<b>fragile</b>' })).toBe(1);
    await runDue();

    await expect.poll(() => smtp.received(email).length, { timeout: 15_000 }).toBe(2);
    const [thanks, receipt] = smtp.received(email);
    expect(thanks!.parsed.subject).toBe('Thanks, Ada');
    // An event's properties are the caller's data: escaped in HTML like any merge value.
    expect(thanks!.parsed.html).toContain('Hello Ada (free), your total is 80 EUR. Note: &lt;b&gt;fragile&lt;/b&gt;.');
    expect(thanks!.parsed.from?.value[0]).toMatchObject({ address: FROM.email, name: FROM.name });
    expect(thanks!.dkim).toMatchObject({ result: 'pass', signingDomain: DOMAIN });
    // The link is tracked: it goes through Herald and lands on the order the event named.
    const href = /href="([^"]+)"/.exec(thanks!.parsed.html as string)![1]!;
    expect(href.startsWith(`${PUBLIC_URL}/e/click/`)).toBe(true);
    const clicked = await t.app.inject({ method: 'GET', url: href.slice(PUBLIC_URL.length).replace(/&amp;/g, '&'), headers: { 'user-agent': BROWSER_UA } });
    expect(clicked.headers.location).toBe('https://shop.example.com/orders/A-17');
    expect(receipt!.parsed.subject).toBe('Receipt A-17');
    expect(receipt!.parsed.html).toContain('Ada, we received 80 EUR.');
    expect(receipt!.dkim.result).toBe('pass');

    const enrollment = await enrollmentOf(flow.id, id);
    expect(enrollment.state).toBe('completed');
    expect(enrollment.history.map((h) => [h.stepId, h.outcome])).toEqual([
      ['thanks', 'sent'],
      ['receipt', 'sent'],
    ]);
  });
});

describe('send_sms', () => {
  it("sends from the sender provisioned for the number's country; a country without one is skipped", async () => {
    const flow = await onEvent('sms.ready', [{ id: 'text', type: 'send_sms', content: { body: 'Your parcel is ready for pickup' }, next: null }]);
    const [us, gb, fr] = [usNumber(), gbNumber(), frNumber()];
    const ids = await Promise.all([contact({ phone: us }), contact({ phone: gb }), contact({ phone: fr })]);
    for (const id of ids) await fire('sms.ready', id);
    await runDue();

    await expect.poll(() => smsTo(us).length + smsTo(gb).length, { timeout: 15_000 }).toBe(2);
    expect(smsTo(us)[0]).toMatchObject({ from: US_LONG_CODE, body: 'Your parcel is ready for pickup', statusCallback: `${PUBLIC_URL}/sms/twilio/status/${tenant.projectId}?delivery=${await deliveryOf(us)}` });
    expect(smsTo(gb)[0]).toMatchObject({ from: GB_LONG_CODE, body: 'Your parcel is ready for pickup' });
    expect(smsTo(fr)).toEqual([]);
    expect(await outcomes(flow.id, ids[0]!)).toEqual([['text', 'sent']]);
    expect(await outcomes(flow.id, ids[2]!)).toEqual([['text', 'skipped:unverified_sender_id']]);
    const [delivery] = await settled([(await enrollmentOf(flow.id, ids[0]!)).history[0]!.messageId!]);
    expect(delivery).toMatchObject({ status: 'sent', provider_code: 'twilio_queued' });
  });
});

describe('marketing consent', () => {
  it('skips the SMS step for a number only ever texted transactionally, and sends it once the number is subscribed', async () => {
    const flow = await onEvent('loyalty.points', [{ id: 'offer', type: 'send_sms', content: { body: 'Double points this weekend' }, next: null }]);
    const phone = usNumber();
    const receipt = await request('POST', '/transactional/sms', tenant.live, { to: phone, message: 'Your code is 123456' });
    expect(receipt.json(), receipt.body).toMatchObject({ status: 'sent' });
    const [made] = await query<{ id: string }>('SELECT id FROM subscribers WHERE project_id = $1 AND phone = $2', [tenant.projectId, phone]);
    const person = await request('GET', `/subscribers/${made!.id}`, tenant.jwt);
    expect(person.json()).toMatchObject({ marketingConsent: { push: null, email: null, sms: 'transactional', whatsapp: 'transactional' } });

    await fire('loyalty.points', made!.id);
    await runDue();
    expect(await outcomes(flow.id, made!.id)).toEqual([['offer', 'skipped:no_marketing_consent']]);
    await expect.poll(() => smsTo(phone).length, { timeout: 15_000 }).toBe(1);

    const subscribed = await request('PATCH', `/subscribers/${made!.id}`, tenant.live, { marketingConsent: { sms: 'subscribed' } });
    expect(subscribed.json(), subscribed.body).toMatchObject({ marketingConsent: { sms: 'subscribed', whatsapp: 'transactional' } });
    const again = await onEvent('loyalty.points.again', [{ id: 'offer', type: 'send_sms', content: { body: 'Double points this weekend' }, next: null }]);
    await fire('loyalty.points.again', made!.id);
    await runDue();
    expect(await outcomes(again.id, made!.id)).toEqual([['offer', 'sent']]);
    await expect.poll(() => smsTo(phone).map((m) => m.body), { timeout: 15_000 }).toEqual(['Your code is 123456', 'Double points this weekend']);
  });
});

describe('send_whatsapp', () => {
  it('sends an APPROVED template with its parameters; a PENDING one is skipped, nothing sent, and the flow goes on', async () => {
    const components = [{ type: 'body', parameters: [{ type: 'text', text: 'A-17' }, { type: 'text', text: 'Tuesday' }] }];
    const flow = await onEvent('order.shipped', [
      { id: 'update', type: 'send_whatsapp', content: { templateName: 'order_update', language: 'en_US', components }, next: 'promo' },
      { id: 'promo', type: 'send_whatsapp', content: { templateName: 'spring_sale' }, next: 'text' },
      { id: 'text', type: 'send_sms', content: { body: 'Shipped!' }, next: null },
    ]);
    const phone = usNumber();
    const id = await contact({ phone });
    await fire('order.shipped', id);
    await runDue();

    await expect.poll(() => whatsappTo(phone).length + smsTo(phone).length, { timeout: 15_000 }).toBe(2);
    const [sent] = whatsappTo(phone);
    expect(sent).toMatchObject({ phoneNumberId: WHATSAPP.phoneNumberId, type: 'template' });
    expect(sent!.body.template).toEqual({ name: 'order_update', language: { code: 'en_US' }, components });
    expect(whatsapp.messages.filter((m) => (m.body.template as { name?: string } | undefined)?.name === 'spring_sale')).toEqual([]);
    expect(smsTo(phone)[0]).toMatchObject({ body: 'Shipped!' });

    const enrollment = await enrollmentOf(flow.id, id);
    expect(enrollment.state).toBe('completed');
    expect(enrollment.history.map((h) => [h.stepId, h.outcome, h.messageId === null])).toEqual([
      ['update', 'sent', false],
      ['promo', 'skipped:template_not_approved', true],
      ['text', 'sent', false],
    ]);
  });

  it('sends free-form text only inside the 24-hour window the person opened by writing', async () => {
    const flow = await onEvent('chat.reply', [
      { id: 'reply', type: 'send_whatsapp', content: { text: 'Thanks for writing!' }, next: 'after' },
      { id: 'after', type: 'send_sms', content: { body: 'After the chat' }, next: null },
    ]);
    const [wrote, silent, longAgo] = [usNumber(), usNumber(), usNumber()];
    const ids = await Promise.all([contact({ phone: wrote }), contact({ phone: silent }), contact({ phone: longAgo })]);
    await inbound(wrote, new Date(Date.now() - 3_600_000));
    await inbound(longAgo, new Date(Date.now() - 25 * 3_600_000));
    for (const id of ids) await fire('chat.reply', id);
    await runDue();

    await expect.poll(() => [wrote, silent, longAgo].map((n) => smsTo(n).length), { timeout: 15_000 }).toEqual([1, 1, 1]);
    // The WhatsApp and SMS lanes send apart: the later step's SMS may arrive first.
    await expect.poll(() => whatsappTo(wrote).map((m) => (m.body.text as { body: string }).body), { timeout: 15_000 }).toEqual(['Thanks for writing!']);
    expect([...whatsappTo(silent), ...whatsappTo(longAgo)]).toEqual([]);
    expect(await outcomes(flow.id, ids[0]!)).toEqual([
      ['reply', 'sent'],
      ['after', 'sent'],
    ]);
    for (const id of ids.slice(1)) {
      expect(await outcomes(flow.id, id)).toEqual([
        ['reply', 'skipped:outside_service_window'],
        ['after', 'sent'],
      ]);
    }
  });
});

describe('skipped steps', () => {
  it('records why each step could not send, and goes on to the next', async () => {
    const flow = await onEvent('skips', [
      { id: 'ping', type: 'send_push', content: { title: 'Ping', body: 'A push' }, next: 'mail' },
      { id: 'mail', type: 'send_email', content: { from: FROM, subject: 'Hi {{ first_name }}', html: '<p>Total {{ event.total }}</p>' }, next: 'text' },
      { id: 'text', type: 'send_sms', content: { body: 'A text' }, next: 'chat' },
      { id: 'chat', type: 'send_whatsapp', content: { templateName: 'order_update', language: 'en_US' }, next: 'wait' },
      { id: 'wait', type: 'delay', duration: '1h', next: 'last' },
      { id: 'last', type: 'send_sms', content: { body: 'The last text' }, next: null },
    ]);
    const phoneOnly = usNumber();
    const emailOnly = uniqueEmail();
    const [optedOutEmail, optedOutPhone] = [uniqueEmail(), usNumber()];
    const nameless = uniqueEmail();
    const device = createFakeBrowser();
    const ids = {
      phoneOnly: await contact({ phone: phoneOnly, attributes: { first_name: 'Pat' } }),
      emailOnly: await contact({ email: emailOnly, attributes: { first_name: 'Eve' } }),
      optedOut: await contact({ email: optedOutEmail, phone: optedOutPhone, attributes: { first_name: 'Oz' }, preferences: { channels: { email: false, whatsapp: false } } }),
      nameless: await contact({ email: nameless }),
      pushOnly: (await seedSubscribers(t.database.pool, tenant.projectId, [{ endpoint: push.endpointFor(device), p256dh: device.p256dh, auth: device.auth }]))[0]!,
    };
    for (const id of Object.values(ids)) await fire('skips', id, { total: 12 });
    await runDue();
    // The delay passes.
    await query(`UPDATE automation_enrollments SET due_at = due_at - interval '1 hour' WHERE automation_id = $1`, [flow.id]);
    await runDue();

    const noPush = 'skipped:no_push_subscription';
    const expected = {
      phoneOnly: [noPush, 'skipped:no_email', 'sent', 'sent', 'waited', 'sent'],
      emailOnly: [noPush, 'sent', 'skipped:no_phone', 'skipped:no_phone', 'waited', 'skipped:no_phone'],
      optedOut: [noPush, 'skipped:channel_off', 'sent', 'skipped:channel_off', 'waited', 'sent'],
      nameless: [noPush, 'skipped:template_variables_missing', 'skipped:no_phone', 'skipped:no_phone', 'waited', 'skipped:no_phone'],
      pushOnly: ['sent', 'skipped:no_email', 'skipped:no_phone', 'skipped:no_phone', 'waited', 'skipped:no_phone'],
    };
    for (const [who, id] of Object.entries(ids)) {
      const enrollment = await enrollmentOf(flow.id, id);
      expect(enrollment.state, who).toBe('completed');
      expect(enrollment.history.map((h) => h.stepId)).toEqual(['ping', 'mail', 'text', 'chat', 'wait', 'last']);
      expect(enrollment.history.map((h) => h.outcome), who).toEqual(expected[who as keyof typeof expected]);
    }

    await expect
      .poll(() => [smsTo(phoneOnly).length, whatsappTo(phoneOnly).length, smtp.received(emailOnly).length, smsTo(optedOutPhone).length, push.requestsFor(device.id).length], { timeout: 15_000 })
      .toEqual([2, 1, 1, 2, 1]);
    expect(smtp.received(emailOnly)[0]!.parsed.subject).toBe('Hi Eve');
    expect([...smtp.transmitted(optedOutEmail), ...smtp.transmitted(nameless), ...whatsappTo(optedOutPhone)]).toEqual([]);
    // `sent` counts deliveries marked sent, which happens after the peer has the message.
    const counts = async () => Object.fromEntries((await stats(flow.id)).map((s) => [s.stepId, [s.entered, s.sent, s.completed]]));
    await expect.poll(counts, { timeout: 15_000 }).toEqual({ ping: [5, 1, 5], mail: [5, 1, 5], text: [5, 2, 5], chat: [5, 1, 5], wait: [5, 0, 5], last: [5, 2, 5] });
    // A skipped step wrote no message: no delivery failed for it.
    expect(await query(`SELECT 1 FROM deliveries WHERE subscriber_id = ANY($1::text[]) AND status = 'failed'`, [Object.values(ids)])).toEqual([]);
  });
});

describe('the sandbox', () => {
  it("runs a test key's automation for sandbox subscribers, and its sends never reach a provider", async () => {
    const steps = [
      { id: 'mail', type: 'send_email', content: { from: FROM, subject: 'Sandbox {{ first_name }}', html: '<p>Only a test</p>' }, next: 'text' },
      { id: 'text', type: 'send_sms', content: { body: 'Only a test' }, next: 'chat' },
      { id: 'chat', type: 'send_whatsapp', content: { templateName: 'order_update', language: 'en_US' }, next: null },
    ];
    const sandboxed = await create(tenant, tenant.test, { type: 'event', eventName: 'try.me' }, steps);
    const live = await create(tenant, tenant.jwt, { type: 'event', eventName: 'try.me' }, steps);
    const [email, phone] = [uniqueEmail(), usNumber()];
    const id = await contact({ email, phone, attributes: { first_name: 'Tess' } }, tenant.test);
    expect((await query<{ sandbox: boolean }>('SELECT sandbox FROM subscribers WHERE id = $1', [id]))[0]!.sandbox).toBe(true);
    expect(await fire('try.me', id, {}, tenant.test)).toBe(1);
    await runDue();

    const enrollment = await enrollmentOf(sandboxed.id, id, tenant.test);
    expect(enrollment.history.map((h) => [h.stepId, h.outcome])).toEqual([
      ['mail', 'sent'],
      ['text', 'sent'],
      ['chat', 'sent'],
    ]);
    const deliveries = await settled(enrollment.history.map((h) => h.messageId!));
    expect(deliveries.map((d) => d.provider_code)).toEqual(['sandbox', 'sandbox', 'sandbox']);
    expect([...smtp.transmitted(email), ...smsTo(phone), ...whatsappTo(phone)]).toEqual([]);
    // The live automation of the same event enrolled nobody from the sandbox.
    expect((await request('GET', `/automations/${live.id}/enrollments`, tenant.jwt)).json<{ total: number }>().total).toBe(0);
    expect((await request('GET', `/automations/${live.id}/stats`, tenant.test)).statusCode).toBe(404);
  });
});

describe("the project's delivery policy", () => {
  /** A push subscriber of the tenant, its browser on the local push service. */
  async function browser(who: Tenant, timezone: string | null = null): Promise<{ browser: FakeBrowser; id: string }> {
    const b = createFakeBrowser();
    const [id] = await seedSubscribers(t.database.pool, who.projectId, [{ endpoint: push.endpointFor(b), p256dh: b.p256dh, auth: b.auth, timezone }]);
    return { browser: b, id: id! };
  }
  const pushesTo = (b: FakeBrowser) => push.requestsFor(b.id).filter((r) => r.answeredAt !== undefined);
  const pushStep = (id: string, title: string, next: string | null) => ({ id, type: 'send_push', content: { title, body: title }, next });

  it('suppresses an automation push over the frequency cap', async () => {
    const capped = await createTenant(t);
    const patched = await request('PATCH', `/projects/${capped.projectId}`, capped.jwt, { settings: { deliveryPolicy: { frequencyCap: { max: 1, windowSeconds: 3600 } } } });
    expect(patched.statusCode, patched.body).toBe(200);
    const flow = await create(capped, capped.jwt, { type: 'event', eventName: 'twice' }, [pushStep('first', 'First', 'second'), pushStep('second', 'Second', null)]);
    const { browser: b, id } = await browser(capped);
    await fire('twice', id, {}, capped.live);
    await runDue();

    const history = (await enrollmentOf(flow.id, id, capped.jwt)).history;
    const deliveries = await settled(history.map((h) => h.messageId!));
    expect(deliveries.map((d) => [d.status, d.reason]).sort()).toEqual([
      ['sent', null],
      ['suppressed', 'frequency_capped'],
    ]);
    expect(pushesTo(b)).toHaveLength(1);
    expect((await stats(flow.id, capped.jwt)).map((s) => [s.stepId, s.sent]).reduce((sum, [, sent]) => sum + (sent as number), 0)).toBe(1);
  });

  it("holds an automation push during quiet hours in the subscriber's zone, then sends it", async () => {
    const quiet = await createTenant(t);
    const patched = await request('PATCH', `/projects/${quiet.projectId}`, quiet.jwt, { settings: { deliveryPolicy: { quietHours: { start: '22:00', end: '07:00' } } } });
    expect(patched.statusCode, patched.body).toBe(200);
    const flow = await create(quiet, quiet.jwt, { type: 'event', eventName: 'late' }, [pushStep('night', 'At night', null)]);
    const [paris, newYork] = [await browser(quiet, 'Europe/Paris'), await browser(quiet, 'America/New_York')];
    pinned = new Date('2026-06-01T21:30:00Z'); // 23:30 in Paris, 17:30 in New York
    try {
      for (const who of [paris, newYork]) await fire('late', who.id, {}, quiet.live);
      await runDue();
      await expect.poll(() => pushesTo(newYork.browser).length, { timeout: 15_000 }).toBe(1);
      const [message] = (await enrollmentOf(flow.id, paris.id, quiet.jwt)).history.map((h) => h.messageId!);
      const held = await query<{ status: string; reason: string; wait_s: number }>(
        `SELECT status, reason, round(extract(epoch FROM next_attempt_at - now()))::int AS wait_s FROM deliveries WHERE message_id = $1`,
        [message],
      );
      expect(held).toMatchObject([{ status: 'queued', reason: 'quiet_hours' }]);
      expect(Math.abs(held[0]!.wait_s - 7.5 * 3600)).toBeLessThanOrEqual(5); // 07:00 in Paris
      expect(pushesTo(paris.browser)).toEqual([]);

      // Morning in Paris.
      pinned = new Date('2026-06-02T05:00:00Z');
      await query(`UPDATE deliveries SET next_attempt_at = now() WHERE message_id = $1`, [message]);
      await expect.poll(() => pushesTo(paris.browser).length, { timeout: 15_000 }).toBe(1);
    } finally {
      pinned = undefined;
    }
  });
});

describe('per-step stats', () => {
  it('counts sent and clicked per send step, clicks reported through the push and email tracking routes', async () => {
    const flow = await onEvent('promo', [
      { id: 'nudge', type: 'send_push', content: { title: 'New in', body: 'Spring collection', clickUrl: 'https://shop.example.com/new' }, next: 'mail' },
      { id: 'mail', type: 'send_email', content: { from: FROM, subject: 'New in', html: '<p><a href="https://shop.example.com/new">See it</a></p>' }, next: null },
    ]);
    const people = await Promise.all(
      [0, 1].map(async () => {
        const b = createFakeBrowser();
        const [id] = await seedSubscribers(t.database.pool, tenant.projectId, [{ endpoint: push.endpointFor(b), p256dh: b.p256dh, auth: b.auth }]);
        const email = uniqueEmail();
        expect((await request('PATCH', `/subscribers/${id}`, tenant.live, { email })).statusCode).toBe(200);
        return { browser: b, id: id!, email };
      }),
    );
    for (const person of people) await fire('promo', person.id);
    await runDue();
    await expect.poll(() => people.map((p) => push.requestsFor(p.browser.id).length + smtp.received(p.email).length), { timeout: 15_000 }).toEqual([2, 2]);
    await expect.poll(async () => (await stats(flow.id)).map((s) => s.sent), { timeout: 15_000 }).toEqual([2, 2]);

    // The first person clicks the notification (as the service worker reports it) and the email's link.
    const [clicker] = people;
    const { track } = push.requestsFor(clicker!.browser.id)[0]!.payload as { track: string };
    expect((await t.app.inject({ method: 'POST', url: `${track.slice(PUBLIC_URL.length)}/clicked` })).statusCode).toBe(204);
    const href = /href="([^"]+)"/.exec(smtp.received(clicker!.email)[0]!.parsed.html as string)![1]!;
    const followed = await t.app.inject({ method: 'GET', url: href.slice(PUBLIC_URL.length).replace(/&amp;/g, '&'), headers: { 'user-agent': BROWSER_UA } });
    expect(followed.statusCode).toBe(302);

    expect(await stats(flow.id)).toEqual([
      { stepId: 'nudge', type: 'send_push', entered: 2, sent: 2, clicked: 1, completed: 2, converted: 0 },
      { stepId: 'mail', type: 'send_email', entered: 2, sent: 2, clicked: 1, completed: 2, converted: 0 },
    ]);
  });
});

describe('conditions on a saved segment and subscriber fields', () => {
  it('sends each subscriber down its branch, and nobody down the true one once the segment is gone', async () => {
    const segment = await request('POST', '/segments', tenant.jwt, { projectId: tenant.projectId, name: 'VIPs', filters: { tags: { any: ['vip'] } } });
    expect(segment.statusCode, segment.body).toBe(201);
    const segmentId = segment.json<{ id: string }>().id;
    const flow = await onEvent('visit', [
      { id: 'french-vip', type: 'condition', criteria: { segmentId, subscriber: { country: 'fr', tags: { none: ['churned'] } } }, trueBranch: 'vip-mail', falseBranch: 'other-text' },
      { id: 'vip-mail', type: 'send_email', content: { from: FROM, subject: 'Bienvenue', html: '<p>Merci</p>' }, next: null },
      { id: 'other-text', type: 'send_sms', content: { body: 'Welcome back' }, next: null },
    ]);
    expect(flow.steps[0]).toMatchObject({ criteria: { subscriber: { country: 'FR' } } });
    const make = async (tags: string[], country: string) => {
      const [email, phone] = [uniqueEmail(), usNumber()];
      const id = await contact({ email, phone, tags });
      await query('UPDATE subscribers SET country = $2 WHERE id = $1', [id, country]);
      return { id, email, phone };
    };
    const frenchVip = await make(['vip'], 'FR');
    const americanVip = await make(['vip'], 'US');
    const frenchRegular = await make(['newsletter'], 'FR');
    const churnedVip = await make(['vip', 'churned'], 'FR');
    for (const who of [frenchVip, americanVip, frenchRegular, churnedVip]) await fire('visit', who.id);
    await runDue();

    expect(await outcomes(flow.id, frenchVip.id)).toEqual([
      ['french-vip', 'true'],
      ['vip-mail', 'sent'],
    ]);
    for (const who of [americanVip, frenchRegular, churnedVip]) {
      expect(await outcomes(flow.id, who.id)).toEqual([
        ['french-vip', 'false'],
        ['other-text', 'sent'],
      ]);
    }
    await expect.poll(() => [frenchVip, americanVip, frenchRegular, churnedVip].map((w) => [smtp.received(w.email).length, smsTo(w.phone).length]), { timeout: 15_000 }).toEqual([
      [1, 0],
      [0, 1],
      [0, 1],
      [0, 1],
    ]);

    // The segment deleted: a French VIP enrolled now takes the false branch.
    expect((await request('DELETE', `/segments/${segmentId}`, tenant.jwt)).statusCode).toBe(204);
    const late = await make(['vip'], 'FR');
    await fire('visit', late.id);
    await runDue();
    expect(await outcomes(flow.id, late.id)).toEqual([
      ['french-vip', 'false'],
      ['other-text', 'sent'],
    ]);
  });
});
