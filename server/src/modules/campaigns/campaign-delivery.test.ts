// Campaigns end to end with the real moving parts: graphile-worker runs the dispatch jobs, the delivery engine sends
// through the local push service (real web push) or the sandbox, tracking reports move the stats, the project's
// delivery policy holds or suppresses pushes, and the progress stream is read over a real HTTP connection.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBackground, type Background } from '../../../test/background.js';
import { addMember, createTenant, type Tenant } from '../../../test/fixtures.js';
import { startTestApp, type TestApp } from '../../../test/harness.js';
import { createFakeBrowser, startPushService, type FakeBrowser, type PushService } from '../../../test/push-service.js';
import { seedSubscribers } from '../../../test/subscriber-seed.js';

const PUBLIC_URL = 'https://herald.example.com';

let t: TestApp;
let push: PushService;
let background: Background;
let fixedNow: Date | undefined;
let baseUrl: string;

beforeAll(async () => {
  t = await startTestApp(
    { ALLOW_INSECURE_PUSH_ENDPOINTS: 'true', DELIVERY_POLL_INTERVAL_MS: '50', DELIVERY_RETRY_BASE_MS: '50', PUBLIC_URL },
    { clock: () => fixedNow ?? new Date() },
  );
  push = await startPushService();
  background = await startBackground(t);
  baseUrl = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await background?.stop();
  await push?.close();
  await t?.close();
});

type Headers = Record<string, string>;
const request = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, headers: Headers, payload?: unknown) =>
  t.app.inject({ method, url, headers, ...(payload !== undefined && { payload: payload as Record<string, unknown> }) });
const query = async <T = Record<string, unknown>>(text: string, values: unknown[] = []) => (await t.database.pool.query(text, values)).rows as T[];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Campaign {
  id: string;
  status: string;
  stats: Record<string, number>;
}

async function create(who: Tenant, headers: Headers, overrides: Record<string, unknown>): Promise<Campaign> {
  const res = await request('POST', '/campaigns', headers, {
    name: 'Campaign',
    projectId: who.projectId,
    content: { title: 'Hello', body: 'World' },
    segment: { filters: {} },
    schedule: { mode: 'immediate' },
    ...overrides,
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json<Campaign>();
}

const read = async (who: Tenant, id: string) => (await request('GET', `/campaigns/${id}`, who.jwt)).json<Campaign>();

async function until(who: Tenant, id: string, done: (c: Campaign) => boolean, timeoutMs = 20_000): Promise<Campaign> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const campaign = await read(who, id);
    if (done(campaign)) return campaign;
    if (Date.now() > deadline) throw new Error(`campaign ${id} did not get there: ${JSON.stringify(campaign)}`);
    await sleep(50);
  }
}

/** Browsers subscribed through the local push service, stored as subscribers of the project. */
async function browsers(who: Tenant, n: number, extra: Parameters<typeof seedSubscribers>[2][number] = {}): Promise<FakeBrowser[]> {
  const list = Array.from({ length: n }, () => createFakeBrowser());
  await seedSubscribers(
    t.database.pool,
    who.projectId,
    list.map((browser) => ({ endpoint: push.endpointFor(browser), p256dh: browser.p256dh, auth: browser.auth, ...extra })),
  );
  return list;
}

const pushesTo = (browser: FakeBrowser) => push.requestsFor(browser.id);

describe('a live campaign through the local push service', () => {
  let tenant: Tenant;
  beforeAll(async () => {
    tenant = await createTenant(t);
  });

  it('reaches every recipient once with UTM-tagged links, ends sent, and counts tracking reports', async () => {
    // Action URLs of ordinary length (well past 64 characters), tagged like the click URL.
    const buy = `https://shop.example.com/products/${'spring-collection-'.repeat(6)}buy?size=m`;
    const audience = await browsers(tenant, 25, { tags: ['e2e'] });
    const outsiders = await browsers(tenant, 3, { tags: ['other'] });
    const created = await create(tenant, tenant.jwt, {
      segment: { filters: { tags: ['e2e'] } },
      content: {
        title: 'Sale',
        body: 'Now on',
        clickUrl: 'https://shop.example.com/sale?ref=push#top',
        actions: [
          { action: buy, title: 'Buy' },
          { action: 'https://shop.example.com/later#list', title: 'Later' },
        ],
      },
      utm: { source: 'herald', campaign: 'sale' },
    });
    expect(created).toMatchObject({ status: 'sending', stats: { queued: 25 } });
    const done = await until(tenant, created.id, (c) => c.status === 'sent');
    expect(done.stats).toMatchObject({ queued: 25, sent: 25, failed: 0, suppressed: 0 });

    for (const browser of audience) {
      const received = pushesTo(browser);
      expect(received).toHaveLength(1);
      expect(received[0]).toMatchObject({ status: 201, headers: { ttl: '86400', urgency: 'normal' } });
      expect(received[0]!.payload).toMatchObject({
        title: 'Sale',
        body: 'Now on',
        url: 'https://shop.example.com/sale?ref=push&utm_source=herald&utm_campaign=sale#top',
        actions: [
          { action: `${buy}&utm_source=herald&utm_campaign=sale`, title: 'Buy' },
          { action: 'https://shop.example.com/later?utm_source=herald&utm_campaign=sale#list', title: 'Later' },
        ],
        track: expect.stringMatching(new RegExp(`^${PUBLIC_URL}/t/[\\w-]{22}$`)),
      });
    }
    for (const browser of outsiders) expect(pushesTo(browser)).toEqual([]);

    // The service worker reports what happened, sometimes twice.
    const tracks = audience.map((browser) => (pushesTo(browser)[0]!.payload as { track: string }).track.slice(PUBLIC_URL.length));
    const report = (track: string, event: string) => t.app.inject({ method: 'POST', url: `${track}/${event}` });
    await Promise.all(tracks.slice(0, 10).flatMap((track) => [report(track, 'delivered'), report(track, 'delivered')]));
    await Promise.all(tracks.slice(0, 4).flatMap((track) => [report(track, 'clicked'), report(track, 'clicked')]));
    await Promise.all(tracks.slice(4, 6).map((track) => report(track, 'dismissed')));
    expect((await read(tenant, created.id)).stats).toEqual({
      queued: 25,
      sent: 25,
      delivered: 10,
      clicked: 4,
      dismissed: 2,
      failed: 0,
      suppressed: 0,
      ctr: 0.16,
      deliveryRate: 0.4,
    });
  });

  it('retries what may succeed later, and counts gone and refused subscriptions as failed', async () => {
    const [gone, refused, flaky, ...fine] = await browsers(tenant, 6, { tags: ['failures'] });
    push.respond(gone!.id, 410);
    push.respond(refused!.id, 400);
    push.respond(flaky!.id, 503, 503);
    const created = await create(tenant, tenant.jwt, { segment: { filters: { tags: ['failures'] } } });
    const done = await until(tenant, created.id, (c) => c.status === 'sent');
    expect(done.stats).toMatchObject({ queued: 6, sent: 4, failed: 2 });
    expect(pushesTo(flaky!).map((r) => r.status)).toEqual([503, 503, 201]);
    for (const browser of fine) expect(pushesTo(browser)).toHaveLength(1);
    const [subscriber] = await query<{ status: string }>('SELECT status FROM subscribers WHERE endpoint = $1', [push.endpointFor(gone!)]);
    expect(subscriber!.status).toBe('unsubscribed');
  });

  it('an endpoint the guard refuses fails once, without a retry, and its subscriber is left out of later campaigns', async () => {
    // Rows stored before registration refused such endpoints (or whose host name resolves to a private address).
    const refusedEndpoints = ['https://10.0.0.1/push/a', 'https://[fd00::1]/push/b', 'https://169.254.169.254/latest/meta-data'];
    const blockedIds = await seedSubscribers(
      t.database.pool,
      tenant.projectId,
      refusedEndpoints.map((endpoint) => ({ endpoint, tags: ['refused-endpoints'] })),
    );
    const [fine] = await browsers(tenant, 1, { tags: ['refused-endpoints'] });
    const segment = { filters: { tags: ['refused-endpoints'] } };

    const first = await create(tenant, tenant.jwt, { segment });
    expect((await until(tenant, first.id, (c) => c.status === 'sent')).stats).toMatchObject({ queued: 4, sent: 1, failed: 3 });
    const deliveries = await query(
      'SELECT status, reason, provider_code, attempts FROM deliveries WHERE subscriber_id = ANY($1) ORDER BY subscriber_id',
      [blockedIds],
    );
    expect(deliveries).toEqual(blockedIds.map(() => ({ status: 'failed', reason: 'provider_error', provider_code: 'blocked_endpoint', attempts: 1 })));
    const states = await query('SELECT status, status_reason FROM subscribers WHERE id = ANY($1)', [blockedIds]);
    expect(states).toEqual(blockedIds.map(() => ({ status: 'inactive', status_reason: 'push_endpoint_refused' })));

    const second = await create(tenant, tenant.jwt, { segment });
    expect(second.stats).toMatchObject({ queued: 1 });
    expect((await until(tenant, second.id, (c) => c.status === 'sent')).stats).toMatchObject({ queued: 1, sent: 1, failed: 0 });
    expect(await query('SELECT count(*)::int AS n FROM deliveries WHERE subscriber_id = ANY($1)', [blockedIds])).toEqual([{ n: 3 }]);
    expect(pushesTo(fine!)).toHaveLength(2);
  });

  it('a scheduled campaign goes out at its time, once', async () => {
    const audience = await browsers(tenant, 5, { tags: ['scheduled'] });
    const created = await create(tenant, tenant.jwt, {
      segment: { filters: { tags: ['scheduled'] } },
      schedule: { mode: 'scheduled', sendAt: new Date(Date.now() + 1_500).toISOString() },
    });
    expect(created.status).toBe('scheduled');
    await sleep(500);
    expect(audience.flatMap(pushesTo)).toEqual([]);
    const done = await until(tenant, created.id, (c) => c.status === 'sent');
    expect(done.stats).toMatchObject({ queued: 5, sent: 5 });
    for (const browser of audience) expect(pushesTo(browser)).toHaveLength(1);
    expect(await query('SELECT id FROM messages WHERE campaign_id = $1', [created.id])).toHaveLength(1);
  });

  it('a test-key campaign runs the full flow and nothing reaches a push service', async () => {
    const sandboxed = await browsers(tenant, 8, { sandbox: true, tags: ['sandbox'] });
    const live = await browsers(tenant, 2, { tags: ['sandbox'] });
    const created = await create(tenant, tenant.test, { segment: { filters: { tags: ['sandbox'] } } });
    expect(created).toMatchObject({ status: 'sending', stats: { queued: 8 } });
    const done = await until(tenant, created.id, (c) => c.status === 'sent');
    expect(done.stats).toMatchObject({ queued: 8, sent: 8, failed: 0 });
    expect([...sandboxed, ...live].flatMap(pushesTo)).toEqual([]);
    const codes = await query<{ provider_code: string }>(
      'SELECT DISTINCT d.provider_code FROM deliveries d JOIN messages m ON m.id = d.message_id WHERE m.campaign_id = $1',
      [created.id],
    );
    expect(codes).toEqual([{ provider_code: 'sandbox' }]);
  });
});

describe("the project's delivery policy on campaign deliveries", () => {
  it('suppresses pushes over the frequency cap', async () => {
    const tenant = await createTenant(t);
    const patched = await request('PATCH', `/projects/${tenant.projectId}`, tenant.jwt, {
      settings: { deliveryPolicy: { frequencyCap: { max: 1, windowSeconds: 3600 } } },
    });
    expect(patched.statusCode, patched.body).toBe(200);
    const earlier = await browsers(tenant, 4, { tags: ['capped'] });
    const first = await create(tenant, tenant.jwt, { segment: { filters: { tags: ['capped'] } } });
    await until(tenant, first.id, (c) => c.status === 'sent');
    const newcomers = await browsers(tenant, 2, { tags: ['capped'] });
    const second = await create(tenant, tenant.jwt, { segment: { filters: { tags: ['capped'] } } });
    const done = await until(tenant, second.id, (c) => c.status === 'sent');
    expect(done.stats).toMatchObject({ queued: 6, sent: 2, suppressed: 4, failed: 0 });
    for (const browser of [...earlier, ...newcomers]) expect(pushesTo(browser)).toHaveLength(1);
    const reasons = await query<{ reason: string; n: number }>(
      `SELECT d.reason, count(*)::int AS n FROM deliveries d JOIN messages m ON m.id = d.message_id
       WHERE m.campaign_id = $1 AND d.status = 'suppressed' GROUP BY d.reason`,
      [second.id],
    );
    expect(reasons).toEqual([{ reason: 'frequency_capped', n: 4 }]);
  });

  it('holds pushes during quiet hours in each subscriber zone until they end, then sends them', async () => {
    const tenant = await createTenant(t);
    await request('PATCH', `/projects/${tenant.projectId}`, tenant.jwt, {
      settings: { timezone: 'Asia/Tokyo', deliveryPolicy: { quietHours: { start: '22:00', end: '07:00' } } },
    });
    const [paris] = await browsers(tenant, 1, { tags: ['quiet'], timezone: 'Europe/Paris' });
    const [newYork] = await browsers(tenant, 1, { tags: ['quiet'], timezone: 'America/New_York' });
    const [tokyo] = await browsers(tenant, 1, { tags: ['quiet'] }); // no zone of its own: the project's
    fixedNow = new Date('2026-06-01T21:30:00Z'); // 23:30 in Paris, 17:30 in New York, 06:30 in Tokyo
    try {
      const created = await create(tenant, tenant.jwt, { segment: { filters: { tags: ['quiet'] } } });
      await until(tenant, created.id, (c) => c.stats.sent === 1);
      await sleep(300);
      expect(pushesTo(newYork!)).toHaveLength(1);
      expect([...pushesTo(paris!), ...pushesTo(tokyo!)]).toEqual([]);
      const held = await query<{ endpoint: string; status: string; reason: string; attempts: number; wait_s: number }>(
        `SELECT s.endpoint, d.status, d.reason, d.attempts, round(extract(epoch FROM d.next_attempt_at - now()))::int AS wait_s
         FROM deliveries d JOIN subscribers s ON s.id = d.subscriber_id JOIN messages m ON m.id = d.message_id
         WHERE m.campaign_id = $1 AND d.status <> 'sent' ORDER BY wait_s`,
        [created.id],
      );
      expect(held).toMatchObject([
        { endpoint: push.endpointFor(tokyo!), status: 'queued', reason: 'quiet_hours', attempts: 0 },
        { endpoint: push.endpointFor(paris!), status: 'queued', reason: 'quiet_hours', attempts: 0 },
      ]);
      expect(Math.abs(held[0]!.wait_s - 30 * 60)).toBeLessThanOrEqual(2); // 07:00 in Tokyo
      expect(Math.abs(held[1]!.wait_s - 7.5 * 3600)).toBeLessThanOrEqual(2); // 07:00 in Paris
      expect((await read(tenant, created.id)).status).toBe('sending');

      // Morning everywhere: the held pushes become due and go out.
      fixedNow = new Date('2026-06-02T05:00:00Z');
      await query(
        `UPDATE deliveries d SET next_attempt_at = now() FROM messages m WHERE m.id = d.message_id AND m.campaign_id = $1 AND d.status = 'queued'`,
        [created.id],
      );
      const done = await until(tenant, created.id, (c) => c.status === 'sent');
      expect(done.stats).toMatchObject({ queued: 3, sent: 3, suppressed: 0 });
      for (const browser of [paris!, newYork!, tokyo!]) expect(pushesTo(browser)).toHaveLength(1);
    } finally {
      fixedNow = undefined;
    }
  });
});

interface Stream {
  events: Record<string, unknown>[];
  comments: string[];
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  close(): void;
}

/** Reads an event stream over a real HTTP connection, as an EventSource would. */
async function openStream(path: string, headers: Headers = {}): Promise<{ status: number; body: string; stream?: Stream }> {
  const abort = new AbortController();
  const res = await fetch(`${baseUrl}${path}`, { headers: { accept: 'text/event-stream', ...headers }, signal: abort.signal });
  if (res.status !== 200) return { status: res.status, body: await res.text() };
  expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
  const stream: Stream = { events: [], comments: [], ended: Promise.resolve(), close: () => abort.abort() };
  stream.ended = (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of res.body!) {
        buffer += decoder.decode(chunk as Uint8Array, { stream: true });
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) !== -1) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          for (const line of block.split('\n')) {
            if (line.startsWith('data: ')) stream.events.push(JSON.parse(line.slice(6)) as Record<string, unknown>);
            else if (line.startsWith(':')) stream.comments.push(line);
          }
        }
      }
    } catch (error) {
      if (!abort.signal.aborted) throw error;
    }
  })();
  return { status: 200, body: '', stream };
}

describe('GET /campaigns/:id/stream over HTTP', () => {
  let tenant: Tenant;
  let other: Tenant;
  const streamPath = (id: string, token = tenant.token, orgId = tenant.orgId) => `/campaigns/${id}/stream?token=${token}&orgId=${orgId}`;

  beforeAll(async () => {
    [tenant, other] = await Promise.all([createTenant(t), createTenant(t)]);
  });

  it('sends a snapshot on connect, then coalesced changes, and ends after the final status', async () => {
    await browsers(tenant, 40, { tags: ['streamed'] });
    const draft = await create(tenant, tenant.jwt, { segment: { filters: { tags: ['streamed'] } }, schedule: { mode: 'draft' } });
    const opened = await openStream(streamPath(draft.id));
    expect(opened.status).toBe(200);
    const stream = opened.stream!;
    await sleep(300);
    expect(stream.events).toEqual([
      { status: 'draft', queued: 0, sent: 0, delivered: 0, clicked: 0, dismissed: 0, failed: 0, suppressed: 0, ctr: 0, deliveryRate: 0, sendingIssue: null },
    ]);
    const started = Date.now();
    expect((await request('POST', `/campaigns/${draft.id}/send`, tenant.jwt)).statusCode).toBe(200);
    await stream.ended;
    const elapsed = Date.now() - started;

    const last = stream.events[stream.events.length - 1]!;
    expect(last).toMatchObject({ status: 'sent', queued: 40, sent: 40, clicked: 0, failed: 0 });
    // A small campaign may finish between two polls, so `sending` can be skipped; statuses never go backwards.
    const order = ['draft', 'sending', 'sent'];
    const seen = stream.events.map((e) => order.indexOf(e.status as string));
    expect(seen).toEqual([...seen].sort((a, b) => a - b));
    // Only changes are sent, at most one per poll (400 ms).
    for (let i = 1; i < stream.events.length; i++) expect(stream.events[i]).not.toEqual(stream.events[i - 1]);
    expect(stream.events.length).toBeLessThanOrEqual(2 + Math.ceil(elapsed / 400));
  });

  it('ends at once for a campaign already final, and when the campaign is deleted', async () => {
    const sent = await create(tenant, tenant.jwt, { segment: { filters: { tags: ['nobody'] } } });
    await until(tenant, sent.id, (c) => c.status === 'sent');
    const finished = (await openStream(streamPath(sent.id))).stream!;
    await finished.ended;
    expect(finished.events).toEqual([expect.objectContaining({ status: 'sent', queued: 0 })]);

    const draft = await create(tenant, tenant.jwt, { schedule: { mode: 'draft' } });
    const watching = (await openStream(streamPath(draft.id))).stream!;
    await sleep(100);
    expect((await request('DELETE', `/campaigns/${draft.id}`, tenant.jwt)).statusCode).toBe(204);
    await watching.ended;
    expect(watching.events).toHaveLength(1);
  });

  it('takes only a dashboard token, in the query or the usual headers: API keys get 401, other organizations 403 or 404', async () => {
    const draft = await create(tenant, tenant.jwt, { schedule: { mode: 'draft' } });
    const url = `/campaigns/${draft.id}/stream`;
    const apiKey = await openStream(`${url}?token=x&orgId=${tenant.orgId}`, tenant.live);
    expect(apiKey.status).toBe(401);
    expect(JSON.parse(apiKey.body)).toMatchObject({ statusCode: 401, message: 'Invalid or expired token' });
    for (const refused of [
      await openStream(url, tenant.live),
      await openStream(url, tenant.test),
      await openStream(url, { ...tenant.live, 'x-org-id': tenant.orgId }),
      await openStream(url, { authorization: `Bearer ${tenant.liveKey}`, 'x-org-id': tenant.orgId }),
      await openStream(`${url}?token=${tenant.liveKey}&orgId=${tenant.orgId}`),
    ]) {
      expect(refused.status).toBe(401);
      expect(JSON.parse(refused.body)).toMatchObject({ statusCode: 401, code: 'unauthorized', message: 'Invalid or expired token' });
    }
    expect((await openStream(`${url}?token=${tenant.token}`)).status).toBe(403); // no orgId
    // The headers, as on every other dashboard route.
    const headed = await openStream(url, tenant.jwt);
    expect(headed.status, headed.body).toBe(200);
    await sleep(100);
    expect(headed.stream!.events).toEqual([expect.objectContaining({ status: 'draft' })]);
    headed.stream!.close();
    await headed.stream!.ended;
    const noOrg = await openStream(url, { authorization: tenant.jwt.authorization! });
    expect(noOrg.status).toBe(403);
    expect(JSON.parse(noOrg.body)).toMatchObject({ message: 'Missing x-org-id header' });
    expect((await openStream(url, { ...tenant.jwt, 'x-org-id': other.orgId })).status).toBe(403); // not a member
    expect((await openStream(url, other.jwt)).status).toBe(404); // another organization's campaign
    // Never one source for the token and the other for the organization.
    expect((await openStream(`${url}?token=${tenant.token}`, { 'x-org-id': tenant.orgId })).status).toBe(403);
    expect((await openStream(`${url}?orgId=${tenant.orgId}`, { authorization: tenant.jwt.authorization! })).status).toBe(403);
    expect((await openStream(streamPath(draft.id, other.token, tenant.orgId))).status).toBe(403); // not a member
    expect((await openStream(streamPath(draft.id, other.token, other.orgId))).status).toBe(404); // another organization's campaign
    const viewer = await addMember(t, tenant, 'VIEWER');
    const viewerToken = viewer.headers.authorization!.slice('Bearer '.length);
    const viewed = (await openStream(streamPath(draft.id, viewerToken))).stream!;
    await sleep(100);
    expect(viewed.events).toHaveLength(1);
    viewed.close();
    await viewed.ended;
  });
});
