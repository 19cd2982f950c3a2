// WhatsApp through a Twilio WhatsApp sender, over HTTP to a local Twilio: the settings checked with Twilio and sealed,
// templates by Content SID, POST /transactional/whatsapp's reasons (sent, outside_service_window, template_not_approved,
// recipient_opted_out) from Herald and from Twilio, signed status callbacks (before Twilio's answer too), inbound
// messages opening the window and STOP/START, forged signatures refused, the sandbox and tenant isolation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant, type Tenant } from '../../../test/fixtures.js';
import { startTestApp, type TestApp } from '../../../test/harness.js';
import { newTwilioAccount, startTwilioPeer, type SignedRequest, type TwilioPeer, type TwilioTestAccount } from '../../../test/twilio-peer.js';

const PUBLIC_URL = 'https://herald.example.com';
const SENDER = '+14155238886';
const OTHER_SERVICE = `MG${'ab'.repeat(16)}`;
const CONTENT = { orderUpdate: `HX${'0a'.repeat(16)}`, springSale: `HX${'0b'.repeat(16)}` };
const DAY_MS = 24 * 60 * 60 * 1000;

let t: TestApp;
let peer: TwilioPeer;
let tenant: Tenant;
let other: Tenant;
const account: TwilioTestAccount = newTwilioAccount(true);
const otherAccount: TwilioTestAccount = newTwilioAccount();
/** The services' clock: the real time unless a test pins it. */
let pinned: Date | undefined;

type Headers = Record<string, string>;
interface Envelope {
  success: boolean;
  status: string;
  messageId: string | null;
  reason: string | null;
  messageType: string | null;
}

const query = async <T = Record<string, unknown>>(text: string, params: unknown[] = []) => (await t.database.pool.query(text, params)).rows as T[];

let numbers = 0;
const newNumber = () => `+1202555${String(2000 + ++numbers).padStart(4, '0')}`;

const credentialsOf = (acct: TwilioTestAccount) =>
  acct.apiKey ? { authToken: acct.authToken, apiKeySid: acct.apiKey.sid, apiKeySecret: acct.apiKey.secret } : { authToken: acct.authToken };

const putWhatsApp = (who: Tenant, payload: Record<string, unknown>) =>
  t.app.inject({ method: 'PUT', url: `/projects/${who.projectId}/channels/whatsapp`, headers: who.jwt, payload });

async function useTwilio(who: Tenant, acct: TwilioTestAccount, sender: Record<string, string>) {
  const res = await putWhatsApp(who, { provider: 'twilio', settings: { accountSid: acct.accountSid, ...sender }, credentials: credentialsOf(acct) });
  expect(res.statusCode, res.body).toBe(200);
  return res;
}

async function addTemplate(who: Tenant, body: Record<string, unknown>) {
  const res = await t.app.inject({ method: 'POST', url: `/projects/${who.projectId}/whatsapp-templates`, headers: who.live, payload: { category: 'UTILITY', ...body } });
  expect(res.statusCode, res.body).toBe(201);
}

const post = (headers: Headers, payload: Record<string, unknown>) => t.app.inject({ method: 'POST', url: '/transactional/whatsapp', headers, payload });

async function send(headers: Headers, payload: Record<string, unknown>): Promise<Envelope> {
  const res = await post(headers, payload);
  expect(res.statusCode, res.body).toBe(200);
  return res.json<Envelope>();
}

/** Posts what Twilio would, to the path of the URL it signed. */
const callback = (request: SignedRequest) => t.app.inject({ method: 'POST', url: request.url.slice(PUBLIC_URL.length), headers: request.headers, payload: request.payload });

const inboundUrl = (who: Tenant) => `${PUBLIC_URL}/whatsapp/twilio/inbound/${who.projectId}`;
/** The person at `from` writes to the tenant's WhatsApp sender (Twilio's incoming-message webhook, signed). */
async function inbound(from: string, body: string) {
  const res = await callback(peer.inbound(inboundUrl(tenant), account, `whatsapp:${from}`, `whatsapp:${SENDER}`, body));
  expect(res.statusCode, res.body).toBe(200);
  expect(res.headers['content-type']).toContain('text/xml');
  return res;
}

const sentTo = (to: string) => peer.messages.filter((m) => m.to === `whatsapp:${to}`);
const deliveryOf = async (messageId: string) =>
  (await query<{ id: number; status: string; reason: string | null; provider_code: string | null; provider_error: string | null; provider_message_id: string | null }>(
    'SELECT id::float8 AS id, status, reason, provider_code, provider_error, provider_message_id FROM deliveries WHERE message_id = $1',
    [messageId],
  ))[0]!;
const addressState = async (address: string) =>
  (await query<{ status: string; status_reason: string | null; source: string | null }>(
    `SELECT status, status_reason, source FROM channel_addresses WHERE project_id = $1 AND channel = 'whatsapp' AND address = $2 AND NOT sandbox`,
    [tenant.projectId, address],
  ))[0];

beforeAll(async () => {
  peer = await startTwilioPeer([account, otherAccount]);
  t = await startTestApp({ PUBLIC_URL, TWILIO_BASE_URL: peer.url, TRANSACTIONAL_RETRY_BUDGET_MS: '300', DELIVERY_RETRY_BASE_MS: '200' }, { clock: () => pinned ?? new Date() });
  [tenant, other] = await Promise.all([createTenant(t), createTenant(t)]);
  await useTwilio(tenant, account, { from: SENDER });
  await useTwilio(other, otherAccount, { messagingServiceSid: OTHER_SERVICE });
  await addTemplate(tenant, { name: 'order_update', language: 'en_US', status: 'APPROVED', providerTemplateId: CONTENT.orderUpdate });
  await addTemplate(tenant, { name: 'spring_sale', language: 'en_US', category: 'MARKETING', status: 'PENDING', providerTemplateId: CONTENT.springSale });
  await addTemplate(tenant, { name: 'no_content_sid', language: 'en', status: 'APPROVED' });
});
afterAll(async () => {
  await t.services.delivery.stop();
  await t.services.close();
  await t.close();
  await peer.close();
});

describe('Twilio as the WhatsApp provider', () => {
  it('is checked with Twilio, keeps the credentials sealed, and shows the URLs to paste into Twilio', async () => {
    const res = await useTwilio(tenant, account, { from: SENDER });
    expect(res.json()).toMatchObject({
      channel: 'whatsapp',
      provider: 'twilio',
      settings: {
        accountSid: account.accountSid,
        from: SENDER,
        inboundUrl: `${PUBLIC_URL}/whatsapp/twilio/inbound/${tenant.projectId}`,
        statusCallbackUrl: `${PUBLIC_URL}/whatsapp/twilio/status/${tenant.projectId}`,
      },
      credentials: ['authToken', 'apiKeySid', 'apiKeySecret'],
    });
    for (const secret of [account.authToken, account.apiKey!.secret]) expect(res.body).not.toContain(secret);
    const [row] = await query<{ credentials: string }>(`SELECT credentials FROM channel_configs WHERE project_id = $1 AND channel = 'whatsapp'`, [tenant.projectId]);
    expect(row!.credentials).toMatch(/^hsb1\./);
    expect(row!.credentials).not.toContain(account.authToken);
  });

  it('refuses credentials Twilio does not take (422 naming the field) and a sender given twice or not at all, saving nothing', async () => {
    const before = await query(`SELECT updated_at FROM channel_configs WHERE project_id = $1 AND channel = 'whatsapp'`, [tenant.projectId]);
    const payload = (settings: Record<string, unknown>, credentials: Record<string, unknown>) => ({ provider: 'twilio', settings: { accountSid: account.accountSid, ...settings }, credentials });
    const wrongToken = await putWhatsApp(tenant, payload({ from: SENDER }, { authToken: otherAccount.authToken }));
    expect(wrongToken.statusCode).toBe(422);
    expect(wrongToken.json<{ details: unknown[] }>().details).toEqual([
      { field: 'credentials.authToken', error: `Twilio refused to read account ${account.accountSid} with these credentials: Twilio 401 20003: Authenticate` },
    ]);
    const wrongKey = await putWhatsApp(tenant, payload({ from: SENDER }, { authToken: account.authToken, apiKeySid: account.apiKey!.sid, apiKeySecret: 'not-the-secret-of-it' }));
    expect(wrongKey.json<{ details: { field: string }[] }>().details.map((d) => d.field)).toEqual(['credentials.apiKeySid']);
    // The API key would send, but the auth token signs every callback: a wrong one is refused beside a right key.
    const wrongTokenBesideKey = await putWhatsApp(tenant, payload({ from: SENDER }, { ...credentialsOf(account), authToken: otherAccount.authToken }));
    expect(wrongTokenBesideKey.json<{ details: { field: string }[] }>().details.map((d) => d.field)).toEqual(['credentials.authToken']);
    const both = await putWhatsApp(tenant, payload({ from: SENDER, messagingServiceSid: OTHER_SERVICE }, credentialsOf(account)));
    expect(both.statusCode).toBe(422);
    expect(both.body).toContain('give the sender number (from) or a messagingServiceSid');
    expect((await putWhatsApp(tenant, payload({}, credentialsOf(account)))).statusCode).toBe(422);
    expect((await putWhatsApp(tenant, payload({ from: '14155238886' }, credentialsOf(account)))).statusCode).toBe(422);
    expect(await query(`SELECT updated_at FROM channel_configs WHERE project_id = $1 AND channel = 'whatsapp'`, [tenant.projectId])).toEqual(before);
  });

  it('has no template sync: templates are written by hand with their Content SID', async () => {
    const sync = await t.app.inject({ method: 'POST', url: `/projects/${tenant.projectId}/whatsapp-templates/sync`, headers: tenant.jwt });
    expect(sync.statusCode).toBe(422);
    expect(sync.json()).toMatchObject({ code: 'provider_not_configured', message: expect.stringContaining('goes through Twilio') });
    const badSid = await t.app.inject({
      method: 'POST',
      url: `/projects/${tenant.projectId}/whatsapp-templates`,
      headers: tenant.live,
      payload: { name: 'bad_sid', language: 'en', category: 'UTILITY', status: 'APPROVED', providerTemplateId: 'HX123' },
    });
    expect(badSid.statusCode).toBe(422);
  });
});

describe('POST /transactional/whatsapp through Twilio', () => {
  it('sends an approved template as ContentSid and ContentVariables, from the whatsapp: sender, with its status callback', async () => {
    const to = newNumber();
    const components = [{ type: 'body', parameters: [{ type: 'text', text: 'Ada' }, { type: 'text', text: 'A-17' }] }];
    const answer = await send(tenant.live, { to, templateName: 'order_update', templateComponents: components });
    expect(answer).toEqual({ success: true, status: 'sent', messageId: expect.stringMatching(/^msg_/), reason: null, messageType: 'template' });
    const [message] = sentTo(to);
    const delivery = await deliveryOf(answer.messageId!);
    expect(message).toMatchObject({
      accountSid: account.accountSid,
      to: `whatsapp:${to}`,
      from: `whatsapp:${SENDER}`,
      messagingServiceSid: undefined,
      body: '',
      contentSid: CONTENT.orderUpdate,
      contentVariables: { 1: 'Ada', 2: 'A-17' },
      statusCallback: `${PUBLIC_URL}/whatsapp/twilio/status/${tenant.projectId}?delivery=${delivery.id}`,
    });
    expect(delivery).toMatchObject({ status: 'sent', provider_message_id: message!.sid, provider_code: 'twilio_queued' });

    // Variables given as Twilio names them go as given.
    const named = newNumber();
    await send(tenant.live, { to: named, templateName: 'order_update', templateVariables: { first_name: 'Ada', order: 'A-17' } });
    expect(sentTo(named)[0]).toMatchObject({ contentSid: CONTENT.orderUpdate, contentVariables: { first_name: 'Ada', order: 'A-17' } });
    expect((await post(tenant.live, { to: named, message: 'Hi', templateVariables: { 1: 'x' } })).statusCode).toBe(422);
  });

  it('sends free-form text as Body inside the 24-hour window opened by a message through Twilio, to the second', async () => {
    const to = newNumber();
    pinned = new Date(Math.floor(Date.now() / 1000) * 1000);
    try {
      expect(await send(tenant.live, { to, message: 'Hello' })).toEqual({ success: true, status: 'refused', messageId: null, reason: 'outside_service_window', messageType: 'text' });
      await inbound(to, 'Where is my order?');
      const wroteAt = pinned;
      pinned = new Date(wroteAt.getTime() + DAY_MS - 1000);
      expect(await send(tenant.live, { to, message: 'On its way!' })).toMatchObject({ status: 'sent', messageType: 'text' });
      expect(sentTo(to)).toEqual([expect.objectContaining({ body: 'On its way!', contentSid: undefined, from: `whatsapp:${SENDER}` })]);
      pinned = new Date(wroteAt.getTime() + DAY_MS);
      expect(await send(tenant.live, { to, message: 'Still there?' })).toMatchObject({ status: 'refused', reason: 'outside_service_window' });
      expect(await send(tenant.live, { to, message: 'Still there?', templateName: 'order_update' })).toMatchObject({ status: 'sent', messageType: 'template' });
    } finally {
      pinned = undefined;
    }
  });

  it("fails outside_service_window on Twilio's 63016, keeping its code and words on the delivery and in the send log", async () => {
    const to = newNumber();
    await inbound(to, 'hi');
    peer.answer(`whatsapp:${to}`, { status: 400, code: 63016, message: 'Failed to send freeform message because you are outside the allowed window.' });
    const answer = await send(tenant.live, { to, message: 'Hello' });
    expect(answer).toMatchObject({ status: 'failed', reason: 'outside_service_window' });
    const words = 'Twilio 400 63016: Failed to send freeform message because you are outside the allowed window.';
    expect(await deliveryOf(answer.messageId!)).toMatchObject({ status: 'failed', reason: 'outside_service_window', provider_code: 'twilio_63016', provider_error: words });
    peer.answer(`whatsapp:${to}`, undefined);
    const log = await t.app.inject({ method: 'GET', url: `/transactional/sends/project/${tenant.projectId}?channel=whatsapp&pageSize=100`, headers: tenant.live });
    expect(log.json<{ data: { messageId: string; delivery: unknown }[] }>().data.find((s) => s.messageId === answer.messageId)?.delivery).toEqual({
      status: 'failed',
      reason: 'outside_service_window',
      providerCode: 'twilio_63016',
      providerError: words,
    });
  });

  it("refuses a template not approved or without a Content SID, and fails template_not_approved on Twilio's 63027", async () => {
    const to = newNumber();
    expect(await send(tenant.live, { to, templateName: 'spring_sale' })).toEqual({ success: true, status: 'refused', messageId: null, reason: 'template_not_approved', messageType: 'template' });
    expect(await send(tenant.live, { to, templateName: 'no_content_sid' })).toMatchObject({ status: 'refused', reason: 'template_not_found' });
    expect(sentTo(to)).toHaveLength(0);
    peer.answer(`whatsapp:${to}`, { status: 400, code: 63027, message: 'Template does not exist for a language and locale' });
    expect(await send(tenant.live, { to, templateName: 'order_update' })).toMatchObject({ status: 'failed', reason: 'template_not_approved' });
    peer.answer(`whatsapp:${to}`, undefined);
  });

  it("opts the number out on Twilio's 63014 (the person blocked the business) and on STOP; START lifts it", async () => {
    const blocked = newNumber();
    peer.answer(`whatsapp:${blocked}`, { status: 400, code: 63014, message: 'This message was blocked by the end user' });
    expect(await send(tenant.live, { to: blocked, templateName: 'order_update' })).toMatchObject({ status: 'failed', reason: 'recipient_opted_out' });
    peer.answer(`whatsapp:${blocked}`, undefined);
    expect(await addressState(blocked)).toEqual({ status: 'opted_out', status_reason: 'twilio_63014', source: 'provider' });
    expect(await send(tenant.live, { to: blocked, templateName: 'order_update' })).toMatchObject({ status: 'refused', reason: 'recipient_opted_out' });

    const to = newNumber();
    const stop = await inbound(to, ' stop ');
    expect(stop.body).toBe('<?xml version="1.0" encoding="UTF-8"?><Response></Response>');
    expect(await addressState(to)).toMatchObject({ status: 'opted_out', status_reason: 'whatsapp_stop', source: 'recipient' });
    expect(await send(tenant.live, { to, message: 'Hello' })).toMatchObject({ status: 'refused', reason: 'recipient_opted_out' });
    await inbound(to, 'START');
    expect(await addressState(to)).toMatchObject({ status: 'reachable' });
    expect(await send(tenant.live, { to, message: 'Welcome back' })).toMatchObject({ status: 'sent' });
    expect(sentTo(to)).toHaveLength(1);
  });

  it('sends nothing with a test key: checked, recorded, logged', async () => {
    const to = newNumber();
    const before = peer.messages.length;
    expect(await send(tenant.test, { to, templateName: 'order_update' })).toMatchObject({ status: 'sandbox', reason: 'sandbox', messageType: 'template' });
    expect(await send(tenant.test, { to, templateName: 'no_content_sid' })).toMatchObject({ status: 'refused', reason: 'template_not_found' });
    expect(peer.messages.length).toBe(before);
  });
});

describe("Twilio's WhatsApp callbacks", () => {
  it('move the delivery through delivered and read once; a failure keeps its code and the channel\'s words', async () => {
    const to = newNumber();
    const answer = await send(tenant.live, { to, templateName: 'order_update' });
    const [message] = sentTo(to);
    const delivered = peer.statusCallback(message!, 'delivered');
    expect((await callback(delivered)).json()).toEqual({ applied: 1, unknown: 0 });
    expect((await callback(peer.statusCallback(message!, 'sent'))).json()).toEqual({ applied: 0, unknown: 0 });
    const read = peer.statusCallback(message!, 'read');
    expect((await callback(read)).json()).toEqual({ applied: 1, unknown: 0 });
    expect((await callback(read)).json()).toEqual({ applied: 1, unknown: 0 });
    expect(await deliveryOf(answer.messageId!)).toMatchObject({ status: 'opened' });
    const { id } = await deliveryOf(answer.messageId!);
    expect((await query<{ type: string }>('SELECT type FROM delivery_events WHERE delivery_id = $1 ORDER BY type', [id])).map((e) => e.type)).toEqual(['delivered', 'opened']);

    const failing = newNumber();
    const failed = await send(tenant.live, { to: failing, templateName: 'order_update' });
    const undelivered = peer.statusCallback(sentTo(failing)[0]!, 'undelivered', 63016, undefined, { ChannelStatusMessage: 'Re-engagement message' });
    expect((await callback(undelivered)).json()).toEqual({ applied: 1, unknown: 0 });
    expect(await deliveryOf(failed.messageId!)).toMatchObject({ status: 'failed', reason: 'outside_service_window', provider_code: 'twilio_63016', provider_error: 'Re-engagement message' });
  });

  it('land before Twilio answered the send, and a block reported by callback opts the number out', async () => {
    const to = newNumber();
    peer.beforeAnswer(`whatsapp:${to}`, async (message) => {
      expect((await callback(peer.statusCallback(message, 'failed', 63014))).json()).toEqual({ applied: 1, unknown: 0 });
    });
    const answer = await send(tenant.live, { to, templateName: 'order_update' });
    expect(answer.status).toBe('sent');
    expect(await deliveryOf(answer.messageId!)).toMatchObject({ status: 'failed', reason: 'recipient_opted_out', provider_code: 'twilio_63014', provider_message_id: sentTo(to)[0]!.sid });
    expect(await addressState(to)).toEqual({ status: 'opted_out', status_reason: 'twilio_63014', source: 'provider' });
  });

  it('refuse forged signatures (403) and keep each project to its own deliveries and numbers', async () => {
    const to = newNumber();
    const answer = await send(tenant.live, { to, templateName: 'order_update' });
    const [message] = sentTo(to);
    expect((await callback(peer.statusCallback(message!, 'delivered', undefined, otherAccount.authToken))).statusCode).toBe(403);
    const tampered = peer.statusCallback(message!, 'delivered');
    expect((await callback({ ...tampered, payload: tampered.payload.replace('delivered', 'read') })).statusCode).toBe(403);
    // The SMS route of the same project is not the WhatsApp one: its signature covers the URL.
    expect((await callback({ ...tampered, url: tampered.url.replace('/whatsapp/', '/sms/') })).statusCode).toBe(403);
    // Signed by the other project's token for the other project's URL, naming the tenant's delivery: not its own.
    const elsewhere = peer.statusCallback(
      { ...message!, accountSid: otherAccount.accountSid, statusCallback: message!.statusCallback.replace(tenant.projectId, other.projectId) },
      'delivered',
    );
    expect((await callback(elsewhere)).json()).toEqual({ applied: 0, unknown: 1 });
    expect(await deliveryOf(answer.messageId!)).toMatchObject({ status: 'sent' });

    const stranger = newNumber();
    expect((await callback(peer.inbound(inboundUrl(tenant), otherAccount, `whatsapp:${stranger}`, `whatsapp:${SENDER}`, 'STOP'))).statusCode).toBe(403);
    expect((await callback(peer.inbound(inboundUrl(other), account, `whatsapp:${stranger}`, `whatsapp:${SENDER}`, 'STOP'))).statusCode).toBe(403);
    expect(await addressState(stranger)).toBeUndefined();
    // A project without Twilio for WhatsApp has no token to check with: its Twilio URLs refuse everything.
    const meta = await createTenant(t);
    expect((await callback(peer.inbound(inboundUrl(meta), account, `whatsapp:${stranger}`, `whatsapp:${SENDER}`, 'hi'))).statusCode).toBe(403);
  });

  it("keep the other project's keys off the tenant's templates and settings; its Messaging Service sends its own", async () => {
    expect((await putWhatsApp(other, { provider: 'twilio', settings: { accountSid: otherAccount.accountSid, from: SENDER }, credentials: credentialsOf(otherAccount) })).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'PUT', url: `/projects/${tenant.projectId}/channels/whatsapp`, headers: other.jwt, payload: { provider: 'twilio', settings: { accountSid: otherAccount.accountSid, from: SENDER }, credentials: credentialsOf(otherAccount) } })).statusCode).toBe(404);
    await useTwilio(other, otherAccount, { messagingServiceSid: OTHER_SERVICE });
    expect(await send(other.live, { to: newNumber(), templateName: 'order_update' })).toMatchObject({ status: 'refused', reason: 'template_not_found' });
    await addTemplate(other, { name: 'order_update', language: 'en_US', status: 'APPROVED', providerTemplateId: CONTENT.springSale });
    const to = newNumber();
    expect(await send(other.live, { to, templateName: 'order_update' })).toMatchObject({ status: 'sent' });
    expect(sentTo(to)[0]).toMatchObject({ accountSid: otherAccount.accountSid, from: undefined, messagingServiceSid: OTHER_SERVICE, contentSid: CONTENT.springSale });
  });
});
