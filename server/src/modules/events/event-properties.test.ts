// GET /events/project/:projectId/properties through HTTP: dotted paths, JSON types, top values, the recent sample, tenancy.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant, type Tenant } from '../../../test/fixtures.js';
import { startTestApp, type TestApp } from '../../../test/harness.js';

let t: TestApp;
let tenant: Tenant;
let other: Tenant;

type Headers = Record<string, string>;
const send = async (headers: Headers, events: { name: string; properties?: Record<string, unknown> }[]) => {
  const res = await t.app.inject({ method: 'POST', url: '/events', headers, payload: { events: events.map((e) => ({ externalId: 'someone', ...e })) } });
  expect(res.statusCode, res.body).toBe(202);
};
const properties = (projectId: string, name: string, headers: Headers) =>
  t.app.inject({ method: 'GET', url: `/events/project/${projectId}/properties?name=${encodeURIComponent(name)}`, headers });

interface Seen {
  sampled: number;
  properties: { path: string; seen: number; types: { type: string; count: number }[]; values: { value: unknown; count: number }[] }[];
}

beforeAll(async () => {
  t = await startTestApp();
  [tenant, other] = await Promise.all([createTenant(t), createTenant(t)]);
});
afterAll(async () => {
  await t?.close();
});

describe('event properties', () => {
  it('lists nested properties as dotted paths with their types and most frequent values', async () => {
    await send(tenant.live, [
      { name: 'order.completed', properties: { total: 10, currency: 'EUR', shipping: { method: 'express', address: { country: 'DE' } }, items: ['a'], coupon: null } },
      { name: 'order.completed', properties: { total: '10', currency: 'EUR', shipping: { method: 'standard' } } },
      { name: 'order.completed', properties: { total: 25.5, currency: 'USD', shipping: { method: 'standard' }, gift: true } },
      { name: 'page.viewed', properties: { path: '/pricing' } },
    ]);
    const res = await properties(tenant.projectId, 'order.completed', tenant.jwt);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json<Seen>();
    expect(body).toMatchObject({ name: 'order.completed', sampled: 3 });
    const byPath = Object.fromEntries(body.properties.map((p) => [p.path, p]));
    expect(Object.keys(byPath).sort()).toEqual(['coupon', 'currency', 'gift', 'items', 'shipping.address.country', 'shipping.method', 'total']);
    // The most often seen first.
    expect(body.properties.slice(0, 3).map((p) => p.path)).toEqual(['currency', 'shipping.method', 'total']);
    expect(byPath.total).toEqual({
      path: 'total',
      seen: 3,
      types: [{ type: 'number', count: 2 }, { type: 'string', count: 1 }],
      values: [{ value: '10', count: 1 }, { value: 10, count: 1 }, { value: 25.5, count: 1 }],
    });
    expect(byPath['shipping.method']!.values).toEqual([{ value: 'standard', count: 2 }, { value: 'express', count: 1 }]);
    expect(byPath['shipping.address.country']).toMatchObject({ seen: 1, types: [{ type: 'string', count: 1 }], values: [{ value: 'DE', count: 1 }] });
    // An array is a value of its own type, without values to offer; a JSON null is a value.
    expect(byPath.items).toMatchObject({ types: [{ type: 'array', count: 1 }], values: [] });
    expect(byPath.coupon).toMatchObject({ types: [{ type: 'null', count: 1 }], values: [{ value: null, count: 1 }] });
    expect(byPath.gift!.values).toEqual([{ value: true, count: 1 }]);
  });

  it('gives the 20 most frequent values of a property', async () => {
    // sku-1 once, sku-2 twice … sku-25 25 times.
    const events = Array.from({ length: 25 }, (_, i) => Array.from({ length: i + 1 }, () => ({ name: 'item.viewed', properties: { sku: `sku-${i + 1}` } }))).flat();
    await send(tenant.live, events);
    const body = (await properties(tenant.projectId, 'item.viewed', tenant.live)).json<Seen>();
    expect(body.properties).toHaveLength(1);
    expect(body.properties[0]!.values).toEqual(Array.from({ length: 20 }, (_, i) => ({ value: `sku-${25 - i}`, count: 25 - i })));
  });

  it('reads only the 1,000 most recently received events of the name', async () => {
    await send(tenant.live, Array.from({ length: 5 }, () => ({ name: 'app.opened', properties: { legacy: true } })));
    await send(tenant.live, Array.from({ length: 1000 }, (_, i) => ({ name: 'app.opened', properties: { build: i % 3 } })));
    const body = (await properties(tenant.projectId, 'app.opened', tenant.jwt)).json<Seen>();
    expect(body.sampled).toBe(1000);
    expect(body.properties.map((p) => p.path)).toEqual(['build']);
    expect(body.properties[0]!.values).toEqual([{ value: 0, count: 334 }, { value: 1, count: 333 }, { value: 2, count: 333 }]);
  });

  it("keeps to the project's environment and refuses other tenants", async () => {
    await send(tenant.test, [{ name: 'sandbox.only', properties: { secret: 'x' } }]);
    expect((await properties(tenant.projectId, 'sandbox.only', tenant.live)).json<Seen>()).toEqual({ name: 'sandbox.only', sampled: 0, properties: [] });
    expect((await properties(tenant.projectId, 'sandbox.only', tenant.test)).json<Seen>().properties.map((p) => p.path)).toEqual(['secret']);
    expect((await properties(tenant.projectId, 'order.completed', other.jwt)).statusCode).toBe(404);
    expect((await properties(tenant.projectId, 'order.completed', other.live)).statusCode).toBe(403);
  });

  it('422s a missing or malformed name', async () => {
    const missing = await t.app.inject({ method: 'GET', url: `/events/project/${tenant.projectId}/properties`, headers: tenant.jwt });
    expect(missing.statusCode).toBe(422);
    expect(missing.json<{ details: { field: string }[] }>().details.map((d) => d.field)).toEqual(['query.name']);
    const bad = await properties(tenant.projectId, 'has space', tenant.jwt);
    expect(bad.statusCode).toBe(422);
    expect(bad.json<{ details: { field: string }[] }>().details.map((d) => d.field)).toEqual(['query.name']);
  });
});
