// Email campaign analytics through HTTP with the real moving parts — graphile-worker dispatches, the engine sends through
// a real SMTP peer, opens and clicks come through the real /e/open and /e/click links and an unsubscribe through the
// preference center — : the chart's buckets (all, unique, human), the top links, the CSV exports and who may read them.
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tenant } from '../../../test/fixtures.js';
import { startEmailWorld, type EmailWorld } from '../../../test/email-world.js';
import type { TestApp } from '../../../test/harness.js';
import type { SmtpPeer } from '../../../test/smtp-peer.js';
import { recordDeliveryEvents } from '../../delivery/delivery-events.repository.js';
import { bucketWindow } from './email-campaign-analytics.service.js';

const DOMAIN = 'news.example.com';
const PUBLIC_URL = 'https://herald.example.com';
const HOUR = 3_600_000;
const BROWSER = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15';
const APPLE_PROXY = 'Mozilla/5.0';
const SCANNER = 'Mozilla/5.0 (compatible; Barracuda Sentinel)';
const LINK_A = 'https://shop.example.com/a';
const LINK_B = 'https://shop.example.com/b';
const LINK_C = 'https://shop.example.com/c';

let world: EmailWorld;
let t: TestApp;
let peer: SmtpPeer;
let tenant: Tenant;
let other: Tenant;
/** How far ahead of the real time the services' clock runs: opens and clicks are made hours after the send. */
let shift = 0;

type Headers = Record<string, string>;
const request = (method: 'GET' | 'POST' | 'PUT', url: string, headers: Headers, payload?: unknown) =>
  t.app.inject({ method, url, headers, ...(payload !== undefined && { payload: payload as Record<string, unknown> }) });
const query = async <T = Record<string, unknown>>(text: string, values: unknown[] = []) => (await t.database.pool.query(text, values)).rows as T[];

beforeAll(async () => {
  world = await startEmailWorld({ domain: DOMAIN, tenants: 2, env: { PUBLIC_URL }, app: { clock: () => new Date(Date.now() + shift) } });
  ({ t, peer } = world);
  [tenant, other] = world.tenants as [Tenant, Tenant];
});
afterAll(() => world?.close());

let contacts = 0;
async function contact(tag: string, who: Tenant = tenant, headers: Headers = who.live, prefix = 'reader'): Promise<string> {
  const email = `${prefix}${++contacts}-${Date.now()}@example.org`;
  const res = await request('POST', '/contacts', headers, { projectId: who.projectId, email, tags: [tag] });
  expect(res.statusCode, res.body).toBe(201);
  return email;
}

const content = (subject = 'Spring sale') => ({
  subject,
  html: `<p><a href="${LINK_A}">A</a> <a href="${LINK_B}">B</a> <a href="${LINK_C}">C</a></p>`,
  from: { email: `hello@${DOMAIN}` },
});

async function sendCampaign(who: Tenant, headers: Headers, tag: string, overrides: Record<string, unknown> = {}): Promise<string> {
  const res = await request('POST', '/email-campaigns', headers, {
    name: 'Spring',
    projectId: who.projectId,
    content: content(),
    segment: { filters: { tags: { any: [tag] } } },
    schedule: { mode: 'immediate' },
    ...overrides,
  });
  expect(res.statusCode, res.body).toBe(201);
  const id = res.json<{ id: string }>().id;
  // Also called from beforeAll, where expect.poll is not allowed.
  for (const deadline = Date.now() + 15_000; (await request('GET', `/email-campaigns/${id}`, headers)).json<{ status: string }>().status !== 'sent'; ) {
    if (Date.now() > deadline) throw new Error(`campaign ${id} was not sent within 15 s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return id;
}

/** The links of the email `address` received: its pixel, its tracked links by target, its preference center. */
function linksOf(address: string) {
  const [mail] = peer.received(address);
  const html = mail!.parsed.html as string;
  const local = (url: string) => url.replace(/&amp;/g, '&').slice(PUBLIC_URL.length);
  const clicks = new Map<string, string>();
  for (const [, href] of html.matchAll(/href="([^"]+\/e\/click\/[^"]+)"/g)) clicks.set(new URL(href!.replace(/&amp;/g, '&')).searchParams.get('u')!, local(href!));
  return {
    open: local(/src="([^"]+\/e\/open\/[^"]+)"/.exec(html)![1]!),
    click: (target: string) => clicks.get(target)!,
    unsubscribe: local(/href="([^"]+\/u\/[^"]+)"/.exec(html)![1]!),
  };
}

const hit = async (url: string, agent: string) => {
  const res = await t.app.inject({ method: 'GET', url, headers: { 'user-agent': agent } });
  expect(res.statusCode, url).toBeLessThan(400);
};

interface Tallies {
  sent: number;
  delivered: number;
  opened: { all: number; unique: number; human: number };
  clicked: { all: number; unique: number; human: number };
  bounced: number;
  softBounced: number;
  complained: number;
  unsubscribed: number;
}
interface Analytics {
  bucket: string;
  bucketSeconds: number;
  from: string;
  to: string;
  buckets: (Tallies & { start: string })[];
  totals: Tallies;
}
const tallies = (partial: Partial<Tallies>): Tallies => ({
  sent: 0,
  delivered: 0,
  opened: { all: 0, unique: 0, human: 0 },
  clicked: { all: 0, unique: 0, human: 0 },
  bounced: 0,
  softBounced: 0,
  complained: 0,
  unsubscribed: 0,
  ...partial,
});

describe('the bucket rule', () => {
  const at = (iso: string) => new Date(iso);
  it('takes the smallest size giving at most 120 buckets, on UTC boundaries (weeks from Monday), the window moved out to whole buckets', () => {
    expect(bucketWindow(at('2026-11-20T10:00:00Z'), at('2026-11-20T12:00:00Z'), undefined)).toMatchObject({ size: '1m', seconds: 60 });
    expect(bucketWindow(at('2026-11-20T10:00:00Z'), at('2026-11-20T12:00:01Z'), undefined)).toMatchObject({ size: '5m' });
    expect(bucketWindow(at('2026-11-20T10:07:00Z'), at('2026-11-21T09:00:00Z'), undefined)).toMatchObject({
      size: '15m',
      from: at('2026-11-20T10:00:00Z'),
      to: at('2026-11-21T09:00:00Z'),
    });
    expect(bucketWindow(at('2026-11-20T10:30:00Z'), at('2026-11-25T10:00:00Z'), undefined)).toMatchObject({ size: '1h', from: at('2026-11-20T10:00:00Z') });
    expect(bucketWindow(at('2026-11-01T00:00:00Z'), at('2026-11-30T00:00:00Z'), undefined)).toMatchObject({ size: '6h' });
    expect(bucketWindow(at('2026-01-01T00:00:00Z'), at('2026-04-30T00:00:00Z'), undefined)).toMatchObject({ size: '1d' });
    // 2026-11-20 is a Friday: its week began on Monday the 16th.
    expect(bucketWindow(at('2026-11-20T10:00:00Z'), at('2027-11-20T10:00:00Z'), undefined)).toMatchObject({
      size: '1w',
      from: at('2026-11-16T00:00:00Z'),
      to: at('2027-11-22T00:00:00Z'),
    });
    expect(bucketWindow(at('2026-11-20T10:00:00Z'), at('2026-11-20T12:00:00Z'), '1h')).toMatchObject({ size: '1h', seconds: 3600 });
  });

  it('refuses more than 1,000 buckets (422 naming the field)', () => {
    expect(() => bucketWindow(at('2026-01-01T00:00:00Z'), at('2026-12-31T00:00:00Z'), '1h')).toThrow(expect.objectContaining({ statusCode: 422 }));
    expect(() => bucketWindow(at('2000-01-01T00:00:00Z'), at('2026-12-31T00:00:00Z'), undefined)).toThrow(
      expect.objectContaining({ details: [expect.objectContaining({ field: 'query.from' })] }),
    );
  });
});

describe('a sent email campaign', () => {
  let id: string;
  let pushId: string;
  let sentAt: Date;
  let hourZero: number;
  let readers: string[];
  let dashed: string;

  beforeAll(async () => {
    shift = 0;
    readers = [await contact('analytics'), await contact('analytics'), await contact('analytics')];
    dashed = await contact('analytics', tenant, tenant.live, '-dash');
    id = await sendCampaign(tenant, tenant.jwt, 'analytics', { name: '=SUM(A1:A9)', content: content('=HYPERLINK("https://evil.example")') });
    const push = await request('POST', '/campaigns', tenant.jwt, {
      name: 'Push',
      projectId: tenant.projectId,
      content: { title: 'T', body: 'B' },
      segment: { filters: {} },
      schedule: { mode: 'draft' },
    });
    pushId = push.json<{ id: string }>().id;
    sentAt = new Date((await request('GET', `/email-campaigns/${id}`, tenant.jwt)).json<{ sentAt: string }>().sentAt);
    hourZero = Math.floor(sentAt.getTime() / HOUR) * HOUR;
    const [r1, r2, r3] = readers.map(linksOf) as [ReturnType<typeof linksOf>, ReturnType<typeof linksOf>, ReturnType<typeof linksOf>];
    const at = (hours: number) => {
      shift = hourZero + hours * HOUR + 10 * 60_000 - Date.now();
    };

    at(1);
    await hit(r1.open, APPLE_PROXY); // machine: Apple's proxy fetching the pixel
    await hit(r2.open, BROWSER);

    at(2);
    await hit(r1.open, BROWSER); // a person after the proxy: r1's first human open
    await hit(r2.open, BROWSER);
    await hit(r2.click(LINK_A), BROWSER);
    await hit(r3.click(LINK_A), SCANNER); // machine: a link scanner

    at(3);
    await hit(r2.click(LINK_B), BROWSER);
    await hit(r1.click(LINK_B), BROWSER);
    for (let i = 0; i < 3; i++) await hit(r2.click(LINK_C), BROWSER);
    // SES's own click tracking names the target detail.link.
    const [r3Delivery] = await query<{ id: number }>(
      `SELECT d.id::float8 AS id FROM deliveries d JOIN campaigns c ON c.message_id = d.message_id WHERE c.id = $1 AND d.destination = $2`,
      [id, readers[2]],
    );
    await recordDeliveryEvents(t.database.db, [
      { deliveryId: r3Delivery!.id, type: 'clicked', occurredAt: new Date(Date.now() + shift), detail: { link: LINK_A }, logRepeat: true, sourceEventId: 'ses-click-1' },
    ]);
    const unsubscribed = await t.app.inject({
      method: 'POST',
      url: linksOf(dashed).unsubscribe,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'List-Unsubscribe=One-Click',
    });
    expect(unsubscribed.statusCode, unsubscribed.body).toBeLessThan(300);
  }, 60_000);

  it('answers every bucket of the window with its sends and events: all, unique (the counters) and human', async () => {
    const res = await request('GET', `/email-campaigns/${id}/analytics?bucket=1h`, tenant.jwt);
    expect(res.statusCode, res.body).toBe(200);
    const analytics = res.json<Analytics>();
    const hour = (n: number) => new Date(hourZero + n * HOUR).toISOString();
    expect(analytics).toMatchObject({ bucket: '1h', bucketSeconds: 3600, from: hour(0), to: hour(4) });
    expect(analytics.buckets.map((b) => b.start)).toEqual([hour(0), hour(1), hour(2), hour(3)]);

    // Sends are the deliveries' sent_at: a send a moment after the start may fall in the next hour.
    const sends = await query<{ sent_at: Date }>(
      `SELECT d.sent_at FROM deliveries d JOIN campaigns c ON c.message_id = d.message_id WHERE c.id = $1`,
      [id],
    );
    const sentIn = (n: number) => sends.filter((s) => Math.floor(s.sent_at.getTime() / HOUR) * HOUR === hourZero + n * HOUR).length;
    const [, ...events] = analytics.buckets.map(({ start: _start, ...rest }) => rest);
    expect(analytics.buckets[0]).toEqual({ start: hour(0), ...tallies({ sent: sentIn(0) }) });
    expect(events).toEqual([
      tallies({ sent: sentIn(1), delivered: 2, opened: { all: 2, unique: 2, human: 1 } }),
      tallies({ delivered: 1, opened: { all: 2, unique: 0, human: 1 }, clicked: { all: 2, unique: 2, human: 1 } }),
      tallies({ delivered: 1, clicked: { all: 6, unique: 1, human: 2 }, unsubscribed: 1 }),
    ]);
    expect(analytics.totals).toEqual(
      tallies({ sent: 4, delivered: 4, opened: { all: 4, unique: 2, human: 2 }, clicked: { all: 8, unique: 3, human: 3 }, unsubscribed: 1 }),
    );
    // unique sums to the campaign's counters.
    expect((await request('GET', `/email-campaigns/${id}`, tenant.jwt)).json()).toMatchObject({
      stats: { sent: 4, delivered: 4, opened: 2, clicked: 3, unsubscribed: 1 },
    });
  });

  it('chooses the bucket from the span by default, and reads a window given by from and to', async () => {
    // From the send to now, between 2 h 10 min and 3 h 10 min: 5-minute buckets.
    const automatic = (await request('GET', `/email-campaigns/${id}/analytics`, tenant.jwt)).json<Analytics>();
    expect(automatic).toMatchObject({ bucket: '5m', bucketSeconds: 300 });
    expect(automatic.buckets.length).toBeLessThanOrEqual(120);
    expect(automatic.totals).toMatchObject({ sent: 4, opened: { all: 4, unique: 2, human: 2 }, clicked: { all: 8, unique: 3, human: 3 } });
    expect(automatic.buckets.find((b) => b.start === new Date(hourZero + 2 * HOUR + 10 * 60_000).toISOString())).toMatchObject({
      clicked: { all: 2, unique: 2, human: 1 },
    });

    const from = new Date(hourZero + 2 * HOUR).toISOString();
    const to = new Date(hourZero + 3 * HOUR).toISOString();
    const window = (await request('GET', `/email-campaigns/${id}/analytics?from=${from}&to=${to}`, tenant.live)).json<Analytics>();
    expect(window).toMatchObject({ bucket: '1m', from, to });
    expect(window.buckets).toHaveLength(60);
    // r1's first human open is in the window though its first open is not.
    expect(window.totals).toEqual(tallies({ delivered: 1, opened: { all: 2, unique: 0, human: 1 }, clicked: { all: 2, unique: 2, human: 1 } }));

    const backwards = await request('GET', `/email-campaigns/${id}/analytics?from=${to}&to=${from}`, tenant.jwt);
    expect(backwards.statusCode).toBe(422);
    expect(backwards.json()).toMatchObject({ details: [{ field: 'query.from' }] });
    const tooFine = await request('GET', `/email-campaigns/${id}/analytics?from=2026-01-01&bucket=1m`, tenant.jwt);
    expect(tooFine.statusCode).toBe(422);
    expect(tooFine.json()).toMatchObject({ details: [{ field: 'query.bucket' }] });
    expect((await request('GET', `/email-campaigns/${id}/analytics?bucket=2h`, tenant.jwt)).statusCode).toBe(422);
  });

  it('ranks the clicked links by unique clickers, then clicks, with the human clickers; SES-tracked clicks included', async () => {
    const res = await request('GET', `/email-campaigns/${id}/links`, tenant.jwt);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      campaignId: id,
      data: [
        { url: LINK_A, clicks: 3, uniqueClickers: 2, humanClickers: 2 },
        { url: LINK_B, clicks: 2, uniqueClickers: 2, humanClickers: 2 },
        { url: LINK_C, clicks: 3, uniqueClickers: 1, humanClickers: 1 },
      ],
    });
    expect((await request('GET', `/email-campaigns/${id}/links?limit=1`, tenant.live)).json()).toMatchObject({ data: [{ url: LINK_A }] });
    expect((await request('GET', `/email-campaigns/${id}/links?limit=0`, tenant.jwt)).statusCode).toBe(422);
  });

  it("exports each recipient's outcome as CSV, formula-safe", async () => {
    const res = await request('GET', `/email-campaigns/${id}/recipients.csv`, tenant.jwt);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toBe(`attachment; filename="email-campaign-${id}-recipients.csv"`);
    const rows = parse(res.body, { columns: true }) as Record<string, string>[];
    expect(Object.keys(rows[0]!)).toEqual([
      'address',
      'subscriberId',
      'status',
      'reason',
      'sentAt',
      'deliveredAt',
      'openedAt',
      'clickedAt',
      'bounced',
      'complained',
      'unsubscribed',
      'opens',
      'clicks',
      'humanOpened',
      'humanClicked',
    ]);
    const ids = rows.map((r) => r.subscriberId!);
    expect(ids).toEqual([...ids].sort());
    const byAddress = new Map(rows.map((r) => [r.address, r]));
    expect(byAddress.size).toBe(4);
    const [r1, r2, r3] = readers.map((address) => byAddress.get(address)!);
    // Each hit came a moment after its hour's 10th minute.
    const after = (iso: string | undefined, hours: number) => new Date(iso!).getTime() - (hourZero + hours * HOUR + 10 * 60_000);
    expect(r1).toMatchObject({ status: 'clicked', opens: '2', clicks: '1', humanOpened: 'true', humanClicked: 'true' });
    for (const [iso, hours] of [[r1!.openedAt, 1], [r1!.clickedAt, 3]] as const) {
      expect(after(iso, hours)).toBeGreaterThanOrEqual(0);
      expect(after(iso, hours)).toBeLessThan(60_000);
    }
    expect(r2).toMatchObject({ status: 'clicked', opens: '2', clicks: '5', humanOpened: 'true', humanClicked: 'true', bounced: 'false' });
    expect(r3).toMatchObject({ status: 'clicked', openedAt: '', opens: '0', clicks: '2', humanOpened: 'false', humanClicked: 'true' });
    expect(new Date(r1!.sentAt!).getTime()).toBeGreaterThanOrEqual(sentAt.getTime() - 1000);
    // An address starting with "-" is a formula to a spreadsheet: written with a leading apostrophe.
    expect(byAddress.get(`'${dashed}`)).toMatchObject({ status: 'unsubscribed', unsubscribed: 'true', opens: '0', reason: '' });
  });

  it('exports the email campaign list with its counters and rates, formula-safe', async () => {
    const today = new Date().toISOString().slice(0, 10);
    const res = await request('GET', `/email-campaigns/export/project/${tenant.projectId}.csv?from=${today}`, tenant.jwt);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-disposition']).toBe(`attachment; filename="email-campaigns-${tenant.projectId}.csv"`);
    const rows = parse(res.body, { columns: true }) as Record<string, string>[];
    expect(rows.map((r) => r.id)).not.toContain(pushId);
    expect(rows.find((r) => r.id === id)).toEqual({
      id,
      name: "'=SUM(A1:A9)",
      subject: `'=HYPERLINK("https://evil.example")`,
      status: 'sent',
      sandbox: 'false',
      createdAt: expect.any(String),
      sentAt: sentAt.toISOString(),
      completedAt: expect.any(String),
      totalTargeted: '4',
      sent: '4',
      delivered: '4',
      opened: '2',
      clicked: '3',
      bounced: '0',
      complained: '0',
      unsubscribed: '1',
      failed: '0',
      suppressed: '0',
      openRate: '0.5',
      clickRate: '0.75',
      bounceRate: '0',
      complaintRate: '0',
      unsubscribeRate: '0.25',
    });
    expect((await request('GET', `/email-campaigns/export/project/${tenant.projectId}.csv?from=2026-12-02&to=2026-12-01`, tenant.jwt)).statusCode).toBe(422);
  });

  it('is found as GET /email-campaigns/:id finds it: another tenant, a test key and a push id → 404', async () => {
    for (const path of ['analytics', 'links', 'recipients.csv']) {
      for (const headers of [other.jwt, other.live, tenant.test]) {
        const res = await request('GET', `/email-campaigns/${id}/${path}`, headers);
        expect(res.statusCode, `${path} ${JSON.stringify(headers)}`).toBe(404);
        expect(res.json()).toMatchObject({ code: 'not_found', message: 'Email campaign not found' });
      }
      expect((await request('GET', `/email-campaigns/${pushId}/${path}`, tenant.jwt)).statusCode).toBe(404);
    }
    expect((await request('GET', `/email-campaigns/export/project/${tenant.projectId}.csv`, other.jwt)).statusCode).toBe(404);
    expect((await request('GET', `/email-campaigns/export/project/${tenant.projectId}.csv`, other.live)).statusCode).toBe(403);
  });
});

describe('a campaign with nothing logged yet', () => {
  it('answers zeros for a draft, no links and a header-only CSV', async () => {
    shift = 0;
    const res = await request('POST', '/email-campaigns', tenant.jwt, {
      name: 'Draft',
      projectId: tenant.projectId,
      content: content(),
      segment: { filters: {} },
      schedule: { mode: 'draft' },
    });
    const id = res.json<{ id: string }>().id;
    const analytics = (await request('GET', `/email-campaigns/${id}/analytics?bucket=1d`, tenant.jwt)).json<Analytics>();
    expect(analytics.buckets).toHaveLength(1);
    expect(analytics.totals).toEqual(tallies({}));
    expect((await request('GET', `/email-campaigns/${id}/links`, tenant.jwt)).json()).toEqual({ campaignId: id, data: [] });
    const csv = await request('GET', `/email-campaigns/${id}/recipients.csv`, tenant.jwt);
    expect(csv.body.trim()).toBe('address,subscriberId,status,reason,sentAt,deliveredAt,openedAt,clickedAt,bounced,complained,unsubscribed,opens,clicks,humanOpened,humanClicked');
  });

  it("shows a test key its sandbox campaign's sends, and lists only sandbox campaigns to it", async () => {
    shift = 0;
    await contact('sandboxed', tenant, tenant.test);
    const id = await sendCampaign(tenant, tenant.test, 'sandboxed');
    const analytics = await request('GET', `/email-campaigns/${id}/analytics`, tenant.test);
    expect(analytics.statusCode, analytics.body).toBe(200);
    expect(analytics.json<Analytics>().totals).toEqual(tallies({ sent: 1 }));
    const recipients = await request('GET', `/email-campaigns/${id}/recipients.csv`, tenant.test);
    expect(recipients.statusCode, recipients.body).toBe(200);
    const csv = parse(recipients.body, { columns: true }) as Record<string, string>[];
    expect(csv).toEqual([expect.objectContaining({ status: 'sent', opens: '0' })]);
    const list = parse((await request('GET', `/email-campaigns/export/project/${tenant.projectId}.csv`, tenant.test)).body, { columns: true }) as Record<string, string>[];
    expect(list.map((r) => [r.id, r.sandbox])).toEqual([[id, 'true']]);
  });
});
