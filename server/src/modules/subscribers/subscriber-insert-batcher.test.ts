// Group commit of registrations: rows that arrive together share one statement, each gets its own outcome.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant, pushSubscription, startWithTenant, type Tenant } from '../../../test/fixtures.js';
import type { TestApp } from '../../../test/harness.js';
import { newId } from '../../shared/ids.js';
import { SubscriberInsertBatcher } from './subscriber-insert-batcher.js';
import type { NewRegistration } from './subscriber.repository.js';

let t: TestApp;
let tenant: Tenant;

beforeAll(async () => {
  ({ t, tenant } = await startWithTenant());
});
afterAll(() => t.close());

function row(extra: Partial<NewRegistration> = {}): NewRegistration {
  const { endpoint, p256dh, auth } = pushSubscription();
  return {
    id: newId('sub'),
    projectId: tenant.projectId,
    token: `st_${newId('sub')}`,
    endpoint,
    p256dh,
    auth,
    userAgent: 'Mozilla/5.0',
    platform: 'desktop',
    browser: 'Chrome',
    os: 'Windows',
    device: null,
    country: null,
    city: null,
    language: 'en',
    timezone: null,
    sandbox: false,
    registeredAt: new Date(),
    ...extra,
  };
}

/** The transaction that wrote each row: rows written by one statement share it. */
async function writers(ids: string[]): Promise<Map<string, string>> {
  const { rows } = await t.database.pool.query<{ id: string; xmin: string }>('SELECT id, xmin::text FROM subscribers WHERE id = ANY($1)', [ids]);
  return new Map(rows.map((r) => [r.id, r.xmin]));
}

const registration = (endpoint?: string) => {
  const { endpoint: fresh, p256dh, auth } = pushSubscription();
  return { projectId: tenant.projectId, endpoint: endpoint ?? fresh, p256dh, auth, userAgent: 'Mozilla/5.0' };
};
const register = (payload: Record<string, unknown>) => t.app.inject({ method: 'POST', url: '/subscribers', headers: tenant.live, payload });

describe('SubscriberInsertBatcher', () => {
  it('writes rows submitted together in one statement, and each is committed when its promise resolves', async () => {
    const batcher = new SubscriberInsertBatcher(t.database.pool);
    const rows = Array.from({ length: 25 }, () => row());
    expect(await Promise.all(rows.map((r) => batcher.insert(r)))).toEqual(rows.map(() => true));
    const stored = await writers(rows.map((r) => r.id));
    expect(stored.size).toBe(25);
    expect(new Set(stored.values()).size).toBe(1);
  });

  it('splits at maxBatch', async () => {
    const batcher = new SubscriberInsertBatcher(t.database.pool, { maxBatch: 4 });
    const rows = Array.from({ length: 10 }, () => row());
    await Promise.all(rows.map((r) => batcher.insert(r)));
    const stored = await writers(rows.map((r) => r.id));
    expect(stored.size).toBe(10);
    expect(new Set(stored.values()).size).toBe(3);
  });

  it('a duplicate endpoint in the same batch: the first is inserted, the second reported as a conflict', async () => {
    const batcher = new SubscriberInsertBatcher(t.database.pool);
    const first = row();
    const second = row({ endpoint: first.endpoint });
    expect(await Promise.all([batcher.insert(first), batcher.insert(second)])).toEqual([true, false]);
    expect([...(await writers([first.id, second.id])).keys()]).toEqual([first.id]);
  });

  it('an endpoint the project already has → false, and the same endpoint in another project is stored', async () => {
    const batcher = new SubscriberInsertBatcher(t.database.pool);
    const stored = row();
    await batcher.insert(stored);
    const otherTenant = await createTenant(t);
    const [again, elsewhere] = await Promise.all([
      batcher.insert(row({ endpoint: stored.endpoint })),
      batcher.insert(row({ endpoint: stored.endpoint, projectId: otherTenant.projectId })),
    ]);
    expect([again, elsewhere]).toEqual([false, true]);
  });

  it('a failing row fails alone: the batch falls back to one statement per row', async () => {
    const batcher = new SubscriberInsertBatcher(t.database.pool);
    const good = [row(), row()];
    const bad = row({ projectId: 'prj_does_not_exist' });
    const results = await Promise.allSettled([batcher.insert(good[0]!), batcher.insert(bad), batcher.insert(good[1]!)]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason).toMatchObject({ code: '23503' }); // foreign_key_violation
    const stored = await writers([...good, bad].map((r) => r.id));
    expect([...stored.keys()].sort()).toEqual(good.map((r) => r.id).sort());
  });

  it('keeps text exactly as given (array literal quoting)', async () => {
    const batcher = new SubscriberInsertBatcher(t.database.pool);
    const odd = row({ userAgent: 'a "quoted", {braced} \\ back\\slash, NULL, ünï', device: 'NULL', city: '' });
    await batcher.insert(odd);
    const { rows } = await t.database.pool.query('SELECT user_agent, device, city, country FROM subscribers WHERE id = $1', [odd.id]);
    expect(rows[0]).toEqual({ user_agent: odd.userAgent, device: 'NULL', city: '', country: null });
  });
});

describe('POST /subscribers under concurrency', () => {
  it('concurrent registrations are all stored, each with its own id and token', async () => {
    const responses = await Promise.all(Array.from({ length: 40 }, () => register(registration())));
    expect(responses.map((r) => r.statusCode)).toEqual(responses.map(() => 201));
    const ids = responses.map((r) => r.json<{ id: string }>().id);
    expect(new Set(ids).size).toBe(40);
    expect(new Set(responses.map((r) => r.json<{ token: string }>().token)).size).toBe(40);
    expect((await writers(ids)).size).toBe(40);
  });

  it('the same endpoint registered twice at once → one 201 and one 409 naming the stored subscriber', async () => {
    const payload = registration();
    const responses = await Promise.all([register(payload), register(payload)]);
    const created = responses.find((r) => r.statusCode === 201);
    const duplicate = responses.find((r) => r.statusCode === 409);
    expect(created, responses.map((r) => r.body).join('\n')).toBeDefined();
    expect(duplicate).toBeDefined();
    expect(duplicate!.json()).toMatchObject({ code: 'subscriber_exists', subscriber: { id: created!.json().id, endpoint: payload.endpoint } });
  });
});
