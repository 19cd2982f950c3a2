// People, not devices: push reaches devices, email an address once, SMS and WhatsApp a number once; a push
// subscription gone (410) takes the device out of push only. Through the reach route, the engine and a snapshot.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROME_UA, createTenant, type Tenant } from '../../../test/fixtures.js';
import { startTestApp, type TestApp } from '../../../test/harness.js';
import { createFakeBrowser, startPushService, type FakeBrowser, type PushService } from '../../../test/push-service.js';
import { snapshotDeliveries } from '../../delivery/delivery.repository.js';
import { newId } from '../../shared/ids.js';
import { compileSegmentFilter } from './segment-filter.js';
import { channelAudience } from './segment.repository.js';

let t: TestApp;
let push: PushService;

beforeAll(async () => {
  push = await startPushService();
  t = await startTestApp({ ALLOW_INSECURE_PUSH_ENDPOINTS: 'true', PUBLIC_URL: 'https://herald.example.com' });
});
afterAll(async () => {
  await t.close();
  await push.close();
});

/** A device of `externalId` registered by the SDK, with contact fields set: returns its token and browser. */
async function device(tenant: Tenant, externalId: string, fields: Record<string, unknown>): Promise<{ id: string; token: string; browser: FakeBrowser }> {
  const browser = createFakeBrowser();
  const res = await t.app.inject({
    method: 'POST',
    url: '/subscribers',
    headers: tenant.live,
    payload: { projectId: tenant.projectId, endpoint: push.endpointFor(browser), p256dh: browser.p256dh, auth: browser.auth, userAgent: CHROME_UA },
  });
  const { id, token } = res.json<{ id: string; token: string }>();
  await t.app.inject({ method: 'POST', url: '/subscribers/identify', headers: tenant.live, payload: { token, externalId } });
  await t.app.inject({ method: 'POST', url: '/subscribers/update', headers: tenant.live, payload: { token, ...fields } });
  return { id, token, browser };
}

const reach = async (tenant: Tenant, channel: string, filters: Record<string, unknown> = {}) => {
  const res = await t.app.inject({ method: 'POST', url: '/segments/reach', headers: tenant.live, payload: { projectId: tenant.projectId, filters, channel } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ count: number }>().count;
};

/** The person at `email` unsubscribed (recorded as the suppression list records it). */
const unsubscribe = async (tenant: Tenant, email: string) => {
  const res = await t.app.inject({ method: 'POST', url: `/projects/${tenant.projectId}/suppressions`, headers: tenant.live, payload: { email, reason: 'unsubscribed' } });
  expect(res.statusCode, res.body).toBe(201);
};

describe('a person with three push devices and one email address', () => {
  let tenant: Tenant;
  let devices: Awaited<ReturnType<typeof device>>[];

  beforeAll(async () => {
    tenant = await createTenant(t);
    // The same address on every device, written in different cases.
    devices = [
      await device(tenant, 'ada', { email: 'ada@example.com', phone: '+44 20 7946 0000' }),
      await device(tenant, 'ada', { email: 'Ada@Example.com', phone: '+442079460000' }),
      await device(tenant, 'ada', { email: 'ADA@example.com' }),
    ];
  });

  it('is three push recipients, one email recipient and one SMS recipient', async () => {
    expect(await reach(tenant, 'push')).toBe(3);
    expect(await reach(tenant, 'email')).toBe(1);
    expect(await reach(tenant, 'sms')).toBe(1);
    expect(await reach(tenant, 'whatsapp')).toBe(1);
  });

  it('is snapshotted into one email delivery, addressed to the lower-cased address, and a re-run adds none', async () => {
    const scope = { organizationId: tenant.orgId, projectId: tenant.projectId, sandbox: false };
    const messageId = newId('msg');
    await t.database.pool.query(
      `INSERT INTO messages (id, project_id, channel, source, sandbox, content, options) VALUES ($1, $2, 'email', 'campaign', false, '{}', '{}')`,
      [messageId, tenant.projectId],
    );
    const message = { id: messageId, projectId: tenant.projectId, channel: 'email' as const };
    const audience = channelAudience(scope, 'email', compileSegmentFilter({}));
    expect(await snapshotDeliveries(t.database.db, message, audience)).toBe(1);
    expect(await snapshotDeliveries(t.database.db, message, audience)).toBe(0);
    const { rows } = await t.database.pool.query(`SELECT channel, destination, subscriber_id FROM deliveries WHERE message_id = $1`, [messageId]);
    expect(rows).toEqual([{ channel: 'email', destination: 'ada@example.com', subscriber_id: expect.any(String) }]);
    expect(devices.map((d) => d.id)).toContain(rows[0].subscriber_id);
  });

  it('a 410 on one device takes it out of push only: email reach is untouched', async () => {
    push.respond(devices[0]!.browser.id, 410);
    const sent = await t.app.inject({ method: 'POST', url: '/transactional/send', headers: tenant.live, payload: { token: devices[0]!.token, title: 'Hi', body: 'x' } });
    expect(sent.json()).toMatchObject({ delivered: false, deactivated: true, reason: 'subscriber_unsubscribed' });
    // Other filters than the first test's, the same people: counted afresh, not from the 30 s reach cache.
    const everyone = { platform: ['desktop'] };
    expect(await reach(tenant, 'push', everyone)).toBe(2);
    expect(await reach(tenant, 'email', everyone)).toBe(1);
    expect(await reach(tenant, 'sms', everyone)).toBe(1);
  });

  it('leaves out an address that unsubscribed from email, and a person who turned a channel off', async () => {
    const other = await createTenant(t);
    await device(other, 'bob', { email: 'bob@example.com' });
    const carol = await device(other, 'carol', { email: 'carol@example.com', preferences: { channels: { email: false } } });
    expect(await reach(other, 'email')).toBe(1);
    expect(await reach(other, 'push')).toBe(2);
    await unsubscribe(other, 'bob@example.com');
    await t.app.inject({ method: 'POST', url: '/subscribers/update', headers: other.live, payload: { token: carol.token, preferences: { channels: { push: false } } } });
    const fresh = { platform: ['desktop'] };
    expect(await reach(other, 'email', fresh)).toBe(0);
    expect(await reach(other, 'push', fresh)).toBe(1);
  });

  it('what one device says of a shared address holds for the address: an unsubscribe, a channel turned off', async () => {
    const other = await createTenant(t);
    const phone = '+14155550100';
    const [, work] = [await device(other, 'dan', { email: 'dan@example.com', phone }), await device(other, 'dan', { email: 'DAN@example.com', phone })];
    expect([await reach(other, 'email'), await reach(other, 'sms'), await reach(other, 'whatsapp')]).toEqual([1, 1, 1]);
    await unsubscribe(other, 'dan@example.com');
    await t.app.inject({ method: 'POST', url: '/subscribers/update', headers: other.live, payload: { token: work.token, preferences: { channels: { sms: false } } } });
    const fresh = { platform: ['desktop'] };
    expect([await reach(other, 'email', fresh), await reach(other, 'sms', fresh), await reach(other, 'whatsapp', fresh)]).toEqual([0, 0, 1]);
    expect(await reach(other, 'push', fresh)).toBe(2);
  });

  it('leaves out an address opted out or unreachable on one channel, on that channel only', async () => {
    const other = await createTenant(t);
    await device(other, 'erin', { email: 'erin@example.com', phone: '+14155550101' });
    await device(other, 'fay', { email: 'fay@example.com', phone: '+14155550102' });
    await t.database.pool.query(
      `INSERT INTO channel_addresses (project_id, sandbox, channel, address, status, status_reason)
       VALUES ($1, false, 'sms', '+14155550101', 'opted_out', 'sms_stop'), ($1, false, 'email', 'fay@example.com', 'unreachable', 'hard_bounce'),
              ($1, false, 'whatsapp', '+14155550102', 'reachable', NULL),
              -- The sandbox's own states say nothing of live addresses.
              ($1, true, 'whatsapp', '+14155550102', 'opted_out', 'whatsapp_block')`,
      [other.projectId],
    );
    expect(await reach(other, 'sms')).toBe(1);
    expect(await reach(other, 'whatsapp')).toBe(2);
    expect(await reach(other, 'email')).toBe(1);
    expect(await reach(other, 'push')).toBe(2);
  });
});
