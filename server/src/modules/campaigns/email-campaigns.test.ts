// Email campaigns through HTTP with the real moving parts — graphile-worker dispatches, the engine sends through a
// real SMTP peer that DKIM-verifies — : validation, the audience, UTM and tracked links, counters, the status machine
// shared with push, duplicate, an audience given as a filters tree, and channel and tenant isolation.
import { DateTime } from 'luxon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DnsServer } from '../../../test/dns-server.js';
import { useSmtpPeer, verifiedDomain as verifyDomain } from '../../../test/email-setup.js';
import { createTenant, type Tenant } from '../../../test/fixtures.js';
import { startEmailWorld, type EmailWorld } from '../../../test/email-world.js';
import type { TestApp } from '../../../test/harness.js';
import type { SmtpPeer } from '../../../test/smtp-peer.js';
import { recordDeliveryEvents } from '../../delivery/delivery-events.repository.js';
import { dispatchJobKey } from './campaign.service.js';

const DOMAIN = 'news.example.com';

let world: EmailWorld;
let t: TestApp;
let dns: DnsServer;
let peer: SmtpPeer;
let tenant: Tenant;
let other: Tenant;

type Headers = Record<string, string>;
const request = (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, headers: Headers, payload?: unknown) =>
  t.app.inject({ method, url, headers, ...(payload !== undefined && { payload: payload as Record<string, unknown> }) });
const query = async <T = Record<string, unknown>>(text: string, values: unknown[] = []) => (await t.database.pool.query(text, values)).rows as T[];

const verifiedDomain = (who: Tenant, domain: string) => verifyDomain(t, dns, who, domain);

beforeAll(async () => {
  world = await startEmailWorld({ domain: DOMAIN, tenants: 2 });
  ({ t, dns, peer } = world);
  [tenant, other] = world.tenants as [Tenant, Tenant];
});
afterAll(() => world?.close());

interface EmailCampaignBody {
  id: string;
  name: string;
  status: string;
  pauseReason: string | null;
  content: Record<string, unknown>;
  schedule: { mode: string; sendAt: string | null; timezone: string | null; localTime: boolean };
  stats: Record<string, number>;
}

const content = {
  subject: 'Spring sale',
  preheader: 'Everything half price',
  html: '<p>See <a href="https://shop.example.com/sale?ref=mail#top">the sale</a>, or <a href="mailto:help@example.com">write</a>.</p>',
  from: { email: `hello@${DOMAIN}`, name: 'Example Shop' },
};

const body = (who: Tenant, overrides: Record<string, unknown> = {}) => ({
  name: 'Spring',
  projectId: who.projectId,
  content,
  segment: { filters: { tags: { any: ['spring'] } } },
  schedule: { mode: 'draft' },
  ...overrides,
});

async function create(who: Tenant, overrides: Record<string, unknown> = {}): Promise<EmailCampaignBody> {
  const res = await request('POST', '/email-campaigns', who.jwt, body(who, overrides));
  expect(res.statusCode, res.body).toBe(201);
  return res.json<EmailCampaignBody>();
}

const read = async (id: string, who: Tenant = tenant) => (await request('GET', `/email-campaigns/${id}`, who.jwt)).json<EmailCampaignBody>();
const statusesOf = async (campaignId: string) =>
  Object.fromEntries(
    (
      await query<{ status: string; n: number }>(
        'SELECT d.status, count(*)::int AS n FROM deliveries d JOIN messages m ON m.id = d.message_id WHERE m.campaign_id = $1 GROUP BY d.status',
        [campaignId],
      )
    ).map((r) => [r.status, r.n]),
  );

let contacts = 0;
async function contact(fields: Record<string, unknown> = {}, who: Tenant = tenant): Promise<string> {
  const email = `reader${++contacts}-${Date.now()}@example.org`;
  const res = await request('POST', '/contacts', who.live, { projectId: who.projectId, email, tags: ['spring'], ...fields });
  expect(res.statusCode, res.body).toBe(201);
  return email;
}

async function settled(id: string, who: Tenant = tenant): Promise<EmailCampaignBody> {
  await expect.poll(async () => (await read(id, who)).status, { timeout: 15_000 }).toBe('sent');
  return read(id, who);
}

describe('writing an email campaign', () => {
  it('refuses a From or Reply-To off the verified domains, merge tags that do not parse, and an unknown template (422, naming each)', async () => {
    const res = await request(
      'POST',
      '/email-campaigns',
      tenant.jwt,
      body(tenant, {
        content: { ...content, html: '<p>Hi {{ first_name </p>', from: { email: 'hello@badexample.com' }, replyTo: { email: `help@mail.${DOMAIN}` } },
      }),
    );
    expect(res.statusCode).toBe(422);
    const fields = res.json<{ details: { field: string; error: string }[] }>().details.map((d) => d.field);
    expect(fields.sort()).toEqual(['content.from.email', 'content.html']);

    const unknown = await request('POST', '/email-campaigns', tenant.jwt, body(tenant, { content: { templateId: 'tpl_missing', from: content.from } }));
    expect(unknown.json()).toMatchObject({ details: [{ field: 'content.templateId' }] });
    const partial = await request('POST', '/email-campaigns', tenant.jwt, body(tenant, { content: { html: '<p>x</p>', from: content.from } }));
    expect(partial.statusCode).toBe(422);
  });

  it('starts from a saved template: the parts not given are copied, and stay as copied', async () => {
    const template = await request('POST', '/email-templates', tenant.jwt, {
      projectId: tenant.projectId,
      name: 'Newsletter',
      subject: 'News for {{ first_name | default: "you" }}',
      html: '<p>Hello</p>',
      preheader: 'This week',
    });
    expect(template.statusCode, template.body).toBe(201);
    const id = template.json<{ id: string }>().id;
    const campaign = await create(tenant, { content: { templateId: id, subject: 'Our own subject', from: content.from } });
    expect(campaign.content).toMatchObject({ templateId: id, subject: 'Our own subject', html: '<p>Hello</p>', preheader: 'This week' });
    await request('PATCH', `/email-templates/${id}`, tenant.jwt, { html: '<p>Changed</p>' });
    expect((await read(campaign.id)).content).toMatchObject({ html: '<p>Hello</p>' });
  });

  it("keeps the visual editor's design with its html: copied from a template with the html, stored as given, 422 beside a bad block", async () => {
    const design = {
      version: 1,
      settings: { backgroundColor: '#f4f4f5', contentColor: '#ffffff', textColor: '#18181b', fontFamily: 'serif' },
      blocks: [{ type: 'divider', id: 'line', color: '#e4e4e7' }],
    };
    const template = await request('POST', '/email-templates', tenant.jwt, { projectId: tenant.projectId, name: 'Designed', subject: 'S', html: '<p>Designed</p>', design });
    const id = template.json<{ id: string }>().id;
    expect((await create(tenant, { content: { templateId: id, from: content.from } })).content).toMatchObject({ html: '<p>Designed</p>', design });
    expect((await create(tenant, { content: { templateId: id, html: '<p>Own</p>', from: content.from } })).content).not.toHaveProperty('design');
    const own = await create(tenant, { content: { ...content, design } });
    expect((await read(own.id)).content).toMatchObject({ design });
    const bad = await request('POST', '/email-campaigns', tenant.jwt, body(tenant, { content: { ...content, design: { ...design, blocks: [{ type: 'spacer', id: 's', height: 9000 }] } } }));
    expect(bad.statusCode).toBe(422);
    expect(bad.json().details).toEqual([{ field: 'content.design.blocks.0.height', error: expect.any(String) }]);
  });

  it('keeps email and push campaigns apart, and each tenant to its own', async () => {
    const email = await create(tenant);
    const push = await request('POST', '/campaigns', tenant.jwt, {
      name: 'Push',
      projectId: tenant.projectId,
      content: { title: 'T', body: 'B' },
      segment: { filters: {} },
      schedule: { mode: 'draft' },
    });
    const pushId = push.json<{ id: string }>().id;
    expect((await request('GET', `/campaigns/${email.id}`, tenant.jwt)).statusCode).toBe(404);
    expect((await request('DELETE', `/campaigns/${email.id}`, tenant.jwt)).statusCode).toBe(404);
    expect((await request('GET', `/email-campaigns/${pushId}`, tenant.jwt)).statusCode).toBe(404);
    const emailList = (await request('GET', `/email-campaigns/project/${tenant.projectId}`, tenant.jwt)).json<{ data: { id: string }[] }>();
    expect(emailList.data.map((c) => c.id)).toContain(email.id);
    expect(emailList.data.map((c) => c.id)).not.toContain(pushId);
    const pushList = (await request('GET', `/campaigns/project/${tenant.projectId}`, tenant.jwt)).json<{ data: { id: string }[] }>();
    expect(pushList.data.map((c) => c.id)).not.toContain(email.id);

    for (const [method, url] of [
      ['GET', `/email-campaigns/${email.id}`],
      ['PATCH', `/email-campaigns/${email.id}`],
      ['DELETE', `/email-campaigns/${email.id}`],
      ['POST', `/email-campaigns/${email.id}/send`],
      ['POST', `/email-campaigns/${email.id}/duplicate`],
      ['POST', `/email-campaigns/${email.id}/cancel`],
      ['POST', `/email-campaigns/${email.id}/archive`],
    ] as const) {
      const res = await request(method, url, other.jwt, method === 'PATCH' ? { name: 'x' } : undefined);
      expect(res.statusCode, `${method} ${url}`).toBe(404);
    }
    expect((await request('GET', `/email-campaigns/project/${tenant.projectId}`, other.jwt)).statusCode).toBe(404);
  });
});

describe('sending an email campaign', () => {
  it('reaches each address of its segment once, DKIM-signed, UTM on every web link, tracked; suppressed and opted-out addresses left out', async () => {
    const readers = [await contact(), await contact(), await contact()];
    const suppressed = await contact();
    await request('POST', `/projects/${tenant.projectId}/suppressions`, tenant.jwt, { email: suppressed, reason: 'manual' });
    const optedOut = await contact({ preferences: { channels: { email: false } } });
    const elsewhere = await contact({ tags: ['autumn'] });

    const campaign = await create(tenant, { schedule: { mode: 'immediate' }, utm: { source: 'herald', campaign: 'spring', content: 'hero' } });
    expect(campaign.status).toBe('sending');
    const done = await settled(campaign.id);
    expect(done.stats).toMatchObject({ totalTargeted: readers.length, sent: readers.length, failed: 0, suppressed: 0 });
    for (const address of [suppressed, optedOut, elsewhere]) expect(peer.received(address)).toEqual([]);

    for (const address of readers) {
      const mails = peer.received(address);
      expect(mails).toHaveLength(1);
      const [mail] = mails;
      expect(mail!.dkim).toMatchObject({ result: 'pass', signingDomain: DOMAIN });
      expect(mail!.parsed.subject).toBe('Spring sale');
      const links = [...(mail!.parsed.html as string).matchAll(/href="([^"]+)"/g)].map((m) => m[1]!.replace(/&amp;/g, '&'));
      const click = links.find((l) => l.includes('/e/click/'))!;
      const target = new URL(click).searchParams.get('u');
      expect(target).toBe('https://shop.example.com/sale?ref=mail&utm_source=herald&utm_campaign=spring&utm_content=hero#top');
      expect(links).toContain('mailto:help@example.com');
      // The click link resolves to the target, with the UTM parameters.
      const redirected = await t.app.inject({ method: 'GET', url: click.slice('https://herald.example.com'.length) });
      expect(redirected.statusCode).toBe(302);
      expect(redirected.headers.location).toBe(target);
    }
    await expect.poll(async () => (await read(campaign.id)).stats.clicked).toBe(readers.length);
    expect((await read(campaign.id)).stats).toMatchObject({ clicked: 3, delivered: 3, clickRate: 1 });

    // A reader who clicked and then bounced (a late DSN) stays one of the clicked and one of the sent: no rate past 1.
    const [bounced] = await query<{ id: number }>(`SELECT d.id::float8 AS id FROM deliveries d JOIN messages m ON m.id = d.message_id WHERE m.campaign_id = $1 LIMIT 1`, [campaign.id]);
    await recordDeliveryEvents(t.database.db, [{ deliveryId: bounced!.id, type: 'bounced', occurredAt: new Date(), detail: { provider: 'dsn' } }]);
    expect((await read(campaign.id)).stats).toMatchObject({ sent: 3, clicked: 3, bounced: 1, clickRate: 1, bounceRate: 0.3333 });
  });

  it("renders each recipient's merge tags from its own attributes, HTML-escaped in the body, with defaults", async () => {
    const ada = await contact({ tags: ['merge-ada'], attributes: { first_name: '<b>Ada</b>', plan: 'Pro' } });
    const anonymous = await contact({ tags: ['merge-anonymous'], attributes: { plan: 'Free' } });
    const campaign = await create(tenant, {
      schedule: { mode: 'immediate' },
      segment: { filters: { tags: { any: ['merge-ada'] } } },
      content: { ...content, subject: 'Hi {{ first_name | default: "there" }}', html: '<p>Hello {{ first_name | default: "there" }}, on {{ plan }}.</p>' },
    });
    await settled(campaign.id);
    const [mail] = peer.received(ada);
    expect(mail!.parsed.subject).toBe('Hi <b>Ada</b>');
    expect(mail!.parsed.html).toContain('Hello &lt;b&gt;Ada&lt;/b&gt;, on Pro.');
    expect(mail!.parsed.text).toContain('Hello <b>Ada</b>, on Pro.');
    const second = await create(tenant, {
      schedule: { mode: 'immediate' },
      segment: { filters: { tags: { any: ['merge-anonymous'] } } },
      content: { ...content, subject: 'Hi {{ first_name | default: "there" }}', html: '<p>Hello {{ first_name | default: "there" }}, on {{ plan }}.</p>' },
    });
    await settled(second.id);
    expect(peer.received(anonymous)[0]!.parsed.subject).toBe('Hi there');
  });

  it("test-sends a draft to a few addresses, rendered with each one's subscriber, marked [Test], counted and logged nowhere", async () => {
    const known = await contact({ attributes: { first_name: 'Grace' } });
    const stranger = `stranger-${Date.now()}@example.org`;
    const draft = await create(tenant, {
      content: { ...content, subject: 'Hi {{ first_name | default: "there" }}', html: '<p>Hello {{ first_name }}, <a href="https://shop.example.com/">shop</a></p>' },
    });
    const res = await request('POST', `/email-campaigns/${draft.id}/test`, tenant.jwt, { emails: [known, stranger, known.toUpperCase()] });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      data: [
        { email: known, status: 'sent', reason: null },
        { email: stranger, status: 'failed', reason: 'template_variables_missing' },
      ],
    });
    const [mail] = peer.received(known);
    expect(mail!.parsed.subject).toBe('[Test] Hi Grace');
    expect(mail!.dkim).toMatchObject({ result: 'pass', signingDomain: DOMAIN });
    expect(peer.received(stranger)).toEqual([]);
    expect(await read(draft.id)).toMatchObject({ status: 'draft', stats: { totalTargeted: 0, sent: 0 } });
    expect(await query('SELECT 1 FROM deliveries WHERE destination = $1', [known])).toEqual([]);
    expect((await request('POST', `/email-campaigns/${draft.id}/test`, tenant.jwt, { emails: [] })).statusCode).toBe(422);
    expect((await request('POST', `/email-campaigns/${draft.id}/test`, other.jwt, { emails: [known] })).statusCode).toBe(404);
  });

  it('duplicates into a draft, archives once sent, and follows the push status machine (409s)', async () => {
    await contact();
    const campaign = await create(tenant, { schedule: { mode: 'immediate' } });
    await settled(campaign.id);
    expect((await request('PATCH', `/email-campaigns/${campaign.id}`, tenant.jwt, { name: 'x' })).statusCode).toBe(409);
    expect((await request('DELETE', `/email-campaigns/${campaign.id}`, tenant.jwt)).statusCode).toBe(409);
    const copy = await request('POST', `/email-campaigns/${campaign.id}/duplicate`, tenant.jwt);
    expect(copy.statusCode).toBe(201);
    expect(copy.json()).toMatchObject({ name: 'Spring (copy)', status: 'draft', content: { subject: 'Spring sale' }, stats: { totalTargeted: 0, sent: 0 } });
    expect((await request('POST', `/email-campaigns/${campaign.id}/archive`, tenant.jwt)).json()).toMatchObject({ status: 'archived' });
    const scheduled = await create(tenant, { schedule: { mode: 'scheduled', sendAt: new Date(Date.now() + 3_600_000).toISOString() } });
    expect((await request('POST', `/email-campaigns/${scheduled.id}/cancel`, tenant.jwt)).json()).toMatchObject({ status: 'cancelled' });
    expect((await request('POST', `/email-campaigns/${scheduled.id}/cancel`, tenant.jwt)).statusCode).toBe(409);
    const rows = await query('SELECT 1 FROM deliveries d JOIN messages m ON m.id = d.message_id WHERE m.campaign_id = $1', [scheduled.id]);
    expect(rows).toEqual([]);
  });
});

describe('an email campaign to a filters tree', () => {
  it('snapshots exactly the people an any-group of an attribute and an event condition matches, and mails exactly them', async () => {
    const person = async (attributes: Record<string, unknown>, events: { name: string; occurredAt?: string }[] = []) => {
      const email = `tree${++contacts}-${Date.now()}@example.org`;
      const res = await request('POST', '/contacts', tenant.live, { projectId: tenant.projectId, email, attributes });
      expect(res.statusCode, res.body).toBe(201);
      const id = res.json<{ id: string }>().id;
      for (const event of events) {
        const sent = await request('POST', '/events', tenant.live, { subscriberId: id, ...event });
        expect(sent.statusCode, sent.body).toBe(202);
      }
      return { id, email };
    };
    const longAgo = DateTime.utc().minus({ days: 60 }).toISO();
    const byPlan = await person({ tree_plan: 'pro' });
    const byTrial = await person({ tree_plan: 'free' }, [{ name: 'tree.trial' }]);
    const both = await person({ tree_plan: 'pro' }, [{ name: 'tree.trial' }]);
    const matching = [byPlan, byTrial, both];
    const others = [
      await person({ tree_plan: 'free' }, [{ name: 'tree.other' }]),
      // The trial outside the window, and a plan that only starts with "pro".
      await person({ tree_plan: 'professional' }, [{ name: 'tree.trial', occurredAt: longAgo }]),
      await person({}),
    ];
    const filters = {
      any: [
        { attribute: 'tree_plan', operator: 'eq', value: 'pro' },
        { event: 'tree.trial', withinLastDays: 30 },
      ],
    };
    const reach = await request('POST', '/segments/reach', tenant.live, { projectId: tenant.projectId, filters, channel: 'email' });
    expect(reach.json().count).toBe(matching.length);

    const campaign = await create(tenant, { schedule: { mode: 'immediate' }, segment: { filters } });
    const done = await settled(campaign.id);
    expect(done.stats).toMatchObject({ totalTargeted: matching.length, sent: matching.length, failed: 0 });
    const snapshot = await query<{ subscriber_id: string }>(
      'SELECT d.subscriber_id FROM deliveries d JOIN messages m ON m.id = d.message_id WHERE m.campaign_id = $1 ORDER BY d.subscriber_id',
      [campaign.id],
    );
    expect(snapshot.map((row) => row.subscriber_id)).toEqual(matching.map((p) => p.id).sort());
    for (const { email } of matching) expect(peer.received(email)).toHaveLength(1);
    for (const { email } of others) expect(peer.received(email)).toEqual([]);
  });
});

describe('pausing an email campaign', () => {
  it('holds what has not gone, sends nothing while paused, and on resume sends each held recipient once — never one already sent', async () => {
    // A project whose account sends 4 a second: the campaign is still going when it is paused.
    const slow = await createTenant(t);
    await verifiedDomain(slow, 'slow.example.com');
    await useSmtpPeer(t, slow, peer, { ratePerSecond: 4 });
    const readers = await Promise.all(Array.from({ length: 10 }, () => contact({}, slow)));
    const res = await request('POST', '/email-campaigns', slow.jwt, {
      ...body(slow, { schedule: { mode: 'immediate' } }),
      content: { ...content, from: { email: 'hello@slow.example.com' } },
    });
    const campaign = res.json<EmailCampaignBody>();
    await expect.poll(() => readers.filter((r) => peer.received(r).length > 0).length).toBeGreaterThanOrEqual(2);

    const paused = await request('POST', `/email-campaigns/${campaign.id}/pause`, slow.jwt);
    expect(paused.json()).toMatchObject({ status: 'paused' });
    expect((await request('POST', `/email-campaigns/${campaign.id}/pause`, slow.jwt)).statusCode).toBe(409);
    await expect.poll(async () => (await statusesOf(campaign.id)).sending ?? 0).toBe(0);
    const held = (await statusesOf(campaign.id)).paused ?? 0;
    expect(held).toBeGreaterThan(0);
    const sentWhenPaused = readers.filter((r) => peer.received(r).length > 0).length;
    expect(sentWhenPaused + held).toBe(readers.length);
    // A retry recorded in the instant of the pause comes back queued: the worker that claims it puts it back, unsent.
    await query(
      "UPDATE deliveries SET status = 'queued', next_attempt_at = now() WHERE id = (SELECT d.id FROM deliveries d JOIN messages m ON m.id = d.message_id WHERE m.campaign_id = $1 AND d.status = 'paused' LIMIT 1)",
      [campaign.id],
    );
    await t.services.delivery.notify();
    await expect.poll(async () => (await statusesOf(campaign.id)).paused).toBe(held);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(readers.filter((r) => peer.received(r).length > 0).length).toBe(sentWhenPaused);
    expect((await read(campaign.id, slow)).status).toBe('paused');

    expect((await request('POST', `/email-campaigns/${campaign.id}/resume`, slow.jwt)).json()).toMatchObject({ status: 'sending' });
    expect((await request('POST', `/email-campaigns/${campaign.id}/resume`, slow.jwt)).statusCode).toBe(409);
    const done = await settled(campaign.id, slow);
    expect(done.stats).toMatchObject({ totalTargeted: 10, sent: 10 });
    for (const address of readers) expect(peer.received(address)).toHaveLength(1);
  });

  it('cancels a paused campaign: what it held is suppressed and never sent', async () => {
    const slow = await createTenant(t);
    await verifiedDomain(slow, 'slower.example.com');
    await useSmtpPeer(t, slow, peer, { ratePerSecond: 2 });
    const readers = await Promise.all(Array.from({ length: 6 }, () => contact({}, slow)));
    const campaign = (
      await request('POST', '/email-campaigns', slow.jwt, { ...body(slow, { schedule: { mode: 'immediate' } }), content: { ...content, from: { email: 'hello@slower.example.com' } } })
    ).json<EmailCampaignBody>();
    await expect.poll(() => readers.filter((r) => peer.received(r).length > 0).length).toBeGreaterThanOrEqual(1);
    await request('POST', `/email-campaigns/${campaign.id}/pause`, slow.jwt);
    await expect.poll(async () => (await statusesOf(campaign.id)).sending ?? 0).toBe(0);
    const sent = readers.filter((r) => peer.received(r).length > 0).length;
    expect((await request('POST', `/email-campaigns/${campaign.id}/cancel`, slow.jwt)).json()).toMatchObject({ status: 'cancelled', stats: { suppressed: 6 - sent } });
    expect((await statusesOf(campaign.id)).paused).toBeUndefined();
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(readers.filter((r) => peer.received(r).length > 0).length).toBe(sent);
  });
});

describe("sending at each recipient's local time", () => {
  const dueOf = async (campaignId: string) =>
    Object.fromEntries(
      (
        await query<{ destination: string; next_attempt_at: Date }>(
          'SELECT d.destination, d.next_attempt_at FROM deliveries d JOIN messages m ON m.id = d.message_id WHERE m.campaign_id = $1',
          [campaignId],
        )
      ).map((r) => [r.destination, r.next_attempt_at.toISOString()]),
    );
  const at = (wall: string, zone: string) => DateTime.fromISO(wall, { zone }).toUTC().toISO();

  it("dispatches when the first zone reaches the time, each recipient due at that time of its own day (the project's zone for none), across DST", async () => {
    const local = await createTenant(t);
    await verifiedDomain(local, 'local.example.com');
    await request('PATCH', `/projects/${local.projectId}`, local.jwt, { settings: { timezone: 'Asia/Tokyo' } });
    const newYork = await contact({ timezone: 'America/New_York' }, local);
    const paris = await contact({ timezone: 'Europe/Paris' }, local);
    const zoneless = await contact({}, local);
    const make = async (sendAt: string) =>
      (
        await request('POST', '/email-campaigns', local.jwt, {
          ...body(local, { schedule: { mode: 'scheduled', sendAt, timezone: 'Europe/London', localTime: true } }),
          content: { ...content, from: { email: 'hello@local.example.com' } },
        })
      ).json<EmailCampaignBody & { schedule: { localWindow: { from: string; to: string } } }>();

    // 09:00 on a winter day, 26 hours from Kiritimati's to Baker Island's.
    const winter = await make('2027-01-15T09:00:00');
    expect(winter.schedule).toMatchObject({ localTime: true, localWindow: { from: '2027-01-14T19:00:00.000Z', to: '2027-01-15T21:00:00.000Z' } });
    const [job] = await query<{ run_at: Date }>('SELECT run_at FROM graphile_worker.jobs WHERE key = $1', [dispatchJobKey(winter.id)]);
    expect(job!.run_at.toISOString()).toBe('2027-01-14T19:00:00.000Z');
    await t.services.campaigns.dispatch(local.projectId, winter.id);
    expect(await dueOf(winter.id)).toEqual({
      [newYork]: at('2027-01-15T09:00', 'America/New_York'),
      [paris]: at('2027-01-15T09:00', 'Europe/Paris'),
      [zoneless]: at('2027-01-15T09:00', 'Asia/Tokyo'),
    });
    expect((await read(winter.id, local)).status).toBe('sending');

    // 02:30 is skipped in Paris on 2027-03-28 (sent at 03:30 CEST) and happens twice on 2027-10-31 (the first one).
    const skipped = await make('2027-03-28T02:30:00');
    await t.services.campaigns.dispatch(local.projectId, skipped.id);
    expect((await dueOf(skipped.id))[paris]).toBe('2027-03-28T01:30:00.000Z');
    const twice = await make('2027-10-31T02:30:00');
    await t.services.campaigns.dispatch(local.projectId, twice.id);
    expect((await dueOf(twice.id))[paris]).toBe('2027-10-31T00:30:00.000Z');
    for (const id of [winter.id, skipped.id, twice.id]) await request('POST', `/email-campaigns/${id}/cancel`, local.jwt);
  });

  it('sends at once to recipients whose time has passed when the campaign starts, and refuses local time without a schedule', async () => {
    const local = await createTenant(t);
    await verifiedDomain(local, 'early.example.com');
    await useSmtpPeer(t, local, peer);
    const kiritimati = await contact({ timezone: 'Pacific/Kiritimati' }, local);
    const honolulu = await contact({ timezone: 'Pacific/Honolulu' }, local);
    const sendAt = DateTime.utc().plus({ hours: 2 }).startOf('minute').toFormat("yyyy-MM-dd'T'HH:mm:ss");
    const campaign = (
      await request('POST', '/email-campaigns', local.jwt, {
        ...body(local, { schedule: { mode: 'scheduled', sendAt, timezone: 'UTC', localTime: true } }),
        content: { ...content, from: { email: 'hello@early.example.com' } },
      })
    ).json<EmailCampaignBody>();
    await t.services.campaigns.dispatch(local.projectId, campaign.id);
    await expect.poll(() => peer.received(kiritimati).length).toBe(1);
    expect(peer.received(honolulu)).toEqual([]);
    expect((await dueOf(campaign.id))[honolulu]).toBe(at(sendAt, 'Pacific/Honolulu'));
    await request('POST', `/email-campaigns/${campaign.id}/cancel`, local.jwt);

    const immediate = await request('POST', '/email-campaigns', local.jwt, {
      ...body(local, { schedule: { mode: 'immediate', localTime: true } }),
      content: { ...content, from: { email: 'hello@early.example.com' } },
    });
    expect(immediate.json()).toMatchObject({ details: [{ field: 'schedule.localTime' }] });
  });
});

describe('the monthly email cap', () => {
  it('pauses a campaign it holds, with the reason; the resume job (the new month) or a resume after a raise sends the rest, once each', async () => {
    const capped = await createTenant(t);
    await verifiedDomain(capped, 'capped.example.com');
    await useSmtpPeer(t, capped, peer);
    await query('UPDATE organizations SET monthly_email_cap = 3 WHERE id = $1', [capped.orgId]);
    const readers = await Promise.all(Array.from({ length: 5 }, () => contact({}, capped)));
    const campaign = (
      await request('POST', '/email-campaigns', capped.jwt, { ...body(capped, { schedule: { mode: 'immediate' } }), content: { ...content, from: { email: 'hello@capped.example.com' } } })
    ).json<EmailCampaignBody>();

    await expect.poll(async () => (await read(campaign.id, capped)).status).toBe('paused');
    // The emails the cap had room for were already going: they finish.
    await expect.poll(async () => (await read(campaign.id, capped)).stats.sent).toBe(3);
    expect(await read(campaign.id, capped)).toMatchObject({ pauseReason: 'monthly_cap_reached' });
    expect(await statusesOf(campaign.id)).toMatchObject({ paused: 2 });
    const [job] = await query<{ run_at: Date }>("SELECT run_at FROM graphile_worker.jobs WHERE key = $1", [`campaign-resume:${campaign.id}`]);
    const now = new Date();
    expect(job!.run_at.toISOString()).toBe(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString());

    // A resume while the cap is still reached holds them again: the campaign pauses once more, nothing spins.
    expect((await request('POST', `/email-campaigns/${campaign.id}/resume`, capped.jwt)).statusCode).toBe(200);
    await expect.poll(async () => (await read(campaign.id, capped)).status).toBe('paused');
    expect((await read(campaign.id, capped)).stats.sent).toBe(3);

    // The plan allows more: resumed, the held emails go now, not next month.
    await query('UPDATE organizations SET monthly_email_cap = 100 WHERE id = $1', [capped.orgId]);
    await t.services.campaigns.resumeAfterCap(capped.projectId, campaign.id);
    const done = await settled(campaign.id, capped);
    expect(done).toMatchObject({ pauseReason: null, stats: { sent: 5 } });
    for (const address of readers) expect(peer.received(address)).toHaveLength(1);
    expect(await query('SELECT 1 FROM graphile_worker.jobs WHERE key = $1', [`campaign-resume:${campaign.id}`])).toEqual([]);
  });
});
