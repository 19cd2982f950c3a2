// Email campaign rates from the real counters: sends and reports, in any order, recorded by the engine's recorders;
// every rate stays within [0, 1], and a recipient who clicked and then bounced is no more than one click of those sent.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant, type Tenant } from '../../../test/fixtures.js';
import { startTestApp, type TestApp } from '../../../test/harness.js';
import type { DeliveryEvent } from '../../db/schema.js';
import { recordDeliveryEvents } from '../../delivery/delivery-events.repository.js';
import { recordOutcomes } from '../../delivery/delivery.repository.js';
import { newId } from '../../shared/ids.js';
import type { Counters } from './campaign.repository.js';
import { emailStats } from './email-campaign.js';

let t: TestApp;
let tenant: Tenant;
/** The recipients every campaign here may go to. */
let readers: string[] = [];
const query = async <T>(text: string, params: unknown[] = []) => (await t.database.pool.query(text, params)).rows as T[];

beforeAll(async () => {
  t = await startTestApp();
  tenant = await createTenant(t);
  readers = Array.from({ length: 4 }, () => newId('sub'));
  for (const [i, id] of readers.entries()) {
    await query(`INSERT INTO subscribers (id, project_id, token, email) VALUES ($1, $2, $3, $4)`, [id, tenant.projectId, `token-${id}`, `reader${i}@example.org`]);
  }
});
afterAll(() => t.close());

/** A campaign message to `n` recipients, each delivery claimed for its first attempt (`sending`). */
async function claimed(n: number): Promise<{ messageId: string; ids: number[] }> {
  const messageId = newId('msg');
  await query(`INSERT INTO messages (id, project_id, channel, source, sandbox, content, options) VALUES ($1, $2, 'email', 'campaign', false, '{}', '{}')`, [
    messageId,
    tenant.projectId,
  ]);
  await query(`INSERT INTO message_stats (message_id, queued) VALUES ($1, $2)`, [messageId, n]);
  const rows = await query<{ id: number }>(
    `INSERT INTO deliveries (project_id, message_id, subscriber_id, channel, destination, status, attempts)
     SELECT $1, $2, r.id, 'email', r.email, 'sending', 1 FROM subscribers r WHERE r.id = ANY($3) RETURNING id::float8 AS id`,
    [tenant.projectId, messageId, readers.slice(0, n)],
  );
  return { messageId, ids: rows.map((r) => r.id) };
}

/** The provider's answer to a delivery's send: accepted, or refused for good. */
const outcome = (id: number, status: 'sent' | 'failed') =>
  recordOutcomes(t.database.db, [
    { id, fence: 1, attempts: 1, status, reason: status === 'failed' ? 'provider_error' : null, providerCode: status === 'sent' ? 'smtp_250' : 'smtp_554', delayMs: 0 },
  ]);

/** A report of the delivery (a DSN, an ARF complaint, a tracking hit, an unsubscribe) through the one recorder. */
const report = (id: number, type: DeliveryEvent) => recordDeliveryEvents(t.database.db, [{ deliveryId: id, type, occurredAt: new Date(), logRepeat: true }]);

async function stats(messageId: string, audience: number) {
  const [counters] = await query<Counters>(
    `SELECT sent, delivered, opened, clicked, dismissed, unsubscribed, complained, bounced, failed, suppressed FROM message_stats WHERE message_id = $1`,
    [messageId],
  );
  return emailStats({ audienceSize: audience, counters: counters! });
}

const RATES = ['openRate', 'clickRate', 'bounceRate', 'complaintRate', 'unsubscribeRate'] as const;

describe('email campaign rates', () => {
  it('a recipient who clicked and then bounced: 2 clicks of 3 sent is a click rate of 2/3, not 1', async () => {
    const { messageId, ids } = await claimed(3);
    for (const id of ids) await outcome(id, 'sent');
    await report(ids[0]!, 'clicked');
    await report(ids[1]!, 'clicked');
    await report(ids[1]!, 'bounced');
    expect(await stats(messageId, 3)).toMatchObject({ sent: 3, clicked: 2, bounced: 1, clickRate: 0.6667, openRate: 0, bounceRate: 0.3333 });
  });

  it('stays within [0, 1] for any order of sends and reports (200 random campaigns)', async () => {
    // A seeded generator: every run checks the same cases, and a failure names one.
    let state = 20_261_128;
    const next = () => {
      state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
      return state / 2 ** 31;
    };
    const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)]!;
    const STEPS = ['sent', 'send_failed', 'delivered', 'opened', 'clicked', 'bounced', 'complained', 'unsubscribed', 'failed'] as const;
    for (let campaign = 0; campaign < 200; campaign++) {
      const size = 1 + Math.floor(next() * 4);
      const { messageId, ids } = await claimed(size);
      // Each recipient's steps, interleaved at random: reports may come before the send is recorded, or after a refusal.
      const steps = ids.flatMap((id) => Array.from({ length: Math.floor(next() * 6) }, () => ({ id, step: pick(STEPS) })));
      steps.sort(() => next() - 0.5);
      for (const [i, { id, step }] of steps.entries()) {
        if (step === 'sent' || step === 'send_failed') await outcome(id, step === 'sent' ? 'sent' : 'failed');
        else await report(id, step);
        const seen = await stats(messageId, size);
        for (const name of RATES) {
          expect(seen[name], `campaign ${campaign}, step ${i} (${step}): ${name} of ${JSON.stringify(seen)}`).toBeGreaterThanOrEqual(0);
          expect(seen[name], `campaign ${campaign}, step ${i} (${step}): ${name} of ${JSON.stringify(seen)}`).toBeLessThanOrEqual(1);
        }
      }
    }
  });
});
