// GET /subscribers/:id/events through HTTP: an email campaign and a transactional email sent through the engine to a
// real SMTP peer, opened and clicked through the real tracking links; events newest first with repeats and machines
// flagged, what each reporter stored read back, filters, pagination, and seen only by those who may see the subscriber.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tenant } from '../../../test/fixtures.js';
import { startEmailWorld, type EmailWorld } from '../../../test/email-world.js';
import type { TestApp } from '../../../test/harness.js';
import type { SmtpPeer } from '../../../test/smtp-peer.js';
import { newId } from '../../shared/ids.js';

const DOMAIN = 'news.example.com';
const PUBLIC_URL = 'https://herald.example.com';
const BROWSER = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15';
// Apple Mail Privacy Protection's proxy fetches images with this bare agent (machine signal `apple_mpp`).
const APPLE_PROXY = 'Mozilla/5.0';

let world: EmailWorld;
let t: TestApp;
let peer: SmtpPeer;
let tenant: Tenant;
let other: Tenant;

type Headers = Record<string, string>;
const request = (method: 'GET' | 'POST' | 'PUT', url: string, headers: Headers, payload?: Record<string, unknown>) =>
  t.app.inject({ method, url, headers, ...(payload !== undefined && { payload }) });
const query = async <T = Record<string, unknown>>(text: string, values: unknown[] = []) => (await t.database.pool.query(text, values)).rows as T[];

beforeAll(async () => {
  world = await startEmailWorld({ domain: DOMAIN, tenants: 2, env: { PUBLIC_URL }, dkim: false });
  ({ t, peer } = world);
  [tenant, other] = world.tenants as [Tenant, Tenant];
});
afterAll(() => world?.close());

interface Event {
  type: string;
  occurredAt: string;
  channel: string;
  messageId: string;
  source: string;
  campaignId: string | null;
  campaignName: string | null;
  repeat: boolean;
  machine: boolean;
  url: string | null;
  bounceCode: string | null;
  diagnostic: string | null;
}
interface Events {
  data: Event[];
  page: number;
  pageSize: number;
  total: number;
}

const events = async (id: string, headers: Headers = tenant.jwt, search = '') => {
  const res = await request('GET', `/subscribers/${id}/events${search}`, headers);
  expect(res.statusCode, res.body).toBe(200);
  return res.json<Events>();
};

/** The tracking URLs of the one mail an address received: its open pixel and its first click link. */
function trackingLinks(address: string, sent: number) {
  const mails = peer.received(address);
  expect(mails).toHaveLength(sent);
  const html = mails.at(-1)!.parsed.html as string;
  const urls = [...html.matchAll(/(?:href|src)="([^"]+)"/g)].map((m) => m[1]!.replace(/&amp;/g, '&').slice(PUBLIC_URL.length));
  return { open: urls.find((u) => u.startsWith('/e/open/'))!, click: urls.find((u) => u.startsWith('/e/click/'))! };
}

async function hit(url: string, userAgent: string, expected: number) {
  const res = await t.app.inject({ method: 'GET', url, headers: { 'user-agent': userAgent } });
  expect(res.statusCode, res.body).toBe(expected);
  // Each hit its own instant, so "newest first" has one answer.
  await new Promise((resolve) => setTimeout(resolve, 5));
}

describe('GET /subscribers/:id/events', () => {
  it('lists every open and click of what was sent, newest first: repeats and likely machines flagged, the URL clicked, the campaign named', async () => {
    const address = `reader-${Date.now()}@example.org`;
    const contact = await request('POST', '/contacts', tenant.live, { projectId: tenant.projectId, email: address, tags: ['events'] });
    expect(contact.statusCode, contact.body).toBe(201);
    const subscriberId = contact.json<{ id: string }>().id;
    expect(await events(subscriberId)).toEqual({ data: [], page: 1, pageSize: 20, total: 0 });

    const created = await request('POST', '/email-campaigns', tenant.jwt, {
      name: 'Spring letter',
      projectId: tenant.projectId,
      content: {
        subject: 'Spring',
        html: '<p>See <a href="https://shop.example.com/sale?ref=mail">the sale</a>.</p>',
        from: { email: `hello@${DOMAIN}` },
      },
      segment: { filters: { tags: { any: ['events'] } } },
      schedule: { mode: 'immediate' },
    });
    expect(created.statusCode, created.body).toBe(201);
    const campaign = created.json<{ id: string }>();
    await expect
      .poll(async () => (await request('GET', `/email-campaigns/${campaign.id}`, tenant.jwt)).json<{ status: string }>().status, { timeout: 15_000 })
      .toBe('sent');
    const letter = trackingLinks(address, 1);

    const receipt = await request('POST', '/transactional/email', tenant.live, {
      to: address,
      subject: 'Your receipt',
      htmlContent: '<p>See <a href="https://shop.example.com/orders/42">your order</a>.</p>',
      senderEmail: `orders@${DOMAIN}`,
    });
    expect(receipt.json()).toMatchObject({ status: 'sent' });
    const receiptId = receipt.json<{ messageId: string }>().messageId;
    const receiptLinks = trackingLinks(address, 2);

    await hit(letter.open, APPLE_PROXY, 200);
    await hit(letter.open, BROWSER, 200);
    await hit(receiptLinks.click, BROWSER, 302);
    await hit(letter.click, BROWSER, 302);

    const body = await events(subscriberId);
    expect(body).toMatchObject({ page: 1, pageSize: 20, total: 6 });
    const fromLetter = { channel: 'email', source: 'campaign', campaignId: campaign.id, campaignName: 'Spring letter', bounceCode: null, diagnostic: null };
    const fromReceipt = { channel: 'email', source: 'transactional', messageId: receiptId, campaignId: null, campaignName: null, bounceCode: null, diagnostic: null };
    expect(body.data).toEqual([
      { ...fromLetter, type: 'clicked', repeat: false, machine: false, url: 'https://shop.example.com/sale?ref=mail', messageId: expect.any(String), occurredAt: expect.any(String) },
      { ...fromReceipt, type: 'clicked', repeat: false, machine: false, url: 'https://shop.example.com/orders/42', occurredAt: expect.any(String) },
      { ...fromReceipt, type: 'delivered', repeat: false, machine: false, url: null, occurredAt: expect.any(String) },
      { ...fromLetter, type: 'opened', repeat: true, machine: false, url: null, messageId: expect.any(String), occurredAt: expect.any(String) },
      { ...fromLetter, type: 'opened', repeat: false, machine: true, url: null, messageId: expect.any(String), occurredAt: expect.any(String) },
      { ...fromLetter, type: 'delivered', repeat: false, machine: false, url: null, messageId: expect.any(String), occurredAt: expect.any(String) },
    ]);
    const times = body.data.map((e) => Date.parse(e.occurredAt));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    // The agent and the reporter's payload stay in the log.
    expect(Object.keys(body.data[0]!).sort()).toEqual(
      ['bounceCode', 'campaignId', 'campaignName', 'channel', 'diagnostic', 'machine', 'messageId', 'occurredAt', 'repeat', 'source', 'type', 'url'].sort(),
    );

    // Pages and filters; a live key sees the live subscriber's events too.
    const second = await events(subscriberId, tenant.live, '?pageSize=2&page=2');
    expect(second).toMatchObject({ page: 2, pageSize: 2, total: 6 });
    expect(second.data).toEqual(body.data.slice(2, 4));
    const opens = await events(subscriberId, tenant.jwt, '?type=opened');
    expect(opens).toMatchObject({ total: 2, data: [{ repeat: true }, { repeat: false }] });
    expect(await events(subscriberId, tenant.jwt, '?channel=push')).toMatchObject({ total: 0, data: [] });
    expect((await events(subscriberId, tenant.jwt, '?channel=email&type=clicked')).data.map((e) => e.source)).toEqual(['campaign', 'transactional']);
    for (const search of ['?type=sent', '?channel=fax', '?pageSize=101', '?other=1']) {
      expect((await request('GET', `/subscribers/${subscriberId}/events${search}`, tenant.jwt)).statusCode, search).toBe(422);
    }
  });

  it("reads what each reporter stored: SES's click link and scanner flag, a DSN's status code, SES's bounce type, with the channel's events", async () => {
    const subscriberId = newId('sub');
    await query(`INSERT INTO subscribers (id, project_id, token, email) VALUES ($1, $2, $3, 'ses@example.org')`, [
      subscriberId,
      tenant.projectId,
      `st_${subscriberId}`,
    ]);
    const delivery = async (channel: 'email' | 'push', destination: string | null) => {
      const messageId = newId('msg');
      await query(`INSERT INTO messages (id, project_id, channel, source, sandbox, content, options) VALUES ($1, $2, $3, 'transactional', false, '{}', '{}')`, [
        messageId,
        tenant.projectId,
        channel,
      ]);
      const [row] = await query<{ id: number }>(
        `INSERT INTO deliveries (project_id, message_id, subscriber_id, channel, destination, status, attempts, sent_at)
         VALUES ($1, $2, $3, $4, $5, 'sent', 1, now() - interval '1 hour') RETURNING id::float8 AS id`,
        [tenant.projectId, messageId, subscriberId, channel, destination],
      );
      return row!.id;
    };
    const viaSes = await delivery('email', 'ses@example.org');
    const viaSmtp = await delivery('email', 'ses@example.org');
    const push = await delivery('push', null);
    const log = (deliveryId: number, type: string, minutesAgo: number, detail: Record<string, unknown> | null, repeat = false) =>
      query(
        `INSERT INTO delivery_events (delivery_id, project_id, message_id, type, occurred_at, detail, repeat)
         SELECT $1, $2, message_id, $3, now() - make_interval(mins => $4), $5, $6 FROM deliveries WHERE id = $1`,
        [deliveryId, tenant.projectId, type, minutesAgo, detail, repeat],
      );
    await log(viaSes, 'clicked', 50, { provider: 'ses', link: 'https://shop.example.com/ses', userAgent: 'curl/8', machine: ['scanner_user_agent'] });
    await log(viaSes, 'bounced', 40, {
      provider: 'ses',
      bounceType: 'Permanent',
      bounceSubType: 'NoEmail',
      diagnosticCode: 'smtp; 550 5.1.1 user unknown',
    });
    await log(viaSmtp, 'soft_bounced', 30, { provider: 'dsn', action: 'delayed', status: '4.2.2', diagnosticCode: 'smtp; 452 4.2.2 mailbox full' });
    await log(push, 'dismissed', 20, null);
    await log(push, 'clicked', 10, null);

    const body = await events(subscriberId);
    expect(body.data.map(({ type, channel, url, machine, bounceCode, diagnostic }) => ({ type, channel, url, machine, bounceCode, diagnostic }))).toEqual([
      { type: 'clicked', channel: 'push', url: null, machine: false, bounceCode: null, diagnostic: null },
      { type: 'dismissed', channel: 'push', url: null, machine: false, bounceCode: null, diagnostic: null },
      { type: 'soft_bounced', channel: 'email', url: null, machine: false, bounceCode: '4.2.2', diagnostic: 'smtp; 452 4.2.2 mailbox full' },
      { type: 'bounced', channel: 'email', url: null, machine: false, bounceCode: 'Permanent/NoEmail', diagnostic: 'smtp; 550 5.1.1 user unknown' },
      { type: 'clicked', channel: 'email', url: 'https://shop.example.com/ses', machine: true, bounceCode: null, diagnostic: null },
    ]);
    expect((await events(subscriberId, tenant.jwt, '?channel=push')).data.map((e) => e.type)).toEqual(['clicked', 'dismissed']);
    expect((await events(subscriberId, tenant.jwt, '?channel=email&type=clicked')).data.map((e) => e.url)).toEqual(['https://shop.example.com/ses']);
  });

  it("is a 404 for another organization's or project's subscriber, and for a live subscriber asked with a test key", async () => {
    const live = await request('POST', '/contacts', tenant.live, { projectId: tenant.projectId, email: `live-${Date.now()}@example.org` });
    const sandbox = await request('POST', '/contacts', tenant.test, { projectId: tenant.projectId, email: `test-${Date.now()}@example.org` });
    const [liveId, sandboxId] = [live.json<{ id: string }>().id, sandbox.json<{ id: string }>().id];
    for (const headers of [other.jwt, other.live, other.test, tenant.test]) {
      const res = await request('GET', `/subscribers/${liveId}/events`, headers);
      expect(res.statusCode, res.body).toBe(404);
      expect(res.json()).toMatchObject({ statusCode: 404, message: 'Subscriber not found' });
    }
    expect((await request('GET', `/subscribers/${sandboxId}/events`, other.test)).statusCode).toBe(404);
    for (const headers of [tenant.jwt, tenant.live]) expect((await request('GET', `/subscribers/${liveId}/events`, headers)).statusCode).toBe(200);
    // A test key sees its sandbox subscribers, and a live key both environments.
    for (const headers of [tenant.test, tenant.live]) expect((await request('GET', `/subscribers/${sandboxId}/events`, headers)).statusCode).toBe(200);
    expect((await request('GET', '/subscribers/sub_nope/events', tenant.jwt)).statusCode).toBe(404);
  });
});
