// POST /email/ses-webhook against a local SNS (its own CA, trusted only by the agent Herald is given): verified SES
// notifications land on their deliveries once and feed the suppression list; forged, foreign, stale or off-host
// messages are refused and change nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant, emailStatuses, type Tenant } from '../../../test/fixtures.js';
import { startTestApp, type TestApp } from '../../../test/harness.js';
import { startSnsPeer, type SnsPeer } from '../../../test/sns-peer.js';
import { newId } from '../../shared/ids.js';

const TOPIC = 'arn:aws:sns:us-east-1:123456789012:herald-ses';
let t: TestApp;
let sns: SnsPeer;
let tenant: Tenant;

beforeAll(async () => {
  sns = await startSnsPeer();
  t = await startTestApp({ SES_SNS_TOPIC_ARNS: `${TOPIC}, arn:aws:sns:eu-west-1:123456789012:other` }, { snsAgent: sns.agent });
  tenant = await createTenant(t);
});
afterAll(async () => {
  await t.close();
  await sns.close();
});

const query = async <T = Record<string, unknown>>(text: string, params: unknown[] = []) => (await t.database.pool.query(text, params)).rows as T[];

/** SNS posts its JSON as text/plain. */
const post = (payload: Record<string, string>) =>
  t.app.inject({ method: 'POST', url: '/email/ses-webhook', headers: { 'content-type': 'text/plain; charset=UTF-8' }, payload: JSON.stringify(payload) });

/** A contact with `email`, and a sent email delivery to it that SES named `sesId`; returns the delivery and message ids. */
async function sentEmail(email: string, sesId: string, existing?: string): Promise<{ deliveryId: number; messageId: string; subscriberId: string }> {
  const subscriberId = existing ?? (await t.app.inject({ method: 'POST', url: '/contacts', headers: tenant.live, payload: { projectId: tenant.projectId, email } })).json<{ id: string }>().id;
  const messageId = newId('msg');
  await query(`INSERT INTO messages (id, project_id, channel, source, sandbox, content, options) VALUES ($1, $2, 'email', 'campaign', false, '{}', '{}')`, [messageId, tenant.projectId]);
  await query(`INSERT INTO message_stats (message_id, queued, sent) VALUES ($1, 1, 1)`, [messageId]);
  const [row] = await query<{ id: number }>(
    `INSERT INTO deliveries (project_id, message_id, subscriber_id, channel, destination, status, attempts, sent_at, provider_message_id)
     VALUES ($1, $2, $3, 'email', $4, 'sent', 1, now(), $5) RETURNING id::float8 AS id`,
    [tenant.projectId, messageId, subscriberId, email.toLowerCase(), sesId],
  );
  return { deliveryId: row!.id, messageId, subscriberId };
}

const notification = (message: Record<string, unknown>, fields: Record<string, string> = {}) =>
  ({ Type: 'Notification', TopicArn: TOPIC, Message: JSON.stringify(message), ...fields }) as Record<string, string>;
const bounce = (sesId: string, email: string, bounceType: 'Permanent' | 'Transient') => ({
  eventType: 'Bounce',
  mail: { messageId: sesId, timestamp: new Date().toISOString() },
  bounce: { bounceType, bounceSubType: bounceType === 'Permanent' ? 'General' : 'MailboxFull', bouncedRecipients: [{ emailAddress: email, diagnosticCode: 'smtp; 550 5.1.1' }] },
});

const deliveryState = async (deliveryId: number, messageId: string) => ({
  status: (await query<{ status: string }>(`SELECT status FROM deliveries WHERE id = $1`, [deliveryId]))[0]!.status,
  events: (await query<{ type: string }>(`SELECT type FROM delivery_events WHERE delivery_id = $1 ORDER BY type::text`, [deliveryId])).map((e) => e.type),
  stats: (await query(`SELECT delivered, bounced, complained FROM message_stats WHERE message_id = $1`, [messageId]))[0],
});
const suppression = async (email: string) => {
  const res = await t.app.inject({ method: 'GET', url: `/projects/${tenant.projectId}/suppressions/${email}`, headers: tenant.live });
  const state = res.json<{ suppressed: boolean; reason: string; source: string }>();
  return state.suppressed ? state : undefined;
};
const emailStatus = async (subscriberId: string) => (await emailStatuses(t, [subscriberId]))[0];

describe('POST /email/ses-webhook', () => {
  it('confirms a subscription to a listed topic, and no other', async () => {
    const subscribe = (topic: string, token: string) =>
      sns.sign({
        Type: 'SubscriptionConfirmation',
        TopicArn: topic,
        Token: token,
        Message: 'You have chosen to subscribe',
        SubscribeURL: `https://sns.us-east-1.amazonaws.com/?Action=ConfirmSubscription&TopicArn=${encodeURIComponent(topic)}&Token=${token}`,
      });
    const ok = await post(subscribe(TOPIC, 'tok-1'));
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json()).toEqual({ status: 'confirmed' });
    const foreign = await post(subscribe('arn:aws:sns:us-east-1:999999999999:someone-else', 'tok-2'));
    expect(foreign.statusCode).toBe(403);
    expect(foreign.json()).toMatchObject({ code: 'unexpected_topic' });
    expect(sns.confirmed).toEqual(['tok-1']);
  });

  it('a hard bounce (SignatureVersion 1) bounces the delivery once and suppresses the address; a replay changes nothing', async () => {
    const { deliveryId, messageId, subscriberId } = await sentEmail('Hard@Example.com', 'ses-hard-1');
    const signed = sns.sign(notification(bounce('ses-hard-1', 'hard@example.com', 'Permanent')), 1);
    for (let i = 0; i < 2; i++) {
      const res = await post(signed);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({ status: 'recorded', applied: 1, unknown: 0 });
    }
    expect(await deliveryState(deliveryId, messageId)).toEqual({ status: 'bounced', events: ['bounced'], stats: { delivered: 0, bounced: 1, complained: 0 } });
    expect(await suppression('hard@example.com')).toMatchObject({ reason: 'bounced', source: 'provider' });
    expect(await emailStatus(subscriberId)).toBe('bounced');
    const [logged] = await query<{ detail: Record<string, unknown>; source_event_id: string }>(`SELECT detail, source_event_id FROM delivery_events WHERE delivery_id = $1`, [deliveryId]);
    expect(logged).toEqual({ detail: expect.objectContaining({ provider: 'ses', bounceType: 'Permanent' }), source_event_id: signed.MessageId });
  });

  it('a complaint (SignatureVersion 2) after a delivery: complained, counted once each, suppressed for good', async () => {
    const { deliveryId, messageId, subscriberId } = await sentEmail('spam@example.com', 'ses-complaint-1');
    const delivered = await post(sns.sign(notification({ notificationType: 'Delivery', mail: { messageId: 'ses-complaint-1' }, delivery: { timestamp: new Date().toISOString() } }), 2));
    expect(delivered.json()).toMatchObject({ status: 'recorded', applied: 1 });
    const complaint = { eventType: 'Complaint', mail: { messageId: 'ses-complaint-1' }, complaint: { complainedRecipients: [{ emailAddress: 'spam@example.com' }], complaintFeedbackType: 'abuse' } };
    expect((await post(sns.sign(notification(complaint), 2))).statusCode).toBe(200);
    expect((await post(sns.sign(notification(complaint), 2))).statusCode).toBe(200);
    expect(await deliveryState(deliveryId, messageId)).toEqual({ status: 'complained', events: ['complained', 'delivered'], stats: { delivered: 1, bounced: 0, complained: 1 } });
    expect(await suppression('spam@example.com')).toMatchObject({ reason: 'complained' });
    expect(await emailStatus(subscriberId)).toBe('complained');
  });

  it('logs every Open and Click notification, a replayed one once; only the first of each is counted', async () => {
    const { deliveryId, messageId } = await sentEmail('reader@example.com', 'ses-engaged-1');
    const mail = { messageId: 'ses-engaged-1', timestamp: new Date(Date.now() - 3600_000).toISOString() };
    const open = (minutes: number) => ({ eventType: 'Open', mail, open: { timestamp: new Date(Date.now() - minutes * 60_000).toISOString(), userAgent: 'Mozilla/5.0 (iPhone)', ipAddress: '192.0.2.7' } });
    const click = (link: string) => ({ eventType: 'Click', mail, click: { timestamp: new Date().toISOString(), link, userAgent: 'Mozilla/5.0 (iPhone)', ipAddress: '192.0.2.7' } });
    const notifications = [open(30), open(20), click('https://shop.example/a'), click('https://shop.example/b')].map((m) => sns.sign(notification(m)));
    for (const signed of [...notifications, ...notifications]) expect((await post(signed)).json()).toEqual({ status: 'recorded', applied: 1, unknown: 0 });
    // SNS delivers a notification again, concurrently with itself.
    await Promise.all([post(notifications[1]!), post(notifications[1]!), post(notifications[3]!), post(notifications[3]!)]);

    const log = await query<{ type: string; repeat: boolean; source_event_id: string | null }>(
      `SELECT type, repeat, source_event_id FROM delivery_events WHERE delivery_id = $1 ORDER BY type, id`,
      [deliveryId],
    );
    expect(log).toEqual([
      { type: 'delivered', repeat: false, source_event_id: null },
      { type: 'opened', repeat: false, source_event_id: notifications[0]!.MessageId },
      { type: 'opened', repeat: true, source_event_id: notifications[1]!.MessageId },
      { type: 'clicked', repeat: false, source_event_id: notifications[2]!.MessageId },
      { type: 'clicked', repeat: true, source_event_id: notifications[3]!.MessageId },
    ]);
    expect((await query(`SELECT delivered, opened, clicked FROM message_stats WHERE message_id = $1`, [messageId]))[0]).toEqual({ delivered: 1, opened: 1, clicked: 1 });
    expect((await deliveryState(deliveryId, messageId)).status).toBe('clicked');
  });

  it("flags SES's opens and clicks that look like machines by Herald's rules: Apple's proxy, a scanner — not a person's click as the mail arrives", async () => {
    const { deliveryId } = await sentEmail('flagged@example.com', 'ses-flagged-1');
    const sent = new Date(Date.now() - 60_000);
    const mail = { messageId: 'ses-flagged-1', timestamp: sent.toISOString() };
    const later = (ms: number) => new Date(sent.getTime() + ms).toISOString();
    const events = [
      { eventType: 'Open', mail, open: { timestamp: later(30_000), userAgent: 'Mozilla/5.0', ipAddress: '17.58.1.2' } },
      { eventType: 'Open', mail, open: { timestamp: later(40_000), userAgent: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X)', ipAddress: '192.0.2.7' } },
      { eventType: 'Click', mail, click: { timestamp: later(2_000), link: 'https://shop.example/a', userAgent: 'Mozilla/5.0 (iPhone)', ipAddress: '192.0.2.7' } },
      { eventType: 'Click', mail, click: { timestamp: later(50_000), link: 'https://shop.example/a', userAgent: 'Mimecast URL Protect', ipAddress: '192.0.2.8' } },
    ];
    for (const event of events) await post(sns.sign(notification(event)));
    const details = await query<{ type: string; machine: string[] | null }>(
      `SELECT type, detail->'machine' AS machine FROM delivery_events WHERE delivery_id = $1 AND type IN ('opened', 'clicked') ORDER BY occurred_at`,
      [deliveryId],
    );
    expect(details).toEqual([
      { type: 'clicked', machine: null },
      { type: 'opened', machine: ['apple_mpp'] },
      { type: 'opened', machine: null },
      { type: 'clicked', machine: ['scanner_user_agent'] },
    ]);
  });

  it('three soft bounces within a week make the address a hard bounce; two do not', async () => {
    const first = await sentEmail('full@example.com', 'ses-soft-1');
    await sentEmail('full@example.com', 'ses-soft-2', first.subscriberId);
    const third = await sentEmail('full@example.com', 'ses-soft-3', first.subscriberId);
    const soft = ['ses-soft-1', 'ses-soft-2'].map((id) => sns.sign(notification(bounce(id, 'full@example.com', 'Transient'))));
    for (const signed of soft) expect((await post(signed)).statusCode).toBe(200);
    // Soft bounces are counted per delivery: a replayed one, or another of the same delivery, is not a third.
    await post(soft[1]!);
    await post(sns.sign(notification(bounce('ses-soft-2', 'full@example.com', 'Transient'))));
    expect(await suppression('full@example.com')).toBeUndefined();
    expect(await emailStatus(first.subscriberId)).toBe('active');
    await post(sns.sign(notification(bounce('ses-soft-3', 'full@example.com', 'Transient'))));
    expect(await suppression('full@example.com')).toMatchObject({ reason: 'bounced', source: 'provider' });
    // A soft bounce moves no delivery status and no counter.
    expect(await deliveryState(third.deliveryId, third.messageId)).toEqual({ status: 'sent', events: ['soft_bounced'], stats: { delivered: 0, bounced: 0, complained: 0 } });
  });

  it.each([
    ['an altered message', (m: Record<string, string>) => ({ ...m, Message: m.Message!.replace('Permanent', 'Transient') }), 'bad_signature'],
    ['a signature of another message', (m: Record<string, string>) => ({ ...m, Signature: sns.sign(notification({ other: true })).Signature! }), 'bad_signature'],
    ['no signature', (m: Record<string, string>) => ({ ...m, Signature: '' }), 'bad_signature'],
    ['a certificate off the SNS host', (m: Record<string, string>) => ({ ...m, SigningCertURL: m.SigningCertURL!.replace('amazonaws.com', 'amazonaws.com.evil.example') }), 'bad_signature'],
    ['a certificate on S3', (m: Record<string, string>) => ({ ...m, SigningCertURL: m.SigningCertURL!.replace(/sns\.[^/]+/, 's3.amazonaws.com') }), 'bad_signature'],
    ['an unknown signature version', (m: Record<string, string>) => ({ ...m, SignatureVersion: '3' }), 'bad_signature'],
  ])('refuses %s (403) and records nothing', async (_name, tamper, code) => {
    const sesId = `ses-forged-${newId('msg')}`;
    const { deliveryId, messageId } = await sentEmail(`forged-${sesId.slice(-6)}@example.com`, sesId);
    const res = await post(tamper(sns.sign(notification(bounce(sesId, 'x@example.com', 'Permanent')))));
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ code });
    expect(await deliveryState(deliveryId, messageId)).toEqual({ status: 'sent', events: [], stats: { delivered: 0, bounced: 0, complained: 0 } });
  });

  it('refuses a genuine message of an unlisted topic, and one older than SNS_MAX_AGE', async () => {
    const { deliveryId, messageId } = await sentEmail('late@example.com', 'ses-late-1');
    const foreign = await post(sns.sign(notification(bounce('ses-late-1', 'late@example.com', 'Permanent'), { TopicArn: 'arn:aws:sns:us-east-1:999999999999:x' })));
    expect(foreign.json()).toMatchObject({ statusCode: 403, code: 'unexpected_topic' });
    const old = await post(sns.sign(notification(bounce('ses-late-1', 'late@example.com', 'Permanent'), { Timestamp: new Date(Date.now() - 2 * 3600_000).toISOString() })));
    expect(old.json()).toMatchObject({ statusCode: 403, code: 'stale_message' });
    expect(await deliveryState(deliveryId, messageId)).toMatchObject({ status: 'sent', events: [] });
    expect(await suppression('late@example.com')).toBeUndefined();
  });

  it('answers a message Herald did not send, an event it does not record, and malformed bodies', async () => {
    expect((await post(sns.sign(notification(bounce('ses-unknown', 'who@example.com', 'Permanent'))))).json()).toEqual({ status: 'recorded', applied: 0, unknown: 1 });
    expect((await post(sns.sign(notification({ eventType: 'Send', mail: { messageId: 'ses-x' } })))).json()).toEqual({ status: 'ignored' });
    expect((await post(sns.sign({ Type: 'UnsubscribeConfirmation', TopicArn: TOPIC, Token: 't', Message: 'bye', SubscribeURL: 'https://sns.us-east-1.amazonaws.com/?x' }))).json()).toEqual({ status: 'ignored' });
    const garbage = await t.app.inject({ method: 'POST', url: '/email/ses-webhook', headers: { 'content-type': 'text/plain' }, payload: '{not json' });
    expect(garbage.statusCode).toBe(400);
    expect((await post({ Type: 'Notification' })).statusCode).toBe(403);
  });
});
