// The engine's loop with the real web push provider and peer: retries, Retry-After, gone subscriptions, leases, fence.
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { afterEach, beforeAll, afterAll, expect, it } from 'vitest';
import { createTenant, type Tenant } from '../../test/fixtures.js';
import { startTestApp, type TestApp } from '../../test/harness.js';
import { createFakeBrowser, startPushService, type FakeBrowser, type PushService } from '../../test/push-service.js';
import { loadConfig, type Env } from '../config.js';
import { createLogger } from '../logger.js';
import { newId } from '../shared/ids.js';
import { createSandboxProvider } from './channels/sandbox.js';
import { createPushAdapter } from './channels/push/push-adapter.js';
import { createWebPushProvider } from './channels/push/web-push-provider.js';
import { DeliveryEngine } from './delivery-engine.js';
import * as repo from './delivery.repository.js';

let t: TestApp;
let push: PushService;
let tenant: Tenant;
const running: { engine: DeliveryEngine; close(): Promise<void> }[] = [];

beforeAll(async () => {
  push = await startPushService();
  t = await startTestApp();
  tenant = await createTenant(t);
});
afterEach(async () => {
  for (const { engine, close } of running.splice(0)) {
    await engine.stop();
    await close();
  }
  // A row left waiting (a long Retry-After) must not be picked up by the next test's engine.
  await t.database.pool.query(`DELETE FROM deliveries WHERE status IN ('queued', 'sending')`);
});
afterAll(async () => {
  await t.close();
  await push.close();
});

/** A started engine of its own (own provider and connections), like one worker process. */
function startEngine(env: Env = {}, logger?: Logger): DeliveryEngine {
  const config = loadConfig({
    ALLOW_INSECURE_PUSH_ENDPOINTS: 'true',
    PUBLIC_URL: 'https://herald.example.com',
    DELIVERY_POLL_INTERVAL_MS: '50',
    DELIVERY_RETRY_BASE_MS: '20',
    DELIVERY_MAX_ATTEMPTS: '3',
    ...env,
  });
  const push = createPushAdapter({
    publicUrl: config.publicUrl,
    tracking: t.services.tracking,
    vapidSubject: config.push.vapidSubject,
    live: createWebPushProvider({ ...config.push, allowInsecureEndpoints: true }),
    sandbox: createSandboxProvider(),
  });
  const engine = new DeliveryEngine({ db: t.database.db, config, adapters: [push], openCredentials: (sealed) => t.services.channels.open(sealed), logger });
  running.push({ engine, close: () => push.close() });
  engine.start();
  return engine;
}

const query = async <T>(text: string, params: unknown[] = []) => (await t.database.pool.query(text, params)).rows as T[];

async function subscriber({ sandbox = false } = {}): Promise<{ id: string; browser: FakeBrowser }> {
  const browser = createFakeBrowser();
  const id = newId('sub');
  await query(`INSERT INTO subscribers (id, project_id, token, endpoint, p256dh, auth, sandbox) VALUES ($1, $2, $3, $4, $5, $6, $7)`, [
    id,
    tenant.projectId,
    randomBytes(12).toString('hex'),
    push.endpointFor(browser),
    browser.p256dh,
    browser.auth,
    sandbox,
  ]);
  return { id, browser };
}

/** A campaign-like message queued to one subscriber; returns the delivery id and the message id. */
async function queue(subscriberId: string, { sandbox = false } = {}): Promise<{ id: number; messageId: string }> {
  const messageId = newId('msg');
  await query(`INSERT INTO messages (id, project_id, channel, source, sandbox, content, options) VALUES ($1, $2, 'push', 'campaign', $3, $4, $5)`, [
    messageId,
    tenant.projectId,
    sandbox,
    { title: 'Hello', body: 'World' },
    { ttlSeconds: 3600, urgency: 'normal' },
  ]);
  await query(`INSERT INTO message_stats (message_id, queued) VALUES ($1, 1)`, [messageId]);
  const [row] = await query<{ id: number }>(
    `INSERT INTO deliveries (project_id, message_id, subscriber_id) VALUES ($1, $2, $3) RETURNING id::float8 AS id`,
    [tenant.projectId, messageId, subscriberId],
  );
  return { id: row!.id, messageId };
}

interface Row {
  status: string;
  reason: string | null;
  provider_code: string | null;
  attempts: number;
  /** next_attempt_at − updated_at: how long a queued row waits. */
  wait_ms: number;
  failed: boolean;
}

async function delivery(id: number): Promise<Row> {
  const [row] = await query<Row>(
    `SELECT status, reason, provider_code, attempts, failed_at IS NOT NULL AS failed,
            extract(epoch FROM next_attempt_at - updated_at)::float8 * 1000 AS wait_ms
     FROM deliveries WHERE id = $1`,
    [id],
  );
  return row!;
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out; last: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const stats = async (messageId: string) =>
  (await query<{ sent: number; failed: number }>(`SELECT sent, failed FROM message_stats WHERE message_id = $1`, [messageId]))[0];

it('a 500 is retried with exponential backoff, then sent', async () => {
  const { id: subscriberId, browser } = await subscriber();
  push.respond(browser.id, 500, 500);
  const { id } = await queue(subscriberId);
  startEngine({ DELIVERY_RETRY_BASE_MS: '200' });

  expect(await until(() => delivery(id), (r) => r.status === 'sent')).toMatchObject({ attempts: 3, reason: null, provider_code: 'http_201' });
  const requests = push.requestsFor(browser.id);
  expect(requests.map((r) => r.status)).toEqual([500, 500, 201]);
  // Equal jitter: at least half of 200 ms, then half of 400 ms.
  expect(requests[1]!.answeredAt! - requests[0]!.answeredAt!).toBeGreaterThanOrEqual(100);
  expect(requests[2]!.answeredAt! - requests[1]!.answeredAt!).toBeGreaterThanOrEqual(200);
});

it('a 429 with Retry-After waits at least that long in the queue', async () => {
  const { id: subscriberId, browser } = await subscriber();
  push.respond(browser.id, { status: 429, headers: { 'retry-after': '30' } });
  const { id } = await queue(subscriberId);
  startEngine();

  const row = await until(() => delivery(id), (r) => r.status === 'queued' && r.attempts === 1);
  expect(row).toMatchObject({ reason: 'provider_error', provider_code: 'http_429' });
  expect(row.wait_ms).toBeGreaterThanOrEqual(30_000);
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect(push.requestsFor(browser.id)).toHaveLength(1);
});

it('fails with provider_error after DELIVERY_MAX_ATTEMPTS attempts', async () => {
  const { id: subscriberId, browser } = await subscriber();
  push.respond(browser.id, 500, 503, 500);
  const { id, messageId } = await queue(subscriberId);
  startEngine();

  expect(await until(() => delivery(id), (r) => r.status !== 'queued' && r.status !== 'sending')).toMatchObject({
    status: 'failed',
    reason: 'provider_error',
    provider_code: 'http_500',
    attempts: 3,
    failed: true,
  });
  expect(push.requestsFor(browser.id)).toHaveLength(3);
  expect(await stats(messageId)).toEqual({ sent: 0, failed: 1 });
});

it('a 410 fails the delivery as subscriber_unsubscribed and deactivates the subscriber; nothing is sent to it again', async () => {
  const { id: subscriberId, browser } = await subscriber();
  push.respond(browser.id, 410);
  const { id } = await queue(subscriberId);
  startEngine();

  expect(await until(() => delivery(id), (r) => r.status === 'failed')).toMatchObject({
    reason: 'subscriber_unsubscribed',
    provider_code: 'http_410',
    attempts: 1,
  });
  expect(await query(`SELECT status, status_reason FROM subscribers WHERE id = $1`, [subscriberId])).toEqual([
    { status: 'unsubscribed', status_reason: 'push_subscription_gone' },
  ]);
  const next = await queue(subscriberId);
  expect(await until(() => delivery(next.id), (r) => r.status === 'failed')).toMatchObject({ reason: 'subscriber_unsubscribed', provider_code: null });
  expect(push.requestsFor(browser.id)).toHaveLength(1);
});

it('a dead worker’s lease expires: another engine sends the delivery, and the first claim’s late outcome is fenced off', async () => {
  const { id: subscriberId, browser } = await subscriber();
  const { id, messageId } = await queue(subscriberId);
  // A worker claims it and dies before sending.
  const [claim] = await repo.claimDue(t.database.db, 'push', 10, 1);
  expect(claim).toMatchObject({ id, attempts: 1 });
  startEngine({ DELIVERY_LEASE: '1s' });

  expect(await until(() => delivery(id), (r) => r.status === 'sent')).toMatchObject({ attempts: 2, provider_code: 'http_201' });
  expect(push.requestsFor(browser.id)).toHaveLength(1);
  // The first claimer comes back with an outcome: its claim (attempt 1) is no longer the row's.
  const recorded = await repo.recordOutcomes(t.database.db, [
    { id, fence: 1, attempts: 1, status: 'failed', reason: 'provider_error', providerCode: 'http_500', delayMs: 0 },
  ]);
  expect(recorded).toBe(0);
  expect(await delivery(id)).toMatchObject({ status: 'sent', attempts: 2, provider_code: 'http_201' });
  expect(await stats(messageId)).toEqual({ sent: 1, failed: 0 });
});

it('a batch slower than its lease stays its engine’s: the lease is renewed while it sends, nobody takes it over, it is sent once', async () => {
  const slow = await startPushService({ delayMs: 2500 });
  try {
    const browser = createFakeBrowser();
    const subscriberId = newId('sub');
    await query(`INSERT INTO subscribers (id, project_id, token, endpoint, p256dh, auth) VALUES ($1, $2, $3, $4, $5, $6)`, [
      subscriberId,
      tenant.projectId,
      randomBytes(12).toString('hex'),
      slow.endpointFor(browser),
      browser.p256dh,
      browser.auth,
    ]);
    const { id, messageId } = await queue(subscriberId);
    const lines: string[] = [];
    const logger = createLogger('warn', { write: (line: string) => void lines.push(line) });
    startEngine({ DELIVERY_LEASE: '1s' }, logger);
    await until(async () => slow.requestsFor(browser.id).length, (n) => n === 1);
    // Another worker, reaping expired leases every second while the first waits for the answer.
    startEngine({ DELIVERY_LEASE: '1s' }, logger);

    expect(await until(() => delivery(id), (r) => r.status === 'sent')).toMatchObject({ attempts: 1, provider_code: 'http_201' });
    expect(slow.requestsFor(browser.id)).toHaveLength(1);
    expect(await stats(messageId)).toEqual({ sent: 1, failed: 0 });
    expect(lines).toEqual([]);
  } finally {
    await slow.close();
  }
});

it('a sandbox message is sent by the sandbox provider: provider code sandbox, nothing reaches the push service', async () => {
  const { id: subscriberId, browser } = await subscriber({ sandbox: true });
  const { id, messageId } = await queue(subscriberId, { sandbox: true });
  startEngine();

  expect(await until(() => delivery(id), (r) => r.status === 'sent')).toMatchObject({ attempts: 1, provider_code: 'sandbox', reason: null });
  expect(push.requestsFor(browser.id)).toEqual([]);
  expect(await stats(messageId)).toEqual({ sent: 1, failed: 0 });
});
