// The preference center through HTTP: a GET only shows, one-click unsubscribes at once, forms need their CSRF token, unsubscribeByToken.
import { randomBytes } from 'node:crypto';
import { inArray } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CHROME_UA, createTenant, emailStatuses, pushSubscription, type Tenant } from '../../../test/fixtures.js';
import { startTestApp, type TestApp } from '../../../test/harness.js';
import { subscribers, type EmailContent } from '../../db/schema.js';
import { renderEmail } from '../../delivery/channels/email/email-render.js';
import { newId } from '../../shared/ids.js';
import { channelAudience } from '../segments/index.js';
import { FORM_TOKEN_LIFETIME_SECONDS } from './form-token.js';

const PUBLIC_URL = 'https://herald.example.com';
const BOUNCE_DOMAIN = 'bounces.herald.example.com';

let t: TestApp;
let tenant: Tenant;
let otherTenant: Tenant;
let clockAheadMs = 0;

beforeAll(async () => {
  t = await startTestApp({ PUBLIC_URL, EMAIL_BOUNCE_DOMAIN: BOUNCE_DOMAIN }, { clock: () => new Date(Date.now() + clockAheadMs) });
  tenant = await createTenant(t);
  otherTenant = await createTenant(t);
});
afterEach(() => {
  clockAheadMs = 0;
});
afterAll(() => t.close());

const query = async <T = Record<string, unknown>>(text: string, params: unknown[] = []) => (await t.database.pool.query(text, params)).rows as T[];

const content: EmailContent = {
  subject: 'Spring sale',
  html: '<html><body><p>Everything half price: <a href="https://shop.example.com/sale">the sale</a>.</p></body></html>',
  from: { email: 'news@mail.example.com', name: 'Example Shop' },
};

let addresses = 0;
const newAddress = () => `reader${++addresses}-${randomBytes(3).toString('hex')}@example.org`;

/** A contact created through the API (a test key's is a sandbox contact). */
async function contact(email: string, options: { who?: Tenant; headers?: Record<string, string>; phone?: string } = {}): Promise<string> {
  const who = options.who ?? tenant;
  const res = await t.app.inject({
    method: 'POST',
    url: '/contacts',
    headers: options.headers ?? who.live,
    payload: { projectId: who.projectId, email, ...(options.phone && { phone: options.phone }) },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json<{ id: string }>().id;
}

/** An email message to these subscribers, snapshotted as a campaign's is (one delivery per address): queued. */
async function queuedEmail(recipientIds: string[], sandbox = false): Promise<string> {
  const messageId = newId('msg');
  await t.database.db.transaction(async (tx) => {
    const scope = { organizationId: tenant.orgId, projectId: tenant.projectId, sandbox };
    await t.services.delivery.queueAudience(tx, { id: messageId, projectId: tenant.projectId, channel: 'email', source: 'campaign', campaignId: null, sandbox, content, options: {} }, channelAudience(scope, 'email', inArray(subscribers.id, recipientIds)));
  });
  return messageId;
}

/** The same, sent. */
async function sentEmail(recipientIds: string[], sandbox = false): Promise<{ messageId: string; deliveries: { id: number; destination: string }[] }> {
  const messageId = await queuedEmail(recipientIds, sandbox);
  // What the engine records once the SMTP server accepted each mail.
  const deliveries = await query<{ id: number; destination: string }>(
    `UPDATE deliveries SET status = 'sent', attempts = 1, sent_at = now() WHERE message_id = $1 RETURNING id::float8 AS id, destination`,
    [messageId],
  );
  return { messageId, deliveries };
}

/** One recipient's mail: its delivery and the token of its links. */
async function mailTo(subscriberId: string, sandbox = false) {
  const { messageId, deliveries } = await sentEmail([subscriberId], sandbox);
  expect(deliveries).toHaveLength(1);
  return { messageId, deliveryId: deliveries[0]!.id, token: t.services.emailLinks.unsubscribeToken(deliveries[0]!.id) };
}

/** Rows with their `email_status` as every answer reads it. */
const withEmailStatus = async <R extends { id: string }>(rows: R[]) => {
  const statuses = await emailStatuses(t, rows.map((r) => r.id));
  return rows.map((r, i) => ({ ...r, email_status: statuses[i] }));
};

/** Everything an unsubscribe may change: the rows carrying the address (any project), its address states, the mail's events and counters. */
async function stateOf(address: string, messageId: string) {
  return {
    subscribers: await withEmailStatus(await query<{ id: string; preferences: unknown }>(`SELECT id, preferences FROM subscribers WHERE lower(email) = $1 ORDER BY id`, [address])),
    addresses: await query(`SELECT project_id, sandbox, channel, status, status_reason, source FROM channel_addresses WHERE address = $1 ORDER BY project_id, sandbox`, [
      address,
    ]),
    deliveries: await query(`SELECT status FROM deliveries WHERE message_id = $1`, [messageId]),
    events: await query(`SELECT e.type, e.detail FROM delivery_events e JOIN deliveries d ON d.id = e.delivery_id WHERE d.message_id = $1 ORDER BY e.type`, [
      messageId,
    ]),
    stats: (await query(`SELECT delivered, unsubscribed FROM message_stats WHERE message_id = $1`, [messageId]))[0],
  };
}

const local = (url: string) => {
  expect(url.startsWith(`${PUBLIC_URL}/`)).toBe(true);
  return url.slice(PUBLIC_URL.length);
};
const page = (token: string, method: 'GET' | 'HEAD' = 'GET') => t.app.inject({ method, url: `/u/${token}` });
const oneClick = (url: string) =>
  t.app.inject({ method: 'POST', url, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'List-Unsubscribe=One-Click' });

const unescapeHtml = (value: string) => value.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

interface PageForm {
  action: string;
  fields: Record<string, string>;
  button: string;
}
/** The page's forms as a browser would post them: their action and hidden fields. */
function formsOf(html: string): PageForm[] {
  return [...html.matchAll(/<form method="post" action="([^"]*)">([\s\S]*?)<\/form>/g)].map(([, action, inner]) => ({
    action: unescapeHtml(action!),
    fields: Object.fromEntries([...inner!.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map(([, name, value]) => [name!, unescapeHtml(value!)])),
    button: unescapeHtml(/<button[^>]*>([^<]*)<\/button>/.exec(inner!)![1]!),
  }));
}
async function formOf(token: string, channel: string, enabled: boolean): Promise<PageForm> {
  const res = await page(token);
  expect(res.statusCode, res.body).toBe(200);
  const form = formsOf(res.body).find((f) => f.fields.channel === channel && f.fields.enabled === String(enabled));
  expect(form, `a form turning ${channel} ${enabled ? 'on' : 'off'}`).toBeDefined();
  return form!;
}
const submit = (action: string, fields: Record<string, string>, headers: Record<string, string> = { origin: PUBLIC_URL }) =>
  t.app.inject({
    method: 'POST',
    url: local(action),
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    payload: new URLSearchParams(fields).toString(),
  });

const suppression = (address: string) => t.app.inject({ method: 'GET', url: `/projects/${tenant.projectId}/suppressions/${encodeURIComponent(address)}`, headers: tenant.live });

function expectPage(res: Awaited<ReturnType<typeof page>>, status: number, text: string) {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
  expect(res.headers['cache-control']).toBe('no-store');
  expect(res.body).toContain(text);
}

describe('GET /u/:token', () => {
  it('shows the preference center and changes nothing, however often a scanner fetches it', async () => {
    const address = newAddress();
    const ids = [await contact(address), await contact(address.toUpperCase())];
    const { messageId, token } = await mailTo(ids[0]!);
    const before = await stateOf(address, messageId);

    for (const method of ['GET', 'GET', 'HEAD'] as const) expect((await page(token, method)).statusCode).toBe(200);
    const res = await page(token);
    expectPage(res, 200, 'Unsubscribe from all email');
    expect(res.body).toContain(`${address[0]}•••@example.org`);
    expect(res.body).not.toContain(address);
    expect(res.body).toContain('Example Shop');
    expect(formsOf(res.body)).toEqual([
      { action: `${PUBLIC_URL}/u/${token}/preferences`, fields: { csrf: expect.any(String), channel: 'email', enabled: 'false' }, button: 'Unsubscribe from all email' },
    ]);

    expect(await stateOf(address, messageId)).toEqual(before);
    expect(before.subscribers.map((s) => s.email_status)).toEqual(['active', 'active']);
    expect(before.addresses).toEqual([]);
    expect(before.events).toEqual([]);
  });

  it('runs no script: none in the page, none allowed by its own strict Content-Security-Policy', async () => {
    const { token } = await mailTo(await contact(newAddress(), { phone: '+442079460958' }));
    const res = await page(token);
    expect(res.statusCode).toBe(200);
    expect(res.body).not.toMatch(/<script|\son[a-z]+\s*=|javascript:/i);
    const csp = res.headers['content-security-policy'] as string;
    expect(csp.split('; ')).toEqual([
      "default-src 'none'",
      expect.stringMatching(/^style-src 'sha256-[A-Za-z0-9+/]{43}='$/),
      `form-action ${PUBLIC_URL}`,
      "base-uri 'none'",
      "frame-ancestors 'none'",
    ]);
    expect(res.headers).toMatchObject({ 'x-frame-options': 'DENY', 'x-content-type-options': 'nosniff', 'referrer-policy': 'same-origin' });
    expect(res.body).toMatch(/^<!doctype html><html lang="en">/);
  });
});

describe('POST /u/:token (RFC 8058 one-click)', () => {
  it('unsubscribes the address at once, every row carrying it in the project and environment, and counts it once however often it is posted', async () => {
    const address = newAddress();
    const ids = [await contact(address), await contact(address.replace('reader', 'Reader'))];
    const sandboxRow = await contact(address, { headers: tenant.test });
    const otherProjectRow = await contact(address, { who: otherTenant });
    const controlAddress = newAddress();
    const control = await contact(controlAddress);
    const { messageId, deliveries } = await sentEmail([...ids, control]);
    const delivery = deliveries.find((d) => d.destination === address)!;
    const url = `/u/${t.services.emailLinks.unsubscribeToken(delivery.id)}`;

    // Exactly what a mail provider sends: the body, no cookie, no Origin, no CSRF token.
    const res = await oneClick(url);
    expectPage(res, 200, 'You are unsubscribed: Example Shop will send no more email to this address.');
    const once = await stateOf(address, messageId);
    // Live rows of the project carrying the address, in any spelling; not the sandbox's, not another project's.
    expect(Object.fromEntries(once.subscribers.map((s) => [s.id, s.email_status]))).toEqual({
      [ids[0]!]: 'unsubscribed',
      [ids[1]!]: 'unsubscribed',
      [sandboxRow]: 'active',
      [otherProjectRow]: 'active',
    });
    expect(once.addresses).toEqual([{ project_id: tenant.projectId, sandbox: false, channel: 'email', status: 'opted_out', status_reason: 'unsubscribed', source: 'recipient' }]);
    expect((await suppression(address)).json()).toMatchObject({ email: address, reason: 'unsubscribed', source: 'recipient' });
    expect(once.events).toEqual([
      { type: 'delivered', detail: null },
      { type: 'unsubscribed', detail: { via: 'one_click' } },
    ]);
    expect(once.stats).toEqual({ delivered: 1, unsubscribed: 1 });
    expect(once.deliveries.map((d) => d.status).sort()).toEqual(['sent', 'unsubscribed']);

    expect((await oneClick(url)).statusCode).toBe(200);
    expect(await stateOf(address, messageId)).toEqual(once);

    // The next snapshot leaves the address out; the control address is still mailed.
    const next = await sentEmail([...ids, control]);
    expect(next.deliveries.map((d) => d.destination)).toEqual([controlAddress]);
  });

  it('takes the body multipart, as RFC 8058 allows', async () => {
    const address = newAddress();
    const { messageId, token } = await mailTo(await contact(address));
    const boundary = '----HeraldTest7MA4YWxkTrZu0gW';
    const res = await t.app.inject({
      method: 'POST',
      url: `/u/${token}`,
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      payload: `--${boundary}\r\nContent-Disposition: form-data; name="List-Unsubscribe"\r\n\r\nOne-Click\r\n--${boundary}--\r\n`,
    });
    expectPage(res, 200, 'You are unsubscribed');
    const state = await stateOf(address, messageId);
    expect(state.subscribers.map((s) => s.email_status)).toEqual(['unsubscribed']);
    expect(state.stats).toEqual({ delivered: 1, unsubscribed: 1 });
  });

  it('changes nothing for a POST that is not a one-click unsubscribe', async () => {
    const address = newAddress();
    const { messageId, token } = await mailTo(await contact(address));
    const before = await stateOf(address, messageId);
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    for (const payload of ['', 'List-Unsubscribe=Yes', 'list-unsubscribe=one-click']) {
      expectPage(await t.app.inject({ method: 'POST', url: `/u/${token}`, headers: form, payload }), 400, 'Nothing was changed');
    }
    expect((await t.app.inject({ method: 'POST', url: `/u/${token}`, headers: { 'content-type': 'multipart/form-data; boundary=x' }, payload: 'not multipart' })).statusCode).toBe(400);
    expect(await stateOf(address, messageId)).toEqual(before);
  });
});

describe('links Herald did not sign', () => {
  it('answer a 404 page and change nothing: a tampered token, an unknown one, a bounce token, a token of a deleted subscriber', async () => {
    const address = newAddress();
    const { messageId, deliveryId, token } = await mailTo(await contact(address));
    const form = await formOf(token, 'email', false);
    const gone = await mailTo(await contact(newAddress()));
    await query(`DELETE FROM subscribers WHERE id = (SELECT subscriber_id FROM deliveries WHERE id = $1)`, [gone.deliveryId]);
    const before = await stateOf(address, messageId);

    const flipped = token.slice(0, 10) + (token[10] === 'a' ? 'b' : 'a') + token.slice(11);
    const forged = [flipped, 'a'.repeat(token.length), t.services.emailLinks.bounceToken(deliveryId), token.slice(0, -1), `${token}a`, gone.token, 'x'];
    for (const bad of forged) {
      expectPage(await page(bad), 404, 'This link is not valid');
      expectPage(await oneClick(`/u/${bad}`), 404, 'This link is not valid');
      expectPage(await submit(`${PUBLIC_URL}/u/${bad}/preferences`, form.fields), 404, 'This link is not valid');
    }
    expect(await stateOf(address, messageId)).toEqual(before);
  });
});

describe('POST /u/:token/preferences', () => {
  it('unsubscribes with the form of the page, and confirms', async () => {
    const address = newAddress();
    const { messageId, token } = await mailTo(await contact(address));
    const form = await formOf(token, 'email', false);
    const res = await submit(form.action, form.fields);
    expectPage(res, 200, 'Your choice is saved');
    expect(res.body).toContain('You are unsubscribed: Example Shop will send no more email to this address.');
    expect(res.body).toContain(`href="${PUBLIC_URL}/u/${token}"`);
    const state = await stateOf(address, messageId);
    expect(state.subscribers.map((s) => s.email_status)).toEqual(['unsubscribed']);
    expect(state.addresses).toMatchObject([{ status_reason: 'unsubscribed', source: 'recipient' }]);
    expect(state.events).toContainEqual({ type: 'unsubscribed', detail: { via: 'preference_center' } });
    expect(state.stats).toEqual({ delivered: 1, unsubscribed: 1 });
  });

  it('changes nothing without the CSRF token of a recent page of the same link, or from another origin (403)', async () => {
    const address = newAddress();
    const { messageId, token } = await mailTo(await contact(address));
    const { token: otherToken } = await mailTo(await contact(newAddress()));
    const form = await formOf(token, 'email', false);
    const otherForm = await formOf(otherToken, 'email', false);
    const before = await stateOf(address, messageId);
    const { csrf, ...withoutCsrf } = form.fields;
    const [issuedAt, mac] = csrf!.split('.') as [string, string];

    const refused = [
      await submit(form.action, withoutCsrf),
      await submit(form.action, { ...form.fields, csrf: '' }),
      await submit(form.action, { ...form.fields, csrf: otherForm.fields.csrf! }),
      await submit(form.action, { ...form.fields, csrf: `${Number(issuedAt) + 1}.${mac}` }),
      await submit(form.action, { ...form.fields, csrf: `${issuedAt}.${mac.startsWith('A') ? 'B' : 'A'}${mac.slice(1)}` }),
      await submit(form.action, form.fields, { origin: 'https://attacker.example' }),
      await submit(form.action, form.fields, { origin: 'null' }),
      await submit(form.action, form.fields, { referer: 'https://attacker.example/page' }),
    ];
    clockAheadMs = (FORM_TOKEN_LIFETIME_SECONDS + 1) * 1000;
    refused.push(await submit(form.action, form.fields));
    clockAheadMs = 0;

    for (const res of refused) {
      expectPage(res, 403, 'Nothing was changed');
      expect(res.body).toContain(`href="${PUBLIC_URL}/u/${token}"`);
    }
    expect(await stateOf(address, messageId)).toEqual(before);

    // The same form, as the browser posts it from the page (its Referer, or no header at all): applied.
    expect((await submit(form.action, form.fields, { referer: `${PUBLIC_URL}/u/${token}` })).statusCode).toBe(200);
    expect((await stateOf(address, messageId)).subscribers.map((s) => s.email_status)).toEqual(['unsubscribed']);
    expect((await submit(otherForm.action, otherForm.fields, {})).statusCode).toBe(200);
  });

  it("turns another channel on and off in the subscriber's preferences, nothing else", async () => {
    const address = newAddress();
    const id = await contact(address, { phone: '+442079460958' });
    const { messageId, token } = await mailTo(id);
    const before = await stateOf(address, messageId);
    expect(formsOf((await page(token)).body).map((f) => `${f.fields.channel}:${f.fields.enabled} ${f.button}`)).toEqual([
      'email:false Unsubscribe from all email',
      'sms:false Turn off',
      'whatsapp:false Turn off',
    ]);

    const off = await formOf(token, 'sms', false);
    expectPage(await submit(off.action, off.fields), 200, 'Text messages (SMS): turned off.');
    expect(await stateOf(address, messageId)).toEqual({ ...before, subscribers: [{ ...before.subscribers[0], preferences: { channels: { sms: false } } }] });
    expect((await page(token)).body).toContain('Text messages (SMS): <strong>Off</strong>');

    const on = await formOf(token, 'sms', true);
    expectPage(await submit(on.action, on.fields), 200, 'Text messages (SMS): turned on.');
    expect((await stateOf(address, messageId)).subscribers[0]!.preferences).toEqual({ channels: { sms: true } });
  });

  it("offers a push device's push, and turns it off", async () => {
    const address = newAddress();
    const registered = await t.app.inject({
      method: 'POST',
      url: '/subscribers',
      headers: tenant.live,
      payload: { projectId: tenant.projectId, ...pushSubscription(), userAgent: CHROME_UA },
    });
    expect(registered.statusCode, registered.body).toBe(201);
    const { id } = registered.json<{ id: string }>();
    expect((await t.app.inject({ method: 'PATCH', url: `/subscribers/${id}`, headers: tenant.live, payload: { email: address } })).statusCode).toBe(200);
    const { token } = await mailTo(id);
    const form = await formOf(token, 'push', false);
    expectPage(await submit(form.action, form.fields), 200, 'Push notifications: turned off.');
    expect((await withEmailStatus(await query<{ id: string }>(`SELECT id, preferences, status FROM subscribers WHERE id = $1`, [id])))[0]).toEqual({
      id,
      preferences: { channels: { push: false } },
      status: 'active',
      email_status: 'active',
    });
  });

  it('re-subscribes after an unsubscribe: the suppression is lifted and the address is mailed again', async () => {
    const address = newAddress();
    const id = await contact(address);
    const { messageId, token } = await mailTo(id);
    expect((await oneClick(`/u/${token}`)).statusCode).toBe(200);

    const res = await page(token);
    expect(res.body).toContain('You are unsubscribed: no email is sent to this address.');
    const form = await formOf(token, 'email', true);
    expect(form.button).toBe('Subscribe to email again');
    expectPage(await submit(form.action, form.fields), 200, 'You are subscribed again: Example Shop may send email to this address.');

    const state = await stateOf(address, messageId);
    expect(state.subscribers.map((s) => s.email_status)).toEqual(['active']);
    expect(state.addresses).toEqual([]);
    expect((await suppression(address)).json()).toMatchObject({ suppressed: false });
    // What happened stays recorded: the unsubscribe was counted once.
    expect(state.stats).toEqual({ delivered: 1, unsubscribed: 1 });
    expect((await sentEmail([id])).deliveries.map((d) => d.destination)).toEqual([address]);
    expect(formsOf((await page(token)).body).map((f) => f.button)).toEqual(['Unsubscribe from all email']);
  });

  it('turns email back on for a person who had turned it off in their preferences', async () => {
    const address = newAddress();
    const id = await contact(address);
    const { token } = await mailTo(id);
    expect((await t.app.inject({ method: 'PATCH', url: `/subscribers/${id}`, headers: tenant.live, payload: { preferences: { channels: { email: false } } } })).statusCode).toBe(200);
    const form = await formOf(token, 'email', true);
    expectPage(await submit(form.action, form.fields), 200, 'You are subscribed again');
    expect((await withEmailStatus(await query<{ id: string }>(`SELECT id, preferences FROM subscribers WHERE id = $1`, [id])))[0]).toEqual({
      id,
      preferences: { channels: { email: true } },
      email_status: 'active',
    });
  });

  for (const reason of ['bounced', 'complained', 'manual'] as const) {
    it(`never re-subscribes an address suppressed as ${reason} (409, nothing changed)`, async () => {
      const address = newAddress();
      const { messageId, token } = await mailTo(await contact(address, { phone: '+442079460958' }));
      const added = await t.app.inject({ method: 'POST', url: `/projects/${tenant.projectId}/suppressions`, headers: tenant.live, payload: { email: address, reason } });
      expect(added.statusCode, added.body).toBe(201);
      const res = await page(token);
      expect(res.body).toContain('Email to this address has been stopped, and cannot be turned back on from this page.');
      const forms = formsOf(res.body);
      expect(forms.map((f) => f.fields.channel)).toEqual(['sms', 'whatsapp']);
      const before = await stateOf(address, messageId);

      // The page offers no such form; one made from another form's CSRF token is still refused.
      const refused = await submit(forms[0]!.action, { ...forms[0]!.fields, channel: 'email', enabled: 'true' });
      expectPage(refused, 409, 'Email cannot be turned on here');
      expect(await stateOf(address, messageId)).toEqual(before);
      expect((await suppression(address)).json()).toMatchObject({ reason });
    });
  }

  it('refuses a form that does not say what to change (400)', async () => {
    const address = newAddress();
    const { messageId, token } = await mailTo(await contact(address));
    const form = await formOf(token, 'email', false);
    const before = await stateOf(address, messageId);
    expectPage(await submit(form.action, { ...form.fields, channel: 'fax' }), 400, 'Nothing was changed');
    expectPage(await submit(form.action, { ...form.fields, enabled: 'maybe' }), 400, 'Nothing was changed');
    expect(await stateOf(address, messageId)).toEqual(before);
  });
});

describe('after an unsubscribe', () => {
  it('a delivery already queued to the address is refused when a worker takes it; the others go', async () => {
    // Sandbox rows: the engine renders and records their mail through the sandbox provider, no SMTP server needed.
    const address = newAddress();
    const controlAddress = newAddress();
    const id = await contact(address, { headers: tenant.test });
    const control = await contact(controlAddress, { headers: tenant.test });
    const { token } = await mailTo(id, true);
    const queued = await queuedEmail([id, control], true);
    expect((await oneClick(`/u/${token}`)).statusCode).toBe(200);

    t.services.delivery.start();
    try {
      await t.services.delivery.announce();
      const deadline = Date.now() + 10_000;
      let rows: { destination: string; status: string; reason: string | null }[] = [];
      while (Date.now() < deadline) {
        rows = await query(`SELECT destination, status, reason FROM deliveries WHERE message_id = $1 ORDER BY destination`, [queued]);
        if (rows.every((r) => r.status !== 'queued' && r.status !== 'sending')) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(Object.fromEntries(rows.map((r) => [r.destination, [r.status, r.reason]]))).toEqual({
        [address]: ['failed', 'subscriber_unsubscribed'],
        [controlAddress]: ['sent', null],
      });
    } finally {
      await t.services.delivery.stop();
    }
  });
});

describe('an email rendered for its recipient', () => {
  it('links its footer and the https entry of List-Unsubscribe to this preference center, where a one-click POST unsubscribes', async () => {
    const address = newAddress();
    const id = await contact(address);
    const { messageId, deliveryId } = await mailTo(id);
    const rendered = renderEmail(content, { deliveryId, projectId: tenant.projectId, source: 'campaign', messageId, campaignId: null, subscriberId: id, address }, { links: t.services.emailLinks, bounceDomain: t.config.email.bounceDomain });

    const footer = [...rendered.html!.matchAll(/<a\b[^>]*?href="([^"]*)"/g)].map((m) => unescapeHtml(m[1]!)).filter((href) => href.startsWith(`${PUBLIC_URL}/u/`));
    const header = /^<(https:[^>]+)>, <mailto:unsubscribe\+([a-z2-7]+)@([^>]+)>$/.exec(rendered.headers['List-Unsubscribe']!);
    expect(header).not.toBeNull();
    const [, https, , domain] = header!;
    expect(footer).toEqual([https]);
    expect(rendered.text).toContain(https);
    expect(domain).toBe(BOUNCE_DOMAIN);
    expect(rendered.headers['List-Unsubscribe-Post']).toBe('List-Unsubscribe=One-Click');

    expectPage(await t.app.inject({ method: 'GET', url: local(https!) }), 200, 'Unsubscribe from all email');
    expectPage(await oneClick(local(https!)), 200, 'You are unsubscribed');
    expect((await stateOf(address, messageId)).subscribers.map((s) => s.email_status)).toEqual(['unsubscribed']);
  });
});

describe('unsubscribeByToken (the mailto entry, for the inbound mail role)', () => {
  it('unsubscribes with the token of the mailto address, in any case, once', async () => {
    const address = newAddress();
    const id = await contact(address);
    const { messageId, deliveryId } = await mailTo(id);
    const rendered = renderEmail(content, { deliveryId, projectId: tenant.projectId, source: 'campaign', messageId, campaignId: null, subscriberId: id, address }, { links: t.services.emailLinks, bounceDomain: BOUNCE_DOMAIN });
    const token = /<mailto:unsubscribe\+([a-z2-7]+)@/.exec(rendered.headers['List-Unsubscribe']!)![1]!;

    // Local parts may come back folded to upper case.
    expect(await t.services.preferences.unsubscribeByToken(token.toUpperCase(), 'mailto')).toEqual({ token, sender: 'Example Shop', language: null });
    const once = await stateOf(address, messageId);
    expect(once.subscribers.map((s) => s.email_status)).toEqual(['unsubscribed']);
    expect(once.addresses).toMatchObject([{ status: 'opted_out', status_reason: 'unsubscribed', source: 'recipient' }]);
    expect(once.events).toEqual([
      { type: 'delivered', detail: null },
      { type: 'unsubscribed', detail: { via: 'mailto' } },
    ]);
    expect(once.stats).toEqual({ delivered: 1, unsubscribed: 1 });

    expect(await t.services.preferences.unsubscribeByToken(token, 'mailto')).toBeDefined();
    expect(await stateOf(address, messageId)).toEqual(once);
  });

  it('answers undefined and changes nothing for a token Herald did not sign', async () => {
    const address = newAddress();
    const { messageId, deliveryId } = await mailTo(await contact(address));
    const before = await stateOf(address, messageId);
    for (const token of [t.services.emailLinks.bounceToken(deliveryId), 'a'.repeat(28), '', 'unsubscribe']) {
      expect(await t.services.preferences.unsubscribeByToken(token, 'mailto')).toBeUndefined();
    }
    expect(await stateOf(address, messageId)).toEqual(before);
  });
});
