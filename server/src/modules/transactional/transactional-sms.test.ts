// POST /transactional/sms through HTTP to a local Twilio: the account checked when it is saved, numbers, senders per
// country, every SMS reason of spec 7.4, Twilio's signed status callbacks and inbound STOP/START/HELP (forged and
// replayed too), segments, the sandbox, idempotency, the sender's rate across the workers' path, the delivery policy,
// preferences and tenancy.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant, type Tenant } from '../../../test/fixtures.js';
import { startTestApp, type TestApp } from '../../../test/harness.js';
import { newTwilioAccount, startTwilioPeer, type SignedRequest, type TwilioPeer, type TwilioTestAccount } from '../../../test/twilio-peer.js';

const PUBLIC_URL = 'https://herald.example.com';
const US_LONG_CODE = '+14155550100';
const GB_LONG_CODE = '+447400000001';
/** Canada's long code keeps Twilio's usual 1 per second; the others are raised so the tests' sends do not queue. */
const CA_LONG_CODE = '+16135550100';

let t: TestApp;
let peer: TwilioPeer;
let tenant: Tenant;
let other: Tenant;
const account: TwilioTestAccount = newTwilioAccount(true);
const otherAccount: TwilioTestAccount = newTwilioAccount();

type Headers = Record<string, string>;
interface Envelope {
  success: boolean;
  status: string;
  messageId: string | null;
  reason: string | null;
  segments: number;
  encoding: string;
  from: string | null;
}

const query = async <T = Record<string, unknown>>(text: string, params: unknown[] = []) => (await t.database.pool.query(text, params)).rows as T[];

let numbers = 0;
/** A fresh valid US number (415 555 01xx is not valid; 415 555 02xx onwards are). */
const newUsNumber = () => `+1415555${String(1000 + ++numbers).padStart(4, '0')}`;
const newCaNumber = () => `+1613555${String(1000 + ++numbers).padStart(4, '0')}`;
const newGbNumber = () => `+4474001${String(10000 + ++numbers).padStart(5, '0')}`;

const post = (headers: Headers, payload: Record<string, unknown>, extra: Headers = {}) =>
  t.app.inject({ method: 'POST', url: '/transactional/sms', headers: { ...headers, ...extra }, payload });

async function send(headers: Headers, payload: Record<string, unknown>, extra: Headers = {}): Promise<Envelope> {
  const res = await post(headers, payload, extra);
  expect(res.statusCode, res.body).toBe(200);
  return res.json<Envelope>();
}

/** Posts what Twilio would, to the path of the URL it signed. */
const callback = (request: SignedRequest) =>
  t.app.inject({ method: 'POST', url: request.url.slice(PUBLIC_URL.length), headers: request.headers, payload: request.payload });

const sentTo = (to: string) => peer.messages.filter((m) => m.to === to);
const deliveryOf = async (messageId: string) =>
  (await query<{ status: string; reason: string | null; provider_code: string | null; provider_message_id: string | null }>(
    'SELECT status, reason, provider_code, provider_message_id FROM deliveries WHERE message_id = $1',
    [messageId],
  ))[0]!;
const addressState = async (projectId: string, address: string) =>
  (await query<{ status: string; status_reason: string }>("SELECT status, status_reason FROM channel_addresses WHERE project_id = $1 AND channel = 'sms' AND address = $2", [projectId, address]))[0];

async function useTwilio(who: Tenant, acct: TwilioTestAccount, settings: Record<string, unknown> = {}) {
  const credentials = acct.apiKey ? { authToken: acct.authToken, apiKeySid: acct.apiKey.sid, apiKeySecret: acct.apiKey.secret } : { authToken: acct.authToken };
  const res = await t.app.inject({
    method: 'PUT',
    url: `/projects/${who.projectId}/channels/sms`,
    headers: who.jwt,
    payload: { provider: 'twilio', settings: { accountSid: acct.accountSid, ...settings }, credentials },
  });
  expect(res.statusCode, res.body).toBe(200);
  return res;
}

async function addSender(who: Tenant, body: Record<string, unknown>) {
  const res = await t.app.inject({ method: 'POST', url: `/projects/${who.projectId}/channels/sms/senders`, headers: who.jwt, payload: body });
  expect(res.statusCode, res.body).toBe(201);
  return res.json<{ id: string }>();
}

beforeAll(async () => {
  peer = await startTwilioPeer([account, otherAccount]);
  t = await startTestApp({
    PUBLIC_URL,
    TWILIO_BASE_URL: peer.url,
    DELIVERY_POLL_INTERVAL_MS: '50',
    DELIVERY_RETRY_BASE_MS: '200',
    TRANSACTIONAL_RETRY_BUDGET_MS: '300',
  });
  [tenant, other] = await Promise.all([createTenant(t), createTenant(t)]);
  await useTwilio(tenant, account, { helpReply: 'Acme alerts. Reply STOP to stop.' });
  await useTwilio(other, otherAccount);
  await addSender(tenant, { country: 'US', kind: 'long_code', sender: US_LONG_CODE, ratePerSecond: 1000 });
  await addSender(tenant, { country: 'CA', kind: 'long_code', sender: CA_LONG_CODE });
  await addSender(tenant, { country: 'GB', kind: 'alphanumeric', sender: 'Acme' });
  await addSender(tenant, { country: 'GB', kind: 'long_code', sender: GB_LONG_CODE, ratePerSecond: 1000 });
  await addSender(other, { country: 'US', kind: 'long_code', sender: '+14155550199', ratePerSecond: 1000 });
});
afterAll(async () => {
  await t.services.delivery.stop();
  await t.services.close();
  await t.close();
  await peer.close();
});

describe('the SMS provider and senders', () => {
  it('keeps the Twilio credentials sealed and shows their names only', async () => {
    const res = await useTwilio(tenant, account, { helpReply: 'Acme alerts. Reply STOP to stop.' });
    expect(res.json()).toMatchObject({ channel: 'sms', provider: 'twilio', settings: {
        accountSid: account.accountSid,
        inboundUrl: `${PUBLIC_URL}/sms/twilio/inbound/${tenant.projectId}`,
        statusCallbackUrl: `${PUBLIC_URL}/sms/twilio/status/${tenant.projectId}`,
      },
      credentials: ['authToken', 'apiKeySid', 'apiKeySecret'],
    });
    expect(res.body).not.toContain(account.authToken);
    expect(res.body).not.toContain(account.apiKey!.secret);
    const [row] = await query<{ credentials: string }>("SELECT credentials FROM channel_configs WHERE project_id = $1 AND channel = 'sms'", [tenant.projectId]);
    expect(row!.credentials).toMatch(/^hsb1\./);
    expect(row!.credentials).not.toContain(account.authToken);
  });

  it('asks Twilio first: credentials it refuses are a 422 naming the field, Twilio out of reach a 502, nothing saved', async () => {
    const saved = () => query(`SELECT credentials, updated_at FROM channel_configs WHERE project_id = $1 AND channel = 'sms'`, [tenant.projectId]);
    const before = await saved();
    const put = (credentials: Record<string, string>) =>
      t.app.inject({ method: 'PUT', url: `/projects/${tenant.projectId}/channels/sms`, headers: tenant.jwt, payload: { provider: 'twilio', settings: { accountSid: account.accountSid }, credentials } });
    const fields = (res: Awaited<ReturnType<typeof put>>) => res.json<{ details: { field: string }[] }>().details.map((d) => d.field);

    const wrongToken = await put({ authToken: otherAccount.authToken });
    expect(wrongToken.statusCode).toBe(422);
    expect(wrongToken.json()).toMatchObject({
      code: 'validation_failed',
      details: [{ field: 'credentials.authToken', error: `Twilio refused to read account ${account.accountSid} with these credentials: Twilio 401 20003: Authenticate` }],
    });
    const wrongKey = await put({ authToken: account.authToken, apiKeySid: account.apiKey!.sid, apiKeySecret: 'not-the-secret-of-it' });
    expect(wrongKey.statusCode).toBe(422);
    expect(fields(wrongKey)).toEqual(['credentials.apiKeySid']);
    // Sends would go with the API key, but the auth token signs every callback: a wrong one is refused as well.
    const wrongTokenBesideKey = await put({ authToken: otherAccount.authToken, apiKeySid: account.apiKey!.sid, apiKeySecret: account.apiKey!.secret });
    expect(wrongTokenBesideKey.statusCode).toBe(422);
    expect(fields(wrongTokenBesideKey)).toEqual(['credentials.authToken']);
    expect(await saved()).toEqual(before);
    expect(await send(tenant.live, { to: newUsNumber(), message: 'Still configured' })).toMatchObject({ status: 'sent' });

    // Twilio out of reach: nothing can be checked, nothing is saved.
    const unreachable = await startTestApp({ TWILIO_BASE_URL: 'http://127.0.0.1:9', TWILIO_TIMEOUT_MS: '2000' });
    try {
      const who = await createTenant(unreachable);
      const res = await unreachable.app.inject({
        method: 'PUT',
        url: `/projects/${who.projectId}/channels/sms`,
        headers: who.jwt,
        payload: { provider: 'twilio', settings: { accountSid: account.accountSid }, credentials: { authToken: account.authToken } },
      });
      expect(res.statusCode).toBe(502);
      expect(res.json()).toMatchObject({ code: 'provider_error', message: expect.stringContaining('Twilio could not be asked about the account') });
      expect((await unreachable.database.pool.query(`SELECT 1 FROM channel_configs WHERE project_id = $1 AND channel = 'sms'`, [who.projectId])).rowCount).toBe(0);
    } finally {
      await unreachable.services.close();
      await unreachable.close();
    }
  });

  it('refuses malformed provider settings and senders', async () => {
    const bad = await t.app.inject({
      method: 'PUT',
      url: `/projects/${tenant.projectId}/channels/sms`,
      headers: tenant.jwt,
      payload: { provider: 'twilio', settings: { accountSid: 'nope' }, credentials: { authToken: account.authToken } },
    });
    expect(bad.statusCode).toBe(422);
    const alphaInUs = await t.app.inject({ method: 'POST', url: `/projects/${tenant.projectId}/channels/sms/senders`, headers: tenant.jwt, payload: { country: 'US', kind: 'alphanumeric', sender: 'Acme' } });
    expect(alphaInUs.statusCode).toBe(422);
    expect(alphaInUs.body).toContain('alphanumeric');
    const digitsOnly = await t.app.inject({ method: 'POST', url: `/projects/${tenant.projectId}/channels/sms/senders`, headers: tenant.jwt, payload: { country: 'DE', kind: 'alphanumeric', sender: '12345' } });
    expect(digitsOnly.statusCode).toBe(422);
    const twice = await t.app.inject({ method: 'POST', url: `/projects/${tenant.projectId}/channels/sms/senders`, headers: tenant.jwt, payload: { country: 'GB', kind: 'alphanumeric', sender: 'Acme' } });
    expect(twice.statusCode).toBe(409);
  });

  it("keeps each project's provider and senders to itself", async () => {
    const url = `/projects/${tenant.projectId}/channels/sms`;
    const put = await t.app.inject({ method: 'PUT', url, headers: other.jwt, payload: { provider: 'twilio', settings: { accountSid: otherAccount.accountSid }, credentials: { authToken: otherAccount.authToken } } });
    expect(put.statusCode).toBe(404);
    expect((await t.app.inject({ method: 'GET', url: `${url}/senders`, headers: other.jwt })).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'GET', url: `${url}/senders`, headers: other.live })).statusCode).toBe(403);
    expect((await t.app.inject({ method: 'POST', url: `${url}/senders`, headers: other.jwt, payload: { country: 'FR', kind: 'alphanumeric', sender: 'Evil' } })).statusCode).toBe(404);
    const listed = await t.app.inject({ method: 'GET', url: `${url}/senders`, headers: tenant.live });
    expect(listed.json<{ data: { sender: string; ratePerSecond: number }[] }>().data.map((s) => s.sender).sort()).toEqual([CA_LONG_CODE, GB_LONG_CODE, US_LONG_CODE, 'Acme'].sort());
    const [senderId] = listed.json<{ data: { id: string }[] }>().data.map((s) => s.id);
    expect((await t.app.inject({ method: 'DELETE', url: `/projects/${other.projectId}/channels/sms/senders/${senderId}`, headers: other.jwt })).statusCode).toBe(404);
  });
});

describe('POST /transactional/sms', () => {
  it('sends through Twilio from the number provisioned for the US, ignoring the senderId, with its status callback', async () => {
    const to = newUsNumber();
    const envelope = await send(tenant.live, { to, message: 'Your code is 123456', senderId: 'Acme' });
    expect(envelope).toEqual({ success: true, status: 'sent', messageId: expect.any(String), reason: null, segments: 1, encoding: 'GSM-7', from: US_LONG_CODE });
    const [message] = sentTo(to);
    // The callback URL names the delivery, so Twilio's report finds it whenever it comes.
    const { id } = (await query<{ id: number }>('SELECT id::float8 AS id FROM deliveries WHERE message_id = $1', [envelope.messageId]))[0]!;
    expect(message).toMatchObject({ from: US_LONG_CODE, body: 'Your code is 123456', statusCallback: `${PUBLIC_URL}/sms/twilio/status/${tenant.projectId}?delivery=${id}` });
    expect(await deliveryOf(envelope.messageId!)).toMatchObject({ status: 'sent', provider_message_id: message!.sid, provider_code: 'twilio_queued' });
    // A number no subscriber carries becomes a contact with only that number.
    expect(await query('SELECT phone FROM subscribers WHERE project_id = $1 AND phone = $2', [tenant.projectId, to])).toHaveLength(1);
  });

  it('sends from the alphanumeric sender where the country shows one, and refuses one not provisioned there', async () => {
    const to = newGbNumber();
    expect(await send(tenant.live, { to, message: 'Hello', senderId: 'Acme' })).toMatchObject({ status: 'sent', from: 'Acme' });
    expect(sentTo(to)[0]).toMatchObject({ from: 'Acme' });
    expect(await send(tenant.live, { to, message: 'Hello' })).toMatchObject({ status: 'sent', from: GB_LONG_CODE });
    expect(await send(tenant.live, { to, message: 'Hello', senderId: 'Other' })).toMatchObject({ status: 'refused', reason: 'unverified_sender_id', messageId: null });
    // Nothing is provisioned to send to France from.
    expect(await send(tenant.live, { to: '+33612345678', message: 'Bonjour', senderId: 'Acme' })).toMatchObject({ status: 'refused', reason: 'unverified_sender_id' });
    expect(sentTo(to)).toHaveLength(2);
    expect(sentTo('+33612345678')).toHaveLength(0);
  });

  it('answers invalid_phone for a number that is not E.164, and 422 for a malformed request', async () => {
    for (const to of ['+1555', '4155550123', '+1415555012345678', 'not a number']) {
      expect(await send(tenant.live, { to, message: 'Hi' })).toMatchObject({ status: 'refused', reason: 'invalid_phone', messageId: null });
    }
    expect((await post(tenant.live, { to: 14155550123, message: 'Hi' })).statusCode).toBe(422);
    expect((await post(tenant.live, { to: newUsNumber() })).statusCode).toBe(422);
    expect((await post(tenant.live, { to: newUsNumber(), message: 'Hi', senderId: 'Far too long id' })).statusCode).toBe(422);
    const tooLong = await post(tenant.live, { to: newUsNumber(), message: '👋'.repeat(331) });
    expect(tooLong.statusCode).toBe(422);
    expect(tooLong.body).toContain('11 SMS parts');
    const publishable = await post({ 'x-api-key': 'hrd_pub_live_nope' }, { to: newUsNumber(), message: 'Hi' });
    expect(publishable.statusCode).toBe(401);
  });

  it('counts segments: extension characters, emoji, long messages', async () => {
    expect(await send(tenant.test, { to: newUsNumber(), message: 'a'.repeat(159) + '€' })).toMatchObject({ segments: 2, encoding: 'GSM-7' });
    expect(await send(tenant.test, { to: newUsNumber(), message: 'On our way 🚚' })).toMatchObject({ segments: 1, encoding: 'UCS-2' });
    expect(await send(tenant.test, { to: newUsNumber(), message: 'x'.repeat(1530) })).toMatchObject({ segments: 10, encoding: 'GSM-7' });
  });

  it("fails invalid_phone on Twilio's 21211 and remembers the number", async () => {
    const to = newUsNumber();
    peer.answer(to, { status: 400, code: 21211, message: "The 'To' number is not a valid phone number." });
    const envelope = await send(tenant.live, { to, message: 'Hi' });
    expect(envelope).toMatchObject({ status: 'failed', reason: 'invalid_phone' });
    expect(await deliveryOf(envelope.messageId!)).toMatchObject({ status: 'failed', reason: 'invalid_phone', provider_code: 'twilio_21211' });
    expect(await addressState(tenant.projectId, to)).toEqual({ status: 'unreachable', status_reason: 'twilio_21211' });
    peer.answer(to, undefined);
    expect(await send(tenant.live, { to, message: 'Hi' })).toMatchObject({ status: 'refused', reason: 'invalid_phone' });
    expect(sentTo(to)).toHaveLength(0);
  });

  it('sends to Jersey, Guernsey and the Isle of Man from the senders provisioned for GB (they share +44)', async () => {
    // Jersey, Guernsey and Isle of Man mobiles, as libphonenumber places them.
    for (const to of ['+447797123456', '+447781123456', '+447624123456']) {
      expect(await send(tenant.live, { to, message: 'Hello', senderId: 'Acme' })).toMatchObject({ status: 'sent', from: 'Acme' });
      expect(await send(tenant.live, { to, message: 'Hello' })).toMatchObject({ status: 'sent', from: GB_LONG_CODE });
      expect(await send(tenant.live, { to, message: 'Hello', senderId: 'Other' })).toMatchObject({ status: 'refused', reason: 'unverified_sender_id' });
    }
    // A sender provisioned for the island itself comes first; the other project has none for GB.
    await addSender(tenant, { country: 'JE', kind: 'long_code', sender: '+447797000001', ratePerSecond: 1000 });
    expect(await send(tenant.live, { to: '+447797123456', message: 'Hello' })).toMatchObject({ status: 'sent', from: '+447797000001' });
    expect(await send(other.live, { to: '+447781123456', message: 'Hello' })).toMatchObject({ status: 'refused', reason: 'unverified_sender_id' });
  });

  it("keeps Twilio's error code and words on the delivery of a refused send, and the send log shows them", async () => {
    const to = newUsNumber();
    peer.answer(to, { status: 400, code: 21614, message: "'To' number is not a valid mobile number" });
    const envelope = await send(tenant.live, { to, message: 'Hi' });
    expect(envelope).toMatchObject({ status: 'failed', reason: 'carrier_rejected' });
    const [row] = await query('SELECT provider_code, provider_error FROM deliveries WHERE message_id = $1', [envelope.messageId]);
    expect(row).toEqual({ provider_code: 'twilio_21614', provider_error: "Twilio 400 21614: 'To' number is not a valid mobile number" });
    peer.answer(to, undefined);
    const log = await t.app.inject({ method: 'GET', url: `/transactional/sends/project/${tenant.projectId}?channel=sms&pageSize=100`, headers: tenant.live });
    const sends = log.json<{ data: { messageId: string | null; delivery: unknown }[] }>().data;
    expect(sends.find((s) => s.messageId === envelope.messageId)?.delivery).toEqual({
      status: 'failed',
      reason: 'carrier_rejected',
      providerCode: 'twilio_21614',
      providerError: "Twilio 400 21614: 'To' number is not a valid mobile number",
    });
    // A send that went shows Twilio's answer and no error; one refused before anything was written, no delivery.
    const went = await send(tenant.live, { to: newUsNumber(), message: 'Hi' });
    const refusedBefore = await send(tenant.live, { to: '+1555', message: 'Hi' });
    const again = (await t.app.inject({ method: 'GET', url: `/transactional/sends/project/${tenant.projectId}?channel=sms&pageSize=100`, headers: tenant.live })).json<{
      data: { id: string; messageId: string | null; delivery: unknown; outcome: Envelope }[];
    }>().data;
    expect(again.find((s) => s.messageId === went.messageId)?.delivery).toEqual({ status: 'sent', reason: null, providerCode: 'twilio_queued', providerError: null });
    expect(again.find((s) => s.outcome.reason === refusedBefore.reason && s.messageId === null)?.delivery).toBeNull();
  });

  it("fails carrier_rejected when Twilio cannot route to the number (21612)", async () => {
    const to = newUsNumber();
    peer.answer(to, { status: 400, code: 21612, message: 'The To phone number is not currently reachable via SMS' });
    const envelope = await send(tenant.live, { to, message: 'Hi' });
    expect(envelope).toMatchObject({ status: 'failed', reason: 'carrier_rejected' });
    expect(await deliveryOf(envelope.messageId!)).toMatchObject({ status: 'failed', provider_code: 'twilio_21612' });
    peer.answer(to, undefined);
  });

  it("opts the number out on Twilio's 21610 and never sends to it again", async () => {
    const to = newUsNumber();
    peer.answer(to, { status: 400, code: 21610, message: 'Attempt to send to unsubscribed recipient' });
    expect(await send(tenant.live, { to, message: 'Hi' })).toMatchObject({ status: 'failed', reason: 'recipient_opted_out' });
    expect(await addressState(tenant.projectId, to)).toEqual({ status: 'opted_out', status_reason: 'twilio_21610' });
    peer.answer(to, undefined);
    expect(await send(tenant.live, { to, message: 'Hi' })).toMatchObject({ status: 'refused', reason: 'recipient_opted_out' });
    expect(sentTo(to)).toHaveLength(0);
  });

  it('sends nothing with a test key, yet validates, chooses the sender and records', async () => {
    const to = newUsNumber();
    const before = peer.messages.length;
    const envelope = await send(tenant.test, { to, message: 'Sandboxed', senderId: 'Acme' });
    expect(envelope).toMatchObject({ status: 'sandbox', reason: 'sandbox', from: US_LONG_CODE, segments: 1 });
    expect(await deliveryOf(envelope.messageId!)).toMatchObject({ status: 'sent', provider_code: 'sandbox' });
    expect(await send(tenant.test, { to: '+1555', message: 'Hi' })).toMatchObject({ reason: 'invalid_phone' });
    expect(await send(tenant.test, { to: '+33612345678', message: 'Hi' })).toMatchObject({ reason: 'unverified_sender_id' });
    expect(peer.messages.length).toBe(before);
    const logged = await t.app.inject({ method: 'GET', url: `/transactional/sends/project/${tenant.projectId}?channel=sms`, headers: tenant.test });
    const sends = logged.json<{ data: { recipient: { to: string }; outcome: Record<string, unknown> }[] }>().data;
    expect(sends.map((s) => s.recipient.to)).toContain(to);
    // The log keeps the SMS envelope whole: its segments, encoding and sender too.
    expect(sends.find((s) => s.recipient.to === to)?.outcome).toEqual(envelope);
  });

  it('answers a repeated Idempotency-Key with the first answer, sending once', async () => {
    const to = newUsNumber();
    const key = { 'idempotency-key': `sms-${to}` };
    const first = await send(tenant.live, { to, message: 'Once' }, key);
    const again = await send(tenant.live, { to, message: 'Once' }, key);
    expect(again).toEqual(first);
    expect(sentTo(to)).toHaveLength(1);
    expect((await post(tenant.live, { to, message: 'Changed' }, key)).statusCode).toBe(422);
  });

  it("refuses a number whose subscriber turned SMS off, and obeys the project's SMS delivery policy", async () => {
    const to = newUsNumber();
    const contact = await t.app.inject({ method: 'POST', url: '/contacts', headers: tenant.live, payload: { projectId: tenant.projectId, phone: to, preferences: { channels: { sms: false } } } });
    expect(contact.statusCode, contact.body).toBe(201);
    expect(await send(tenant.live, { to, message: 'Hi' })).toMatchObject({ status: 'refused', reason: 'recipient_unsubscribed' });

    const set = (deliveryPolicy: unknown) => t.app.inject({ method: 'PATCH', url: `/projects/${tenant.projectId}`, headers: tenant.jwt, payload: { settings: { deliveryPolicy } } });
    expect((await set({ channels: { sms: { frequencyCap: { max: 1, windowSeconds: 3600 } } } })).statusCode).toBe(200);
    try {
      const capped = newUsNumber();
      expect(await send(tenant.live, { to: capped, message: 'One' })).toMatchObject({ status: 'sent' });
      expect(await send(tenant.live, { to: capped, message: 'Two' })).toMatchObject({ status: 'refused', reason: 'frequency_capped' });
      expect(sentTo(capped)).toHaveLength(1);
    } finally {
      expect((await set({})).statusCode).toBe(200);
    }
  });

  it("keeps another project's keys off the project's senders and send log", async () => {
    // The other project has a US number of its own: it sends from it, never the tenant's.
    const to = newUsNumber();
    expect(await send(other.live, { to, message: 'Hi', senderId: 'Acme' })).toMatchObject({ status: 'sent', from: '+14155550199' });
    expect(sentTo(to)[0]!.accountSid).toBe(otherAccount.accountSid);
    expect(await send(other.live, { to: newGbNumber(), message: 'Hi', senderId: 'Acme' })).toMatchObject({ reason: 'unverified_sender_id' });
    const log = await t.app.inject({ method: 'GET', url: `/transactional/sends/project/${tenant.projectId}`, headers: other.live });
    expect(log.statusCode).toBe(403);
  });
});

describe("Twilio's callbacks", () => {
  it('moves a delivery to delivered once, however often the callback comes', async () => {
    const to = newUsNumber();
    const { messageId } = await send(tenant.live, { to, message: 'Hi' });
    const [message] = sentTo(to);
    const delivered = peer.statusCallback(message!, 'delivered');
    const first = await callback(delivered);
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json()).toEqual({ applied: 1, unknown: 0 });
    expect((await callback(delivered)).statusCode).toBe(200);
    expect((await callback(peer.statusCallback(message!, 'sent'))).json()).toEqual({ applied: 0, unknown: 0 });
    expect(await deliveryOf(messageId!)).toMatchObject({ status: 'delivered' });
    const events = await query("SELECT type FROM delivery_events e JOIN deliveries d ON d.id = e.delivery_id WHERE d.message_id = $1", [messageId]);
    expect(events).toEqual([{ type: 'delivered' }]);
  });

  it('moves a delivery the carrier refused to failed, carrier_rejected, with Twilio\'s code', async () => {
    const to = newUsNumber();
    const { messageId } = await send(tenant.live, { to, message: 'Hi' });
    const [message] = sentTo(to);
    const undelivered = peer.statusCallback(message!, 'undelivered', 30007);
    expect((await callback(undelivered)).statusCode).toBe(200);
    expect((await callback(undelivered)).statusCode).toBe(200);
    expect(await deliveryOf(messageId!)).toMatchObject({ status: 'failed', reason: 'carrier_rejected', provider_code: 'twilio_30007' });
    const events = await query<{ type: string; detail: Record<string, unknown> }>(
      'SELECT type, detail FROM delivery_events e JOIN deliveries d ON d.id = e.delivery_id WHERE d.message_id = $1',
      [messageId],
    );
    expect(events).toEqual([{ type: 'failed', detail: { status: 'undelivered', errorCode: 30007, reason: 'carrier_rejected', providerCode: 'twilio_30007' } }]);
  });

  it('lands a status callback that comes before Twilio answered the send', async () => {
    const to = newUsNumber();
    peer.beforeAnswer(to, async (message) => {
      expect((await callback(peer.statusCallback(message, 'delivered'))).json()).toEqual({ applied: 1, unknown: 0 });
    });
    const { messageId } = await send(tenant.live, { to, message: 'Hi' });
    expect(await deliveryOf(messageId!)).toMatchObject({ status: 'delivered', provider_message_id: sentTo(to)[0]!.sid, provider_code: 'twilio_queued' });

    // A failure that overtakes the answer stays a failure, with the carrier's reason and code.
    const failing = newUsNumber();
    peer.beforeAnswer(failing, async (message) => {
      expect((await callback(peer.statusCallback(message, 'undelivered', 30003))).json()).toEqual({ applied: 1, unknown: 0 });
    });
    const failed = await send(tenant.live, { to: failing, message: 'Hi' });
    expect(failed.status).toBe('sent');
    expect(await deliveryOf(failed.messageId!)).toMatchObject({ status: 'failed', reason: 'carrier_rejected', provider_code: 'twilio_30003', provider_message_id: sentTo(failing)[0]!.sid });
    // Replayed once the answer is recorded: nothing changes.
    expect((await callback(peer.statusCallback(sentTo(failing)[0]!, 'undelivered', 30003))).json()).toEqual({ applied: 1, unknown: 0 });
    expect(await deliveryOf(failed.messageId!)).toMatchObject({ status: 'failed', reason: 'carrier_rejected' });
  });

  it('opts the number out on a 21610 callback', async () => {
    const to = newUsNumber();
    const { messageId } = await send(tenant.live, { to, message: 'Hi' });
    expect((await callback(peer.statusCallback(sentTo(to)[0]!, 'failed', 21610))).statusCode).toBe(200);
    expect(await deliveryOf(messageId!)).toMatchObject({ status: 'failed', reason: 'recipient_opted_out' });
    expect(await addressState(tenant.projectId, to)).toEqual({ status: 'opted_out', status_reason: 'twilio_21610' });
  });

  it('refuses forged callbacks (403) and records nothing', async () => {
    const to = newUsNumber();
    const { messageId } = await send(tenant.live, { to, message: 'Hi' });
    const [message] = sentTo(to);
    const forged = peer.statusCallback(message!, 'delivered', undefined, otherAccount.authToken);
    expect((await callback(forged)).statusCode).toBe(403);
    const tampered = peer.statusCallback(message!, 'delivered');
    expect((await callback({ ...tampered, payload: tampered.payload.replace('delivered', 'undelivered') })).statusCode).toBe(403);
    const unsigned = peer.statusCallback(message!, 'delivered');
    expect((await callback({ ...unsigned, headers: { 'content-type': unsigned.headers['content-type']! } })).statusCode).toBe(403);
    // Signed by the other project's token for the other project's URL: it names no delivery there.
    const elsewhere = peer.statusCallback({ ...message!, accountSid: otherAccount.accountSid, statusCallback: `${PUBLIC_URL}/sms/twilio/status/${other.projectId}` }, 'delivered');
    expect((await callback(elsewhere)).json()).toEqual({ applied: 0, unknown: 1 });
    expect(await deliveryOf(messageId!)).toMatchObject({ status: 'sent' });
  });

  it('opts a number out on STOP and back in on START, and answers HELP as configured', async () => {
    const to = newUsNumber();
    const inboundUrl = `${PUBLIC_URL}/sms/twilio/inbound/${tenant.projectId}`;
    const inbound = (body: string) => callback(peer.inbound(inboundUrl, account, to, US_LONG_CODE, body));

    const stop = await inbound(' stop ');
    expect(stop.statusCode, stop.body).toBe(200);
    expect(stop.headers['content-type']).toContain('text/xml');
    expect(await addressState(tenant.projectId, to)).toEqual({ status: 'opted_out', status_reason: 'sms_stop' });
    expect(await send(tenant.live, { to, message: 'Hi' })).toMatchObject({ status: 'refused', reason: 'recipient_opted_out' });
    expect(sentTo(to)).toHaveLength(0);

    expect((await inbound('START')).statusCode).toBe(200);
    expect(await addressState(tenant.projectId, to)).toBeUndefined();
    expect(await send(tenant.live, { to, message: 'Hi' })).toMatchObject({ status: 'sent' });

    for (const word of ['STOPALL', 'UNSUBSCRIBE', 'CANCEL', 'END', 'QUIT']) {
      await inbound(word);
      expect((await addressState(tenant.projectId, to))?.status).toBe('opted_out');
      await inbound('UNSTOP');
      expect(await addressState(tenant.projectId, to)).toBeUndefined();
    }
    expect((await inbound('HELP')).body).toBe('<?xml version="1.0" encoding="UTF-8"?><Response><Message>Acme alerts. Reply STOP to stop.</Message></Response>');
    expect((await inbound('Please stop texting me at night')).body).toBe('<?xml version="1.0" encoding="UTF-8"?><Response></Response>');
    expect(await addressState(tenant.projectId, to)).toBeUndefined();

    // Forged, or sent to another project's URL with this account's signature: 403, nothing changes.
    const forged = peer.inbound(inboundUrl, otherAccount, to, US_LONG_CODE, 'STOP');
    expect((await callback(forged)).statusCode).toBe(403);
    const misdirected = peer.inbound(`${PUBLIC_URL}/sms/twilio/inbound/${other.projectId}`, account, to, US_LONG_CODE, 'STOP');
    expect((await callback(misdirected)).statusCode).toBe(403);
    expect(await addressState(tenant.projectId, to)).toBeUndefined();
    expect(await addressState(other.projectId, to)).toBeUndefined();
  });

  it('lists the numbers opted out, most recent first and paged, to the project and environment alone', async () => {
    const [first, second, back] = [newUsNumber(), newUsNumber(), newUsNumber()];
    const inbound = (from: string, body: string) => callback(peer.inbound(`${PUBLIC_URL}/sms/twilio/inbound/${tenant.projectId}`, account, from, US_LONG_CODE, body));
    for (const from of [first, second, back]) expect((await inbound(from, 'STOP')).statusCode).toBe(200);
    await inbound(back, 'START');
    type OptOuts = { data: { number: string; reason: string | null; source: string | null; optedOutAt: string }[]; page: number; pageSize: number; total: number };
    const url = `/projects/${tenant.projectId}/channels/sms/opt-outs`;
    const listed = await t.app.inject({ method: 'GET', url: `${url}?pageSize=100`, headers: tenant.jwt });
    expect(listed.statusCode, listed.body).toBe(200);
    const numbers = listed.json<OptOuts>().data.map((o) => o.number);
    expect(numbers.indexOf(second)).toBeLessThan(numbers.indexOf(first));
    expect(numbers).not.toContain(back);
    expect(listed.json<OptOuts>().data.find((o) => o.number === first)).toMatchObject({ reason: 'sms_stop', source: 'recipient', optedOutAt: expect.any(String) });

    const paged = (await t.app.inject({ method: 'GET', url: `${url}?pageSize=1&page=2`, headers: tenant.live })).json<OptOuts>();
    expect(paged).toMatchObject({ page: 2, pageSize: 1, total: listed.json<OptOuts>().total });
    expect(paged.data).toHaveLength(1);
    expect((await t.app.inject({ method: 'GET', url, headers: tenant.test })).json<OptOuts>().data.map((o) => o.number)).not.toContain(first);
    expect((await t.app.inject({ method: 'GET', url, headers: other.jwt })).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'GET', url, headers: other.live })).statusCode).toBe(403);
    expect((await t.app.inject({ method: 'GET', url: `${url}?pageSize=101`, headers: tenant.jwt })).statusCode).toBe(422);
  });
});

describe("a sender's rate", () => {
  it('holds a long code to one message per second, the rest sent by the workers in turn', async () => {
    const numbersSent = [newCaNumber(), newCaNumber(), newCaNumber()];
    const envelopes = [];
    for (const to of numbersSent) envelopes.push(await send(tenant.live, { to, message: 'Burst' }));
    // The inline budget (300 ms) is shorter than the long code's interval: at least one waits in the queue.
    expect(envelopes.some((e) => e.status === 'queued' && e.reason === null)).toBe(true);
    t.services.delivery.start();
    await expect.poll(() => numbersSent.every((to) => sentTo(to).length === 1), { timeout: 10_000, interval: 100 }).toBe(true);
    const times = peer.messages.filter((m) => m.from === CA_LONG_CODE && numbersSent.includes(m.to)).map((m) => m.at).sort((a, b) => a - b);
    for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBeGreaterThanOrEqual(900);
  });
});
