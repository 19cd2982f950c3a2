// The one recorder of what happens after a send: every open and click logged, every other event once and no replay
// twice, state moved forward only, counters exact, whatever the concurrency and the order the reports arrive in.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTenant, type Tenant } from '../../test/fixtures.js';
import { startTestApp, type TestApp } from '../../test/harness.js';
import { newId } from '../shared/ids.js';
import { recordDeliveryEvents, type ReportedEvent } from './delivery-events.repository.js';
import { recordOutcomes } from './delivery.repository.js';

let t: TestApp;
let tenant: Tenant;
const query = async <T>(text: string, params: unknown[] = []) => (await t.database.pool.query(text, params)).rows as T[];

beforeAll(async () => {
  t = await startTestApp();
  tenant = await createTenant(t);
});
afterAll(() => t.close());

/** A sent email-channel message to `n` recipients; returns the message id and its delivery ids. */
async function sent(n: number, status = 'sent'): Promise<{ messageId: string; ids: number[] }> {
  const messageId = newId('msg');
  await query(`INSERT INTO messages (id, project_id, channel, source, sandbox, content, options) VALUES ($1, $2, 'email', 'campaign', false, '{}', '{}')`, [
    messageId,
    tenant.projectId,
  ]);
  await query(`INSERT INTO message_stats (message_id, queued, sent) VALUES ($1, $2, $2)`, [messageId, n]);
  const ids: number[] = [];
  for (let i = 0; i < n; i++) {
    const subscriberId = newId('sub');
    await query(`INSERT INTO subscribers (id, project_id, token, email) VALUES ($1, $2, $3, $4)`, [subscriberId, tenant.projectId, randomBytes(8).toString('hex'), `r${i}@example.com`]);
    const [row] = await query<{ id: number }>(
      `INSERT INTO deliveries (project_id, message_id, subscriber_id, channel, destination, status, sent_at) VALUES ($1, $2, $3, 'email', $4, $5, now()) RETURNING id::float8 AS id`,
      [tenant.projectId, messageId, subscriberId, `r${i}@example.com`, status],
    );
    ids.push(row!.id);
  }
  return { messageId, ids };
}

const stats = async (messageId: string) =>
  (
    await query(
      `SELECT delivered, opened, clicked, dismissed, unsubscribed, complained, bounced FROM message_stats WHERE message_id = $1`,
      [messageId],
    )
  )[0];
const statusOf = async (id: number) => (await query<{ status: string }>(`SELECT status FROM deliveries WHERE id = $1`, [id]))[0]!.status;
const at = (iso: string) => new Date(iso);

it("logs a device's report once, with the delivered it implies, and counts it once however often it is reported", async () => {
  const { messageId, ids } = await sent(1);
  const click: ReportedEvent = { deliveryId: ids[0]!, type: 'clicked', occurredAt: at('2026-11-20T10:00:00Z'), detail: { url: 'https://shop.example/a' } };
  await recordDeliveryEvents(t.database.db, [click]);
  await recordDeliveryEvents(t.database.db, [click, { ...click, occurredAt: at('2026-11-20T11:00:00Z') }]);
  await Promise.all(Array.from({ length: 8 }, () => recordDeliveryEvents(t.database.db, [click])));

  expect(await query(`SELECT type, occurred_at, detail FROM delivery_events WHERE delivery_id = $1 ORDER BY type`, [ids[0]])).toEqual([
    { type: 'delivered', occurred_at: at('2026-11-20T10:00:00Z'), detail: null },
    { type: 'clicked', occurred_at: at('2026-11-20T10:00:00Z'), detail: { url: 'https://shop.example/a' } },
  ]);
  expect(await stats(messageId)).toEqual({ delivered: 1, opened: 0, clicked: 1, dismissed: 0, unsubscribed: 0, complained: 0, bounced: 0 });
  expect(await statusOf(ids[0]!)).toBe('clicked');
});

it('moves the status forward only, whatever order the reports arrive in, and counts each kind', async () => {
  const { messageId, ids } = await sent(3);
  const [a, b, c] = ids as [number, number, number];
  const now = new Date();
  // a: complained, then a late open; b: bounced; c: opened then unsubscribed.
  await recordDeliveryEvents(t.database.db, [
    { deliveryId: a, type: 'complained', occurredAt: now },
    { deliveryId: b, type: 'bounced', occurredAt: now },
    { deliveryId: c, type: 'opened', occurredAt: now },
  ]);
  await recordDeliveryEvents(t.database.db, [
    { deliveryId: a, type: 'opened', occurredAt: now },
    { deliveryId: c, type: 'unsubscribed', occurredAt: now },
  ]);
  expect([await statusOf(a), await statusOf(b), await statusOf(c)]).toEqual(['complained', 'bounced', 'unsubscribed']);
  // A bounce implies no delivery; every other event does.
  expect(await stats(messageId)).toEqual({ delivered: 2, opened: 2, clicked: 0, dismissed: 0, unsubscribed: 1, complained: 1, bounced: 1 });
});

it('keeps a failed or suppressed status, gives a row still sending its timestamps only, and reports which deliveries exist', async () => {
  const failed = await sent(1, 'failed');
  const sending = await sent(1, 'sending');
  const found = await recordDeliveryEvents(t.database.db, [
    { deliveryId: failed.ids[0]!, type: 'opened', occurredAt: new Date() },
    { deliveryId: sending.ids[0]!, type: 'opened', occurredAt: new Date() },
    { deliveryId: 999_999_999, type: 'opened', occurredAt: new Date() },
  ]);
  expect([...found].sort()).toEqual([failed.ids[0], sending.ids[0]].sort());
  expect(await statusOf(failed.ids[0]!)).toBe('failed');
  expect(await statusOf(sending.ids[0]!)).toBe('sending');
  expect(await query(`SELECT opened_at IS NOT NULL AS opened FROM deliveries WHERE id = $1`, [sending.ids[0]])).toEqual([{ opened: true }]);
  // Recording the send then promotes it from its timestamps.
  await query(`UPDATE deliveries SET attempts = 1 WHERE id = $1`, [sending.ids[0]]);
  await recordOutcomes(t.database.db, [{ id: sending.ids[0]!, fence: 1, attempts: 1, status: 'sent', reason: null, providerCode: 'accepted', delayMs: 0 }]);
  expect(await statusOf(sending.ids[0]!)).toBe('opened');
});

const logOf = (id: number) =>
  query<{ type: string; repeat: boolean; source_event_id: string | null; occurred_at: Date }>(
    `SELECT type, repeat, source_event_id, occurred_at FROM delivery_events WHERE delivery_id = $1 ORDER BY type, occurred_at, id`,
    [id],
  );
const firstsOf = async (id: number) => (await query<{ opened_at: Date | null; clicked_at: Date | null }>(`SELECT opened_at, clicked_at FROM deliveries WHERE id = $1`, [id]))[0];

it('logs every open and click reported as an occurrence of its own; only the first of each moves state and counters, however many race', async () => {
  const { messageId, ids } = await sent(1);
  const id = ids[0]!;
  const open = (iso: string): ReportedEvent => ({ deliveryId: id, type: 'opened', occurredAt: at(iso), logRepeat: true });
  await recordDeliveryEvents(t.database.db, [open('2026-11-20T10:00:00Z')]);
  await Promise.all(Array.from({ length: 8 }, (_, i) => recordDeliveryEvents(t.database.db, [open(`2026-11-20T10:0${i + 1}:00Z`)])));
  // Two in one batch: both logged, neither first.
  await recordDeliveryEvents(t.database.db, [open('2026-11-20T11:00:00Z'), open('2026-11-20T11:00:00Z')]);

  const log = await logOf(id);
  expect(log.filter((e) => e.type === 'delivered')).toEqual([{ type: 'delivered', repeat: false, source_event_id: null, occurred_at: at('2026-11-20T10:00:00Z') }]);
  const opens = log.filter((e) => e.type === 'opened');
  expect(opens).toHaveLength(11);
  expect(opens.filter((e) => !e.repeat)).toEqual([{ type: 'opened', repeat: false, source_event_id: null, occurred_at: at('2026-11-20T10:00:00Z') }]);
  expect(await stats(messageId)).toEqual({ delivered: 1, opened: 1, clicked: 0, dismissed: 0, unsubscribed: 0, complained: 0, bounced: 0 });
  expect(await firstsOf(id)).toEqual({ opened_at: at('2026-11-20T10:00:00Z'), clicked_at: null });

  // The first opens of many deliveries racing one another: each counted once.
  const many = await sent(4);
  await Promise.all(
    Array.from({ length: 6 }, () => recordDeliveryEvents(t.database.db, many.ids.map((deliveryId) => ({ deliveryId, type: 'opened' as const, occurredAt: new Date(), logRepeat: true })))),
  );
  expect(await stats(many.messageId)).toMatchObject({ delivered: 4, opened: 4 });
  expect(await query(`SELECT count(*)::int AS opens, count(*) FILTER (WHERE NOT repeat)::int AS firsts FROM delivery_events WHERE delivery_id = ANY($1) AND type = 'opened'`, [many.ids])).toEqual([
    { opens: 24, firsts: 4 },
  ]);
});

it("logs a reporter's event once: a replayed provider event adds nothing, whether it was logged first or as a repeat", async () => {
  const { messageId, ids } = await sent(1);
  const id = ids[0]!;
  const click = (sourceEventId: string, iso: string): ReportedEvent => ({
    deliveryId: id,
    type: 'clicked',
    occurredAt: at(iso),
    detail: { url: 'https://shop.example/a' },
    logRepeat: true,
    sourceEventId,
  });
  await recordDeliveryEvents(t.database.db, [click('sns-1', '2026-11-20T10:00:00Z')]);
  await recordDeliveryEvents(t.database.db, [click('sns-2', '2026-11-20T10:05:00Z'), click('sns-2', '2026-11-20T10:05:00Z')]);
  for (let i = 0; i < 2; i++) {
    await Promise.all([recordDeliveryEvents(t.database.db, [click('sns-1', '2026-11-20T10:00:00Z')]), recordDeliveryEvents(t.database.db, [click('sns-2', '2026-11-20T10:05:00Z')])]);
  }
  expect((await logOf(id)).filter((e) => e.type === 'clicked')).toEqual([
    { type: 'clicked', repeat: false, source_event_id: 'sns-1', occurred_at: at('2026-11-20T10:00:00Z') },
    { type: 'clicked', repeat: true, source_event_id: 'sns-2', occurred_at: at('2026-11-20T10:05:00Z') },
  ]);
  expect(await stats(messageId)).toMatchObject({ delivered: 1, clicked: 1 });
});

it('logs the events that happen once only once, even reported as occurrences, and soft bounces once per delivery', async () => {
  const { messageId, ids } = await sent(2);
  const [a, b] = ids as [number, number];
  for (let i = 0; i < 3; i++) {
    await recordDeliveryEvents(t.database.db, [
      { deliveryId: a, type: 'delivered', occurredAt: new Date(), logRepeat: true, sourceEventId: `delivery-${i}` },
      { deliveryId: a, type: 'unsubscribed', occurredAt: new Date(), logRepeat: true },
      { deliveryId: b, type: 'soft_bounced', occurredAt: new Date(), logRepeat: true, sourceEventId: `bounce-${i}` },
    ]);
  }
  expect((await logOf(a)).map((e) => [e.type, e.repeat])).toEqual([
    ['delivered', false],
    ['unsubscribed', false],
  ]);
  expect((await logOf(b)).map((e) => [e.type, e.repeat])).toEqual([['soft_bounced', false]]);
  expect(await stats(messageId)).toMatchObject({ delivered: 1, unsubscribed: 1, bounced: 0 });
  // The log refuses a repeat of an event that happens once.
  await expect(
    query(`INSERT INTO delivery_events (delivery_id, project_id, message_id, type, occurred_at, repeat) VALUES ($1, $2, $3, 'delivered', now(), true)`, [
      a,
      tenant.projectId,
      messageId,
    ]),
  ).rejects.toThrow(/delivery_events_repeat_check/);
});
