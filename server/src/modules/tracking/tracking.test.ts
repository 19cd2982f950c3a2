// Tracking endpoints through HTTP: signed tokens, idempotent forward-only transitions, CORS for service workers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant, CHROME_UA, pushSubscription, type Tenant } from '../../../test/fixtures.js';
import { startTestApp, type TestApp } from '../../../test/harness.js';
import { createTrackingTokens } from '../../delivery/index.js';

let t: TestApp;
let tenant: Tenant;
let messageId: string;

const query = async <T = Record<string, unknown>>(text: string, params: unknown[] = []) =>
  (await t.database.pool.query(text, params)).rows as T[];

const insertMessage = (id: string) =>
  query(
    `INSERT INTO messages (id, project_id, channel, source, sandbox, content, options)
     VALUES ($1, $2, 'push', 'transactional', false, '{"title":"a","body":"b"}', '{"ttlSeconds":60,"urgency":"normal"}')`,
    [id, tenant.projectId],
  );

beforeAll(async () => {
  t = await startTestApp();
  tenant = await createTenant(t);
  messageId = `msg_tracking_${Date.now()}`;
  await insertMessage(messageId);
});
afterAll(() => t.close());

/** A delivery row in `status` (to a subscriber of its own: one delivery per message and subscriber), and its tracking path. */
async function delivery(status: string, message = messageId): Promise<{ id: number; path: string }> {
  const subscriber = await t.app.inject({
    method: 'POST',
    url: '/subscribers',
    headers: tenant.live,
    payload: { projectId: tenant.projectId, ...pushSubscription(), userAgent: CHROME_UA },
  });
  const [row] = await query<{ id: string }>(
    `INSERT INTO deliveries (project_id, message_id, subscriber_id, status, attempts, sent_at)
     VALUES ($1, $2, $3, $4::delivery_status, 1, CASE WHEN $4::text IN ('sent', 'delivered', 'clicked', 'dismissed') THEN now() END) RETURNING id`,
    [tenant.projectId, message, subscriber.json().id, status],
  );
  const id = Number(row!.id);
  return { id, path: `/t/${t.services.tracking.sign(id)}` };
}

const report = (path: string, event: string, headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'POST', url: `${path}/${event}`, headers });

const state = async (id: number) =>
  (await query<{ status: string; delivered_at: Date | null; clicked_at: Date | null; dismissed_at: Date | null }>(
    'SELECT status, delivered_at, clicked_at, dismissed_at FROM deliveries WHERE id = $1',
    [id],
  ))[0]!;

describe('POST /t/:token/delivered|clicked|dismissed', () => {
  it('delivered: 204, sent → delivered; a repeat changes nothing', async () => {
    const d = await delivery('sent');
    const res = await report(d.path, 'delivered');
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    const first = await state(d.id);
    expect(first).toMatchObject({ status: 'delivered', delivered_at: expect.any(Date), clicked_at: null, dismissed_at: null });

    expect((await report(d.path, 'delivered')).statusCode).toBe(204);
    expect(await state(d.id)).toEqual(first);
  });

  it('clicked: sets clicked_at and delivered_at, even without a delivered report first', async () => {
    const d = await delivery('sent');
    expect((await report(d.path, 'clicked')).statusCode).toBe(204);
    expect(await state(d.id)).toMatchObject({ status: 'clicked', delivered_at: expect.any(Date), clicked_at: expect.any(Date), dismissed_at: null });
  });

  it('the status only moves forward: a late delivered report keeps clicked; a click wins over a dismissal', async () => {
    const clicked = await delivery('sent');
    await report(clicked.path, 'clicked');
    const afterClick = await state(clicked.id);
    await report(clicked.path, 'delivered');
    await report(clicked.path, 'dismissed');
    const later = await state(clicked.id);
    expect(later).toMatchObject({
      status: 'clicked',
      delivered_at: afterClick.delivered_at,
      clicked_at: afterClick.clicked_at,
      dismissed_at: expect.any(Date),
    });

    const dismissed = await delivery('delivered');
    await report(dismissed.path, 'dismissed');
    expect((await state(dismissed.id)).status).toBe('dismissed');
    await report(dismissed.path, 'clicked');
    expect((await state(dismissed.id)).status).toBe('clicked');
  });

  it('a row still sending gets only the timestamp (recording the send promotes it later)', async () => {
    const d = await delivery('sending');
    expect((await report(d.path, 'clicked')).statusCode).toBe(204);
    expect(await state(d.id)).toMatchObject({ status: 'sending', delivered_at: expect.any(Date), clicked_at: expect.any(Date) });
  });

  it('a failed delivery keeps its status', async () => {
    const d = await delivery('failed');
    expect((await report(d.path, 'delivered')).statusCode).toBe(204);
    expect(await state(d.id)).toMatchObject({ status: 'failed', delivered_at: expect.any(Date) });
  });

  it("counts each first delivered, click and dismissal once in its message's counters; repeats add nothing", async () => {
    const counted = `msg_tracking_counted_${Date.now()}`;
    await insertMessage(counted);
    await query('INSERT INTO message_stats (message_id) VALUES ($1)', [counted]);
    const counters = async () =>
      (await query('SELECT delivered, clicked, dismissed FROM message_stats WHERE message_id = $1', [counted]))[0];
    const d = await delivery('sent', counted);
    const token = d.path.slice('/t/'.length);
    await t.services.trackingEvents.record(token, 'clicked');
    expect(await counters()).toEqual({ delivered: 1, clicked: 1, dismissed: 0 });
    await t.services.trackingEvents.record(token, 'clicked');
    expect(await counters()).toEqual({ delivered: 1, clicked: 1, dismissed: 0 });
    // A notification closes on its click: a second report is the SDK retrying it, not a second click.
    expect(await query(`SELECT type FROM delivery_events WHERE delivery_id = $1 ORDER BY type`, [d.id])).toEqual([{ type: 'delivered' }, { type: 'clicked' }]);
    await t.services.trackingEvents.record(token, 'dismissed');
    expect(await counters()).toEqual({ delivered: 1, clicked: 1, dismissed: 1 });
  });

  it('needs no credentials, and ignores any given', async () => {
    const d = await delivery('sent');
    expect((await report(d.path, 'delivered', { 'x-api-key': 'hrd_live_invalid', authorization: 'Bearer nonsense' })).statusCode).toBe(204);
  });

  const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  /** The token with its character at `at` replaced by the one whose value differs in the lowest bit. */
  const flip = (token: string, at: number) => `${token.slice(0, at)}${BASE64URL[BASE64URL.indexOf(token[at]!) ^ 1]}${token.slice(at + 1)}`;

  it.each([
    ['garbage', '/t/not-a-token'],
    ['a token signed with another secret', `/t/${createTrackingTokens('another secret').sign(1)}`],
    ['a token tampered at its first character', 0],
    ['a token tampered in its middle', 10],
    // 22 characters carry 132 bits: the last one's low 4 bits lie beyond the 16 bytes, and a decoder ignores them.
    ['a token respelled in the spare bits of its last character', 21],
  ])('%s → 404 with the error envelope', async (_name, given) => {
    const d = typeof given === 'number' ? await delivery('sent') : undefined;
    const path = d ? `/t/${flip(d.path.slice('/t/'.length), given as number)}` : (given as string);
    const res = await report(path, 'clicked');
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ statusCode: 404, code: 'not_found', message: 'Tracking link not found', requestId: expect.any(String) });
    expect(res.headers['access-control-allow-origin']).toBe('*');
    if (d) {
      expect(await state(d.id)).toMatchObject({ status: 'sent', clicked_at: null });
      expect((await report(d.path, 'clicked')).statusCode).toBe(204);
    }
  });

  it('a valid token whose delivery is gone → 404', async () => {
    const d = await delivery('sent');
    await query('DELETE FROM deliveries WHERE id = $1', [d.id]);
    expect((await report(d.path, 'delivered')).statusCode).toBe(404);
  });

  it('an unknown event → 404 route_not_found', async () => {
    const d = await delivery('sent');
    expect((await report(d.path, 'opened')).statusCode).toBe(404);
  });
});

describe('CORS', () => {
  it('allows any origin on the reports', async () => {
    const d = await delivery('sent');
    const res = await report(d.path, 'delivered', { origin: 'https://shop.example' });
    expect(res.headers['access-control-allow-origin']).toBe('*');
  });

  it('answers the preflight', async () => {
    const d = await delivery('sent');
    const res = await t.app.inject({
      method: 'OPTIONS',
      url: `${d.path}/clicked`,
      headers: { origin: 'https://shop.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
    });
    expect(res.statusCode).toBe(204);
    expect(res.headers).toMatchObject({
      'access-control-allow-origin': '*',
      'access-control-allow-methods': 'POST, OPTIONS',
      'access-control-allow-headers': 'content-type',
      'access-control-max-age': '86400',
    });
    expect((await state(d.id)).status).toBe('sent');
  });
});
