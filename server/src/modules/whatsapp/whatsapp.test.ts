// WhatsApp through HTTP to a local Cloud API: Meta settings and the webhook URL, the template registry and its sync,
// POST /transactional/whatsapp's reasons (templates, the 24-hour window at its boundary, opt-outs), STOP and START,
// signed status callbacks applied once — a failed one with Meta's reason, code and words —, forged ones refused, the
// sandbox, idempotency and tenant isolation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant, type Tenant } from '../../../test/fixtures.js';
import { startTestApp, type TestApp } from '../../../test/harness.js';
import { PEER_PHONE_NUMBER, startWhatsAppPeer, statusWebhook, webhookBody, type StatusError, type WhatsAppPeer } from '../../../test/whatsapp-peer.js';

const PUBLIC_URL = 'https://herald.example.com';
const ACCOUNT = { phoneNumberId: '1098765432101', wabaId: '2098765432102' };
const SECRETS = { accessToken: 'EAAG-test-access-token', appSecret: 'app-secret-0123456789abcdef', verifyToken: 'verify-me-please' };
const OTHER_SECRETS = { accessToken: 'EAAG-test-access-token', appSecret: 'other-secret-0123456789abcdef', verifyToken: 'other-verify-token' };
const DAY_MS = 24 * 60 * 60 * 1000;

let t: TestApp;
let peer: WhatsAppPeer;
let tenant: Tenant;
let other: Tenant;
let base: string;
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
/** A fresh valid US number per test (+1 415 555 01xx is reserved for fiction but fails validation; 202-555 parses). */
const newNumber = () => `+1202555${String(1000 + ++numbers).padStart(4, '0')}`;

async function configure(who: Tenant, secrets: typeof SECRETS) {
  const res = await t.app.inject({
    method: 'PUT',
    url: `/projects/${who.projectId}/channels/whatsapp`,
    headers: who.jwt,
    payload: { provider: 'meta', settings: ACCOUNT, credentials: secrets },
  });
  expect(res.statusCode, res.body).toBe(200);
  return res;
}

beforeAll(async () => {
  peer = await startWhatsAppPeer({ accessToken: SECRETS.accessToken, ...ACCOUNT });
  t = await startTestApp(
    { PUBLIC_URL, WHATSAPP_GRAPH_URL: peer.url, WHATSAPP_GRAPH_VERSION: 'v21.0', TRANSACTIONAL_RETRY_BUDGET_MS: '300', DELIVERY_RETRY_BASE_MS: '200' },
    { clock: () => pinned ?? new Date() },
  );
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const address = t.app.server.address();
  base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  [tenant, other] = await Promise.all([createTenant(t), createTenant(t)]);
  await configure(tenant, SECRETS);
  await configure(other, OTHER_SECRETS);
  peer.templates.set(ACCOUNT.wabaId, [
    { name: 'order_update', language: 'en_US', category: 'UTILITY', status: 'APPROVED' },
    { name: 'order_update', language: 'fr', category: 'UTILITY', status: 'APPROVED' },
    { name: 'spring_sale', language: 'en_US', category: 'MARKETING', status: 'PENDING' },
  ]);
  const synced = await t.app.inject({ method: 'POST', url: `/projects/${tenant.projectId}/whatsapp-templates/sync`, headers: tenant.live });
  expect(synced.statusCode, synced.body).toBe(200);
});
afterAll(async () => {
  await t.services.delivery.stop();
  await t.services.close();
  await t.close();
  await peer.close();
});

const post = (headers: Headers, payload: Record<string, unknown>, extra: Headers = {}) =>
  t.app.inject({ method: 'POST', url: '/transactional/whatsapp', headers: { ...headers, ...extra }, payload });

async function send(headers: Headers, payload: Record<string, unknown>, extra: Headers = {}): Promise<Envelope> {
  const res = await post(headers, payload, extra);
  expect(res.statusCode, res.body).toBe(200);
  return res.json<Envelope>();
}

const webhookUrl = (who: Tenant) => `${base}/whatsapp/webhook/${who.projectId}`;

/** The person at `from` writes to the business number at `at` (Meta's callback, signed). */
async function inbound(from: string, text: string, at: Date = pinned ?? new Date(), who: Tenant = tenant, secret = SECRETS.appSecret) {
  const body = webhookBody(
    {
      contacts: [{ profile: { name: 'Ada' }, wa_id: from.slice(1) }],
      messages: [{ from: from.slice(1), id: `wamid.in-${from}-${at.getTime()}`, timestamp: String(Math.floor(at.getTime() / 1000)), type: 'text', text: { body: text } }],
    },
    ACCOUNT.phoneNumberId,
  );
  const answer = await peer.callBack(webhookUrl(who), body, secret);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body;
}

const statusBody = (wamid: string, to: string, status: 'sent' | 'delivered' | 'read' | 'failed', errors: StatusError[] = []) =>
  statusWebhook(wamid, to, status, ACCOUNT.phoneNumberId, errors);

const deliveryOf = async (messageId: string) =>
  (
    await query<{
      id: number;
      status: string;
      provider_message_id: string | null;
      destination: string;
      delivered_at: Date | null;
      reason: string | null;
      provider_code: string | null;
      provider_error: string | null;
    }>(
      'SELECT id::float8 AS id, status, provider_message_id, destination, delivered_at, reason, provider_code, provider_error FROM deliveries WHERE message_id = $1',
      [messageId],
    )
  )[0]!;

/** The send log's row of a message: the envelope answered, and its delivery as it is now. */
const loggedSend = async (messageId: string) => {
  const log = await t.app.inject({ method: 'GET', url: `/transactional/sends/project/${tenant.projectId}?channel=whatsapp&pageSize=100`, headers: tenant.live });
  return log.json<{ data: { messageId: string; reason: string | null; delivery: unknown }[] }>().data.find((row) => row.messageId === messageId);
};

const addressState = async (address: string) =>
  (await query<{ status: string; status_reason: string; source: string }>(
    `SELECT status, status_reason, source FROM channel_addresses WHERE project_id = $1 AND channel = 'whatsapp' AND address = $2 AND NOT sandbox`,
    [tenant.projectId, address],
  ))[0];

describe('provider settings', () => {
  it('shows the webhook URL to paste into Meta, names the secrets and never returns them', async () => {
    const res = await configure(tenant, SECRETS);
    expect(res.json()).toMatchObject({
      channel: 'whatsapp',
      provider: 'meta',
      settings: {
        ...ACCOUNT,
        displayPhoneNumber: PEER_PHONE_NUMBER.display_phone_number,
        verifiedName: PEER_PHONE_NUMBER.verified_name,
        webhookUrl: `${PUBLIC_URL}/whatsapp/webhook/${tenant.projectId}`,
      },
      credentials: ['accessToken', 'appSecret', 'verifyToken'],
    });
    const list = await t.app.inject({ method: 'GET', url: `/projects/${tenant.projectId}/channels`, headers: tenant.jwt });
    for (const secret of Object.values(SECRETS)) {
      expect(res.body).not.toContain(secret);
      expect(list.body).not.toContain(secret);
    }
    const [row] = await query<{ credentials: string }>(`SELECT credentials FROM channel_configs WHERE project_id = $1 AND channel = 'whatsapp'`, [tenant.projectId]);
    expect(row!.credentials).toMatch(/^hsb1\./);
    expect(row!.credentials).not.toContain(SECRETS.appSecret);
  });

  it('asks Meta first: a token it refuses or a phone number id it does not know is a 422 naming the field, nothing saved', async () => {
    const put = (settings: typeof ACCOUNT, credentials: typeof SECRETS) =>
      t.app.inject({ method: 'PUT', url: `/projects/${tenant.projectId}/channels/whatsapp`, headers: tenant.jwt, payload: { provider: 'meta', settings, credentials } });
    const before = await query(`SELECT updated_at FROM channel_configs WHERE project_id = $1 AND channel = 'whatsapp'`, [tenant.projectId]);
    const reads = peer.requests.filter((r) => r.method === 'GET' && r.path === `/v21.0/${ACCOUNT.phoneNumberId}`).length;

    const badToken = await put(ACCOUNT, { ...SECRETS, accessToken: 'EAAG-revoked-token' });
    expect(badToken.statusCode).toBe(422);
    expect(badToken.json<{ details: unknown[] }>().details).toEqual([{ field: 'credentials.accessToken', error: 'Meta refused the access token: Invalid OAuth access token (190)' }]);
    const unknownNumber = await put({ ...ACCOUNT, phoneNumberId: '1098765432999' }, SECRETS);
    expect(unknownNumber.statusCode).toBe(422);
    expect(unknownNumber.json<{ details: { field: string; error: string }[] }>().details).toEqual([
      { field: 'settings.phoneNumberId', error: expect.stringMatching(/^Meta has no phone number 1098765432999 this token may use: Unsupported get request/) },
    ]);
    expect(peer.requests.filter((r) => r.method === 'GET' && r.path === `/v21.0/${ACCOUNT.phoneNumberId}`).length).toBe(reads + 1);
    expect(await query(`SELECT updated_at FROM channel_configs WHERE project_id = $1 AND channel = 'whatsapp'`, [tenant.projectId])).toEqual(before);

    // Meta out of reach: nothing can be checked, nothing is saved.
    const unreachable = await startTestApp({ WHATSAPP_GRAPH_URL: 'http://127.0.0.1:9', WHATSAPP_TIMEOUT_MS: '2000' });
    try {
      const who = await createTenant(unreachable);
      const res = await unreachable.app.inject({ method: 'PUT', url: `/projects/${who.projectId}/channels/whatsapp`, headers: who.jwt, payload: { provider: 'meta', settings: ACCOUNT, credentials: SECRETS } });
      expect(res.statusCode).toBe(502);
      expect(res.json()).toMatchObject({ code: 'provider_error', message: expect.stringContaining('Meta could not be asked about the phone number') });
    } finally {
      await unreachable.services.close();
      await unreachable.close();
    }
  });

  it("is refused on another organization's project and with an API key", async () => {
    const payload = { provider: 'meta', settings: ACCOUNT, credentials: SECRETS };
    expect((await t.app.inject({ method: 'PUT', url: `/projects/${tenant.projectId}/channels/whatsapp`, headers: other.jwt, payload })).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'PUT', url: `/projects/${tenant.projectId}/channels/whatsapp`, headers: tenant.live, payload })).statusCode).toBe(401);
  });

  it("answers Meta's verification handshake with the project's verify token only", async () => {
    const verify = (who: Tenant, token: string) =>
      fetch(`${webhookUrl(who)}?hub.mode=subscribe&hub.verify_token=${encodeURIComponent(token)}&hub.challenge=1158201444`);
    const ok = await verify(tenant, SECRETS.verifyToken);
    expect(ok.status).toBe(200);
    expect(await ok.text()).toBe('1158201444');
    expect((await verify(tenant, 'wrong-token')).status).toBe(403);
    // The other project's token opens only the other project's URL.
    expect((await verify(tenant, OTHER_SECRETS.verifyToken)).status).toBe(403);
    expect((await verify(other, OTHER_SECRETS.verifyToken)).status).toBe(200);
  });
});

describe('template registry', () => {
  it('is synchronised from the business account across pages, and a template Meta dropped is removed', async () => {
    const list = await t.app.inject({ method: 'GET', url: `/projects/${tenant.projectId}/whatsapp-templates`, headers: tenant.live });
    expect(list.statusCode).toBe(200);
    const rows = list.json<{ data: { name: string; language: string; status: string; source: string }[]; total: number }>();
    expect(rows.total).toBe(3);
    expect(rows.data.map((r) => `${r.name}/${r.language}/${r.status}/${r.source}`)).toEqual([
      'order_update/en_US/APPROVED/provider',
      'order_update/fr/APPROVED/provider',
      'spring_sale/en_US/PENDING/provider',
    ]);
    expect(peer.requests.filter((r) => r.path === `/v21.0/${ACCOUNT.wabaId}/message_templates`).length).toBeGreaterThanOrEqual(2);

    peer.templates.set(ACCOUNT.wabaId, [...peer.templates.get(ACCOUNT.wabaId)!, { name: 'gone_soon', language: 'en', category: 'UTILITY', status: 'APPROVED' }]);
    const sync = () => t.app.inject({ method: 'POST', url: `/projects/${tenant.projectId}/whatsapp-templates/sync`, headers: tenant.jwt });
    expect((await sync()).json()).toEqual({ synced: 4, removed: 0 });
    peer.templates.set(ACCOUNT.wabaId, peer.templates.get(ACCOUNT.wabaId)!.filter((tpl) => tpl.name !== 'gone_soon'));
    expect((await sync()).json()).toEqual({ synced: 3, removed: 1 });
  });

  it('is written by hand for self-hosted setups: create, update, delete, one per name and language', async () => {
    const url = `/projects/${tenant.projectId}/whatsapp-templates`;
    const created = await t.app.inject({ method: 'POST', url, headers: tenant.live, payload: { name: 'manual_notice', language: 'en', category: 'UTILITY', status: 'PENDING' } });
    expect(created.statusCode, created.body).toBe(201);
    const { id } = created.json<{ id: string }>();
    expect((await t.app.inject({ method: 'POST', url, headers: tenant.live, payload: { name: 'manual_notice', language: 'en', category: 'UTILITY', status: 'PENDING' } })).statusCode).toBe(409);
    const to = newNumber();
    expect(await send(tenant.live, { to, templateName: 'manual_notice' })).toMatchObject({ status: 'refused', reason: 'template_not_approved' });
    const patched = await t.app.inject({ method: 'PATCH', url: `${url}/${id}`, headers: tenant.live, payload: { status: 'APPROVED' } });
    expect(patched.json()).toMatchObject({ id, status: 'APPROVED', source: 'manual' });
    expect(await send(tenant.live, { to, templateName: 'manual_notice' })).toMatchObject({ status: 'sent', reason: null, messageType: 'template' });
    expect((await t.app.inject({ method: 'DELETE', url: `${url}/${id}`, headers: tenant.live })).statusCode).toBe(204);
    expect(await send(tenant.live, { to, templateName: 'manual_notice' })).toMatchObject({ status: 'refused', reason: 'template_not_found' });
  });

  it("keeps each project's registry its own", async () => {
    const url = `/projects/${tenant.projectId}/whatsapp-templates`;
    const [first] = (await t.app.inject({ method: 'GET', url, headers: tenant.live })).json<{ data: { id: string }[] }>().data;
    expect((await t.app.inject({ method: 'GET', url, headers: other.live })).statusCode).toBe(403);
    expect((await t.app.inject({ method: 'GET', url, headers: other.jwt })).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'POST', url: `${url}/sync`, headers: other.jwt })).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'PATCH', url: `${url}/${first!.id}`, headers: other.jwt, payload: { status: 'PAUSED' } })).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'DELETE', url: `/projects/${other.projectId}/whatsapp-templates/${first!.id}`, headers: other.live })).statusCode).toBe(404);
    // The other project's send cannot name this project's templates.
    expect(await send(other.live, { to: newNumber(), templateName: 'order_update' })).toMatchObject({ status: 'refused', reason: 'template_not_found' });
  });
});

describe('POST /transactional/whatsapp', () => {
  it('sends an approved template with its language and parameters as Cloud API components', async () => {
    const to = newNumber();
    const components = [{ type: 'body', parameters: [{ type: 'text', text: 'Ada' }, { type: 'text', text: 'A-17' }] }];
    const answer = await send(tenant.live, { to, templateName: 'order_update', templateLanguage: 'fr', templateComponents: components });
    expect(answer).toEqual({ success: true, status: 'sent', messageId: expect.stringMatching(/^msg_/), reason: null, messageType: 'template' });
    const [sent] = peer.messages.filter((m) => m.to === to);
    expect(sent!.body).toEqual({
      messaging_product: 'whatsapp',
      recipient_type: 'individual',
      to,
      type: 'template',
      template: { name: 'order_update', language: { code: 'fr' }, components },
    });
    const delivery = await deliveryOf(answer.messageId!);
    expect(delivery).toMatchObject({ status: 'sent', provider_message_id: sent!.id, destination: to });
    // A number no subscriber carried is recorded against a contact made for it.
    const [contact] = await query<{ phone: string }>('SELECT phone FROM subscribers WHERE project_id = $1 AND phone = $2', [tenant.projectId, to]);
    expect(contact).toEqual({ phone: to });
  });

  it('refuses a template that is not approved, or not in the registry, and sends nothing', async () => {
    const to = newNumber();
    expect(await send(tenant.live, { to, templateName: 'spring_sale' })).toEqual({ success: true, status: 'refused', messageId: null, reason: 'template_not_approved', messageType: 'template' });
    expect(await send(tenant.live, { to, templateName: 'order_update', templateLanguage: 'de' })).toMatchObject({ status: 'refused', reason: 'template_not_found' });
    expect(await send(tenant.live, { to, templateName: 'no_such_template' })).toMatchObject({ status: 'refused', reason: 'template_not_found' });
    expect(peer.attempts(to)).toBe(0);
  });

  it('refuses free-form text outside the 24-hour window, and sends it inside, to the second', async () => {
    const to = newNumber();
    pinned = new Date(Math.floor(Date.now() / 1000) * 1000);
    try {
      expect(await send(tenant.live, { to, message: 'Hello' })).toEqual({ success: true, status: 'refused', messageId: null, reason: 'outside_service_window', messageType: 'text' });
      const wroteAt = new Date(pinned.getTime() - DAY_MS + 1000);
      expect(await inbound(to, 'Where is my order?', wroteAt)).toMatchObject({ messages: 1 });
      // 23:59:59 after the person wrote: open.
      expect(await send(tenant.live, { to, message: 'On its way!' })).toMatchObject({ status: 'sent', messageType: 'text' });
      expect(peer.messages.filter((m) => m.to === to).map((m) => m.body.text)).toEqual([{ body: 'On its way!', preview_url: false }]);
      // 24:00:00 after: closed. A template still goes, and with both the template is what goes.
      pinned = new Date(wroteAt.getTime() + DAY_MS);
      expect(await send(tenant.live, { to, message: 'Still there?' })).toMatchObject({ status: 'refused', reason: 'outside_service_window' });
      expect(await send(tenant.live, { to, message: 'Still there?', templateName: 'order_update' })).toMatchObject({ status: 'sent', messageType: 'template' });
      // A replayed older message never moves the window back; a new one reopens it.
      await inbound(to, 'Where is my order?', wroteAt);
      expect(await send(tenant.live, { to, message: 'Still there?' })).toMatchObject({ status: 'refused', reason: 'outside_service_window' });
      await inbound(to, 'Yes', new Date(pinned.getTime() - 60_000));
      expect(await send(tenant.live, { to, message: 'Great', templateName: 'order_update' })).toMatchObject({ status: 'sent', messageType: 'text' });
    } finally {
      pinned = undefined;
    }
  });

  it('opts a number out on STOP (recipient_opted_out) and back in on START', async () => {
    const to = newNumber();
    expect(await inbound(to, 'STOP')).toMatchObject({ messages: 1, optedOut: 1 });
    expect(await addressState(to)).toEqual({ status: 'opted_out', status_reason: 'whatsapp_stop', source: 'recipient' });
    expect(await send(tenant.live, { to, message: 'Hello' })).toEqual({ success: true, status: 'refused', messageId: null, reason: 'recipient_opted_out', messageType: 'text' });
    expect(await send(tenant.live, { to, templateName: 'order_update' })).toMatchObject({ status: 'refused', reason: 'recipient_opted_out' });
    // A test key's send is answered as a live one would be.
    expect(await send(tenant.test, { to, templateName: 'order_update' })).toMatchObject({ status: 'refused', reason: 'recipient_opted_out' });
    expect(await inbound(to, ' start ')).toMatchObject({ optedIn: 1 });
    expect(await addressState(to)).toEqual({ status: 'reachable', status_reason: null, source: null });
    expect(await send(tenant.live, { to, message: 'Welcome back' })).toMatchObject({ status: 'sent' });
    expect(peer.attempts(to)).toBe(1);
  });

  it("answers Meta's refusals: 131047 outside the window, 132001 a template it lacks, 131050 an opt-out recorded", async () => {
    const to = newNumber();
    await inbound(to, 'hi');
    peer.respond(to, { status: 400, code: 131047, message: 'Re-engagement message' });
    expect(await send(tenant.live, { to, message: 'Hello' })).toMatchObject({ status: 'failed', reason: 'outside_service_window' });
    peer.respond(to, { status: 400, code: 132001, message: 'Template name does not exist in the translation' });
    expect(await send(tenant.live, { to, templateName: 'order_update' })).toMatchObject({ status: 'failed', reason: 'template_not_approved' });
    peer.respond(to, { status: 400, code: 131050, message: 'User has stopped marketing messages' });
    const answer = await send(tenant.live, { to, templateName: 'order_update' });
    expect(answer).toMatchObject({ status: 'failed', reason: 'recipient_opted_out' });
    expect(await deliveryOf(answer.messageId!)).toMatchObject({ status: 'failed', reason: 'recipient_opted_out', provider_code: 'meta_131050', provider_error: 'User has stopped marketing messages (131050)' });
    expect(await addressState(to)).toMatchObject({ status: 'opted_out', status_reason: 'meta_131050', source: 'provider' });
    expect(await send(tenant.live, { to, templateName: 'order_update' })).toMatchObject({ status: 'refused', reason: 'recipient_opted_out' });
    expect(peer.attempts(to)).toBe(3);
  });

  it('refuses a number that is not a valid international one (422 naming to) and a send without content', async () => {
    for (const to of ['4155550123', '+1 000', 'not a number']) {
      const res = await post(tenant.live, { to, message: 'Hi' });
      expect(res.statusCode, to).toBe(422);
      expect(res.json<{ details: { field: string }[] }>().details.map((d) => d.field)).toContain('to');
    }
    expect((await post(tenant.live, { to: newNumber() })).statusCode).toBe(422);
    expect((await post(tenant.live, { to: newNumber(), message: 'x', templateLanguage: 'en' })).statusCode).toBe(422);
  });

  it('honours preferences.channels.whatsapp of a subscriber carrying the number, and the WhatsApp frequency cap', async () => {
    const to = newNumber();
    const contact = await t.app.inject({ method: 'POST', url: '/contacts', headers: tenant.live, payload: { projectId: tenant.projectId, phone: to, preferences: { channels: { whatsapp: false } } } });
    expect(contact.statusCode, contact.body).toBeLessThan(300);
    expect(await send(tenant.live, { to, templateName: 'order_update' })).toMatchObject({ status: 'refused', reason: 'recipient_unsubscribed' });

    const capped = newNumber();
    const policy = { deliveryPolicy: { channels: { whatsapp: { frequencyCap: { max: 1, windowSeconds: 3600 } } } } };
    const patch = await t.app.inject({ method: 'PATCH', url: `/projects/${other.projectId}`, headers: other.jwt, payload: { settings: policy } });
    expect(patch.statusCode, patch.body).toBe(200);
    const otherTemplate = await t.app.inject({
      method: 'POST',
      url: `/projects/${other.projectId}/whatsapp-templates`,
      headers: other.live,
      payload: { name: 'order_update', language: 'en_US', category: 'UTILITY', status: 'APPROVED' },
    });
    expect(otherTemplate.statusCode).toBe(201);
    expect(await send(other.live, { to: capped, templateName: 'order_update' })).toMatchObject({ status: 'sent' });
    expect(await send(other.live, { to: capped, templateName: 'order_update' })).toMatchObject({ status: 'refused', reason: 'frequency_capped' });
    expect(peer.attempts(capped)).toBe(1);
    // The cap is the project's: the tenant still sends to the same number.
    expect(await send(tenant.live, { to: capped, templateName: 'order_update' })).toMatchObject({ status: 'sent' });
  });

  it('sends nothing with a test key: checked, recorded, logged', async () => {
    const to = newNumber();
    const before = peer.requests.length;
    const answer = await send(tenant.test, { to, templateName: 'order_update' });
    expect(answer).toEqual({ success: true, status: 'sandbox', messageId: expect.stringMatching(/^msg_/), reason: 'sandbox', messageType: 'template' });
    expect(await deliveryOf(answer.messageId!)).toMatchObject({ status: 'sent', destination: to });
    expect(await send(tenant.test, { to, templateName: 'spring_sale' })).toMatchObject({ status: 'refused', reason: 'template_not_approved' });
    expect(await send(tenant.test, { to, message: 'free-form' })).toMatchObject({ status: 'refused', reason: 'outside_service_window' });
    expect(peer.requests.length).toBe(before);
    const log = await t.app.inject({ method: 'GET', url: `/transactional/sends/project/${tenant.projectId}?channel=whatsapp`, headers: tenant.test });
    const logged = log.json<{ data: { recipient: { to: string }; outcome: Envelope }[] }>().data.filter((row) => row.recipient.to === to);
    // Each outcome as answered, messageType included.
    expect(logged.map((row) => [row.outcome.status, row.outcome.messageType]).sort()).toEqual([
      ['refused', 'template'],
      ['refused', 'text'],
      ['sandbox', 'template'],
    ]);
  });

  it('replays the first answer to an Idempotency-Key and sends once', async () => {
    const to = newNumber();
    const key = { 'idempotency-key': `wa-${to}` };
    const first = await send(tenant.live, { to, templateName: 'order_update' }, key);
    const second = await send(tenant.live, { to, templateName: 'order_update' }, key);
    expect(second).toEqual(first);
    expect(peer.attempts(to)).toBe(1);
    // The same key with another body is a mistake, not a new send.
    expect((await post(tenant.live, { to, templateName: 'spring_sale' }, key)).statusCode).toBe(422);
    expect(peer.attempts(to)).toBe(1);
  });
});

describe('status callbacks', () => {
  it('move the delivery through its wamid exactly once; replays change nothing; forged ones are 403', async () => {
    const to = newNumber();
    const answer = await send(tenant.live, { to, templateName: 'order_update' });
    const delivery = await deliveryOf(answer.messageId!);
    const wamid = delivery.provider_message_id!;

    const forged = await peer.callBack(webhookUrl(tenant), statusBody(wamid, to, 'read'), 'not-the-app-secret-at-all');
    expect(forged.status).toBe(403);
    const unsigned = await peer.callBack(webhookUrl(tenant), statusBody(wamid, to, 'read'), SECRETS.appSecret, 'sha256=');
    expect(unsigned.status).toBe(403);
    // Signed for another project: its URL refuses the tenant's secret, and the tenant's deliveries are not its own.
    expect((await peer.callBack(webhookUrl(other), statusBody(wamid, to, 'read'), SECRETS.appSecret)).status).toBe(403);
    expect((await peer.callBack(webhookUrl(other), statusBody(wamid, to, 'read'), OTHER_SECRETS.appSecret)).body).toMatchObject({ applied: 0, unknown: 1 });
    expect(await deliveryOf(answer.messageId!)).toMatchObject({ status: 'sent', delivered_at: null });

    expect((await peer.callBack(webhookUrl(tenant), statusBody(wamid, to, 'sent'), SECRETS.appSecret)).body).toMatchObject({ applied: 0, unknown: 0 });
    expect((await peer.callBack(webhookUrl(tenant), statusBody(wamid, to, 'delivered'), SECRETS.appSecret)).body).toMatchObject({ applied: 1 });
    const read = statusBody(wamid, to, 'read');
    expect((await peer.callBack(webhookUrl(tenant), read, SECRETS.appSecret)).status).toBe(200);
    expect((await peer.callBack(webhookUrl(tenant), read, SECRETS.appSecret)).status).toBe(200);
    await expect.poll(async () => (await deliveryOf(answer.messageId!)).status, { timeout: 10_000 }).toBe('opened');
    const events = await query<{ type: string }>('SELECT type FROM delivery_events WHERE delivery_id = $1 ORDER BY type', [delivery.id]);
    expect(events.map((e) => e.type)).toEqual(['delivered', 'opened']);
  });

  // Meta reports most failures after it took the message: the send answered `sent`, the status callback says why not.
  const LATE_FAILURES: { error: StatusError | undefined; reason: string; providerCode: string; providerError: string | null }[] = [
    {
      error: { code: 131047, title: 'Re-engagement message', details: 'Message failed to send because more than 24 hours have passed since the customer last replied to this number.' },
      reason: 'outside_service_window',
      providerCode: 'meta_131047',
      providerError: 'Re-engagement message: Message failed to send because more than 24 hours have passed since the customer last replied to this number. (131047)',
    },
    {
      error: { code: 131050, title: 'User has stopped marketing messages', message: 'Unable to deliver the message: the recipient stopped marketing messages from this business' },
      reason: 'recipient_opted_out',
      providerCode: 'meta_131050',
      providerError: 'User has stopped marketing messages: Unable to deliver the message: the recipient stopped marketing messages from this business (131050)',
    },
    {
      error: { code: 132001, title: 'Template does not exist', details: 'template name (order_update) does not exist in en_US' },
      reason: 'template_not_approved',
      providerCode: 'meta_132001',
      providerError: 'Template does not exist: template name (order_update) does not exist in en_US (132001)',
    },
    {
      error: { code: 131026, title: 'Message undeliverable' },
      reason: 'provider_error',
      providerCode: 'meta_131026',
      providerError: 'Message undeliverable (131026)',
    },
    { error: undefined, reason: 'provider_error', providerCode: 'meta_failed', providerError: null },
  ];

  it.each(LATE_FAILURES)("fail a sent message with Meta's reason, code and words: $providerCode → $reason", async ({ error, reason, providerCode, providerError }) => {
    const to = newNumber();
    const answer = await send(tenant.live, { to, templateName: 'order_update' });
    expect(answer).toMatchObject({ status: 'sent', reason: null });
    const { id, provider_message_id: wamid } = await deliveryOf(answer.messageId!);
    expect(await deliveryOf(answer.messageId!)).toMatchObject({ status: 'sent', provider_code: 'meta_accepted' });

    const failed = statusBody(wamid!, to, 'failed', error ? [error] : []);
    const optedOut = reason === 'recipient_opted_out' ? 1 : 0;
    expect((await peer.callBack(webhookUrl(tenant), failed, SECRETS.appSecret)).body).toMatchObject({ applied: 1, optedOut });
    expect((await peer.callBack(webhookUrl(tenant), failed, SECRETS.appSecret)).body).toMatchObject({ applied: 1, optedOut: 0 });

    expect(await deliveryOf(answer.messageId!)).toMatchObject({ status: 'failed', reason, provider_code: providerCode, provider_error: providerError });
    // The send was answered `sent`; the log shows what became of it since.
    expect(await loggedSend(answer.messageId!)).toMatchObject({ reason: null, delivery: { status: 'failed', reason, providerCode, providerError } });
    const events = await query<{ type: string; detail: Record<string, unknown> }>('SELECT type, detail FROM delivery_events WHERE delivery_id = $1', [id]);
    expect(events).toEqual([{ type: 'failed', detail: expect.objectContaining({ status: 'failed', errorCode: error?.code ?? null, reason, providerCode }) }]);

    if (reason === 'recipient_opted_out') {
      expect(await addressState(to)).toEqual({ status: 'opted_out', status_reason: 'meta_131050', source: 'provider' });
      expect(await send(tenant.live, { to, templateName: 'order_update' })).toMatchObject({ status: 'refused', reason: 'recipient_opted_out' });
    } else {
      // The number stays reachable (its row keeps the receipt's marketing consent).
      expect(await addressState(to)).toEqual({ status: 'reachable', status_reason: null, source: null });
    }
  });
});

describe('rate limit', () => {
  it('counts /transactional/whatsapp on its own counter (spec 8), apart from /transactional/email', async () => {
    const limited = await startTestApp({ RATE_LIMIT_ENABLED: 'true', RATE_LIMIT_TRANSACTIONAL: '2', WHATSAPP_GRAPH_URL: peer.url });
    try {
      const who = await createTenant(limited);
      const ip = '2001:db8::77';
      const whatsapp = () =>
        limited.app.inject({ method: 'POST', url: '/transactional/whatsapp', remoteAddress: ip, headers: who.test, payload: { to: newNumber(), templateName: 'order_update' } });
      expect((await whatsapp()).statusCode).toBe(200);
      expect((await whatsapp()).statusCode).toBe(200);
      const over = await whatsapp();
      expect(over.statusCode).toBe(429);
      expect(over.headers['retry-after']).toMatch(/^\d+$/);
      const email = await limited.app.inject({ method: 'POST', url: '/transactional/email', remoteAddress: ip, headers: who.test, payload: {} });
      expect(email.statusCode).not.toBe(429);
    } finally {
      await limited.services.delivery.stop();
      await limited.services.close();
      await limited.close();
    }
  });
});
