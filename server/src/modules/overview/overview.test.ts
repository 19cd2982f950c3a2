// The overview through HTTP: a project's live figures over the window, zero-filled days, health warnings that come and
// go with the project's set-up and its email figures, the checklist, and the tenancy every project route keeps.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type DnsServer } from '../../../test/dns-server.js';
import { verifiedDomain } from '../../../test/email-setup.js';
import { addMember, CHROME_UA, createTenant, type Tenant } from '../../../test/fixtures.js';
import { startTestApp, type TestApp } from '../../../test/harness.js';
import { createFakeBrowser, startPushService, type PushService } from '../../../test/push-service.js';
import * as deliveryRepo from '../../delivery/delivery.repository.js';
import { newId } from '../../shared/ids.js';
import { channelAudience, compileSegmentFilter } from '../segments/index.js';

let t: TestApp;
let push: PushService;
let dns: DnsServer;
let tenant: Tenant;
let other: Tenant;

beforeAll(async () => {
  push = await startPushService();
  dns = await startDnsServer();
  t = await startTestApp({ ALLOW_INSECURE_PUSH_ENDPOINTS: 'true', DNS_SERVERS: dns.address, PUBLIC_URL: 'https://herald.example.com' });
  [tenant, other] = await Promise.all([createTenant(t), createTenant(t)]);
});
afterAll(async () => {
  await t.close();
  await push.close();
  await dns.close();
});

interface Overview {
  days: number;
  audience: Record<'people' | 'push' | 'email' | 'sms' | 'whatsapp', number>;
  growth: { day: string; subscribed: number }[];
  sends: { day: string; push: number; email: number; sms: number; whatsapp: number }[];
  rates: { email: Record<'sent' | 'delivered' | 'opened' | 'clicked' | 'bounced' | 'complained', number>; push: Record<'sent' | 'delivered' | 'clicked', number> };
  recent: { campaigns: { id: string; channel: string; name: string; status: string; at: string }[]; automations: { id: string; name: string; status: string; at: string }[] };
  health: { code: string; severity: string; fix: string }[];
  checklist: { step: string; done: boolean }[];
}

const today = () => new Date().toISOString().slice(0, 10);

async function overview(who: Tenant, query = '', headers: Record<string, string> = who.jwt): Promise<Overview> {
  const res = await t.app.inject({ method: 'GET', url: `/projects/${who.projectId}/overview${query}`, headers });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<Overview>();
}

const codes = (o: Overview) => o.health.map((h) => h.code).sort();
const done = (o: Overview) => Object.fromEntries(o.checklist.map((c) => [c.step, c.done]));

/** A browser subscribed through the SDK's route, on the local push service: its token. */
async function device(who: Tenant, headers: Record<string, string> = who.live): Promise<string> {
  const browser = createFakeBrowser();
  const res = await t.app.inject({
    method: 'POST',
    url: '/subscribers',
    headers,
    payload: { projectId: who.projectId, endpoint: push.endpointFor(browser), p256dh: browser.p256dh, auth: browser.auth, userAgent: CHROME_UA },
  });
  expect(res.statusCode, res.body).toBeLessThan(300);
  return res.json<{ token: string }>().token;
}

/** Sets a device's contact fields as the SDK does. */
async function update(who: Tenant, token: string, fields: Record<string, unknown>) {
  const res = await t.app.inject({ method: 'POST', url: '/subscribers/update', headers: who.live, payload: { token, ...fields } });
  expect(res.statusCode, res.body).toBeLessThan(300);
}

async function contact(who: Tenant, fields: Record<string, unknown>, headers: Record<string, string> = who.live) {
  const res = await t.app.inject({ method: 'POST', url: '/contacts', headers, payload: { projectId: who.projectId, ...fields } });
  expect(res.statusCode, res.body).toBeLessThan(300);
}

/** Sends every queued push, as the workers would. */
async function drain() {
  for (;;) {
    const claimed = await deliveryRepo.claimDue(t.database.db, 'push', 1000, 60);
    if (claimed.length === 0) return;
    for (const message of await deliveryRepo.findMessages(t.database.db, [...new Set(claimed.map((d) => d.messageId))])) {
      const project = (await t.services.delivery.sendingProjects([message.projectId])).get(message.projectId);
      await t.services.delivery.deliverNow(claimed.filter((d) => d.messageId === message.id), message, project!);
    }
  }
}

/**
 * An email message of `sandbox`'s environment with `sent` deliveries sent now, `bounced` and `complained` of them
 * with those first events, written as the engine and the provider callbacks write them.
 */
async function emailSends(who: Tenant, counts: { sent: number; bounced?: number; complained?: number; opened?: number }, sandbox = false) {
  const messageId = newId('msg');
  const { pool } = t.database;
  await pool.query(`INSERT INTO messages (id, project_id, channel, source, sandbox, content, options) VALUES ($1, $2, 'email', 'campaign', $3, '{}', '{}')`, [
    messageId,
    who.projectId,
    sandbox,
  ]);
  const { rows } = await pool.query<{ id: string }>(
    `INSERT INTO subscribers (id, project_id, token, sandbox, status, email)
     SELECT 'sub_seed' || $3 || g, $1, 'st_seed' || $3 || g, $2, 'active', 'seed' || $3 || g || '@example.com' FROM generate_series(1, $4) g
     RETURNING id`,
    [who.projectId, sandbox, messageId, counts.sent],
  );
  const deliveries = await pool.query<{ id: number }>(
    `INSERT INTO deliveries (project_id, message_id, subscriber_id, channel, destination, status, sent_at)
     SELECT $1, $2, s, 'email', s || '@example.com', 'sent', now() FROM unnest($3::text[]) s RETURNING id`,
    [who.projectId, messageId, rows.map((r) => r.id)],
  );
  const ids = deliveries.rows.map((r) => r.id);
  let next = 0;
  for (const [type, n] of [['bounced', counts.bounced ?? 0], ['complained', counts.complained ?? 0], ['opened', counts.opened ?? 0]] as const) {
    const some = ids.slice(next, next + n);
    next += n;
    await pool.query(
      `INSERT INTO delivery_events (delivery_id, project_id, message_id, type, occurred_at) SELECT d, $1, $2, $3::delivery_event, now() FROM unnest($4::bigint[]) d`,
      [who.projectId, messageId, type, some],
    );
  }
}

describe('a new project', () => {
  it('opens on zeros for every day of the window, the VAPID warning and an unticked checklist', async () => {
    const o = await overview(tenant);
    expect(o.days).toBe(30);
    expect(o.audience).toEqual({ people: 0, push: 0, email: 0, sms: 0, whatsapp: 0 });
    expect(o.growth).toHaveLength(30);
    expect(o.sends).toHaveLength(30);
    expect(o.growth.at(-1)!.day).toBe(today());
    expect(o.growth.every((g) => g.subscribed === 0)).toBe(true);
    expect(o.sends.every((s) => s.push + s.email + s.sms + s.whatsapp === 0)).toBe(true);
    // Consecutive UTC days, oldest first.
    for (let i = 1; i < o.growth.length; i++) {
      expect(Date.parse(o.growth[i]!.day) - Date.parse(o.growth[i - 1]!.day)).toBe(86_400_000);
    }
    expect(o.rates).toEqual({ email: { sent: 0, delivered: 0, opened: 0, clicked: 0, bounced: 0, complained: 0 }, push: { sent: 0, delivered: 0, clicked: 0 } });
    expect(o.recent).toEqual({ campaigns: [], automations: [] });
    expect(o.health).toEqual([{ code: 'vapid_subject_unset', severity: 'warning', fix: 'settings' }]);
    expect(o.checklist).toEqual([
      { step: 'install_sdk', done: false },
      { step: 'verify_domain', done: false },
      { step: 'connect_provider', done: false },
      { step: 'add_people', done: false },
      { step: 'first_campaign', done: false },
    ]);
  });

  it('takes a window of 1 to 365 days and refuses any other', async () => {
    const week = await overview(tenant, '?days=7');
    expect(week.growth.map((g) => g.day)).toEqual(week.sends.map((s) => s.day));
    expect(week.growth).toHaveLength(7);
    expect(week.growth.at(-1)!.day).toBe(today());
    expect((await overview(tenant, '?days=1')).growth).toHaveLength(1);
    expect((await overview(tenant, '?days=365')).sends).toHaveLength(365);
    for (const days of ['0', '366', '-1', '2.5', 'month']) {
      const res = await t.app.inject({ method: 'GET', url: `/projects/${tenant.projectId}/overview?days=${days}`, headers: tenant.jwt });
      expect(res.statusCode, days).toBe(422);
    }
  });
});

describe('tenancy', () => {
  it.each(['', '/activity', '/audience'])("overview%s: another organization's project is 404; without x-org-id 403; with an API key refused", async (part) => {
    const foreign = await t.app.inject({ method: 'GET', url: `/projects/${other.projectId}/overview${part}`, headers: tenant.jwt });
    expect(foreign.statusCode).toBe(404);
    const noOrg = await t.app.inject({ method: 'GET', url: `/projects/${tenant.projectId}/overview${part}`, headers: { authorization: tenant.jwt.authorization! } });
    expect(noOrg.statusCode).toBe(403);
    const key = await t.app.inject({ method: 'GET', url: `/projects/${tenant.projectId}/overview${part}`, headers: tenant.live });
    expect([401, 403]).toContain(key.statusCode);
    const anonymous = await t.app.inject({ method: 'GET', url: `/projects/${tenant.projectId}/overview${part}` });
    expect(anonymous.statusCode).toBe(401);
  });

  it('is open to a VIEWER', async () => {
    const viewer = await addMember(t, tenant, 'VIEWER');
    expect((await overview(tenant, '', viewer.headers)).days).toBe(30);
  });
});

describe('a project with people and a sent campaign', () => {
  beforeAll(async () => {
    await device(tenant);
    await device(tenant);
    await contact(tenant, { email: 'ada@example.com' });
    await contact(tenant, { email: 'ADA@example.com', phone: '+442079460000' });
    // The sandbox's people and sends are not the project's audience.
    await contact(tenant, { email: 'sandbox@example.com' }, tenant.test);
    await device(tenant, tenant.test);
    await device(other);

    const created = await t.app.inject({
      method: 'POST',
      url: '/campaigns',
      headers: tenant.jwt,
      payload: { name: 'Spring sale', projectId: tenant.projectId, content: { title: 'Spring', body: '20% off' }, segment: { filters: {} }, schedule: { mode: 'immediate' } },
    });
    expect(created.statusCode, created.body).toBe(201);
    await t.services.campaigns.dispatch(tenant.projectId, created.json<{ id: string }>().id);
    await drain();
    const automation = await t.app.inject({ method: 'POST', url: '/automations/from-starter', headers: tenant.jwt, payload: { projectId: tenant.projectId, starter: 'welcome-series', name: 'Welcome' } });
    expect(automation.statusCode, automation.body).toBe(201);
  });

  it('counts the live people reachable on each channel, an address once', async () => {
    const o = await overview(tenant);
    expect(o.audience).toEqual({ people: 4, push: 2, email: 1, sms: 1, whatsapp: 1 });
    expect(o.growth.at(-1)).toEqual({ day: today(), subscribed: 4 });
    expect(o.growth.slice(0, -1).every((g) => g.subscribed === 0)).toBe(true);
  });

  it('counts the pushes sent today and lists the campaign and the automation', async () => {
    const o = await overview(tenant);
    expect(o.sends.at(-1)).toEqual({ day: today(), push: 2, email: 0, sms: 0, whatsapp: 0 });
    expect(o.rates.push.sent).toBe(2);
    expect(o.recent.campaigns).toMatchObject([{ channel: 'push', name: 'Spring sale', status: 'sent' }]);
    expect(o.recent.automations).toMatchObject([{ name: 'Welcome', status: 'draft' }]);
    expect(done(o)).toEqual({ install_sdk: true, verify_domain: false, connect_provider: false, add_people: true, first_campaign: true });
  });

  it('answers in the two parts the dashboard asks for, each the same figures as the whole', async () => {
    const { audience, ...activity } = await overview(tenant, '?days=7');
    const activityRes = await t.app.inject({ method: 'GET', url: `/projects/${tenant.projectId}/overview/activity?days=7`, headers: tenant.jwt });
    expect(activityRes.statusCode, activityRes.body).toBe(200);
    expect(activityRes.json()).toEqual(activity);
    const audienceRes = await t.app.inject({ method: 'GET', url: `/projects/${tenant.projectId}/overview/audience`, headers: tenant.jwt });
    expect(audienceRes.statusCode, audienceRes.body).toBe(200);
    expect(audienceRes.json()).toEqual(audience);
    const badWindow = await t.app.inject({ method: 'GET', url: `/projects/${tenant.projectId}/overview/activity?days=0`, headers: tenant.jwt });
    expect(badWindow.statusCode).toBe(422);
  });

  it("shows nothing of it to the other organization's project", async () => {
    const o = await overview(other);
    expect(o.audience).toEqual({ people: 1, push: 1, email: 0, sms: 0, whatsapp: 0 });
    expect(o.sends.every((s) => s.push === 0)).toBe(true);
    expect(o.recent).toEqual({ campaigns: [], automations: [] });
  });
});

describe('health', () => {
  let who: Tenant;
  beforeAll(async () => {
    who = await createTenant(t);
  });

  it('asks for a VAPID contact until the project names one', async () => {
    expect(codes(await overview(who))).toEqual(['vapid_subject_unset']);
    const res = await t.app.inject({ method: 'PATCH', url: `/projects/${who.projectId}`, headers: who.jwt, payload: { settings: { vapidSubject: 'mailto:ops@example.com' } } });
    expect(res.statusCode, res.body).toBe(200);
    expect(codes(await overview(who))).toEqual([]);
  });

  it('asks for a provider once email is in use, then for a verified domain, and is quiet once both are there', async () => {
    const added = await t.app.inject({ method: 'POST', url: `/projects/${who.projectId}/email-domains`, headers: who.jwt, payload: { domain: 'pending.example.com' } });
    expect(added.statusCode, added.body).toBe(201);
    expect((await overview(who)).health).toEqual([{ code: 'email_provider_missing', severity: 'warning', fix: 'email-provider' }]);

    const provider = await t.app.inject({
      method: 'PUT',
      url: `/projects/${who.projectId}/channels/email`,
      headers: who.jwt,
      payload: { provider: 'smtp', settings: { host: '127.0.0.1', port: 2525, secure: false } },
    });
    expect(provider.statusCode, provider.body).toBe(200);
    let o = await overview(who);
    expect(o.health).toEqual([{ code: 'no_verified_domain', severity: 'critical', fix: 'domains' }]);
    expect(done(o)).toMatchObject({ connect_provider: true, verify_domain: false });

    await verifiedDomain(t, dns, who, 'mail.example.com');
    o = await overview(who);
    expect(o.health).toEqual([]);
    expect(done(o)).toMatchObject({ connect_provider: true, verify_domain: true });
  });

  it('warns of bounces above 2 % and complaints above 0.1 % of 100 emails or more, and stops once they fall below', async () => {
    // Under 100 sent, nothing is said however bad.
    await emailSends(who, { sent: 50, bounced: 10, complained: 5 });
    expect(codes(await overview(who))).toEqual([]);
    // The sandbox's sends count for nothing.
    await emailSends(who, { sent: 200, bounced: 100, complained: 100 }, true);
    expect(codes(await overview(who))).toEqual([]);

    await emailSends(who, { sent: 150, opened: 30 });
    let o = await overview(who);
    // 200 sent, 10 bounced (5 %), 5 complaints (2.5 %: critical beyond Gmail's 0.3 %).
    expect(o.rates.email).toEqual({ sent: 200, delivered: 0, opened: 30, clicked: 0, bounced: 10, complained: 5 });
    expect(o.sends.at(-1)!.email).toBe(200);
    expect(o.health).toEqual([
      { code: 'complaint_rate_high', severity: 'critical', fix: 'suppressions' },
      { code: 'bounce_rate_high', severity: 'warning', fix: 'suppressions' },
    ]);

    await emailSends(who, { sent: 4800 });
    o = await overview(who);
    // 5,000 sent: 0.2 % bounced, 0.1 % complained — at the threshold, not above it.
    expect(o.rates.email.sent).toBe(5000);
    expect(o.health).toEqual([]);
  });
});

describe('the audience', () => {
  let who: Tenant;
  beforeAll(async () => {
    who = await createTenant(t);
    // One address on two devices, in two cases, with a number that blocked WhatsApp.
    await update(who, await device(who), { email: 'ada@example.com', phone: '+14155550111' });
    await update(who, await device(who), { email: 'ADA@example.com' });
    // An address one holder turned email off for: no holder of it is emailed.
    await update(who, await device(who), { email: 'bo@example.com', preferences: { channels: { email: false } } });
    await contact(who, { email: 'bo@example.com' });
    // SMS turned off, WhatsApp kept.
    await contact(who, { email: 'cy@example.com', phone: '+14155550112', preferences: { channels: { sms: false } } });
    // An address unsubscribed.
    await contact(who, { email: 'dee@example.com' });
    const suppressed = await t.app.inject({ method: 'POST', url: `/projects/${who.projectId}/suppressions`, headers: who.live, payload: { email: 'dee@example.com', reason: 'unsubscribed' } });
    expect(suppressed.statusCode, suppressed.body).toBe(201);
    await t.database.pool.query(`INSERT INTO channel_addresses (project_id, sandbox, channel, address, status, status_reason) VALUES ($1, false, 'whatsapp', '+14155550111', 'opted_out', 'whatsapp_block')`, [
      who.projectId,
    ]);
    // Devices unsubscribed from push: one whose address still reaches its person, one with nothing left.
    for (const email of ['eve@example.com', undefined]) {
      const token = await device(who);
      if (email) await update(who, token, { email });
      const gone = await t.app.inject({ method: 'POST', url: '/subscribers/unsubscribe', headers: who.live, payload: { token } });
      expect(gone.statusCode, gone.body).toBe(200);
    }
    // Push turned off; and the sandbox, which is not the live audience.
    await update(who, await device(who), { preferences: { channels: { push: false } } });
    await contact(who, { email: 'zed@example.com', phone: '+14155550113' }, who.test);
  });

  it('counts on each channel exactly the recipients a campaign to everyone would snapshot', async () => {
    const o = await overview(who);
    expect(o.audience).toEqual({ people: 8, push: 3, email: 3, sms: 1, whatsapp: 1 });
    const scope = { organizationId: who.orgId, projectId: who.projectId, sandbox: false };
    for (const channel of ['push', 'email', 'sms', 'whatsapp'] as const) {
      const messageId = newId('msg');
      await t.database.pool.query(`INSERT INTO messages (id, project_id, channel, source, sandbox, content, options) VALUES ($1, $2, $3, 'campaign', false, '{}', '{}')`, [
        messageId,
        who.projectId,
        channel,
      ]);
      const snapshotted = await deliveryRepo.snapshotDeliveries(t.database.db, { id: messageId, projectId: who.projectId, channel }, channelAudience(scope, channel, compileSegmentFilter({})));
      expect(snapshotted, channel).toBe(o.audience[channel]);
    }
  });

  it('counts as people exactly the rows an export of everyone holds', async () => {
    const segment = await t.app.inject({ method: 'POST', url: '/segments', headers: who.live, payload: { projectId: who.projectId, name: 'Everyone', filters: {} } });
    expect(segment.statusCode, segment.body).toBe(201);
    const csv = await t.app.inject({ method: 'GET', url: `/segments/project/${who.projectId}/export.csv?segmentId=${segment.json<{ id: string }>().id}`, headers: who.live });
    expect(csv.statusCode, csv.body).toBe(200);
    const rows = csv.body.trim().split('\n').length - 1;
    expect(rows).toBe((await overview(who)).audience.people);
  });
});
