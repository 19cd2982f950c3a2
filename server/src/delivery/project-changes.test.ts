// A project's settings apply to the next campaign delivery at once, and are read afresh while the engine's listener is lost.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBackground, type Background } from '../../test/background.js';
import { createTenant, type Tenant } from '../../test/fixtures.js';
import { startTestApp, type TestApp } from '../../test/harness.js';
import { createFakeBrowser, startPushService, type FakeBrowser, type PushService } from '../../test/push-service.js';
import { seedSubscribers } from '../../test/subscriber-seed.js';

/** A TCP relay to PostgreSQL for the engine's listener: cut() drops its connection and refuses new ones until restore(). */
interface Relay {
  port: number;
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

async function startRelay(target: URL): Promise<Relay> {
  const sockets = new Set<net.Socket>();
  let open = true;
  const server = net.createServer((client) => {
    if (!open) return void client.destroy();
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    for (const [socket, peer] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      sockets.add(socket);
      socket.pipe(peer);
      socket.on('error', () => peer.destroy());
      socket.on('close', () => (sockets.delete(socket), peer.destroy()));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const dropAll = () => {
    for (const socket of sockets) socket.destroy();
  };
  return {
    port: (server.address() as net.AddressInfo).port,
    cut() {
      open = false;
      dropAll();
    },
    restore() {
      open = true;
    },
    close: () => new Promise<void>((resolve) => (dropAll(), server.close(() => resolve()))),
  };
}

let t: TestApp;
let push: PushService;
let background: Background;
let relay: Relay;
let unwatch: () => Promise<void>;

beforeAll(async () => {
  t = await startTestApp({ ALLOW_INSECURE_PUSH_ENDPOINTS: 'true', DELIVERY_POLL_INTERVAL_MS: '50', PUBLIC_URL: 'https://herald.example.com' });
  push = await startPushService();
  background = await startBackground(t);
  const url = new URL(t.database.pool.options.connectionString!);
  relay = await startRelay(url);
  const relayed = new URL(url);
  relayed.hostname = '127.0.0.1';
  relayed.port = String(relay.port);
  // As runtime.ts does for a worker role: the engine hears queued deliveries and project changes.
  unwatch = await t.services.delivery.watchChanges({ connectionString: relayed.toString() });
});
afterAll(async () => {
  await unwatch?.();
  await background?.stop();
  await relay?.close();
  await push?.close();
  await t?.close();
});

type Headers = Record<string, string>;
const request = (method: 'GET' | 'POST' | 'PATCH', url: string, headers: Headers, payload?: Record<string, unknown>) =>
  t.app.inject({ method, url, headers, ...(payload && { payload }) });
const query = async <T>(text: string, values: unknown[] = []) => (await t.database.pool.query(text, values)).rows as T[];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Quiet hours from an hour ago to an hour from now, in UTC (the zone of a project and subscribers without one). */
function quietNow() {
  const hhmm = (offsetMs: number) => new Date(Date.now() + offsetMs).toISOString().slice(11, 16);
  return { start: hhmm(-3_600_000), end: hhmm(3_600_000) };
}

async function subscribedBrowser(who: Tenant): Promise<{ browser: FakeBrowser; token: string }> {
  const browser = createFakeBrowser();
  const [id] = await seedSubscribers(t.database.pool, who.projectId, [{ endpoint: push.endpointFor(browser), p256dh: browser.p256dh, auth: browser.auth }]);
  return { browser, token: `st_${id!}` };
}

async function createCampaign(who: Tenant): Promise<string> {
  const res = await request('POST', '/campaigns', who.jwt, {
    name: 'Now',
    projectId: who.projectId,
    content: { title: 'Hello', body: 'World' },
    segment: { filters: {} },
    schedule: { mode: 'immediate' },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json<{ id: string }>().id;
}

/** Waits until every delivery of the campaign has left `queued`-without-reason / `sending`: sent, held or suppressed. */
async function decided(campaignId: string): Promise<{ status: string; reason: string | null }[]> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const rows = await query<{ status: string; reason: string | null }>(
      `SELECT d.status, d.reason FROM deliveries d JOIN messages m ON m.id = d.message_id WHERE m.campaign_id = $1`,
      [campaignId],
    );
    if (rows.length > 0 && rows.every((r) => r.status !== 'sending' && (r.status !== 'queued' || r.reason !== null))) return rows;
    if (Date.now() > deadline) throw new Error(`deliveries of ${campaignId} not decided: ${JSON.stringify(rows)}`);
    await sleep(25);
  }
}

describe('project settings and campaign deliveries', () => {
  it('quiet hours switched on through PATCH hold a campaign created right after, as they hold a transactional send', async () => {
    const tenant = await createTenant(t);
    const { browser, token } = await subscribedBrowser(tenant);
    // A first campaign goes out: the engine has read (and may keep) the project's sending settings.
    expect(await decided(await createCampaign(tenant))).toEqual([{ status: 'sent', reason: null }]);
    expect(push.requestsFor(browser.id)).toHaveLength(1);

    const patched = await request('PATCH', `/projects/${tenant.projectId}`, tenant.jwt, { settings: { deliveryPolicy: { quietHours: quietNow() } } });
    expect(patched.statusCode, patched.body).toBe(200);
    const transactional = await request('POST', '/transactional/send', tenant.live, { token, title: 'Now', body: 'Now' });
    expect(transactional.json()).toMatchObject({ delivered: false, reason: 'quiet_hours' });
    const campaignId = await createCampaign(tenant);

    expect(await decided(campaignId)).toEqual([{ status: 'queued', reason: 'quiet_hours' }]);
    await sleep(200);
    expect(push.requestsFor(browser.id)).toHaveLength(1);
  });

  it('while the listener is disconnected, each batch reads the settings: a change it could not hear of applies at once', async () => {
    const tenant = await createTenant(t);
    const { browser } = await subscribedBrowser(tenant);
    expect(await decided(await createCampaign(tenant))).toEqual([{ status: 'sent', reason: null }]);

    relay.cut();
    try {
      // Written as another process would; its notification goes out while this engine cannot hear it.
      await query(`UPDATE projects SET settings = settings || $2::jsonb WHERE id = $1`, [
        tenant.projectId,
        JSON.stringify({ deliveryPolicy: { quietHours: quietNow() } }),
      ]);
      await query(`SELECT pg_notify('herald_project_changes', $1)`, [JSON.stringify({ projectId: tenant.projectId })]);
      const campaignId = await createCampaign(tenant);
      expect(await decided(campaignId)).toEqual([{ status: 'queued', reason: 'quiet_hours' }]);
      await sleep(200);
      expect(push.requestsFor(browser.id)).toHaveLength(1);
    } finally {
      relay.restore();
    }
    // Reconnected (retried each second).
    const deadline = Date.now() + 10_000;
    while ((await query(`SELECT 1 FROM pg_stat_activity WHERE application_name = 'herald-delivery-listener' AND datname = current_database()`)).length === 0) {
      expect(Date.now()).toBeLessThan(deadline);
      await sleep(100);
    }
  });
});
