// Inbound SMTP, spoken to over a real SMTP connection: a DSN to a delivery's VERP address bounces it and feeds the
// suppression list; soft DSNs count; an ARF complaint report suppresses for good; a mail to the List-Unsubscribe
// mailto entry unsubscribes; forged tokens, other recipients and oversized mail change nothing.
import { createTransport } from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant, emailStatuses, type Tenant } from '../../test/fixtures.js';
import { startTestApp, type TestApp } from '../../test/harness.js';
import { newId } from '../shared/ids.js';
import { startSmtpIn, type SmtpIn } from './smtp-in-server.js';

const BOUNCES = 'bounces.herald.example.com';
let t: TestApp;
let smtpIn: SmtpIn;
let tenant: Tenant;

beforeAll(async () => {
  t = await startTestApp({ PUBLIC_URL: 'https://herald.example.com', EMAIL_BOUNCE_DOMAIN: BOUNCES });
  smtpIn = await startSmtpIn(t.services.inboundMail, { host: '127.0.0.1', port: 0, bounceDomain: BOUNCES, maxBytes: 64 * 1024 });
  tenant = await createTenant(t);
});
afterAll(async () => {
  await smtpIn.close();
  await t.close();
});

const query = async <T = Record<string, unknown>>(text: string, params: unknown[] = []) => (await t.database.pool.query(text, params)).rows as T[];

/** A contact and a sent email delivery to it; returns the delivery id, its VERP address and the contact's id. */
async function sentEmail(email: string): Promise<{ deliveryId: number; returnPath: string; subscriberId: string; messageId: string }> {
  const subscriberId = (await t.app.inject({ method: 'POST', url: '/contacts', headers: tenant.live, payload: { projectId: tenant.projectId, email } })).json<{ id: string }>().id;
  const messageId = newId('msg');
  await query(`INSERT INTO messages (id, project_id, channel, source, sandbox, content, options) VALUES ($1, $2, 'email', 'campaign', false, '{}', '{}')`, [messageId, tenant.projectId]);
  await query(`INSERT INTO message_stats (message_id, queued, sent) VALUES ($1, 1, 1)`, [messageId]);
  const [row] = await query<{ id: number }>(
    `INSERT INTO deliveries (project_id, message_id, subscriber_id, channel, destination, status, attempts, sent_at)
     VALUES ($1, $2, $3, 'email', $4, 'sent', 1, now()) RETURNING id::float8 AS id`,
    [tenant.projectId, messageId, subscriberId, email],
  );
  return { deliveryId: row!.id, returnPath: `bounce+${t.services.emailLinks.bounceToken(row!.id)}@${BOUNCES}`, subscriberId, messageId };
}

/** An RFC 3464 report about `recipient`, as a receiving MTA sends it to the Return-Path. */
const dsn = (recipient: string, action: string, status: string) =>
  [
    'From: Mail Delivery System <MAILER-DAEMON@mx.example.org>',
    `Subject: Undelivered Mail Returned to Sender`,
    'MIME-Version: 1.0',
    'Content-Type: multipart/report; report-type=delivery-status; boundary="B"',
    '',
    '--B',
    'Content-Type: text/plain',
    '',
    'Your message could not be delivered.',
    '--B',
    'Content-Type: message/delivery-status',
    '',
    'Reporting-MTA: dns; mx.example.org',
    '',
    `Final-Recipient: rfc822; ${recipient}`,
    `Action: ${action}`,
    `Status: ${status}`,
    `Diagnostic-Code: smtp; ${status.startsWith('5') ? '550 5.1.1 user unknown' : '452 4.2.2 mailbox full'}`,
    '',
    '--B--',
    '',
  ].join('\r\n');

/**
 * An RFC 5965 report, as a mailbox provider's feedback loop sends it when its user presses "spam": a human-readable
 * part, the machine-readable `message/feedback-report`, then the original message's headers (redacted recipient).
 */
const arf = (feedbackType: string, original: { messageId: string; returnPath: string }) =>
  [
    'From: Feedback Loop <fbl@mailbox.example.net>',
    'Subject: Complaint about message from 192.0.2.1',
    'MIME-Version: 1.0',
    'Content-Type: multipart/report; report-type=feedback-report; boundary="ARF"',
    '',
    '--ARF',
    'Content-Type: text/plain; charset="US-ASCII"',
    '',
    'This is an email abuse report for an email message received from IP 192.0.2.1.',
    '--ARF',
    'Content-Type: message/feedback-report',
    '',
    `Feedback-Type: ${feedbackType}`,
    'User-Agent: MailboxFBL/1.0',
    'Version: 1',
    'Original-Mail-From: <' + original.returnPath + '>',
    'Original-Rcpt-To: <redacted@mailbox.example.net>',
    'Arrival-Date: Thu, 26 Nov 2026 10:00:00 +0000',
    'Source-IP: 192.0.2.1',
    '',
    '--ARF',
    'Content-Type: text/rfc822-headers',
    '',
    `Return-Path: <${original.returnPath}>`,
    'From: Example Shop <news@mail.example.com>',
    'To: <redacted@mailbox.example.net>',
    'Subject: Spring sale',
    `Message-ID: ${original.messageId}`,
    '',
    '--ARF--',
    '',
  ].join('\r\n');

const messageIdOf = (deliveryId: number) => `<${t.services.emailLinks.messageIdToken(deliveryId)}@mail.example.com>`;
const complaints = async (messageId: string) => (await query<{ complained: number }>(`SELECT complained FROM message_stats WHERE message_id = $1`, [messageId]))[0]!.complained;

const transport = () => createTransport({ host: '127.0.0.1', port: Number(smtpIn.address.split(':').pop()), secure: false, ignoreTLS: true });
const mail = (to: string, raw: string) => transport().sendMail({ envelope: { from: '', to }, raw });

const state = async (deliveryId: number, email: string, subscriberId: string) => ({
  status: (await query<{ status: string }>(`SELECT status FROM deliveries WHERE id = $1`, [deliveryId]))[0]!.status,
  events: (await query<{ type: string }>(`SELECT type::text FROM delivery_events WHERE delivery_id = $1 ORDER BY 1`, [deliveryId])).map((r) => r.type),
  suppressed: (await query(`SELECT status_reason, source FROM channel_addresses WHERE project_id = $1 AND address = $2`, [tenant.projectId, email]))[0],
  emailStatus: (await emailStatuses(t, [subscriberId]))[0],
});

describe('inbound SMTP for bounces', () => {
  it('a hard DSN to the VERP address bounces its delivery and suppresses the address; the same DSN again changes nothing', async () => {
    const { deliveryId, returnPath, subscriberId } = await sentEmail('gone@example.org');
    for (let i = 0; i < 2; i++) expect((await mail(returnPath, dsn('gone@example.org', 'failed', '5.1.1'))).accepted).toEqual([returnPath]);
    expect(await state(deliveryId, 'gone@example.org', subscriberId)).toEqual({
      status: 'bounced',
      events: ['bounced'],
      suppressed: { status_reason: 'bounced', source: 'provider' },
      emailStatus: 'bounced',
    });
  });

  it('a soft DSN is logged without bouncing the delivery or suppressing the address', async () => {
    const { deliveryId, returnPath, subscriberId } = await sentEmail('full@example.org');
    await mail(returnPath, dsn('full@example.org', 'delayed', '4.2.2'));
    expect(await state(deliveryId, 'full@example.org', subscriberId)).toEqual({ status: 'sent', events: ['soft_bounced'], suppressed: undefined, emailStatus: 'active' });
  });

  it('an ARF complaint report to the bounce address records a complaint: suppressed for good, counted, logged; sent again, nothing more', async () => {
    const { deliveryId, returnPath, subscriberId, messageId } = await sentEmail('annoyed@example.org');
    const report = arf('abuse', { messageId: messageIdOf(deliveryId), returnPath });
    for (let i = 0; i < 2; i++) expect((await mail(returnPath, report)).accepted).toEqual([returnPath]);
    expect(await state(deliveryId, 'annoyed@example.org', subscriberId)).toEqual({
      status: 'complained',
      events: ['complained', 'delivered'],
      suppressed: { status_reason: 'complained', source: 'provider' },
      emailStatus: 'complained',
    });
    expect(await complaints(messageId)).toBe(1);
    const [event] = await query(`SELECT detail FROM delivery_events WHERE delivery_id = $1 AND type = 'complained'`, [deliveryId]);
    expect(event).toEqual({ detail: { provider: 'arf', feedbackType: 'abuse', userAgent: 'MailboxFBL/1.0' } });
  });

  it("an ARF report lands on the delivery its quoted Message-ID names, whichever bounce address it was sent to", async () => {
    const reported = await sentEmail('reported@example.org');
    const other = await sentEmail('bystander@example.org');
    await mail(other.returnPath, arf('abuse', { messageId: messageIdOf(reported.deliveryId), returnPath: 'someone@elsewhere.example' }));
    expect((await state(reported.deliveryId, 'reported@example.org', reported.subscriberId)).status).toBe('complained');
    expect(await state(other.deliveryId, 'bystander@example.org', other.subscriberId)).toEqual({ status: 'sent', events: [], suppressed: undefined, emailStatus: 'active' });
  });

  it('an ARF report that is no complaint (a DMARC failure report, not-spam) records nothing', async () => {
    const { deliveryId, returnPath, subscriberId, messageId } = await sentEmail('fine@example.org');
    for (const type of ['auth-failure', 'not-spam']) await mail(returnPath, arf(type, { messageId: messageIdOf(deliveryId), returnPath }));
    expect(await state(deliveryId, 'fine@example.org', subscriberId)).toEqual({ status: 'sent', events: [], suppressed: undefined, emailStatus: 'active' });
    expect(await complaints(messageId)).toBe(0);
  });

  it("a mail to the List-Unsubscribe mailto entry unsubscribes the address, whatever it says", async () => {
    const { deliveryId, subscriberId } = await sentEmail('leaving@example.org');
    const address = `unsubscribe+${t.services.emailLinks.unsubscribeToken(deliveryId).toUpperCase()}@${BOUNCES}`;
    expect((await mail(address, 'Subject: unsubscribe\r\n\r\n\r\n')).accepted).toEqual([address]);
    expect(await state(deliveryId, 'leaving@example.org', subscriberId)).toEqual({
      status: 'unsubscribed',
      events: ['delivered', 'unsubscribed'],
      suppressed: { status_reason: 'unsubscribed', source: 'recipient' },
      emailStatus: 'unsubscribed',
    });
  });

  it('refuses every other recipient (no relaying), and a message over the size limit', async () => {
    await expect(mail('postmaster@example.org', dsn('x@example.org', 'failed', '5.1.1'))).rejects.toMatchObject({ responseCode: 550 });
    await expect(mail(`unknown@${BOUNCES}`, dsn('x@example.org', 'failed', '5.1.1'))).rejects.toMatchObject({ responseCode: 550 });
    const { returnPath } = await sentEmail('big@example.org');
    await expect(mail(returnPath, `Subject: big\r\n\r\n${'x'.repeat(100 * 1024)}\r\n`)).rejects.toMatchObject({ responseCode: 552 });
  });

  it('records nothing for a forged token, or for mail that is no DSN', async () => {
    const { deliveryId, returnPath, subscriberId } = await sentEmail('kept@example.org');
    const forged = returnPath.replace(/\+(.)/, (_m, c: string) => `+${c === 'a' ? 'b' : 'a'}`);
    await mail(forged, dsn('kept@example.org', 'failed', '5.1.1'));
    await mail(returnPath, 'Subject: out of office\r\n\r\nI am away.\r\n');
    expect(await state(deliveryId, 'kept@example.org', subscriberId)).toEqual({ status: 'sent', events: [], suppressed: undefined, emailStatus: 'active' });
  });
});
