// The web push provider against a real local push service: encryption, VAPID, headers, outcomes, SSRF, pacing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFakeBrowser, startPushService, type Answer, type FakeBrowser, type PushService } from '../../../../test/push-service.js';
import { generateVapidKeys } from '../../../modules/channels/vapid.js';
import type { PushItem, PushPayload, SendOutcome } from '../../channel.js';
import { createWebPushProvider, type WebPushOptions } from './web-push-provider.js';

const vapid = { ...generateVapidKeys(), subject: 'mailto:ops@example.com' };
const spare = createFakeBrowser();
const defaults: WebPushOptions = { connectionsPerOrigin: 8, ratePerOrigin: 0, timeoutMs: 2000, allowInsecureEndpoints: true, encryptionThreads: 1 };

let deliveryId = 0;
function item(endpoint: string, browser: FakeBrowser = spare, overrides: Partial<PushItem> = {}): PushItem {
  return {
    deliveryId: ++deliveryId,
    endpoint,
    p256dh: browser.p256dh,
    auth: browser.auth,
    payload: { title: 'Hello', body: 'World', track: `https://herald.example.com/t/${deliveryId}` },
    options: { ttlSeconds: 3600, urgency: 'normal' },
    vapid,
    ...overrides,
  };
}

const failure = (outcome: SendOutcome | undefined) => {
  if (!outcome || outcome.ok) throw new Error(`expected a failure, got ${JSON.stringify(outcome)}`);
  return outcome.error;
};

let peer: PushService;
let other: PushService;
const provider = createWebPushProvider(defaults);

beforeAll(async () => {
  [peer, other] = await Promise.all([startPushService(), startPushService()]);
});
afterAll(async () => {
  await provider.close();
  await Promise.all([peer.close(), other.close()]);
});

describe('delivery', () => {
  it('sends the payload encrypted, with TTL, Urgency and Topic, signed for the push service origin', async () => {
    const browser = createFakeBrowser();
    const payload: PushPayload = { title: 'Hi', body: 'There', url: 'https://example.com/x', icon: undefined, track: 'https://h.example/t/abc' };
    const [outcome] = await provider.send([
      item(peer.endpointFor(browser), browser, { payload, options: { ttlSeconds: 120, urgency: 'high', topic: 'news' } }),
    ]);
    expect(outcome).toEqual({ ok: true, providerCode: 'http_201' });
    const [request] = peer.requestsFor(browser.id);
    expect(request?.status).toBe(201);
    expect(request?.payload).toEqual({ title: 'Hi', body: 'There', url: 'https://example.com/x', track: 'https://h.example/t/abc' });
    expect(request?.headers).toMatchObject({ ttl: '120', urgency: 'high', topic: 'news' });
    expect(request?.vapid).toMatchObject({ aud: peer.origin, sub: 'mailto:ops@example.com' });
    expect(request?.vapid?.exp).toBeLessThanOrEqual(Date.now() / 1000 + 24 * 3600);
  });

  it('sends no Topic when the message has none', async () => {
    const browser = createFakeBrowser();
    await provider.send([item(peer.endpointFor(browser), browser)]);
    expect(peer.requestsFor(browser.id)[0]?.headers).toMatchObject({ ttl: '3600', urgency: 'normal', topic: undefined });
  });

  it('reuses one signed VAPID header per origin and signs another for another origin', async () => {
    const browsers = [createFakeBrowser(), createFakeBrowser(), createFakeBrowser()];
    const elsewhere = createFakeBrowser();
    const outcomes = await provider.send([...browsers.map((b) => item(peer.endpointFor(b), b)), item(other.endpointFor(elsewhere), elsewhere)]);
    expect(outcomes.every((o) => o.ok)).toBe(true);
    const headers = browsers.map((b) => peer.requestsFor(b.id)[0]?.headers.authorization);
    expect(new Set(headers).size).toBe(1);
    const elsewhereRequest = other.requestsFor(elsewhere.id)[0];
    expect(elsewhereRequest?.vapid?.aud).toBe(other.origin);
    expect(elsewhereRequest?.headers.authorization).not.toBe(headers[0]);
  });

  it('delivers a batch of 500, each decrypted by its own browser', async () => {
    const browsers = Array.from({ length: 500 }, () => createFakeBrowser());
    const outcomes = await provider.send(browsers.map((b, i) => item(peer.endpointFor(b), b, { payload: { title: `n${i}`, body: '', track: 't' } })));
    expect(outcomes.filter((o) => o.ok)).toHaveLength(500);
    browsers.forEach((b, i) => expect(peer.requestsFor(b.id).map((r) => r.payload)).toEqual([{ title: `n${i}`, body: '', track: 't' }]));
  });
});

describe('payload size', () => {
  const sized = (bytes: number): PushPayload => {
    const base = { title: 'T', body: '', track: 'https://h.example/t/x' };
    return { ...base, body: 'b'.repeat(bytes - JSON.stringify(base).length) };
  };

  it('refuses a payload over 3993 bytes before any request', async () => {
    const browser = createFakeBrowser();
    const [outcome] = await provider.send([item(peer.endpointFor(browser), browser, { payload: sized(3994) })]);
    expect(failure(outcome)).toMatchObject({ reason: 'payload_too_large', retryable: false, providerCode: 'payload_too_large' });
    expect(peer.requestsFor(browser.id)).toHaveLength(0);
  });

  it('sends a payload of exactly 3993 bytes as a 4096-byte body', async () => {
    const browser = createFakeBrowser();
    const payload = sized(3993);
    const [outcome] = await provider.send([item(peer.endpointFor(browser), browser, { payload })]);
    expect(outcome).toEqual({ ok: true, providerCode: 'http_201' });
    expect(peer.requestsFor(browser.id)[0]).toMatchObject({ bodyBytes: 4096, payload });
  });
});

describe('outcomes', () => {
  const answered = async (answer: Answer, options: Partial<WebPushOptions> = {}) => {
    const browser = createFakeBrowser();
    peer.respond(browser.id, answer);
    const sender = Object.keys(options).length > 0 ? createWebPushProvider({ ...defaults, ...options }) : provider;
    try {
      const [outcome] = await sender.send([item(peer.endpointFor(browser), browser)]);
      return { outcome: outcome!, requests: peer.requestsFor(browser.id) };
    } finally {
      if (sender !== provider) await sender.close();
    }
  };

  it.each([200, 202])('%i is sent', async (status) => {
    expect((await answered(status)).outcome).toEqual({ ok: true, providerCode: `http_${status}` });
  });

  it.each([404, 410])('%i means the subscription is gone', async (status) => {
    expect(failure((await answered(status)).outcome)).toMatchObject({
      reason: 'subscriber_unsubscribed',
      deadRecipient: 'gone',
      retryable: false,
      providerCode: `http_${status}`,
    });
  });

  it('413 is payload_too_large, final', async () => {
    expect(failure((await answered(413)).outcome)).toMatchObject({ reason: 'payload_too_large', retryable: false, providerCode: 'http_413' });
  });

  it('429 is retried after Retry-After seconds', async () => {
    const error = failure((await answered({ status: 429, headers: { 'retry-after': '7' } })).outcome);
    expect(error).toMatchObject({ reason: 'provider_error', retryable: true, providerCode: 'http_429', retryAfterMs: 7000 });
  });

  it('429 is retried after a Retry-After HTTP-date', async () => {
    const at = new Date(Date.now() + 30_000).toUTCString();
    const error = failure((await answered({ status: 429, headers: { 'retry-after': at } })).outcome);
    expect(error.retryable).toBe(true);
    expect(error.retryAfterMs).toBeGreaterThan(27_000);
    expect(error.retryAfterMs).toBeLessThanOrEqual(30_000);
  });

  it('429 without Retry-After waits 60 s', async () => {
    expect(failure((await answered(429)).outcome).retryAfterMs).toBe(60_000);
  });

  it.each([500, 502, 503])('%i is retried', async (status) => {
    expect(failure((await answered(status)).outcome)).toMatchObject({ reason: 'provider_error', retryable: true, providerCode: `http_${status}` });
  });

  it('a 503 Retry-After is kept', async () => {
    expect(failure((await answered({ status: 503, headers: { 'retry-after': '3' } })).outcome).retryAfterMs).toBe(3000);
  });

  it.each([400, 401, 403])('%i is final', async (status) => {
    expect(failure((await answered(status)).outcome)).toMatchObject({ reason: 'provider_error', retryable: false, providerCode: `http_${status}` });
  });

  it.each([301, 302, 307, 308])('%i is final and its Location is not followed', async (status) => {
    const target = `redirect-target-${++deliveryId}`;
    const { outcome } = await answered({ status, headers: { location: peer.endpointFor(target) } });
    expect(failure(outcome)).toMatchObject({ reason: 'provider_error', retryable: false, providerCode: `http_${status}` });
    expect(peer.requestsFor(target)).toHaveLength(0);
  });

  it('a service that never answers times out, to be retried', async () => {
    const { outcome, requests } = await answered('hang', { timeoutMs: 200 });
    expect(requests).toHaveLength(1);
    expect(failure(outcome)).toMatchObject({ reason: 'provider_error', retryable: true, providerCode: 'timeout' });
  });

  it('a reset connection is retried', async () => {
    expect(failure((await answered('reset')).outcome)).toMatchObject({ reason: 'provider_error', retryable: true, providerCode: 'ECONNRESET' });
  });

  it('keeps each outcome at its item position in a mixed batch', async () => {
    const browsers = [410, 202, 500, 201].map((status) => {
      const browser = createFakeBrowser();
      peer.respond(browser.id, status);
      return browser;
    });
    const outcomes = await provider.send(browsers.map((b) => item(peer.endpointFor(b), b)));
    expect(outcomes.map((o) => (o.ok ? o.providerCode : o.error.providerCode))).toEqual(['http_410', 'http_202', 'http_500', 'http_201']);
  });

  it('refuses unusable subscription keys, endpoints and VAPID keys without a request', async () => {
    const before = peer.received.length;
    const outcomes = await provider.send([
      item(peer.endpointFor('keys'), spare, { p256dh: 'AAAA' }),
      item('not a url'),
      item(peer.endpointFor('vapid'), spare, { vapid: { ...vapid, subject: 'mailto:new@example.com', privateKey: generateVapidKeys().privateKey } }),
    ]);
    expect(outcomes.map((o) => failure(o)).map((e) => [e.providerCode, e.retryable])).toEqual([
      ['invalid_subscription_keys', false],
      ['invalid_endpoint', false],
      ['invalid_vapid_key', false],
    ]);
    expect(peer.received.length).toBe(before);
  });
});

describe('endpoint guard (SSRF)', () => {
  const secure = createWebPushProvider({ ...defaults, allowInsecureEndpoints: false });
  afterAll(() => secure.close());

  const port = () => new URL(peer.origin).port;
  const blocked = (outcome: SendOutcome | undefined) =>
    expect(failure(outcome)).toMatchObject({ reason: 'provider_error', retryable: false, providerCode: 'blocked_endpoint', deadRecipient: 'refused' });

  it.each([
    'https://10.0.0.1/push/x',
    'https://172.16.5.4/push/x',
    'https://192.168.1.1/push/x',
    'https://100.64.0.1/push/x',
    'https://169.254.169.254/latest/meta-data',
    'https://0.0.0.0/push/x',
    'https://224.0.0.1/push/x',
    'https://[::1]/push/x',
    'https://[::]/push/x',
    'https://[fc00::1]/push/x',
    'https://[fe80::1]/push/x',
    'https://[ff02::1]/push/x',
    'https://[::ffff:10.0.0.1]/push/x',
    'https://[::ffff:127.0.0.1]/push/x',
    'https://[::10.0.0.1]/push/x',
    'https://[64:ff9b::a00:1]/push/x',
    'https://[64:ff9b:1::a00:1]/push/x',
    'https://[2002:a00:1::1]/push/x',
    'https://[2001:0:a00:1::1]/push/x',
    'https://[100::1]/push/x',
    'https://2130706433/push/x',
    'https://[febf::1]/push/x',
    'https://[fd12:3456::1]/push/x',
    'https://localhost./push/x',
    'https://push.localhost/push/x',
    'http://push.example.com/push/x',
    'ftp://push.example.com/push/x',
  ])('refuses %s', async (endpoint) => {
    blocked((await secure.send([item(endpoint)]))[0]);
  });

  it('refuses loopback and http without allowInsecureEndpoints, before any request', async () => {
    const before = peer.received.length;
    const outcomes = await secure.send([
      item(`https://127.0.0.1:${port()}/push/a`),
      item(`http://127.0.0.1:${port()}/push/b`),
      item(`https://localhost:${port()}/push/c`),
    ]);
    outcomes.forEach(blocked);
    expect(peer.received.length).toBe(before);
  });

  it('with allowInsecureEndpoints, reaches loopback by name over http but still refuses private ranges and http elsewhere', async () => {
    const id = `by-name-${++deliveryId}`;
    const outcomes = await provider.send([
      item(`http://localhost:${port()}/push/${id}`),
      item('http://10.0.0.1/push/x'),
      item('http://169.254.169.254/latest/meta-data'),
      item('http://[fe80::1]/push/x'),
      item('http://push.example.com/push/x'),
    ]);
    // The service answers 403 because the VAPID audience names localhost, not its 127.0.0.1 origin: it was reached.
    expect(peer.requestsFor(id)).toHaveLength(1);
    expect(failure(outcomes[0]).providerCode).toBe('http_403');
    outcomes.slice(1).forEach(blocked);
  });
});

describe('per-origin rate limit', () => {
  it('spaces requests to one origin at ratePerOrigin, leaving other origins alone', async () => {
    const paced = createWebPushProvider({ ...defaults, ratePerOrigin: 20 });
    try {
      const started = performance.now();
      const outcomes = await paced.send(
        Array.from({ length: 10 }, () => {
          const browser = createFakeBrowser();
          return item(peer.endpointFor(browser), browser);
        }),
      );
      const elapsed = performance.now() - started;
      expect(outcomes.every((o) => o.ok)).toBe(true);
      expect(elapsed).toBeGreaterThanOrEqual(400);
      expect(elapsed).toBeLessThan(3000);

      const onePerOrigin = performance.now();
      const [here, there] = [createFakeBrowser(), createFakeBrowser()];
      expect(await paced.send([item(peer.endpointFor(here), here), item(other.endpointFor(there), there)])).toEqual([
        { ok: true, providerCode: 'http_201' },
        { ok: true, providerCode: 'http_201' },
      ]);
      expect(performance.now() - onePerOrigin).toBeLessThan(400);
    } finally {
      await paced.close();
    }
  });
});
