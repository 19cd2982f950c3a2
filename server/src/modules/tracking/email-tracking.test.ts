// Email tracking through HTTP: every signed open and click logged, the first of each counted once, forged links
// refused, likely machines flagged.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWithTenant, type Tenant } from '../../../test/fixtures.js';
import type { TestApp } from '../../../test/harness.js';
import { newId } from '../../shared/ids.js';

let t: TestApp;
let tenant: Tenant;

const query = async <T = Record<string, unknown>>(text: string, params: unknown[] = []) => (await t.database.pool.query(text, params)).rows as T[];

beforeAll(async () => {
  ({ t, tenant } = await startWithTenant());
});
afterAll(() => t.close());

const content = { subject: 'Hi', html: '<p>Hi</p>', from: { email: 'news@example.com' } };

/** An email message (of a campaign, when given) with its counters, and one sent delivery to a new subscriber. */
async function sentEmail(options: { campaignId?: string; sentSecondsAgo?: number } = {}) {
  const messageId = newId('msg');
  await query(
    `INSERT INTO messages (id, project_id, channel, source, campaign_id, sandbox, content, options) VALUES ($1, $2, 'email', $3, $4, false, $5, '{}')`,
    [messageId, tenant.projectId, options.campaignId ? 'campaign' : 'transactional', options.campaignId ?? null, content],
  );
  await query(`INSERT INTO message_stats (message_id, queued, sent) VALUES ($1, 1, 1)`, [messageId]);
  const subscriberId = newId('sub');
  const address = `reader-${randomBytes(4).toString('hex')}@example.org`;
  await query(`INSERT INTO subscribers (id, project_id, token, email) VALUES ($1, $2, $3, $4)`, [
    subscriberId,
    tenant.projectId,
    randomBytes(12).toString('hex'),
    address,
  ]);
  const [row] = await query<{ id: number }>(
    `INSERT INTO deliveries (project_id, message_id, subscriber_id, channel, destination, status, attempts, sent_at)
     VALUES ($1, $2, $3, 'email', $4, 'sent', 1, now() - make_interval(secs => $5)) RETURNING id::float8 AS id`,
    [tenant.projectId, messageId, subscriberId, address, options.sentSecondsAgo ?? 60],
  );
  const linked = { id: options.campaignId ?? messageId, subscriberId };
  return { deliveryId: row!.id, messageId, subscriberId, linked };
}

const path = (url: string) => url.slice(t.config.publicUrl.length);
const get = (url: string, headers: Record<string, string> = { 'user-agent': BROWSER }, method: 'GET' | 'HEAD' = 'GET') =>
  t.app.inject({ method, url: path(url), headers });
const BROWSER = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15';

const eventsOf = (deliveryId: number) =>
  query<{ type: string; detail: Record<string, unknown> | null; repeat: boolean }>(
    `SELECT type, detail, repeat FROM delivery_events WHERE delivery_id = $1 ORDER BY type, id`,
    [deliveryId],
  );
const stateOf = async (deliveryId: number, messageId: string) => ({
  delivery: (await query(`SELECT status, opened_at IS NOT NULL AS opened, clicked_at IS NOT NULL AS clicked FROM deliveries WHERE id = $1`, [deliveryId]))[0],
  stats: (await query(`SELECT delivered, opened, clicked FROM message_stats WHERE message_id = $1`, [messageId]))[0],
});

function expectRefused(res: Awaited<ReturnType<typeof get>>) {
  expect(res.statusCode).toBe(400);
  expect(res.headers.location).toBeUndefined();
  expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
  expect(res.body).toContain('This link is not valid');
}

describe('GET /e/click/:campaignId/:subscriberId', () => {
  const target = 'https://shop.example.com/sale?utm_source=mail&ref=a%20b#top';

  it('redirects to the signed target and logs every click; only the first moves the delivery and its counter', async () => {
    const email = await sentEmail();
    const url = t.services.emailLinks.clickUrl(email.linked, target);
    const first = await get(url);
    expect(first.statusCode).toBe(302);
    expect(first.headers.location).toBe(target);
    expect(first.headers['cache-control']).toBe('no-store');
    const state = await stateOf(email.deliveryId, email.messageId);
    expect(state).toEqual({ delivery: { status: 'clicked', opened: false, clicked: true }, stats: { delivered: 1, opened: 0, clicked: 1 } });
    const other = 'https://shop.example.com/other';
    for (const again of [url, t.services.emailLinks.clickUrl(email.linked, other)]) {
      const res = await get(again);
      expect(res.statusCode).toBe(302);
    }
    expect(await stateOf(email.deliveryId, email.messageId)).toEqual(state);
    expect(await eventsOf(email.deliveryId)).toEqual([
      { type: 'delivered', detail: null, repeat: false },
      { type: 'clicked', detail: { url: target, userAgent: BROWSER }, repeat: false },
      { type: 'clicked', detail: { url: target, userAgent: BROWSER }, repeat: true },
      { type: 'clicked', detail: { url: other, userAgent: BROWSER }, repeat: true },
    ]);
  });

  it("names campaign mail by its campaign, resolved to the campaign's message", async () => {
    const email = await sentEmail({ campaignId: `cmp_${randomBytes(8).toString('hex')}` });
    const res = await get(t.services.emailLinks.clickUrl(email.linked, target));
    expect(res.headers.location).toBe(target);
    expect((await stateOf(email.deliveryId, email.messageId)).stats).toEqual({ delivered: 1, opened: 0, clicked: 1 });
  });

  it('never redirects where the signature does not point: another target, subscriber or campaign, an altered or missing signature', async () => {
    const email = await sentEmail();
    const other = await sentEmail();
    const url = new URL(t.services.emailLinks.clickUrl(email.linked, target));
    const signature = url.searchParams.get('s')!;
    const variants = [
      `/e/click/${email.linked.id}/${email.subscriberId}?u=${encodeURIComponent('https://evil.example.net/')}&s=${signature}`,
      `/e/click/${email.linked.id}/${email.subscriberId}?u=${encodeURIComponent(`${target}&x=1`)}&s=${signature}`,
      `/e/click/${email.linked.id}/${other.subscriberId}?u=${encodeURIComponent(target)}&s=${signature}`,
      `/e/click/${other.linked.id}/${email.subscriberId}?u=${encodeURIComponent(target)}&s=${signature}`,
      `/e/click/${email.linked.id}/${email.subscriberId}?u=${encodeURIComponent(target)}&s=${signature.slice(0, -2)}AA`,
      `/e/click/${email.linked.id}/${email.subscriberId}?u=${encodeURIComponent(target)}`,
      `/e/click/${email.linked.id}/${email.subscriberId}?s=${signature}`,
    ];
    for (const variant of variants) expectRefused(await t.app.inject({ method: 'GET', url: variant }));
    expect(await eventsOf(email.deliveryId)).toEqual([]);
    expect(await eventsOf(other.deliveryId)).toEqual([]);
  });

  it('flags likely machine clicks: a HEAD request, a scanner, no agent; a person who clicks a second after the send is a person', async () => {
    const cases: [Record<string, string>, 'GET' | 'HEAD', number, string[] | undefined][] = [
      [{ 'user-agent': BROWSER }, 'HEAD', 60, ['head_request']],
      [{ 'user-agent': 'Mozilla/5.0 (compatible; Barracuda Sentinel)' }, 'GET', 60, ['scanner_user_agent']],
      [{ 'user-agent': '' }, 'GET', 60, ['no_user_agent']],
      [{ 'user-agent': BROWSER }, 'GET', 1, undefined],
    ];
    for (const [headers, method, sentSecondsAgo, machine] of cases) {
      const email = await sentEmail({ sentSecondsAgo });
      const res = await get(t.services.emailLinks.clickUrl(email.linked, target), headers, method);
      expect(res.statusCode).toBe(302);
      const [, clicked] = await eventsOf(email.deliveryId);
      expect(clicked).toEqual({ type: 'clicked', detail: expect.objectContaining({ url: target }), repeat: false });
      expect(clicked!.detail!.machine).toEqual(machine);
    }
    const human = await sentEmail({ sentSecondsAgo: 1 });
    await get(t.services.emailLinks.clickUrl(human.linked, target));
    const [counted] = await query(
      `SELECT count(DISTINCT delivery_id)::int AS clicked FROM delivery_events WHERE delivery_id = $1 AND type = 'clicked' AND NOT detail ? 'machine'`,
      [human.deliveryId],
    );
    expect(counted).toEqual({ clicked: 1 });
  });

  it('flags a burst: every click of a delivery following a third distinct link within a second, the first ones too; a person clicking the same link again is no burst', async () => {
    const scanned = await sentEmail();
    const links = ['https://shop.example.com/a', 'https://shop.example.com/b', 'https://shop.example.com/c'];
    // A gateway follows every link of the mail at once, with a browser's agent.
    await Promise.all(links.map((link) => get(t.services.emailLinks.clickUrl(scanned.linked, link))));
    const clicks = (await eventsOf(scanned.deliveryId)).filter((e) => e.type === 'clicked');
    expect(clicks.map((e) => e.detail!.machine)).toEqual([['link_burst'], ['link_burst'], ['link_burst']]);

    const reader = await sentEmail();
    for (const link of [links[0]!, links[0]!, links[1]!, links[0]!]) await get(t.services.emailLinks.clickUrl(reader.linked, link));
    const own = (await eventsOf(reader.deliveryId)).filter((e) => e.type === 'clicked');
    expect(own.map((e) => e.detail!.machine)).toEqual([undefined, undefined, undefined, undefined]);
  });


  it('redirects to a target with characters a header cannot carry, percent-encoded as a browser would send them', async () => {
    const email = await sentEmail();
    const res = await get(t.services.emailLinks.clickUrl(email.linked, 'https://exämple.com/straße?q=größe 2#teil'));
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toBe('https://ex%C3%A4mple.com/stra%C3%9Fe?q=gr%C3%B6%C3%9Fe%202#teil');
  });

  it("still takes a reader where a link of a deleted subscriber's mail goes, recording nothing", async () => {
    const email = await sentEmail();
    await query(`DELETE FROM subscribers WHERE id = $1`, [email.subscriberId]);
    const res = await get(t.services.emailLinks.clickUrl(email.linked, target));
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toBe(target);
    expect(await query(`SELECT 1 FROM delivery_events WHERE delivery_id = $1`, [email.deliveryId])).toEqual([]);
  });
});

describe('GET /e/open/:campaignId/:subscriberId', () => {
  it('answers a transparent 1×1 GIF, never cached, and logs every open; only the first moves the delivery and its counter', async () => {
    const email = await sentEmail();
    const url = t.services.emailLinks.openUrl(email.linked);
    for (let i = 0; i < 2; i++) {
      const res = await get(url);
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('image/gif');
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.rawPayload.subarray(0, 6).toString('latin1')).toBe('GIF89a');
      expect(res.rawPayload.readUInt16LE(6)).toBe(1);
      expect(res.rawPayload.readUInt16LE(8)).toBe(1);
    }
    expect(await stateOf(email.deliveryId, email.messageId)).toEqual({
      delivery: { status: 'opened', opened: true, clicked: false },
      stats: { delivered: 1, opened: 1, clicked: 0 },
    });
    expect(await eventsOf(email.deliveryId)).toEqual([
      { type: 'delivered', detail: null, repeat: false },
      { type: 'opened', detail: { userAgent: BROWSER }, repeat: false },
      { type: 'opened', detail: { userAgent: BROWSER }, repeat: true },
    ]);
  });

  it('counts first opens racing one another once, and logs each of them', async () => {
    const email = await sentEmail();
    const url = t.services.emailLinks.openUrl(email.linked);
    const answers = await Promise.all(Array.from({ length: 10 }, () => get(url)));
    expect(answers.map((res) => res.statusCode)).toEqual(Array(10).fill(200));
    expect((await stateOf(email.deliveryId, email.messageId)).stats).toEqual({ delivered: 1, opened: 1, clicked: 0 });
    const opens = (await eventsOf(email.deliveryId)).filter((e) => e.type === 'opened');
    expect({ opens: opens.length, firsts: opens.filter((e) => !e.repeat).length }).toEqual({ opens: 10, firsts: 1 });
  });

  it("flags Apple Mail Privacy Protection's proxy fetches; a person's open after one is logged unflagged", async () => {
    const email = await sentEmail();
    const url = t.services.emailLinks.openUrl(email.linked);
    await get(url, { 'user-agent': 'Mozilla/5.0' });
    await get(url);
    expect(await eventsOf(email.deliveryId)).toEqual([
      { type: 'delivered', detail: null, repeat: false },
      { type: 'opened', detail: { userAgent: 'Mozilla/5.0', machine: ['apple_mpp'] }, repeat: false },
      { type: 'opened', detail: { userAgent: BROWSER }, repeat: true },
    ]);
    // The counter counts the proxy's open; the log tells the delivery was opened by a person too (docs/CONTEXT.md).
    expect((await stateOf(email.deliveryId, email.messageId)).stats).toEqual({ delivered: 1, opened: 1, clicked: 0 });
    const human = await query(
      `SELECT count(DISTINCT delivery_id)::int AS opened FROM delivery_events WHERE delivery_id = $1 AND type = 'opened' AND NOT detail ? 'machine'`,
      [email.deliveryId],
    );
    expect(human).toEqual([{ opened: 1 }]);
  });

  it('refuses a pixel whose signature does not hold, recording nothing', async () => {
    const email = await sentEmail();
    const other = await sentEmail();
    const signature = new URL(t.services.emailLinks.openUrl(email.linked)).searchParams.get('s')!;
    expectRefused(await t.app.inject({ method: 'GET', url: `/e/open/${email.linked.id}/${other.subscriberId}?s=${signature}` }));
    expectRefused(await t.app.inject({ method: 'GET', url: `/e/open/${email.linked.id}/${email.subscriberId}` }));
    // A click's signature is not an open's.
    const click = new URL(t.services.emailLinks.clickUrl(email.linked, 'https://example.com/')).searchParams.get('s')!;
    expectRefused(await t.app.inject({ method: 'GET', url: `/e/open/${email.linked.id}/${email.subscriberId}?s=${click}` }));
    expect(await eventsOf(email.deliveryId)).toEqual([]);
    expect(await eventsOf(other.deliveryId)).toEqual([]);
  });
});
