// event_totals stays equal to the aggregate of the raw events it sums: events through POST /events in batches,
// concurrently, with duplicates, people unknown, times out of order, both environments, and people deleted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant, type Tenant } from '../../../test/fixtures.js';
import { startTestApp, type TestApp } from '../../../test/harness.js';
import { seedSubscribers } from '../../../test/subscriber-seed.js';

let t: TestApp;
let tenant: Tenant;

const query = async <T = Record<string, unknown>>(text: string, values: unknown[] = []) => (await t.database.pool.query(text, values)).rows as T[];

/** The totals as stored, and as computed from the raw events, of the tenant's project. */
const totals = (projectId: string) =>
  Promise.all([
    query(
      `SELECT sandbox, name, subscriber_id, count, first_at, last_at FROM event_totals WHERE project_id = $1 ORDER BY sandbox, name, subscriber_id`,
      [projectId],
    ),
    query(
      `SELECT sandbox, name, subscriber_id, count(*)::int AS count, min(occurred_at) AS first_at, max(occurred_at) AS last_at FROM events
       WHERE project_id = $1 AND subscriber_id IS NOT NULL GROUP BY sandbox, name, subscriber_id ORDER BY sandbox, name, subscriber_id`,
      [projectId],
    ),
  ]);

beforeAll(async () => {
  t = await startTestApp();
  tenant = await createTenant(t);
});
afterAll(async () => {
  await t?.close();
});

describe('event totals', () => {
  it('equal the raw events after batches, duplicates, unknown people and deletions', async () => {
    const live = await seedSubscribers(t.database.pool, tenant.projectId, Array.from({ length: 6 }, () => ({})));
    const [sandboxed] = await seedSubscribers(t.database.pool, tenant.projectId, [{ sandbox: true }]);
    const names = ['order.completed', 'page.viewed', 'cart.abandoned'];
    // Events on random days of 2025, sent concurrently in batches that name the same people.
    const batch = (b: number) =>
      Array.from({ length: 40 }, (_, i) => ({
        name: names[(b + i) % names.length]!,
        subscriberId: i % 9 === 0 ? 'sub_nobody' : live[(b + Math.floor(i / 3)) % live.length]!,
        occurredAt: new Date(Date.UTC(2025, 0, 1) + ((b * 977 + i * 131) % 365) * 86_400_000 + i * 1000).toISOString(),
        eventId: `e-${b}-${i % 30}`,
      }));
    const sent = await Promise.all(
      Array.from({ length: 8 }, (_, b) => t.app.inject({ method: 'POST', url: '/events', headers: tenant.live, payload: { events: batch(b) } })),
    );
    for (const res of sent) expect(res.statusCode, res.body).toBe(202);
    // An eventId seen before is a duplicate, counted once.
    const again = await t.app.inject({ method: 'POST', url: '/events', headers: tenant.live, payload: { events: batch(3) } });
    expect(again.json()).toMatchObject({ recorded: 0, duplicates: 40 });
    const sandbox = await t.app.inject({
      method: 'POST',
      url: '/events',
      headers: tenant.test,
      payload: { events: [{ name: 'order.completed', subscriberId: sandboxed, occurredAt: '2024-02-29T12:00:00Z' }, { name: 'order.completed', subscriberId: sandboxed }] },
    });
    expect(sandbox.statusCode, sandbox.body).toBe(202);

    let [stored, raw] = await totals(tenant.projectId);
    expect(raw.length).toBeGreaterThan(10);
    expect(stored).toEqual(raw);
    expect(stored.filter((r) => r.sandbox === true)).toEqual([expect.objectContaining({ subscriber_id: sandboxed, count: 2, first_at: new Date('2024-02-29T12:00:00Z') })]);
    // Events naming nobody count for no one.
    expect(stored.some((r) => r.subscriber_id === null)).toBe(false);

    // A person deleted takes their totals along (their events stay, naming nobody).
    const deleted = await t.app.inject({ method: 'DELETE', url: `/subscribers/${live[0]}`, headers: tenant.live });
    expect(deleted.statusCode, deleted.body).toBeLessThan(300);
    [stored, raw] = await totals(tenant.projectId);
    expect(stored).toEqual(raw);
    expect(stored.some((r) => r.subscriber_id === live[0])).toBe(false);
  });
});
