// The filters tree through HTTP: attribute, event and segment conditions, groups, the attribute list, cycles and deletes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWithTwoTenants, type Tenant } from '../../../test/fixtures.js';
import type { TestApp } from '../../../test/harness.js';

let t: TestApp;
let tenant: Tenant;
let other: Tenant;
const ids: Record<string, string> = {};

type Headers = Record<string, string>;
const request = (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, headers: Headers, payload?: unknown) =>
  t.app.inject({ method, url, headers, ...(payload !== undefined && { payload: payload as Record<string, unknown> }) });

/** People made through the API (so the attribute list learns their attributes), with events reported through it. */
const PEOPLE: Record<string, { attributes: Record<string, unknown>; events?: { name: string; daysAgo: number; properties?: Record<string, unknown> }[] }> = {
  ann: { attributes: { plan: 'pro', score: 10, vip: true, renewal: '2099-03-01' }, events: [{ name: 'order.completed', daysAgo: 2, properties: { total: 80 } }, { name: 'order.completed', daysAgo: 40, properties: { total: 20 } }] },
  bob: { attributes: { plan: 'free', score: '25', vip: 'false', renewal: '2025-01-15T10:00:00' }, events: [{ name: 'order.completed', daysAgo: 5, properties: { total: '60' } }] },
  cid: { attributes: { plan: 'pro-trial', score: 'lots', vip: 'yes', renewal: 'soon' } },
  dee: { attributes: {} , events: [{ name: 'app.opened', daysAgo: 1 }] },
};

beforeAll(async () => {
  ({ t, tenant, other } = await startWithTwoTenants());
  for (const [name, person] of Object.entries(PEOPLE)) {
    const res = await request('POST', '/contacts', tenant.live, { projectId: tenant.projectId, externalId: name, email: `${name}@example.com`, attributes: person.attributes });
    expect(res.statusCode, res.body).toBe(201);
    ids[name] = res.json().id;
    for (const event of person.events ?? []) {
      const occurredAt = new Date(Date.now() - event.daysAgo * 86_400_000).toISOString();
      const sent = await request('POST', '/events', tenant.live, { projectId: tenant.projectId, name: event.name, subscriberId: ids[name], properties: event.properties ?? {}, occurredAt });
      expect(sent.statusCode, sent.body).toBeLessThan(300);
    }
  }
});
afterAll(() => t.close());

async function reachOf(filters: Record<string, unknown>, headers: Headers = tenant.live) {
  const res = await request('POST', '/segments/reach', headers, { projectId: tenant.projectId, filters });
  return res;
}

/** Who a tree reaches, read from the CSV export of a segment saved with it. */
async function members(filters: Record<string, unknown>): Promise<string[]> {
  const saved = await request('POST', '/segments', tenant.live, { projectId: tenant.projectId, name: 'probe', filters });
  expect(saved.statusCode, saved.body).toBe(201);
  const csv = await request('GET', `/segments/project/${tenant.projectId}/export.csv?segmentId=${saved.json().id}`, tenant.live);
  expect(csv.statusCode).toBe(200);
  const names = csv.body.trim().split('\n').slice(1).map((line) => line.split(',')[0]!);
  const count = (await reachOf(filters)).json().count;
  expect(count).toBe(names.length);
  await request('DELETE', `/segments/${saved.json().id}`, tenant.live);
  return names.sort();
}

describe('the attribute list', () => {
  it('lists attributes with the type of the first value written', async () => {
    const res = await request('GET', `/projects/${tenant.projectId}/attributes`, tenant.live);
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual([
      { name: 'plan', type: 'text', source: 'inferred', firstSeenAt: expect.any(String) },
      { name: 'renewal', type: 'date', source: 'inferred', firstSeenAt: expect.any(String) },
      { name: 'score', type: 'number', source: 'inferred', firstSeenAt: expect.any(String) },
      { name: 'vip', type: 'boolean', source: 'inferred', firstSeenAt: expect.any(String) },
    ]);
    expect((await request('GET', `/projects/${tenant.projectId}/attributes`, tenant.test)).json().data).toEqual([]);
    expect((await request('GET', `/projects/${tenant.projectId}/attributes`, other.live)).statusCode).toBe(403);
  });

  it('learns attributes from updates and imports too', async () => {
    expect((await request('PATCH', `/subscribers/${ids.dee}`, tenant.live, { attributes: { tier: 3 } })).statusCode).toBe(200);
    const imported = await request('POST', '/contacts/import', tenant.live, { projectId: tenant.projectId, upsertBy: 'externalId', contacts: [{ externalId: 'dee', attributes: { joined: '2024-05-01' } }] });
    expect(imported.statusCode, imported.body).toBe(200);
    const names = (await request('GET', `/projects/${tenant.projectId}/attributes`, tenant.live)).json().data.map((a: { name: string; type: string }) => `${a.name}:${a.type}`);
    expect(names).toEqual(expect.arrayContaining(['tier:number', 'joined:date']));
  });

  it('gives the most frequent values, by prefix', async () => {
    const res = await request('GET', `/projects/${tenant.projectId}/attributes/plan/values?q=pro`, tenant.live);
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual([
      { value: 'pro', count: 1 },
      { value: 'pro-trial', count: 1 },
    ]);
    expect((await request('GET', `/projects/${tenant.projectId}/attributes/score/values`, tenant.live)).json().data.map((v: { value: string }) => v.value).sort()).toEqual(['10', '25', 'lots']);
  });

  it('declares a type, which changes how conditions read stored values', async () => {
    expect(await members({ all: [{ attribute: 'plan', operator: 'eq', value: 'pro' }] })).toEqual(['ann']);
    const declared = await request('PUT', `/projects/${tenant.projectId}/attributes/level`, tenant.live, { type: 'number' });
    expect(declared.statusCode).toBe(200);
    expect(declared.json()).toEqual({ name: 'level', type: 'number', source: 'declared', firstSeenAt: null });
    // "text" takes no gt: 422 on the condition's operator.
    const res = await reachOf({ all: [{ attribute: 'plan', operator: 'gt', value: 3 }] });
    expect(res.statusCode).toBe(422);
    expect(res.json().details).toEqual([{ field: 'filters.all.0.operator', error: expect.stringContaining('text') }]);
    const bad = await request('PUT', `/projects/${tenant.projectId}/attributes/level`, tenant.live, { type: 'colour' });
    expect(bad.statusCode).toBe(422);
  });
});

describe('attribute conditions', () => {
  it.each<[string, Record<string, unknown>, string[]]>([
    ['number reads "25" as 25', { attribute: 'score', operator: 'gt', value: 15 }, ['bob']],
    ['number between', { attribute: 'score', operator: 'between', value: [5, 30] }, ['ann', 'bob']],
    ['number in', { attribute: 'score', operator: 'in', value: [25] }, ['bob']],
    ['neq holds without the attribute', { attribute: 'score', operator: 'neq', value: 10 }, ['bob', 'cid', 'dee']],
    ['exists: unreadable counts as absent', { attribute: 'score', operator: 'exists' }, ['ann', 'bob']],
    ['not_exists', { attribute: 'vip', operator: 'not_exists' }, ['cid', 'dee']],
    ['boolean from "false"', { attribute: 'vip', operator: 'eq', value: false }, ['bob']],
    ['text starts_with', { attribute: 'plan', operator: 'starts_with', value: 'pro' }, ['ann', 'cid']],
    ['text contains (case-sensitive)', { attribute: 'plan', operator: 'contains', value: 'Trial' }, []],
    ['text in', { attribute: 'plan', operator: 'in', value: ['free', 'pro'] }, ['ann', 'bob']],
    ['date gt (local time is UTC)', { attribute: 'renewal', operator: 'gt', value: '2025-01-15T09:59:59Z' }, ['ann', 'bob']],
    ['date lt', { attribute: 'renewal', operator: 'lt', value: '2025-01-15T10:00:00Z' }, []],
    ['date more_than_days_ago', { attribute: 'renewal', operator: 'more_than_days_ago', value: 1 }, ['bob']],
    ['an unseen attribute takes its type from the value', { attribute: 'unheard', operator: 'not_exists' }, ['ann', 'bob', 'cid', 'dee']],
  ])('%s', async (_name, condition, expected) => {
    expect(await members({ all: [condition] })).toEqual(expected);
  });

  it.each<[Record<string, unknown>, string]>([
    [{ attribute: 'score', operator: 'contains', value: 'x' }, 'filters.all.0.operator'],
    [{ attribute: 'score', operator: 'eq', value: 'ten' }, 'filters.all.0.value'],
    [{ attribute: 'score', operator: 'between', value: [3] }, 'filters.all.0.value'],
    [{ attribute: 'renewal', operator: 'within_last_days', value: 0 }, 'filters.all.0.value'],
    [{ attribute: 'plan', operator: 'exists', value: 'x' }, 'filters.all.0.value'],
    [{ attribute: 'plan', operator: 'like', value: 'x' }, 'filters.all.0.operator'],
    [{ attribute: 'plan', operator: 'eq', value: 'x', colour: 1 }, 'filters.all.0.colour'],
    [{ event: 'x', count: { operator: 'gt', value: 1 } }, 'filters.all.0.count.operator'],
    [{ event: 'x', withinLastDays: 3, between: { from: '2024-01-01' } }, 'filters.all.0.between'],
    [{ event: 'x', where: [{ property: 'total', operator: 'contains', value: 3 }] }, 'filters.all.0.where.0.operator'],
    [{ inSegment: 'seg_nope' }, 'filters.all.0.inSegment'],
    [{ all: [{ all: [{ country: 'FR' }] }] }, 'filters.all.0.all.0.all.0'],
  ])('rejects %j with a 422 on %s', async (condition, field) => {
    const res = await request('POST', '/segments', tenant.live, { projectId: tenant.projectId, name: 'x', filters: { all: [condition] } });
    expect(res.statusCode, res.body).toBe(422);
    expect(res.json().details.map((d: { field: string }) => d.field)).toContain(field);
  });
});

describe('event conditions and groups', () => {
  it.each<[string, Record<string, unknown>, string[]]>([
    ['performed', { all: [{ event: 'order.completed' }] }, ['ann', 'bob']],
    ['within a window', { all: [{ event: 'order.completed', withinLastDays: 30 }] }, ['ann', 'bob']],
    ['count in a window', { all: [{ event: 'order.completed', count: { operator: 'gte', value: 2 } }] }, ['ann']],
    ['where (property read as the value\'s type)', { all: [{ event: 'order.completed', where: [{ property: 'total', operator: 'gt', value: 50 }] }] }, ['ann', 'bob']],
    ['not performed', { all: [{ event: 'order.completed', performed: false, withinLastDays: 3 }] }, ['bob', 'cid', 'dee']],
    ['first time', { all: [{ event: 'order.completed', first: { operator: 'more_than_days_ago', value: 30 } }] }, ['ann']],
    ['last time', { all: [{ event: 'order.completed', last: { operator: 'within_last_days', value: 3 } }] }, ['ann']],
    ['any of', { any: [{ attribute: 'plan', operator: 'eq', value: 'free' }, { event: 'app.opened' }] }, ['bob', 'dee']],
    ['nested groups', { all: [{ any: [{ attribute: 'vip', operator: 'eq', value: true }, { all: [{ event: 'app.opened' }, { attribute: 'plan', operator: 'not_exists' }] }] }] }, ['ann', 'dee']],
    ['with the fixed fields', { tags: { none: ['x'] }, any: [{ event: 'app.opened' }] }, ['dee']],
  ])('%s', async (_name, filters, expected) => {
    expect(await members(filters)).toEqual(expected);
  });
});

describe('segment membership', () => {
  it('inlines a saved segment, refuses cycles and deleting a named segment', async () => {
    const pro = (await request('POST', '/segments', tenant.live, { projectId: tenant.projectId, name: 'pro', filters: { all: [{ attribute: 'plan', operator: 'starts_with', value: 'pro' }] } })).json();
    const buyers = (await request('POST', '/segments', tenant.live, { projectId: tenant.projectId, name: 'pro buyers', filters: { all: [{ inSegment: pro.id }, { event: 'order.completed' }] } })).json();
    expect(await members({ all: [{ inSegment: buyers.id }] })).toEqual(['ann']);
    expect(await members({ all: [{ notInSegment: buyers.id }] })).toEqual(['bob', 'cid', 'dee']);

    const cycle = await request('PATCH', `/segments/${pro.id}`, tenant.live, { filters: { any: [{ inSegment: buyers.id }] } });
    expect(cycle.statusCode).toBe(422);
    expect(cycle.json().code).toBe('segment_cycle');
    const self = await request('PATCH', `/segments/${pro.id}`, tenant.live, { filters: { all: [{ notInSegment: pro.id }] } });
    expect(self.json().code).toBe('segment_cycle');

    const inUse = await request('DELETE', `/segments/${pro.id}`, tenant.live);
    expect(inUse.statusCode).toBe(409);
    expect(inUse.json().code).toBe('segment_in_use');
    // A segment of another environment is not one a tree can name.
    const sandbox = await request('POST', '/segments', tenant.test, { projectId: tenant.projectId, name: 'x', filters: { all: [{ inSegment: pro.id }] } });
    expect(sandbox.statusCode).toBe(422);

    expect((await request('DELETE', `/segments/${buyers.id}`, tenant.live)).statusCode).toBe(204);
    expect((await request('DELETE', `/segments/${pro.id}`, tenant.live)).statusCode).toBe(204);
  });

  it('keeps a filters object of only the fixed fields the same JSON', async () => {
    const filters = { country: ['FR'], tags: { all: ['vip'] }, lastSeenDays: 30 };
    const saved = await request('POST', '/segments', tenant.live, { projectId: tenant.projectId, name: 'same', filters });
    expect(saved.json().filters).toEqual(filters);
    const tree = { all: [{ attribute: 'plan', operator: 'eq', value: 'pro' }, { event: 'x', count: { operator: 'eq', value: 0 } }], any: [{ inSegment: saved.json().id }] };
    const withTree = await request('POST', '/segments', tenant.live, { projectId: tenant.projectId, name: 'tree', filters: tree });
    expect(withTree.json().filters).toEqual(tree);
  });
});

describe('an audience reads attributes from attribute_values, which follows every write', () => {
  // Each tree is new to the 30 s reach cache: a tag nobody has changes its key, not its people.
  let asked = 0;
  const fresh = (condition: Record<string, unknown>) => ({ tags: { none: [`probe-${++asked}`] }, all: [condition] });
  const rank = (operator: string, value?: unknown) => fresh({ attribute: 'rank', operator, ...(value !== undefined && { value }) });

  it('creation, a merge, a removal, a type change of the value, an import and a deletion', async () => {
    const created = await request('POST', '/contacts', tenant.live, { projectId: tenant.projectId, externalId: 'eve', attributes: { rank: 'gold', seats: 5 } });
    expect(created.statusCode, created.body).toBe(201);
    const eve = created.json().id as string;
    expect(await members(rank('eq', 'gold'))).toEqual(['eve']);
    expect(await members(fresh({ attribute: 'seats', operator: 'gte', value: 5 }))).toEqual(['eve']);

    // A merge rewrites the key it changes and keeps the others.
    expect((await request('PATCH', `/subscribers/${eve}`, tenant.live, { attributes: { rank: 'silver' } })).statusCode).toBe(200);
    expect(await members(rank('eq', 'gold'))).toEqual([]);
    expect(await members(rank('eq', 'silver'))).toEqual(['eve']);
    expect(await members(fresh({ attribute: 'seats', operator: 'eq', value: 5 }))).toEqual(['eve']);

    // A number where a text was: read as text, it is '7'; an array has no reading at all.
    expect((await request('PATCH', `/subscribers/${eve}`, tenant.live, { attributes: { rank: 7, seats: [1] } })).statusCode).toBe(200);
    expect(await members(rank('eq', '7'))).toEqual(['eve']);
    expect(await members(fresh({ attribute: 'seats', operator: 'exists' }))).toEqual([]);

    // null removes the key: neq and not_exists then hold, as for anyone without it.
    expect((await request('PATCH', `/subscribers/${eve}`, tenant.live, { attributes: { rank: null } })).statusCode).toBe(200);
    expect(await members(rank('exists'))).toEqual([]);
    expect(await members(rank('not_exists'))).toContain('eve');

    // An import updating by externalId is one statement over many rows.
    const imported = await request('POST', '/contacts/import', tenant.live, {
      projectId: tenant.projectId,
      upsertBy: 'externalId',
      contacts: [{ externalId: 'eve', attributes: { rank: 'platinum' } }, { externalId: 'fay', attributes: { rank: 'platinum' } }],
    });
    expect(imported.statusCode, imported.body).toBe(200);
    expect(await members(rank('eq', 'platinum'))).toEqual(['eve', 'fay']);

    expect((await request('DELETE', `/subscribers/${eve}`, tenant.live)).statusCode).toBe(204);
    expect(await members(rank('eq', 'platinum'))).toEqual(['fay']);
    // Nothing of eve is left behind.
    const { rows } = await t.database.pool.query('SELECT count(*)::int AS n FROM attribute_values WHERE subscriber_id = $1', [eve]);
    expect(rows[0].n).toBe(0);
  });
});
