// Email through the real engine to a real SMTP peer: DKIM, List-Unsubscribe, tracked links and pixel, retries, bounces,
// merge tags rendered per recipient.
import { generateKeyPairSync } from 'node:crypto';
import { inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant, emailStatuses, type Tenant } from '../../../../test/fixtures.js';
import { startTestApp, type TestApp } from '../../../../test/harness.js';
import { dkimVerdict, startSmtpPeer, type SmtpPeer } from '../../../../test/smtp-peer.js';
import { subscribers, type EmailContent } from '../../../db/schema.js';
import { channelAudience } from '../../../modules/segments/index.js';
import { newId } from '../../../shared/ids.js';
import { announceDeliveries } from '../../delivery-notifications.js';
import { insertMessage, insertMessageStats, snapshotDeliveries } from '../../delivery.repository.js';
import { insertClaimed, type MessageRecord } from '../../delivery.repository.js';

const DOMAIN = 'mail.example.com';
const SELECTOR = 'herald2026';
const keys = generateKeyPairSync('rsa', { modulusLength: 2048 });
const SMTP_ACCOUNT = { user: 'herald', pass: 'smtp-password-not-shown' };
const dkimRecord = { domain: DOMAIN, selector: SELECTOR, publicKey: keys.publicKey.export({ type: 'spki', format: 'der' }).toString('base64') };

let t: TestApp;
let peer: SmtpPeer;
let tenant: Tenant;

const query = async <T = Record<string, unknown>>(text: string, params: unknown[] = []) => (await t.database.pool.query(text, params)).rows as T[];

beforeAll(async () => {
  peer = await startSmtpPeer({ dkim: dkimRecord, auth: SMTP_ACCOUNT });
  t = await startTestApp(
    {
      PUBLIC_URL: 'https://herald.example.com',
      EMAIL_BOUNCE_DOMAIN: 'bounces.herald.example.com',
      DELIVERY_POLL_INTERVAL_MS: '50',
      DELIVERY_RETRY_BASE_MS: '20',
      DELIVERY_MAX_ATTEMPTS: '3',
    },
    {
      dkimKeys: async (_projectId, domain) =>
        domain === DOMAIN ? { domainName: DOMAIN, keySelector: SELECTOR, privateKey: keys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() } : undefined,
    },
  );
  tenant = await createTenant(t);
  const configured = await t.app.inject({
    method: 'PUT',
    url: `/projects/${tenant.projectId}/channels/email`,
    headers: tenant.jwt,
    payload: { provider: 'smtp', settings: { host: peer.host, port: peer.port, secure: false }, credentials: SMTP_ACCOUNT },
  });
  expect(configured.statusCode, configured.body).toBe(200);
  t.services.delivery.start();
});
afterAll(async () => {
  await t.services.delivery.stop();
  await t.services.close();
  await t.close();
  await peer.close();
});

const content: EmailContent = {
  subject: 'Spring sale',
  preheader: 'Everything half price',
  html:
    '<html><body><h1>Spring sale</h1><p>See <a href="https://shop.example.com/sale?utm_source=mail&amp;ref=a%20b#top">the sale</a> ' +
    'and <a href="https://shop.example.com/">the shop</a>, or <a href="mailto:help@example.com">write to us</a>.</p></body></html>',
  from: { email: `news@${DOMAIN}`, name: 'Example Shop' },
  replyTo: { email: `help@${DOMAIN}` },
};

let addresses = 0;
/** A contact with a new address (and `fields`: attributes, externalId …), created through the API. */
async function contact(headers: Record<string, string> = tenant.live, projectId = tenant.projectId, fields: Record<string, unknown> = {}): Promise<{ id: string; email: string }> {
  const email = `reader${++addresses}-${Date.now()}@example.org`;
  const res = await t.app.inject({ method: 'POST', url: '/contacts', headers, payload: { projectId, email, ...fields } });
  expect(res.statusCode, res.body).toBe(201);
  return { id: res.json<{ id: string }>().id, email };
}

/** An email message to `recipients`, snapshotted as a campaign's is (one delivery per address) and announced to the engine. */
async function send(
  recipients: { id: string }[],
  options: { sandbox?: boolean; campaignId?: string; projectId?: string; organizationId?: string; content?: EmailContent; personalized?: boolean } = {},
) {
  const projectId = options.projectId ?? tenant.projectId;
  const messageId = newId('msg');
  const sandbox = options.sandbox ?? false;
  await t.database.db.transaction(async (tx) => {
    await insertMessage(tx, {
      id: messageId,
      projectId,
      channel: 'email',
      source: 'campaign',
      campaignId: options.campaignId ?? null,
      sandbox,
      content: options.content ?? content,
      options: options.personalized ? { personalized: true } : {},
    });
    await insertMessageStats(tx, messageId);
    const ids = recipients.map((r) => r.id);
    await snapshotDeliveries(tx, { id: messageId, projectId, channel: 'email' }, channelAudience({ organizationId: options.organizationId ?? tenant.orgId, projectId, sandbox }, 'email', inArray(subscribers.id, ids)));
  });
  await announceDeliveries(t.database.db);
  return messageId;
}

interface DeliveryRow {
  id: number;
  subscriber_id: string;
  status: string;
  reason: string | null;
  attempts: number;
  provider_code: string | null;
  provider_message_id: string | null;
}
const deliveriesOf = (messageId: string) =>
  query<DeliveryRow>(
    `SELECT id::float8 AS id, subscriber_id, status, reason, attempts, provider_code, provider_message_id FROM deliveries WHERE message_id = $1 ORDER BY id`,
    [messageId],
  );

async function settled(messageId: string, timeoutMs = 10_000): Promise<DeliveryRow[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const rows = await deliveriesOf(messageId);
    if (rows.length > 0 && rows.every((r) => !['queued', 'sending'].includes(r.status))) return rows;
    if (Date.now() > deadline) throw new Error(`not settled: ${JSON.stringify(rows)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const hrefs = (html: string) => [...html.matchAll(/<a\b[^>]*?href="([^"]*)"/gi)].map((m) => m[1]!.replace(/&amp;/g, '&'));
const local = (url: string) => url.slice('https://herald.example.com'.length);

describe('email through the engine and a real SMTP server', () => {
  it('arrives DKIM-signed over both List-Unsubscribe headers, with its plain part, an opaque Message-ID and VERP Return-Path', async () => {
    const reader = await contact();
    const campaignId = `cmp_${Date.now()}`;
    const messageId = await send([reader], { campaignId });
    const [row] = await settled(messageId);
    expect(row).toMatchObject({ status: 'sent', reason: null, attempts: 1, provider_code: 'smtp_250' });
    const [mail] = peer.received(reader.email);
    expect(mail).toBeDefined();

    expect(mail!.dkim).toMatchObject({ result: 'pass', signingDomain: DOMAIN });
    // Every header that says who sent what to whom, and how to leave; From and Subject listed once more than present.
    expect(mail!.dkim.signedHeaders).toEqual([
      'from', 'from', 'reply-to', 'subject', 'subject', 'date', 'message-id', 'to', 'mime-version', 'content-type',
      'list-unsubscribe', 'list-unsubscribe-post', 'list-id', 'feedback-id',
    ]);
    const head = mail!.raw.toString('latin1').split('\r\n\r\n', 1)[0]!.replace(/\r\n[ \t]+/g, ' ');
    const signedAt = Number(/^DKIM-Signature:.*\bt=(\d+);/m.exec(head)?.[1]);
    expect(Math.abs(signedAt - Date.now() / 1000)).toBeLessThan(60);
    // A From or Subject put above the signed one (what many clients show) breaks the signature.
    const verdict = async (raw: Buffer) => (await dkimVerdict(raw, dkimRecord)).result;
    expect(await verdict(mail!.raw)).toBe('pass');
    expect(await verdict(Buffer.concat([Buffer.from('From: Bank <security@bank.example>\r\n'), mail!.raw]))).toBe('fail');
    expect(await verdict(Buffer.concat([Buffer.from('Subject: Verify your account\r\n'), mail!.raw]))).toBe('fail');
    expect(await verdict(Buffer.concat([Buffer.from('Keywords: unsigned\r\n'), mail!.raw]))).toBe('pass');

    const { parsed } = mail!;
    const token = t.services.emailLinks.unsubscribeToken(row!.id);
    // One header, folded as long headers are.
    expect(parsed.headerLines.filter((h) => h.key === 'list-unsubscribe').map((h) => h.line.replace(/\r?\n[ \t]+/g, ' '))).toEqual([
      `List-Unsubscribe: <https://herald.example.com/u/${token}>, <mailto:unsubscribe+${token}@bounces.herald.example.com>`,
    ]);
    expect(parsed.headerLines.filter((h) => h.key === 'list-unsubscribe-post').map((h) => h.line)).toEqual(['List-Unsubscribe-Post: List-Unsubscribe=One-Click']);
    expect(parsed.subject).toBe('Spring sale');
    expect(parsed.from?.value).toEqual([{ address: `news@${DOMAIN}`, name: 'Example Shop' }]);
    expect(parsed.replyTo?.value).toEqual([{ address: `help@${DOMAIN}`, name: '' }]);
    expect(parsed.text).toContain('the sale [https://shop.example.com/sale?utm_source=mail&ref=a%20b#top]');
    expect(parsed.text).toContain(`Unsubscribe or change your email preferences: https://herald.example.com/u/${token}`);
    expect(parsed.html).toContain('Everything half price');

    // Bulk mail headers: the project's list on the sending domain, Gmail's feedback loop by campaign and project.
    expect(parsed.headerLines.find((h) => h.key === 'list-id')?.line).toBe(`List-ID: <${tenant.projectId}.${DOMAIN}>`);
    expect(parsed.headerLines.find((h) => h.key === 'feedback-id')?.line.replace(/\r?\n[ \t]+/g, ' ')).toBe(`Feedback-ID: ${campaignId}:${tenant.projectId}:campaign:herald`);

    // Opaque: none of Herald's ids (which carry their creation times), the same token the delivery id seals.
    expect(parsed.messageId).toMatch(new RegExp(`^<[a-z2-7]{28}@${DOMAIN.replace(/\./g, '\\.')}>$`));
    expect(parsed.messageId).not.toContain(messageId.slice(4));
    expect(parsed.messageId).not.toContain(reader.id.slice(4));
    expect(t.services.emailLinks.verifyMessageId(parsed.messageId!.slice(1, parsed.messageId!.indexOf('@')))).toBe(row!.id);
    expect(row!.provider_message_id).toBe(parsed.messageId);
    expect(mail!.envelope.from).toBe(`bounce+${t.services.emailLinks.bounceToken(row!.id)}@bounces.herald.example.com`);
    expect(t.services.emailLinks.verifyBounce(mail!.envelope.from.slice('bounce+'.length, mail!.envelope.from.indexOf('@')))).toBe(row!.id);
  });

  it('wraps every web link in a signed click URL that redirects to its target, logged each time and counted once; a tampered one redirects nowhere', async () => {
    const reader = await contact();
    const campaignId = `cmp_${Date.now()}`;
    const messageId = await send([reader], { campaignId });
    const [row] = await settled(messageId);
    const html = peer.received(reader.email)[0]!.parsed.html as string;
    const links = hrefs(html);
    const unsubscribe = `https://herald.example.com/u/${t.services.emailLinks.unsubscribeToken(row!.id)}`;
    expect(links.filter((href) => !href.startsWith('https://herald.example.com/e/click/'))).toEqual(['mailto:help@example.com', unsubscribe]);
    const clicks = links.filter((href) => href.startsWith('https://herald.example.com/e/click/'));
    expect(clicks.map((href) => new URL(href).pathname)).toEqual([`/e/click/${campaignId}/${reader.id}`, `/e/click/${campaignId}/${reader.id}`]);

    const targets = ['https://shop.example.com/sale?utm_source=mail&ref=a%20b#top', 'https://shop.example.com/'];
    const tampered = new URL(clicks[0]!);
    tampered.searchParams.set('u', 'https://evil.example.net/');
    const forged = new URL(clicks[0]!);
    forged.searchParams.set('s', `${forged.searchParams.get('s')!.slice(0, -3)}AAA`);
    for (const bad of [tampered, forged]) {
      const res = await t.app.inject({ method: 'GET', url: bad.pathname + bad.search });
      expect(res.statusCode).toBe(400);
      expect(res.headers.location).toBeUndefined();
    }
    expect(await query(`SELECT type FROM delivery_events WHERE delivery_id = $1`, [row!.id])).toEqual([]);

    for (const [i, href] of [...clicks, clicks[0]!].entries()) {
      const res = await t.app.inject({ method: 'GET', url: local(href) });
      expect(res.statusCode).toBe(302);
      expect(res.headers.location).toBe(targets[i % 2]);
    }
    const pixel = /<img src="([^"]+)"/.exec(html)![1]!.replace(/&amp;/g, '&');
    expect(pixel.startsWith(`https://herald.example.com/e/open/${campaignId}/${reader.id}?s=`)).toBe(true);
    for (let i = 0; i < 2; i++) expect((await t.app.inject({ method: 'GET', url: local(pixel) })).statusCode).toBe(200);

    expect(await query(`SELECT type, count(*)::int AS logged FROM delivery_events WHERE delivery_id = $1 GROUP BY type ORDER BY type`, [row!.id])).toEqual([
      { type: 'delivered', logged: 1 },
      { type: 'opened', logged: 2 },
      { type: 'clicked', logged: 3 },
    ]);
    expect(await query(`SELECT sent, delivered, opened, clicked FROM message_stats WHERE message_id = $1`, [messageId])).toEqual([
      { sent: 1, delivered: 1, opened: 1, clicked: 1 },
    ]);
    expect((await deliveriesOf(messageId))[0]!.status).toBe('clicked');
  });

  it('retries a 4xx and sends the very same message again: same Message-ID, same bodies', async () => {
    const reader = await contact();
    peer.respond(reader.email, { code: 451, at: 'DATA' });
    const messageId = await send([reader]);
    const [row] = await settled(messageId);
    expect(row).toMatchObject({ status: 'sent', attempts: 2, provider_code: 'smtp_250' });
    const [refused, accepted] = peer.transmitted(reader.email);
    expect([refused!.answer, accepted!.answer]).toEqual([451, 250]);
    expect(accepted!.parsed.messageId).toBe(refused!.parsed.messageId);
    expect(accepted!.parsed.html).toBe(refused!.parsed.html);
    expect(accepted!.parsed.text).toBe(refused!.parsed.text);
    expect(accepted!.dkim.result).toBe('pass');

    // Refused at RCPT TO (greylisting): tried again too.
    const greylisted = await contact();
    peer.respond(greylisted.email, { code: 450 });
    const [again] = await settled(await send([greylisted]));
    expect(again).toMatchObject({ status: 'sent', attempts: 2 });
    expect(peer.attempts(greylisted.email)).toBe(2);
  });

  it("a 5xx at RCPT TO makes the address unreachable for email only, leaving its subscriber's push device alone", async () => {
    const reader = await contact();
    await query(`UPDATE subscribers SET endpoint = 'https://push.example.com/send/abc', p256dh = 'k', auth = 'a' WHERE id = $1`, [reader.id]);
    peer.respond(reader.email, { code: 550 });
    const [row] = await settled(await send([reader]));
    expect(row).toMatchObject({ status: 'failed', reason: 'recipient_bounced', provider_code: 'smtp_550', attempts: 1 });
    // A hard bounce: the address is on the suppression list as bounced, and its subscriber's emailStatus says so.
    expect(
      await query(`SELECT channel, status, status_reason, source FROM channel_addresses WHERE project_id = $1 AND address = $2`, [tenant.projectId, reader.email]),
    ).toEqual([{ channel: 'email', status: 'unreachable', status_reason: 'bounced', source: 'provider' }]);
    expect(await query(`SELECT status FROM subscribers WHERE id = $1`, [reader.id])).toEqual([{ status: 'active' }]);
    expect(await emailStatuses(t, [reader.id])).toEqual(['bounced']);
    // The next email leaves the address out of its audience; nothing more reaches the server.
    const next = await send([reader]);
    expect(await deliveriesOf(next)).toEqual([]);
    expect(peer.attempts(reader.email)).toBe(1);
  });

  it('sends a test key\'s email to the sandbox: rendered and recorded, never at the server', async () => {
    const reader = await contact(tenant.test);
    const messageId = await send([reader], { sandbox: true });
    const [row] = await settled(messageId);
    expect(row).toMatchObject({ status: 'sent', provider_code: 'sandbox', provider_message_id: null });
    expect(peer.attempts(reader.email)).toBe(0);
  });

  it("holds live email over its organization's monthly cap until the first of next month, counting only what a server accepted", async () => {
    const capped = await createTenant(t);
    const configured = await t.app.inject({
      method: 'PUT',
      url: `/projects/${capped.projectId}/channels/email`,
      headers: capped.jwt,
      payload: { provider: 'smtp', settings: { host: peer.host, port: peer.port, secure: false }, credentials: SMTP_ACCOUNT },
    });
    expect(configured.statusCode, configured.body).toBe(200);
    await query('UPDATE organizations SET monthly_email_cap = 3 WHERE id = $1', [capped.orgId]);
    const usage = async () => (await query<{ sent: number }>('SELECT sent FROM email_usage WHERE organization_id = $1', [capped.orgId]))[0]?.sent;
    const into = { projectId: capped.projectId, organizationId: capped.orgId };

    // Refused by the server: its reservation is given back.
    const refusing = await contact(capped.live, capped.projectId);
    peer.respond(refusing.email, { code: 550 });
    expect((await settled(await send([refusing], into)))[0]).toMatchObject({ status: 'failed', reason: 'recipient_bounced' });
    // The engine gives the reservation back just after it records the outcome.
    await expect.poll(usage).toBe(0);
    await query('UPDATE organizations SET monthly_email_cap = 2 WHERE id = $1', [capped.orgId]);

    const readers = [await contact(capped.live, capped.projectId), await contact(capped.live, capped.projectId), await contact(capped.live, capped.projectId)];
    const messageId = await send(readers, into);
    const deadline = Date.now() + 10_000;
    let rows = await deliveriesOf(messageId);
    while (rows.filter((r) => r.status === 'sent').length < 2 || rows.some((r) => r.status === 'sending' || (r.status === 'queued' && r.reason === null))) {
      if (Date.now() > deadline) throw new Error(`not settled: ${JSON.stringify(rows)}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
      rows = await deliveriesOf(messageId);
    }
    expect(rows.map((r) => r.status).sort()).toEqual(['queued', 'sent', 'sent']);
    const held = rows.find((r) => r.status === 'queued')!;
    // A hold, not an attempt.
    expect(held).toMatchObject({ reason: 'monthly_cap_reached', attempts: 0 });
    const [due] = await query<{ next: Date }>('SELECT next_attempt_at AS next FROM deliveries WHERE id = $1', [held.id]);
    const now = new Date();
    expect(Math.abs(due!.next.getTime() - Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1))).toBeLessThan(5000);
    expect(readers.filter((r) => peer.received(r.email).length > 0)).toHaveLength(2);
    expect(await usage()).toBe(2);
  });

  it('fails a live email of a project that chose no email provider, naming why', async () => {
    const other = await createTenant(t);
    const reader = await contact(other.live, other.projectId);
    const [row] = await settled(await send([reader], { projectId: other.projectId, organizationId: other.orgId }));
    expect(row).toMatchObject({ status: 'failed', reason: 'provider_not_configured', attempts: 1 });
    expect(peer.attempts(reader.email)).toBe(0);
  });

  describe('a personalized message', () => {
    const personal: EmailContent = {
      subject: 'Hello {{ first_name }}, {{ plan | default: "your plan" }} is ready',
      html:
        '<html><body><p>Hi {{ first_name }}</p>' +
        '<p>See <a href="https://shop.example.com/u/{{ external_id }}?c={{ country | default: \'none\' }}">your page</a>.</p></body></html>',
      from: { email: `news@${DOMAIN}`, name: 'Example Shop' },
    };

    it("renders each recipient's merge tags from its subscriber; one missing a variable fails alone while the batch is sent", async () => {
      const ada = await contact(tenant.live, tenant.projectId, { externalId: 'ada-1', attributes: { first_name: '<b>Ada</b>', plan: 'Pro' } });
      const grace = await contact(tenant.live, tenant.projectId, { externalId: 'grace-2', attributes: { first_name: 'Grace' } });
      const nameless = await contact(tenant.live, tenant.projectId, { externalId: 'anon-3', attributes: { plan: 'Pro' } });
      const messageId = await send([ada, grace, nameless], { content: personal, personalized: true });
      const rows = await settled(messageId);
      const bySubscriber = new Map(rows.map((r) => [r.subscriber_id, r]));
      expect(bySubscriber.get(ada.id)).toMatchObject({ status: 'sent', reason: null });
      expect(bySubscriber.get(grace.id)).toMatchObject({ status: 'sent', reason: null });
      expect(bySubscriber.get(nameless.id)).toMatchObject({ status: 'failed', reason: 'template_variables_missing', attempts: 1, provider_code: null });
      expect(peer.attempts(nameless.email)).toBe(0);
      expect(await query(`SELECT sent, failed FROM message_stats WHERE message_id = $1`, [messageId])).toEqual([{ sent: 2, failed: 1 }]);

      const [first] = peer.received(ada.email);
      expect(first!.dkim.result).toBe('pass');
      expect(first!.parsed.subject).toBe('Hello <b>Ada</b>, Pro is ready');
      expect(first!.parsed.html).toContain('<p>Hi &lt;b&gt;Ada&lt;/b&gt;</p>');
      expect(first!.parsed.text).toContain('Hi <b>Ada</b>');
      expect(first!.parsed.text).toContain('your page [https://shop.example.com/u/ada-1?c=none]');
      const [second] = peer.received(grace.email);
      expect(second!.parsed.subject).toBe('Hello Grace, your plan is ready');
      expect(second!.parsed.html).toContain('<p>Hi Grace</p>');

      // The link was wrapped with its rendered target: its click redirects there and counts.
      for (const [reader, target] of [
        [ada, 'https://shop.example.com/u/ada-1?c=none'],
        [grace, 'https://shop.example.com/u/grace-2?c=none'],
      ] as const) {
        const [click] = hrefs(peer.received(reader.email)[0]!.parsed.html as string);
        expect(new URL(click!).searchParams.get('u')).toBe(target);
        const res = await t.app.inject({ method: 'GET', url: local(click!) });
        expect(res.statusCode).toBe(302);
        expect(res.headers.location).toBe(target);
      }
      expect(await query(`SELECT clicked FROM message_stats WHERE message_id = $1`, [messageId])).toEqual([{ clicked: 2 }]);
    });

    it('renders the same bytes on a retry', async () => {
      const reader = await contact(tenant.live, tenant.projectId, { externalId: 'ada-4', attributes: { first_name: 'Ada' } });
      peer.respond(reader.email, { code: 451, at: 'DATA' });
      const [row] = await settled(await send([reader], { content: personal, personalized: true }));
      expect(row).toMatchObject({ status: 'sent', attempts: 2 });
      const [refused, accepted] = peer.transmitted(reader.email);
      expect(accepted!.parsed.subject).toBe('Hello Ada, your plan is ready');
      expect(accepted!.parsed.html).toBe(refused!.parsed.html);
      expect(accepted!.parsed.text).toBe(refused!.parsed.text);
    });

    it('claims merge fields only for an email whose message is personalized: a push or a transactional claim reads none', async () => {
      const reader = await contact(tenant.live, tenant.projectId, { externalId: 'ada-5', attributes: { first_name: 'Ada' } });
      await query(`UPDATE subscribers SET endpoint = 'https://push.example.com/send/merge', p256dh = 'k', auth = 'a', city = 'Lyon' WHERE id = $1`, [reader.id]);
      const claim = async (message: MessageRecord) => {
        await insertMessage(t.database.db, message);
        const destination = message.channel === 'email' ? reader.email : null;
        const [claimed] = await insertClaimed(t.database.db, message, [{ subscriberId: reader.id, destination }], 3600);
        // Leave nothing for the running engine to take over.
        await query(`DELETE FROM deliveries WHERE id = $1`, [claimed!.id]);
        return claimed!;
      };
      const sent = { projectId: tenant.projectId, source: 'transactional', campaignId: null, sandbox: false } as const;
      const push = await claim({ ...sent, id: newId('msg'), channel: 'push', content: { title: 'Hi {{ first_name }}', body: 'News' }, options: { ttlSeconds: 60, urgency: 'normal' } });
      expect(push).toMatchObject({ recipient: { channel: 'push', endpoint: 'https://push.example.com/send/merge' }, mergeFields: null });
      expect(await claim({ ...sent, id: newId('msg'), channel: 'email', content: personal, options: {} })).toMatchObject({ recipient: { channel: 'email', address: reader.email }, mergeFields: null });
      expect((await claim({ ...sent, source: 'campaign', id: newId('msg'), channel: 'email', content: personal, options: { personalized: true } })).mergeFields).toEqual({
        attributes: { first_name: 'Ada' },
        externalId: 'ada-5',
        country: null,
        city: 'Lyon',
        language: null,
        timezone: null,
      });
    });
  });
});
