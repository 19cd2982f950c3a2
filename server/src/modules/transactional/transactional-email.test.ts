// POST /transactional/email through HTTP to a real SMTP server, signed with the key of a domain verified through a
// local DNS server: content and merge tags, the sender check, the recipient's states, the monthly cap, idempotency,
// the sandbox, tenancy, the queue after the inline budget, and the send log.
import { sql } from 'drizzle-orm';
import { notifyProjectChange } from '../../db/project-changes.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type DnsServer } from '../../../test/dns-server.js';
import { dkimRecordOf, useSmtpPeer, verifiedDomain as verifyDomain } from '../../../test/email-setup.js';
import { createTenant, emailStatuses, publishableKey, type Tenant } from '../../../test/fixtures.js';
import { startTestApp, type TestApp } from '../../../test/harness.js';
import { startSmtpPeer, type SmtpPeer } from '../../../test/smtp-peer.js';

const DOMAIN = 'shop.example.com';
const SMTP_ACCOUNT = { user: 'herald', pass: 'smtp-password-not-shown' };

let t: TestApp;
let dns: DnsServer;
let peer: SmtpPeer;
let tenant: Tenant;
let other: Tenant;

type Headers = Record<string, string>;

const query = async <T = Record<string, unknown>>(text: string, params: unknown[] = []) => (await t.database.pool.query(text, params)).rows as T[];

const verifiedDomain = (who: Tenant, domain: string) => verifyDomain(t, dns, who, domain);

beforeAll(async () => {
  dns = await startDnsServer();
  t = await startTestApp({
    DNS_SERVERS: dns.address,
    PUBLIC_URL: 'https://herald.example.com',
    EMAIL_BOUNCE_DOMAIN: 'bounces.herald.example.com',
    DELIVERY_POLL_INTERVAL_MS: '50',
    DELIVERY_RETRY_BASE_MS: '200',
    TRANSACTIONAL_RETRY_BUDGET_MS: '300',
  });
  [tenant, other] = await Promise.all([createTenant(t), createTenant(t)]);
  const domain = await verifiedDomain(tenant, DOMAIN);
  await verifiedDomain(other, 'other.example.net');
  // The receiving server checks DKIM against the key the verified domain published.
  peer = await startSmtpPeer({ dkim: dkimRecordOf(domain), auth: SMTP_ACCOUNT });
  await Promise.all([useSmtpPeer(t, tenant, peer, {}, SMTP_ACCOUNT), useSmtpPeer(t, other, peer, {}, SMTP_ACCOUNT)]);
});
afterAll(async () => {
  await t.services.delivery.stop();
  await t.services.close();
  await t.close();
  await peer.close();
  await dns.close();
});

interface Envelope {
  success: boolean;
  status: string;
  messageId: string | null;
  reason: string | null;
  missing?: string[];
  field?: string;
  error?: string;
}

let addresses = 0;
const newAddress = () => `reader${++addresses}-${Date.now()}@example.org`;

const post = (headers: Headers, payload: Record<string, unknown>, extra: Headers = {}) =>
  t.app.inject({ method: 'POST', url: '/transactional/email', headers: { ...headers, ...extra }, payload });

const html = (to: string, fields: Record<string, unknown> = {}) => ({
  to,
  subject: 'Your receipt',
  htmlContent: '<p>Thanks, {{ name }}! See <a href="https://shop.example.com/orders/42">your order</a>.</p>',
  variables: { name: 'Ada' },
  senderEmail: `orders@${DOMAIN}`,
  ...fields,
});

async function send(headers: Headers, payload: Record<string, unknown>, extra: Headers = {}): Promise<Envelope> {
  const res = await post(headers, payload, extra);
  expect(res.statusCode, res.body).toBe(200);
  return res.json<Envelope>();
}

const refused = (reason: string, extra: Record<string, unknown> = {}) => ({ success: true, status: 'refused', messageId: null, reason, ...extra });

async function template(headers: Headers, projectId: string, content: Record<string, unknown>): Promise<string> {
  const res = await t.app.inject({ method: 'POST', url: '/email-templates', headers, payload: { projectId, name: 'Receipt', ...content } });
  expect(res.statusCode, res.body).toBe(201);
  return res.json<{ id: string }>().id;
}

async function suppress(email: string, reason: string, who: Tenant = tenant) {
  const res = await t.app.inject({ method: 'POST', url: `/projects/${who.projectId}/suppressions`, headers: who.jwt, payload: { email, reason } });
  expect(res.statusCode, res.body).toBeLessThan(300);
}

const logOf = async (messageOrKey: { messageId?: string; key?: string }) =>
  query<{ channel: string; recipient: Record<string, string>; reason: string | null; outcome: Envelope; sandbox: boolean; message_id: string | null }>(
    `SELECT channel, recipient, reason, outcome, sandbox, message_id FROM transactional_sends WHERE message_id = $1 OR idempotency_key = $2 ORDER BY created_at`,
    [messageOrKey.messageId ?? null, messageOrKey.key ?? null],
  );

describe('content', () => {
  it('renders a template with its variables HTML-escaped, and arrives DKIM-signed over List-Unsubscribe with a generated text part', async () => {
    const to = newAddress();
    const id = await template(tenant.live, tenant.projectId, {
      subject: 'Order {{ order.id }} for {{ name }}',
      html: '<html><body><h1>Hello {{ name }}</h1><p>Total: {{ order.total }}</p><p><a href="https://shop.example.com/orders/{{ order.id }}">Track it</a></p></body></html>',
      preheader: 'Thanks for your order',
    });
    const variables = { name: '<b>Ada</b> & "co"', order: { id: 'A-17', total: '€12' } };
    const answer = await send(tenant.live, { to, templateId: id, variables, senderEmail: `orders@${DOMAIN}`, senderName: 'Example Shop', replyTo: `help@${DOMAIN}` });
    expect(answer).toEqual({ success: true, status: 'sent', messageId: expect.stringMatching(/^msg_/), reason: null });

    const [mail] = peer.received(to);
    expect(mail!.dkim).toMatchObject({ result: 'pass', signingDomain: DOMAIN });
    expect(mail!.dkim.signedHeaders).toEqual(expect.arrayContaining(['from', 'subject', 'list-unsubscribe', 'list-unsubscribe-post']));
    const { parsed } = mail!;
    expect(parsed.subject).toBe('Order A-17 for <b>Ada</b> & "co"');
    expect(parsed.from?.value).toEqual([{ address: `orders@${DOMAIN}`, name: 'Example Shop' }]);
    expect(parsed.replyTo?.value).toEqual([{ address: `help@${DOMAIN}`, name: '' }]);
    expect(parsed.html).toContain('<h1>Hello &lt;b&gt;Ada&lt;/b&gt; &amp; &#34;co&#34;</h1>');
    expect(parsed.html).not.toContain('<b>Ada</b>');
    expect(parsed.html).toContain('Thanks for your order');
    // The link was built from the variables, then wrapped in a signed click URL naming the message.
    expect(parsed.html).toContain(`https://herald.example.com/e/click/${answer.messageId}/`);
    expect(parsed.text).toContain('HELLO <B>ADA</B> & "CO"');
    expect(parsed.text).toContain('Track it [https://shop.example.com/orders/A-17]');
    const [delivery] = await query<{ id: number; status: string; destination: string; channel: string }>(
      'SELECT id::float8 AS id, status, destination, channel FROM deliveries WHERE message_id = $1',
      [answer.messageId],
    );
    expect(delivery).toMatchObject({ status: 'sent', destination: to, channel: 'email' });
    const token = t.services.emailLinks.unsubscribeToken(delivery!.id);
    expect(parsed.headerLines.filter((h) => h.key === 'list-unsubscribe').map((h) => h.line.replace(/\r?\n[ \t]+/g, ' '))).toEqual([
      `List-Unsubscribe: <https://herald.example.com/u/${token}>, <mailto:unsubscribe+${token}@bounces.herald.example.com>`,
    ]);
    expect(parsed.headerLines.find((h) => h.key === 'list-unsubscribe-post')?.line).toBe('List-Unsubscribe-Post: List-Unsubscribe=One-Click');

    // Rendered from the template as it is when the request comes, and from the request's subject when it gives one.
    const edited = await t.app.inject({ method: 'PATCH', url: `/email-templates/${id}`, headers: tenant.live, payload: { html: '<p>Changed for {{ name }}</p>' } });
    expect(edited.statusCode, edited.body).toBe(200);
    const again = newAddress();
    expect(await send(tenant.live, { to: again, templateId: id, variables: { ...variables, name: 'Bob' }, subject: 'Re: {{ order.id }}', senderEmail: `orders@${DOMAIN}` })).toMatchObject({ status: 'sent' });
    expect(peer.received(again)[0]!.parsed.subject).toBe('Re: A-17');
    expect(peer.received(again)[0]!.parsed.html).toContain('<p>Changed for Bob</p>');
  });

  it('renders htmlContent with the variables too, and generates the text part when textContent is omitted', async () => {
    const to = newAddress();
    expect(await send(tenant.live, html(to, { variables: { name: '<i>Ada</i>' } }))).toMatchObject({ status: 'sent', reason: null });
    const { parsed } = peer.received(to)[0]!;
    expect(parsed.subject).toBe('Your receipt');
    expect(parsed.html).toContain('Thanks, &lt;i&gt;Ada&lt;/i&gt;!');
    expect(parsed.text).toMatch(/^Thanks, <i>Ada<\/i>! See your order \[https:\/\/shop\.example\.com\/orders\/42\]\./);

    const written = newAddress();
    await send(tenant.live, html(written, { textContent: 'Thanks, {{ name }}. Order 42.' }));
    expect(peer.received(written)[0]!.parsed.text).toMatch(/^Thanks, Ada\. Order 42\.\n\n--\nUnsubscribe/);
  });

  it('refuses an unknown template, names the missing variables, and a render that cannot go', async () => {
    const to = newAddress();
    expect(await send(tenant.live, { to, templateId: 'etp_nope', senderEmail: `orders@${DOMAIN}` })).toEqual(refused('template_not_found'));
    const id = await template(tenant.live, tenant.projectId, { subject: 'Hi {{ name }}', html: '<p>{{ order.total }} {{ name }} {{ nick | default: "you" }}</p>' });
    expect(await send(tenant.live, { to, templateId: id, variables: { order: {} }, senderEmail: `orders@${DOMAIN}` })).toEqual(
      refused('template_variables_missing', { missing: ['name', 'order.total'] }),
    );
    expect(await send(tenant.live, html(to, { htmlContent: '<p>{{ first }} {{ last }}</p>', variables: { last: 'L' } }))).toEqual(
      refused('template_variables_missing', { missing: ['first'] }),
    );
    expect(await send(tenant.live, html(to, { subject: '{{ long }}', variables: { name: 'Ada', long: 'x'.repeat(1200) } }))).toEqual(
      refused('template_render_failed', { field: 'subject', error: expect.stringContaining('998') }),
    );
    expect(peer.attempts(to)).toBe(0);
    const log = await query<{ reason: string; recipient: Record<string, string> }>(
      `SELECT reason, recipient FROM transactional_sends WHERE project_id = $1 AND recipient->>'to' = $2 ORDER BY created_at`,
      [tenant.projectId, to],
    );
    expect(log.map((row) => row.reason)).toEqual(['template_not_found', 'template_variables_missing', 'template_variables_missing', 'template_render_failed']);
  });

  it('does not let another project, or a test key, render this project\'s live template', async () => {
    const id = await template(tenant.live, tenant.projectId, { subject: 'Hi', html: '<p>Hi</p>' });
    const to = newAddress();
    expect(await send(other.live, { to, templateId: id, senderEmail: 'news@other.example.net' })).toEqual(refused('template_not_found'));
    expect(await send(tenant.test, { to, templateId: id, senderEmail: `orders@${DOMAIN}` })).toEqual(refused('template_not_found'));
    expect(peer.attempts(to)).toBe(0);
  });
});

describe('validation and credentials', () => {
  it('answers 422 naming the field: malformed to, both or neither body, a missing subject or sender, textContent with a template', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [html('not-an-address'), 'to'],
      [html('a@b@example.org'), 'to'],
      [html(newAddress(), { templateId: 'etp_x' }), 'templateId'],
      [{ to: newAddress(), subject: 'x', senderEmail: `orders@${DOMAIN}` }, 'htmlContent'],
      [html(newAddress(), { subject: undefined }), 'subject'],
      [html(newAddress(), { subject: 'two\nlines' }), 'subject'],
      [html(newAddress(), { senderEmail: undefined }), 'senderEmail'],
      [html(newAddress(), { senderEmail: 'orders' }), 'senderEmail'],
      [{ to: newAddress(), templateId: 'etp_x', textContent: 'x', senderEmail: `orders@${DOMAIN}` }, 'textContent'],
      [html(newAddress(), { variables: ['a'] }), 'variables'],
      [html(newAddress(), { htmlContent: 'x'.repeat(512 * 1024 + 1) }), 'htmlContent'],
      [html(newAddress(), { htmlContent: '<p>{% if %}</p>' }), 'htmlContent'],
    ];
    for (const [payload, field] of cases) {
      const res = await post(tenant.live, payload);
      expect(res.statusCode, `${field}: ${res.body}`).toBe(422);
      expect(res.json<{ details: { field: string }[] }>().details.map((d) => d.field)).toContain(field);
    }
  });

  it('takes API keys only: a JWT → 401, a publishable key → 403', async () => {
    const to = newAddress();
    expect((await post(tenant.jwt, html(to))).statusCode).toBe(401);
    const publishable = await post(await publishableKey(t, tenant), html(to));
    expect(publishable.statusCode).toBe(403);
    expect(publishable.json()).toMatchObject({ code: 'publishable_key_forbidden' });
    expect(peer.attempts(to)).toBe(0);
  });
});

describe('the sender', () => {
  it('must be on a verified domain of the project or a subdomain of it; a look-alike is refused with 422 and nothing is sent', async () => {
    const sub = newAddress();
    expect(await send(tenant.live, html(sub, { senderEmail: `news@Mail.${DOMAIN}` }))).toMatchObject({ status: 'sent' });
    // Signed by the verified parent domain, and the From kept exactly as given.
    expect(peer.received(sub)[0]!.dkim).toMatchObject({ result: 'pass', signingDomain: DOMAIN });
    expect(peer.received(sub)[0]!.parsed.from?.value[0]?.address).toBe(`news@Mail.${DOMAIN}`.toLowerCase());

    await t.app.inject({ method: 'POST', url: `/projects/${tenant.projectId}/email-domains`, headers: tenant.jwt, payload: { domain: 'pending.example.com' } });
    for (const senderEmail of [`news@bad${DOMAIN}`, `news@${DOMAIN}.evil.net`, 'news@example.com', 'news@pending.example.com', 'news@other.example.net']) {
      const to = newAddress();
      const res = await post(tenant.live, html(to, { senderEmail }));
      expect(res.statusCode, senderEmail).toBe(422);
      expect(res.json()).toMatchObject({
        statusCode: 422,
        code: 'sender_domain_not_verified',
        requestId: expect.any(String),
        details: [{ field: 'senderEmail', error: expect.stringContaining('is not a verified sending domain') }],
      });
      expect(peer.attempts(to)).toBe(0);
    }
    const to = newAddress();
    const res = await post(tenant.live, html(to, { replyTo: 'help@example.org' }));
    expect(res.statusCode).toBe(422);
    expect(res.json()).toMatchObject({ code: 'sender_domain_not_verified', details: [{ field: 'replyTo' }] });
    const both = await post(tenant.test, html(to, { senderEmail: 'a@example.org', replyTo: 'b@example.org' }));
    expect(both.json<{ details: { field: string }[] }>().details.map((d) => d.field)).toEqual(['senderEmail', 'replyTo']);
    expect(peer.attempts(to)).toBe(0);
    expect(await query(`SELECT 1 FROM transactional_sends WHERE recipient->>'to' = $1`, [to])).toEqual([]);
  });
});

describe('the recipient', () => {
  it('becomes a contact when the project does not know the address, once however many sends race', async () => {
    const to = newAddress();
    const answers = await Promise.all(Array.from({ length: 5 }, () => send(tenant.live, html(to.toUpperCase()))));
    expect(answers.every((a) => a.status === 'sent')).toBe(true);
    const rows = await query<{ id: string; email: string; sandbox: boolean }>('SELECT id, email, sandbox FROM subscribers WHERE project_id = $1 AND lower(email) = $2', [
      tenant.projectId,
      to,
    ]);
    expect(rows.map(({ email, sandbox }) => ({ email, sandbox }))).toEqual([{ email: to, sandbox: false }]);
    expect(await emailStatuses(t, [rows[0]!.id])).toEqual(['active']);
    // The log keeps the recipient as given.
    const [log] = await logOf({ messageId: answers[0]!.messageId! });
    expect(log).toMatchObject({ channel: 'email', recipient: { to: to.toUpperCase() }, reason: null, outcome: answers[0], sandbox: false });
  });

  it('refuses a bounced or complained address even for essential mail, and a manual suppression', async () => {
    const bounced = newAddress();
    const complained = newAddress();
    const manual = newAddress();
    await suppress(bounced, 'bounced');
    await suppress(complained, 'complained');
    await suppress(manual, 'manual');
    for (const essential of [false, true]) {
      expect(await send(tenant.live, html(bounced, { essential }))).toEqual(refused('recipient_bounced'));
      expect(await send(tenant.live, html(complained, { essential }))).toEqual(refused('recipient_complained'));
      expect(await send(tenant.live, html(manual, { essential }))).toEqual(refused('recipient_suppressed'));
    }
    for (const address of [bounced, complained, manual]) expect(peer.attempts(address)).toBe(0);
    // Refused before any contact is made for a suppressed address.
    expect(await query('SELECT 1 FROM subscribers WHERE lower(email) = ANY($1)', [[bounced, complained, manual]])).toEqual([]);
  });

  it('refuses an address unsubscribed from campaigns, or with email turned off, unless the mail is essential', async () => {
    const unsubscribed = newAddress();
    await send(tenant.live, html(unsubscribed));
    await suppress(unsubscribed, 'unsubscribed');
    expect(await send(tenant.live, html(unsubscribed))).toEqual(refused('recipient_unsubscribed'));
    expect(await send(tenant.live, html(unsubscribed, { essential: true, subject: 'Reset your password' }))).toMatchObject({ status: 'sent', reason: null });
    expect(peer.received(unsubscribed).map((m) => m.parsed.subject)).toEqual(['Your receipt', 'Reset your password']);
    expect(await query(`SELECT options FROM messages WHERE content->>'subject' = 'Reset your password'`)).toEqual([{ options: { essential: true } }]);

    // Email turned off on one device of the person holds for the address.
    const off = newAddress();
    const contact = await t.app.inject({ method: 'POST', url: '/contacts', headers: tenant.live, payload: { projectId: tenant.projectId, email: off } });
    const device = await t.app.inject({
      method: 'POST',
      url: '/contacts',
      headers: tenant.live,
      payload: { projectId: tenant.projectId, email: off.toUpperCase(), preferences: { channels: { email: false } } },
    });
    expect([contact.statusCode, device.statusCode]).toEqual([201, 201]);
    expect(await send(tenant.live, html(off))).toEqual(refused('recipient_unsubscribed'));
    expect(await send(tenant.live, html(off, { essential: true }))).toMatchObject({ status: 'sent' });
    expect(peer.received(off)).toHaveLength(1);
  });

  it('fails on a server refusing the address, which is suppressed as bounced from then on', async () => {
    const to = newAddress();
    peer.respond(to, { code: 550 });
    const answer = await send(tenant.live, html(to));
    expect(answer).toEqual({ success: true, status: 'failed', messageId: expect.stringMatching(/^msg_/), reason: 'recipient_bounced' });
    const suppression = await t.app.inject({ method: 'GET', url: `/projects/${tenant.projectId}/suppressions/${to}`, headers: tenant.jwt });
    expect(suppression.json()).toMatchObject({ email: to, reason: 'bounced', source: 'provider' });
    expect(await send(tenant.live, html(to, { essential: true }))).toEqual(refused('recipient_bounced'));
    expect(peer.attempts(to)).toBe(1);
  });

  it('obeys the email delivery policy of the project, per address', async () => {
    const set = (deliveryPolicy: unknown) =>
      t.app.inject({ method: 'PATCH', url: `/projects/${tenant.projectId}`, headers: tenant.jwt, payload: { settings: { deliveryPolicy } } });
    expect((await set({ channels: { email: { frequencyCap: { max: 1, windowSeconds: 3600 } } } })).statusCode).toBe(200);
    try {
      const to = newAddress();
      expect(await send(tenant.live, html(to))).toMatchObject({ status: 'sent' });
      expect(await send(tenant.live, html(to))).toEqual(refused('frequency_capped'));
      expect(peer.received(to)).toHaveLength(1);
    } finally {
      expect((await set({})).statusCode).toBe(200);
    }
  });
});

describe('the monthly email cap', () => {
  let capped: Tenant;
  beforeAll(async () => {
    capped = await createTenant(t);
    await verifiedDomain(capped, 'capped.example.net');
    await useSmtpPeer(t, capped, peer, {}, SMTP_ACCOUNT);
  });
  const usage = async () =>
    (await query<{ sent: number }>('SELECT sent FROM email_usage WHERE organization_id = $1', [capped.orgId]))[0]?.sent ?? 0;
  const setCap = (cap: number) => query('UPDATE organizations SET monthly_email_cap = $2 WHERE id = $1', [capped.orgId, cap]);
  const mail = (to: string) => html(to, { senderEmail: 'news@capped.example.net' });

  it('refuses the send over the cap, gives back what a provider refused, and never passes it under parallel sends', async () => {
    await setCap(2);
    expect((await send(capped.live, mail(newAddress()))).status).toBe('sent');
    // Refused by the server: its reservation is given back.
    const refusing = newAddress();
    peer.respond(refusing, { code: 550 });
    expect(await send(capped.live, mail(refusing))).toMatchObject({ status: 'failed', reason: 'recipient_bounced' });
    expect(await usage()).toBe(1);
    expect((await send(capped.live, mail(newAddress()))).status).toBe('sent');
    const over = newAddress();
    expect(await send(capped.live, mail(over))).toEqual(refused('monthly_cap_reached'));
    expect(peer.attempts(over)).toBe(0);
    // A test key's email sends nothing and draws nothing.
    expect(await send(capped.test, mail(newAddress()))).toMatchObject({ status: 'sandbox' });
    expect(await usage()).toBe(2);

    await setCap(7);
    const racing = Array.from({ length: 12 }, () => newAddress());
    const answers = await Promise.all(racing.map((to) => send(capped.live, mail(to))));
    expect(answers.filter((a) => a.status === 'sent')).toHaveLength(5);
    expect(answers.filter((a) => a.reason === 'monthly_cap_reached')).toHaveLength(7);
    expect(racing.filter((to) => peer.received(to).length > 0)).toHaveLength(5);
    expect(await usage()).toBe(7);
  });

  it('draws nothing for a send its delivery policy refuses, which answers the policy even once the cap is reached', async () => {
    const policy = (deliveryPolicy: unknown) =>
      t.app.inject({ method: 'PATCH', url: `/projects/${capped.projectId}`, headers: capped.jwt, payload: { settings: { deliveryPolicy } } });
    expect((await policy({ channels: { email: { frequencyCap: { max: 1, windowSeconds: 3600 } } } })).statusCode).toBe(200);
    try {
      await setCap((await usage()) + 1);
      const to = newAddress();
      expect((await send(capped.live, mail(to))).status).toBe('sent');
      const reached = await usage();
      expect(await send(capped.live, mail(to))).toEqual(refused('frequency_capped'));
      expect(await usage()).toBe(reached);
      await setCap(reached + 1);
      expect(await send(capped.live, mail(to))).toEqual(refused('frequency_capped'));
      expect(await usage()).toBe(reached);
      expect((await send(capped.live, mail(newAddress()))).status).toBe('sent');
      expect(peer.received(to)).toHaveLength(1);
    } finally {
      expect((await policy({})).statusCode).toBe(200);
    }
  });
});

describe('Idempotency-Key', () => {
  it('answers a repeat with the first answer and sends one email', async () => {
    const to = newAddress();
    const key = `receipt-${to}`;
    const first = await post(tenant.live, html(to), { 'idempotency-key': key });
    const again = await post(tenant.live, html(to), { 'idempotency-key': key });
    expect(first.statusCode).toBe(200);
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual(first.json());
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(peer.received(to)).toHaveLength(1);
    expect(await logOf({ key })).toHaveLength(1);
    const changed = await post(tenant.live, html(to, { subject: 'Other' }), { 'idempotency-key': key });
    expect(changed.statusCode).toBe(422);
  });
});

describe('test keys', () => {
  it('render, check and record the email, and send nothing', async () => {
    const to = newAddress();
    const id = await template(tenant.test, tenant.projectId, { subject: 'Hi {{ name }}', html: '<p>Hi {{ name }}</p>' });
    const answer = await send(tenant.test, { to, templateId: id, variables: { name: 'Ada' }, senderEmail: `orders@${DOMAIN}` });
    expect(answer).toEqual({ success: true, status: 'sandbox', messageId: expect.stringMatching(/^msg_/), reason: 'sandbox' });
    expect(peer.attempts(to)).toBe(0);
    expect(await query('SELECT sandbox, content FROM messages WHERE id = $1', [answer.messageId])).toEqual([
      { sandbox: true, content: expect.objectContaining({ subject: 'Hi Ada', html: '<p>Hi Ada</p>' }) },
    ]);
    expect(await query('SELECT status, provider_code FROM deliveries WHERE message_id = $1', [answer.messageId])).toEqual([{ status: 'sent', provider_code: 'sandbox' }]);
    expect(await query('SELECT sandbox FROM subscribers WHERE lower(email) = $1', [to])).toEqual([{ sandbox: true }]);
    // A live key's suppression is not the sandbox's, nor the other way round.
    await suppress(to, 'bounced');
    expect(await send(tenant.test, html(to))).toMatchObject({ status: 'sandbox' });
    expect(await send(tenant.live, html(to))).toEqual(refused('recipient_bounced'));
  });
});

describe('after the inline retries', () => {
  it('answers queued and leaves the email to the workers, which send it', async () => {
    const to = newAddress();
    peer.respond(to, { code: 451 }, { code: 451 }, { code: 451 });
    const answer = await send(tenant.live, html(to));
    expect(answer).toEqual({ success: true, status: 'queued', messageId: expect.stringMatching(/^msg_/), reason: 'provider_error' });
    expect(await query('SELECT status, reason FROM deliveries WHERE message_id = $1', [answer.messageId])).toEqual([{ status: 'queued', reason: 'provider_error' }]);
    t.services.delivery.start();
    const deadline = Date.now() + 10_000;
    while (peer.received(to).length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(peer.received(to)).toHaveLength(1);
    expect(peer.attempts(to)).toBe(4);
  });
});

describe('the send log', () => {
  it('lists email sends with the recipient as given, filtered by channel, and forgets the address with its last subscriber', async () => {
    const to = `Log.${newAddress()}`;
    const answer = await send(tenant.live, html(to));
    const list = await t.app.inject({ method: 'GET', url: `/transactional/sends/project/${tenant.projectId}?channel=email&pageSize=100`, headers: tenant.live });
    expect(list.statusCode, list.body).toBe(200);
    const { data } = list.json<{ data: { channel: string; recipient: Record<string, string>; messageId: string; outcome: Envelope }[] }>();
    expect(data.every((row) => row.channel === 'email')).toBe(true);
    expect(data.find((row) => row.messageId === answer.messageId)).toMatchObject({ recipient: { to }, outcome: answer });
    const push = await t.app.inject({ method: 'GET', url: `/transactional/sends/project/${tenant.projectId}?channel=push`, headers: tenant.live });
    expect(push.json<{ total: number }>().total).toBe(0);

    const [contact] = await query<{ id: string }>('SELECT id FROM subscribers WHERE lower(email) = $1', [to.toLowerCase()]);
    const removed = await t.app.inject({ method: 'DELETE', url: `/subscribers/${contact!.id}`, headers: tenant.live });
    expect(removed.statusCode, removed.body).toBe(204);
    expect((await logOf({ messageId: answer.messageId! }))[0]).toMatchObject({ recipient: {}, reason: null });
  });
});

describe('sends arriving together', () => {
  it('are checked and written in groups, each answered with its own outcome', async () => {
    const fresh = Array.from({ length: 6 }, () => newAddress());
    const suppressed = newAddress();
    await suppress(suppressed, 'bounced');
    const answers = await Promise.all([...fresh, suppressed].map((to) => send(tenant.live, html(to, { variables: { name: to } }))));
    expect(answers.slice(0, 6).map((a) => a.status)).toEqual(fresh.map(() => 'sent'));
    expect(answers[6]).toEqual(refused('recipient_bounced'));
    expect(new Set(answers.slice(0, 6).map((a) => a.messageId)).size).toBe(6);
    for (const to of fresh) expect(peer.received(to).map((m) => m.parsed.text)).toEqual([expect.stringContaining(`Thanks, ${to}!`)]);
    // Each message was written by the transaction that made its recipient's contact: one per group of sends.
    const written = await query<{ message: string; contact: string }>(
      `SELECT m.xmin::text AS message, s.xmin::text AS contact FROM messages m
       JOIN deliveries d ON d.message_id = m.id JOIN subscribers s ON s.id = d.subscriber_id WHERE m.id = ANY($1)`,
      [answers.slice(0, 6).map((a) => a.messageId)],
    );
    expect(written).toHaveLength(6);
    for (const row of written) expect(row.message).toBe(row.contact);
    const logged = await query('SELECT 1 FROM transactional_sends WHERE message_id = ANY($1)', [answers.map((a) => a.messageId)]);
    expect(logged).toHaveLength(6);
    expect(await query(`SELECT status FROM deliveries WHERE message_id = ANY($1) AND status <> 'sent'`, [answers.map((a) => a.messageId)])).toEqual([]);
  });
});

describe('with the change listener of an API process', () => {
  let unwatch: () => Promise<void>;
  beforeAll(async () => {
    // As runtime.ts does for the API role: sending settings, domains and templates kept while it hears of changes.
    unwatch = await t.services.delivery.watchChanges(t.database.pool.options, { deliveries: false });
  });
  afterAll(() => unwatch());

  /** Calls `attempt` until `done` says so, or 10 s have passed (a notification takes a moment); its last answer. */
  async function eventually<T>(attempt: () => Promise<T>, done: (answer: T) => boolean): Promise<T> {
    const deadline = Date.now() + 10_000;
    let answer = await attempt();
    while (!done(answer) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      answer = await attempt();
    }
    return answer;
  }

  it("renders a template's latest version: an edit here applies at once, another process's once announced", async () => {
    const id = await template(tenant.live, tenant.projectId, { subject: 'Receipt', html: '<p>Version 1 for {{ name }}</p>' });
    const sendIt = () => send(tenant.live, { to: newAddress(), templateId: id, variables: { name: 'Ada' }, senderEmail: `orders@${DOMAIN}` });
    const textOf = async (answer: Envelope) => (await query<{ html: string }>(`SELECT content->>'html' AS html FROM messages WHERE id = $1`, [answer.messageId]))[0]!.html;
    expect(await textOf(await sendIt())).toBe('<p>Version 1 for Ada</p>');

    const edited = await t.app.inject({ method: 'PATCH', url: `/email-templates/${id}`, headers: tenant.live, payload: { html: '<p>Version 2 for {{ name }}</p>' } });
    expect(edited.statusCode, edited.body).toBe(200);
    expect(await textOf(await sendIt())).toBe('<p>Version 2 for Ada</p>');

    // Written as another process would: its transaction announces the change.
    await t.database.db.transaction(async (tx) => {
      await tx.execute(sql`UPDATE email_templates SET html = '<p>Version 3 for {{ name }}</p>' WHERE id = ${id}`);
      await notifyProjectChange(tx, tenant.projectId);
    });
    const version = (html: string) => /Version (\d)/.exec(html)?.[1];
    expect(version(await eventually(async () => textOf(await sendIt()), (html) => version(html) === '3'))).toBe('3');

    const removed = await t.app.inject({ method: 'DELETE', url: `/email-templates/${id}`, headers: tenant.live });
    expect(removed.statusCode, removed.body).toBe(204);
    expect(await send(tenant.live, { to: newAddress(), templateId: id, variables: { name: 'Ada' }, senderEmail: `orders@${DOMAIN}` })).toEqual(
      refused('template_not_found'),
    );
  });

  it('refuses a sender once its domain is no longer verified, as another process announces it', async () => {
    const who = await createTenant(t);
    const domain = await verifiedDomain(who, 'mail.example.org');
    await useSmtpPeer(t, who, peer, {}, SMTP_ACCOUNT);
    const payload = html(newAddress(), { senderEmail: 'hello@mail.example.org' });
    const first = await t.app.inject({ method: 'POST', url: '/transactional/email', headers: who.live, payload });
    expect(first.json<Envelope>(), first.body).toMatchObject({ status: 'sent' });

    await t.database.db.transaction(async (tx) => {
      await tx.execute(sql`UPDATE email_domains SET status = 'failing' WHERE id = ${domain.id}`);
      await notifyProjectChange(tx, who.projectId);
    });
    const res = await eventually(() => t.app.inject({ method: 'POST', url: '/transactional/email', headers: who.live, payload }), (r) => r.statusCode === 422);
    expect(res.statusCode, res.body).toBe(422);
    expect(res.json()).toMatchObject({ code: 'sender_domain_not_verified' });
  });
});
