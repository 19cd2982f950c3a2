// Delivery policy per channel and per recipient: set through the project API, obeyed by the engine — a push cap
// never limits email, an email cap counts an address across the subscribers carrying it, SMS quiet hours hold SMS only.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTenant, type Tenant } from '../../test/fixtures.js';
import { startTestApp, type TestApp } from '../../test/harness.js';
import { loadConfig } from '../config.js';
import type { Channel } from '../db/schema.js';
import { newId } from '../shared/ids.js';
import { randomToken } from '../shared/secrets.js';
import type { ChannelAdapter, ChannelProvider } from './channel.js';
import { createSandboxProvider } from './channels/sandbox.js';
import { DeliveryEngine } from './delivery-engine.js';

let t: TestApp;
let tenant: Tenant;
let engine: DeliveryEngine | undefined;
const query = async <T = Record<string, unknown>>(text: string, params: unknown[] = []) => (await t.database.pool.query(text, params)).rows as T[];

const config = loadConfig({ DELIVERY_POLL_INTERVAL_MS: '20', DELIVERY_BATCH_SIZE: '10' });

beforeAll(async () => {
  t = await startTestApp();
  tenant = await createTenant(t);
  // SMS quiet hours from an hour ago to an hour from now, in UTC (the project's zone): SMS is quiet now.
  const hhmm = (offsetMs: number) => new Date(Date.now() + offsetMs).toISOString().slice(11, 16);
  const res = await t.app.inject({
    method: 'PATCH',
    url: `/projects/${tenant.projectId}`,
    headers: tenant.jwt,
    payload: {
      settings: {
        timezone: 'UTC',
        deliveryPolicy: {
          frequencyCap: { max: 1, windowSeconds: 3600 },
          channels: { email: { frequencyCap: { max: 1, windowSeconds: 3600 } }, sms: { quietHours: { start: hhmm(-HOUR), end: hhmm(HOUR) } } },
        },
      },
    },
  });
  expect(res.statusCode, res.body).toBe(200);
});
const HOUR = 3_600_000;
afterAll(() => t.close());
afterEach(async () => {
  await engine?.stop();
  engine = undefined;
});

/** A channel whose provider accepts everything, recording who it was sent to. */
function acceptingAdapter(channel: Channel, sent: string[]): ChannelAdapter<{ to: string }> {
  const live: ChannelProvider<{ to: string }> = {
    name: 'accepting',
    send: async (items) => items.map(({ to }) => (sent.push(to), { ok: true, providerCode: 'accepted' })),
    close: async () => {},
  };
  return {
    channel,
    validate: () => undefined,
    address: ({ recipient, subscriberId }) => ({ item: { to: recipient && 'address' in recipient ? recipient.address : subscriberId } }),
    provider: (sandbox) => (sandbox ? createSandboxProvider() : live),
    close: async () => {},
  };
}

async function subscriber(email: string | null, phone: string | null = null): Promise<string> {
  const id = newId('sub');
  await query(`INSERT INTO subscribers (id, project_id, token, endpoint, email, phone) VALUES ($1, $2, $3, $4, $5, $6)`, [
    id,
    tenant.projectId,
    randomToken(12),
    `https://push.example.com/${id}`,
    email,
    phone,
  ]);
  return id;
}

/** A campaign message on `channel` to one subscriber (at `destination` for the address channels); its delivery id. */
async function queue(channel: Channel, subscriberId: string, destination: string | null = null): Promise<number> {
  const messageId = newId('msg');
  await query(`INSERT INTO messages (id, project_id, channel, source, sandbox, content, options) VALUES ($1, $2, $3, 'campaign', false, '{}', '{}')`, [
    messageId,
    tenant.projectId,
    channel,
  ]);
  const [row] = await query<{ id: number }>(
    `INSERT INTO deliveries (project_id, message_id, subscriber_id, channel, destination) VALUES ($1, $2, $3, $4, $5) RETURNING id::float8 AS id`,
    [tenant.projectId, messageId, subscriberId, channel, destination],
  );
  return row!.id;
}

async function run(sent: string[], ids: number[]) {
  engine = new DeliveryEngine({
    db: t.database.db,
    config,
    adapters: (['push', 'email', 'sms'] as const).map((channel) => acceptingAdapter(channel, sent)),
    openCredentials: (sealed) => t.services.channels.open(sealed),
  });
  engine.start();
  const deadline = Date.now() + 10_000;
  for (;;) {
    const rows = await query<{ id: number; status: string; reason: string | null; attempts: number }>(
      `SELECT id::float8 AS id, status, reason, attempts FROM deliveries WHERE id = ANY($1) ORDER BY id`,
      [ids],
    );
    if (rows.every((r) => r.status !== 'sending' && (r.status !== 'queued' || r.reason === 'quiet_hours'))) return rows;
    if (Date.now() > deadline) throw new Error(`not settled: ${JSON.stringify(rows)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('delivery policy per channel and per recipient', () => {
  it('caps email per address, across the subscribers carrying it, and leaves push and email to their own caps', async () => {
    const [home, work] = [await subscriber('ann@example.com'), await subscriber('Ann@Example.com')];
    // Earlier this hour: a push to `home` (push's cap is now full for that device) and an email to ann@example.com.
    const earlier = [await queue('push', home), await queue('email', home, 'ann@example.com')];
    const sent: string[] = [];
    expect((await run(sent, earlier)).map((r) => r.status)).toEqual(['sent', 'sent']);
    await engine!.stop();

    const ids = [await queue('email', work, 'ann@example.com'), await queue('push', work), await queue('push', home)];
    const rows = await run(sent, ids);
    expect(rows.map((r) => [r.status, r.reason])).toEqual([
      // The address had its one email this hour, through the other subscriber.
      ['suppressed', 'frequency_capped'],
      // `work` had no push yet: the email to its address does not count against push.
      ['sent', null],
      ['suppressed', 'frequency_capped'],
    ]);
    expect(sent).toEqual([home, 'ann@example.com', work]);
  });

  it('holds SMS in its quiet hours while email and push go out', async () => {
    const person = await subscriber('bea@example.com', '+14155550123');
    const ids = [await queue('sms', person, '+14155550123'), await queue('email', person, 'bea@example.com'), await queue('push', person)];
    const rows = await run([], ids);
    expect(rows.map((r) => [r.status, r.reason, r.attempts])).toEqual([
      ['queued', 'quiet_hours', 0],
      ['sent', null, 1],
      ['sent', null, 1],
    ]);
    // Held until the quiet hours end, about an hour from now (their end is a whole minute).
    const [held] = await query<{ ms: number }>(`SELECT extract(epoch FROM next_attempt_at - updated_at)::float8 * 1000 AS ms FROM deliveries WHERE id = $1`, [ids[0]]);
    expect(held!.ms).toBeGreaterThan(HOUR - 61_000);
    expect(held!.ms).toBeLessThanOrEqual(HOUR);
  });
});
