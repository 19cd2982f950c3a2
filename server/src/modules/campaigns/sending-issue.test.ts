// A campaign's sending issue over HTTP with real providers failing (SMTP unreachable or 451, push 503), then going through.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type DnsServer } from '../../../test/dns-server.js';
import { useSmtpPeer, verifiedDomain } from '../../../test/email-setup.js';
import { startBackground, type Background } from '../../../test/background.js';
import { createTenant, type Tenant } from '../../../test/fixtures.js';
import { startTestApp, type TestApp } from '../../../test/harness.js';
import { createFakeBrowser, startPushService, type PushService } from '../../../test/push-service.js';
import { startSmtpPeer, type SmtpPeer } from '../../../test/smtp-peer.js';
import { seedSubscribers } from '../../../test/subscriber-seed.js';
import { freePort } from '../../db/embedded-postgres.js';

let t: TestApp;
let dns: DnsServer;
let peer: SmtpPeer;
let push: PushService;
let background: Background;
let baseUrl: string;

beforeAll(async () => {
  dns = await startDnsServer();
  t = await startTestApp({
    DNS_SERVERS: dns.address,
    PUBLIC_URL: 'https://herald.example.com',
    ALLOW_INSECURE_PUSH_ENDPOINTS: 'true',
    DELIVERY_POLL_INTERVAL_MS: '50',
    // Retries every few hundred milliseconds, and never given up on within a test.
    DELIVERY_RETRY_BASE_MS: '100',
    DELIVERY_RETRY_MAX: '1',
    DELIVERY_MAX_ATTEMPTS: '1000',
  });
  peer = await startSmtpPeer();
  push = await startPushService();
  background = await startBackground(t);
  baseUrl = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await background?.stop();
  await t?.close();
  await push?.close();
  await peer?.close();
  await dns?.close();
});

type Headers = Record<string, string>;
const request = (method: 'GET' | 'POST' | 'PUT', url: string, headers: Headers, payload?: unknown) =>
  t.app.inject({ method, url, headers, ...(payload !== undefined && { payload: payload as Record<string, unknown> }) });
const query = async <T = Record<string, unknown>>(text: string, values: unknown[] = []) => (await t.database.pool.query(text, values)).rows as T[];

interface SendingIssue {
  reason: string;
  providerCode: string | null;
  detail: string | null;
  at: string;
  since: string;
}
interface CampaignBody {
  id: string;
  status: string;
  stats: Record<string, number>;
  sendingIssue: SendingIssue | null;
}

const storedIssue = async (campaignId: string) =>
  (await query<{ sending_issue: SendingIssue | null }>('SELECT sending_issue FROM messages WHERE campaign_id = $1', [campaignId]))[0]?.sending_issue;

/** The first event of a campaign's progress stream, read over a real HTTP connection. */
async function firstEvent(path: string, who: Tenant): Promise<Record<string, unknown>> {
  const abort = new AbortController();
  const res = await fetch(`${baseUrl}${path}`, { headers: { accept: 'text/event-stream', ...who.jwt }, signal: abort.signal });
  expect(res.status).toBe(200);
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for await (const chunk of res.body!) {
      buffer += decoder.decode(chunk as Uint8Array, { stream: true });
      const line = buffer.split('\n').find((l) => l.startsWith('data: '));
      if (line) return JSON.parse(line.slice(6)) as Record<string, unknown>;
    }
    throw new Error('the stream ended without an event');
  } finally {
    abort.abort();
  }
}

describe('an email campaign whose provider fails', () => {
  let tenant: Tenant;
  let from: string;
  let contacts = 0;
  beforeAll(async () => {
    tenant = await createTenant(t);
    from = `hello@news${Date.now()}.example.com`;
    await verifiedDomain(t, dns, tenant, from.split('@')[1]!);
  });

  async function send(tag: string): Promise<{ id: string; email: string }> {
    const email = `reader${++contacts}-${Date.now()}@example.org`;
    const added = await request('POST', '/contacts', tenant.live, { projectId: tenant.projectId, email, tags: [tag] });
    expect(added.statusCode, added.body).toBe(201);
    const res = await request('POST', '/email-campaigns', tenant.jwt, {
      name: tag,
      projectId: tenant.projectId,
      content: { subject: 'Hello', html: '<p>Hello</p>', from: { email: from } },
      segment: { filters: { tags: { any: [tag] } } },
      schedule: { mode: 'immediate' },
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json<CampaignBody>().sendingIssue).toBeNull();
    return { id: res.json<CampaignBody>().id, email };
  }
  const read = async (id: string) => (await request('GET', `/email-campaigns/${id}`, tenant.jwt)).json<CampaignBody>();

  it('an SMTP server that refuses connections: shown with its code and words while retried, since the first failure; cleared once a send goes through', async () => {
    // Nothing listens there: every connection is refused.
    await request('PUT', `/projects/${tenant.projectId}/channels/email`, tenant.jwt, {
      provider: 'smtp',
      settings: { host: '127.0.0.1', port: await freePort(), secure: false },
    });
    const { id, email } = await send('down');

    await expect.poll(async () => (await read(id)).sendingIssue, { timeout: 10_000 }).not.toBeNull();
    const first = await read(id);
    expect(first).toMatchObject({ status: 'sending', stats: { sent: 0, failed: 0 } });
    expect(first.sendingIssue).toMatchObject({ reason: 'provider_error', providerCode: expect.stringMatching(/^e[a-z]+$/) });
    expect(first.sendingIssue!.detail).toContain('ECONNREFUSED');
    expect(Date.parse(first.sendingIssue!.since)).toBeLessThanOrEqual(Date.parse(first.sendingIssue!.at));
    // The delivery keeps the same failure, as it waits for its retry.
    expect(await query('SELECT status, reason, provider_code FROM deliveries d JOIN messages m ON m.id = d.message_id WHERE m.campaign_id = $1', [id])).toEqual([
      { status: expect.stringMatching(/^(queued|sending)$/), reason: 'provider_error', provider_code: first.sendingIssue!.providerCode },
    ]);

    // The stream carries it too.
    expect(await firstEvent(`/email-campaigns/${id}/stream`, tenant)).toMatchObject({ status: 'sending', sendingIssue: { providerCode: first.sendingIssue!.providerCode } });

    // A later failure moves `at`, never `since`.
    await expect.poll(async () => (await read(id)).sendingIssue?.at, { timeout: 10_000 }).not.toBe(first.sendingIssue!.at);
    expect((await read(id)).sendingIssue!.since).toBe(first.sendingIssue!.since);

    await useSmtpPeer(t, tenant, peer);
    await expect.poll(async () => (await read(id)).status, { timeout: 10_000 }).toBe('sent');
    expect(await read(id)).toMatchObject({ stats: { sent: 1, failed: 0 }, sendingIssue: null });
    expect(await storedIssue(id)).toBeNull();
    expect(peer.received(email)).toHaveLength(1);
  });

  it('an SMTP server answering 451: shown while sending and while paused, not once cancelled', async () => {
    await useSmtpPeer(t, tenant, peer);
    const email = `reader${contacts + 1}-451@example.org`;
    const { id } = await (async () => {
      // Refused at RCPT TO for as long as the test lasts.
      peer.respond(email, ...Array.from({ length: 1000 }, () => ({ code: 451 })));
      const added = await request('POST', '/contacts', tenant.live, { projectId: tenant.projectId, email, tags: ['greylisted'] });
      expect(added.statusCode, added.body).toBe(201);
      const res = await request('POST', '/email-campaigns', tenant.jwt, {
        name: 'greylisted',
        projectId: tenant.projectId,
        content: { subject: 'Hello', html: '<p>Hello</p>', from: { email: from } },
        segment: { filters: { tags: { any: ['greylisted'] } } },
        schedule: { mode: 'immediate' },
      });
      expect(res.statusCode, res.body).toBe(201);
      return res.json<CampaignBody>();
    })();

    await expect.poll(async () => (await read(id)).sendingIssue?.providerCode, { timeout: 10_000 }).toBe('smtp_451');
    const { sendingIssue } = await read(id);
    expect(sendingIssue).toMatchObject({ reason: 'provider_error', detail: expect.stringContaining('451') });
    // The recipient's address is not the campaign's business.
    expect(sendingIssue!.detail).not.toContain('@');

    const paused = await request('POST', `/email-campaigns/${id}/pause`, tenant.jwt);
    expect(paused.json<CampaignBody>()).toMatchObject({ status: 'paused', sendingIssue: { providerCode: 'smtp_451' } });
    const cancelled = await request('POST', `/email-campaigns/${id}/cancel`, tenant.jwt);
    expect(cancelled.json<CampaignBody>()).toMatchObject({ status: 'cancelled', sendingIssue: null });
    expect(await firstEvent(`/email-campaigns/${id}/stream`, tenant)).toMatchObject({ status: 'cancelled', sendingIssue: null });
  });
});

describe('a push campaign whose push service fails', () => {
  it('answering 503: shown on the campaign and its stream while it sends, not once cancelled', async () => {
    const tenant = await createTenant(t);
    const browser = createFakeBrowser();
    push.respond(browser.id, ...Array.from({ length: 1000 }, () => 503));
    await seedSubscribers(t.database.pool, tenant.projectId, [{ endpoint: push.endpointFor(browser), p256dh: browser.p256dh, auth: browser.auth }]);
    const created = await request('POST', '/campaigns', tenant.jwt, {
      name: 'Down',
      projectId: tenant.projectId,
      content: { title: 'Hello', body: 'World' },
      segment: { filters: {} },
      schedule: { mode: 'immediate' },
    });
    expect(created.statusCode, created.body).toBe(201);
    const { id } = created.json<CampaignBody>();
    const read = async () => (await request('GET', `/campaigns/${id}`, tenant.jwt)).json<CampaignBody>();

    await expect.poll(async () => (await read()).sendingIssue?.providerCode, { timeout: 10_000 }).toBe('http_503');
    expect((await read()).sendingIssue).toMatchObject({ reason: 'provider_error', detail: 'push service failed (503)' });
    expect(await firstEvent(`/campaigns/${id}/stream`, tenant)).toMatchObject({ status: 'sending', sendingIssue: { providerCode: 'http_503' } });

    const cancelled = await request('POST', `/campaigns/${id}/cancel`, tenant.jwt);
    expect(cancelled.json<CampaignBody>()).toMatchObject({ status: 'cancelled', sendingIssue: null });
  });
});
