// The tree compiler against the in-memory evaluator on random trees (attribute, event, segment conditions, nested
// groups) over random people and events, stored values of every JSON type included ("10" and 10).
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant } from '../../../test/fixtures.js';
import { startTestApp, type TestApp } from '../../../test/harness.js';
import { subscribers, type AttributeType } from '../../db/schema.js';
import { newId } from '../../shared/ids.js';
import { matchesSegmentFilter, type EvaluablePerson } from './filter-evaluator.js';
import { compileSegmentFilter, segmentFilterSchema, type FilterContext, type SegmentFilter } from './segment-filter.js';
import { prng } from '../../../test/seeded-random.js';
import { attributesWithLongTexts } from './segment.repository.js';

type Rnd = ReturnType<typeof prng>;

const DAY = 86_400_000;
const NOW = new Date('2025-06-15T12:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();
/** Instants around NOW, whole seconds, never on a whole-day boundary from NOW (no ties with "days" operators). */
const around = (rnd: Rnd) => NOW.getTime() - (rnd.int(-20, 60) + 0.37) * DAY;

/** A text longer than attribute_values keeps in its index (1000 bytes), read again from the person. */
const LONG = `${'é'.repeat(600)}pro`;
/** Stored values of every shape a type can meet, including the "wrong" JSON type and unreadable ones. */
const STORED: Record<string, (rnd: Rnd) => unknown> = {
  plan: (rnd) => rnd.pick(['free', 'pro', 'pro-trial', 'Pro', 10, true, '', { nested: 1 }, LONG, `pro${'-'.repeat(1200)}`]),
  score: (rnd) => rnd.pick([0, 5, 10, 10.5, -3, '10', '5', '10.50', ' 10', 'lots', '1e3', true, null]),
  vip: (rnd) => rnd.pick([true, false, 'true', 'false', 'yes', 1, 'TRUE']),
  renewal: (rnd) => {
    const at = around(rnd);
    return rnd.pick([iso(at), iso(at).slice(0, 10), iso(at).slice(0, 19), iso(at).replace('Z', '+02:00'), '2025-02-30', 'soon', 20250101, '0000-01-01']);
  },
};
const TYPES: Record<string, AttributeType> = { plan: 'text', score: 'number', vip: 'boolean', renewal: 'date' };

let t: TestApp;
let projectId: string;
const people: (EvaluablePerson & { id: string })[] = [];
const SEGMENT_IDS = ['seg_prop_a', 'seg_prop_b'];

beforeAll(async () => {
  t = await startTestApp();
  const tenant = await createTenant(t);
  projectId = tenant.projectId;
  const rnd = prng(424242);
  for (let i = 0; i < 150; i++) {
    const attributes: Record<string, unknown> = {};
    for (const [name, make] of Object.entries(STORED)) if (rnd.chance(0.8)) attributes[name] = make(rnd);
    const personEvents = Array.from({ length: rnd.int(0, 6) }, () => ({
      name: rnd.pick(['order.completed', 'app.opened']),
      occurredAt: new Date(around(rnd)),
      properties: rnd.chance(0.8) ? { total: rnd.pick([10, 50, 80, '50', 'many']), cart: { kind: rnd.pick(['book', 'game']) } } : {},
    }));
    people.push({
      id: newId('sub'),
      platform: null, browser: null, os: null, country: rnd.pick(['FR', 'US']), city: null, device: null, language: null,
      tags: rnd.chance(0.5) ? ['a'] : [], emailStatus: 'none', consent: { email: null, sms: null, whatsapp: null },
      subscribedAt: new Date(around(rnd)), lastSeenAt: new Date(around(rnd)), attributes, events: personEvents,
    });
  }
  await t.database.db.insert(subscribers).values(
    people.map((p, i) => ({ id: p.id, projectId, token: `st_tree_${i}`, country: p.country, tags: p.tags, attributes: p.attributes!, subscribedAt: p.subscribedAt, lastSeenAt: p.lastSeenAt })),
  );
  // Events through POST /events, which keeps the per-person totals that some event conditions read.
  const reported = people.flatMap((p) => p.events!.map((e) => ({ subscriberId: p.id, name: e.name, properties: e.properties, occurredAt: e.occurredAt.toISOString() })));
  const res = await t.app.inject({ method: 'POST', url: '/events', headers: tenant.live, payload: { projectId, events: reported } });
  expect(res.statusCode, res.body).toBeLessThan(300);
});
afterAll(() => t.close());

function randomTest(rnd: Rnd, type: AttributeType): Record<string, unknown> {
  const day = () => { const at = around(rnd); return rnd.chance(0.5) ? iso(at).slice(0, 10) : iso(at); };
  switch (type) {
    case 'text':
      return rnd.pick([
        { operator: 'eq', value: rnd.pick(['pro', 'free', '10', 'true', LONG]) },
        { operator: 'neq', value: 'pro' },
        { operator: 'in', value: ['pro', 'free', '10'] },
        { operator: 'contains', value: rnd.pick(['pro', 'ro', 'Pro']) },
        { operator: 'starts_with', value: rnd.pick(['pro', 'f', '1', 'éé']) },
        { operator: rnd.pick(['exists', 'not_exists']) },
      ]);
    case 'number':
      return rnd.pick([
        { operator: rnd.pick(['eq', 'neq', 'gt', 'gte', 'lt', 'lte']), value: rnd.pick([0, 5, 10, 10.5, 50, -3]) },
        { operator: 'in', value: [5, 10] },
        { operator: 'between', value: [rnd.pick([0, 5, 10]), rnd.pick([10, 50, 1000])] },
        { operator: rnd.pick(['exists', 'not_exists']) },
      ]);
    case 'boolean':
      return rnd.pick([{ operator: rnd.pick(['eq', 'neq']), value: rnd.chance(0.5) }, { operator: rnd.pick(['exists', 'not_exists']) }]);
    case 'date': {
      const [a, b] = [day(), day()].sort((x, y) => Date.parse(x.length === 10 ? `${x}T00:00:00Z` : x) - Date.parse(y.length === 10 ? `${y}T00:00:00Z` : y));
      return rnd.pick([
        { operator: rnd.pick(['gt', 'gte', 'lt', 'lte']), value: a },
        { operator: 'between', value: [a, b] },
        { operator: rnd.pick(['within_last_days', 'more_than_days_ago']), value: rnd.int(1, 60) },
        { operator: rnd.pick(['exists', 'not_exists']) },
      ]);
    }
  }
}

function randomEvent(rnd: Rnd): Record<string, unknown> {
  const condition: Record<string, unknown> = { event: rnd.pick(['order.completed', 'app.opened', 'never.seen']) };
  if (rnd.chance(0.3)) condition.performed = rnd.chance(0.5);
  if (rnd.chance(0.4)) condition.count = { operator: rnd.pick(['gte', 'lte', 'eq']), value: rnd.int(0, 3) };
  if (rnd.chance(0.3)) condition.withinLastDays = rnd.int(1, 60);
  else if (rnd.chance(0.2)) condition.between = { from: iso(around(rnd)).slice(0, 10) };
  if (rnd.chance(0.4)) {
    condition.where = [rnd.pick([
      { property: 'total', ...randomTest(rnd, 'number') },
      { property: 'cart.kind', operator: rnd.pick(['eq', 'neq']), value: rnd.pick(['book', 'game']) },
    ])].filter((w) => w.operator !== 'exists' && w.operator !== 'not_exists' || rnd.chance(0.5));
    if ((condition.where as unknown[]).length === 0) delete condition.where;
  }
  if (rnd.chance(0.2)) condition.first = randomTest(rnd, 'date');
  if (rnd.chance(0.2)) condition.last = randomTest(rnd, 'date');
  for (const key of ['first', 'last'] as const) {
    const test = condition[key] as { operator: string } | undefined;
    if (test && (test.operator === 'exists' || test.operator === 'not_exists')) delete condition[key];
  }
  return condition;
}

function randomGroup(rnd: Rnd, level: number): Record<string, unknown> {
  const group: Record<string, unknown> = {};
  if (rnd.chance(0.2)) group.country = rnd.pick(['FR', 'US']);
  if (rnd.chance(0.15)) group.tags = ['a'];
  for (const key of ['all', 'any'] as const) {
    if (!rnd.chance(0.7)) continue;
    group[key] = Array.from({ length: rnd.int(1, 3) }, () => {
      const roll = rnd.next();
      if (roll < 0.4) {
        const attribute = rnd.pick(Object.keys(STORED));
        return { attribute, ...randomTest(rnd, TYPES[attribute]!) };
      }
      if (roll < 0.7) return randomEvent(rnd);
      if (roll < 0.8) return rnd.chance(0.5) ? { inSegment: rnd.pick(SEGMENT_IDS) } : { notInSegment: rnd.pick(SEGMENT_IDS) };
      return level < 3 ? randomGroup(rnd, level + 1) : { attribute: 'unheard', operator: 'not_exists' };
    });
  }
  return group;
}

/** The people the compiled tree selects: as one person's check is written (`audience` false), or as an audience's. */
async function sqlIds(filter: SegmentFilter, context: FilterContext, audience: boolean): Promise<string[]> {
  const found = await t.database.db
    .select({ id: subscribers.id })
    .from(subscribers)
    .where(and(eq(subscribers.projectId, projectId), compileSegmentFilter(filter, { now: NOW, context, audience: audience ? { projectId, sandbox: false } : undefined })));
  return found.map((r) => r.id).sort();
}

describe('tree compiler', () => {
  it('matches the in-memory evaluator on 300 random trees, compiled for one person and for an audience', async () => {
    const seed = Number(process.env.SEGMENT_PROPERTY_SEED ?? Date.now() % 1_000_000);
    const rnd = prng(seed);
    let nonTrivial = 0;
    for (let i = 0; i < 300; i++) {
      const segments = new Map(SEGMENT_IDS.map((id) => [id, segmentFilterSchema.parse(randomGroup(rnd, 2))]));
      // Sometimes an attribute is declared another type than its values suggest, sometimes not listed at all.
      const attributeTypes = new Map(Object.entries(TYPES).filter(() => rnd.chance(0.8)).map(([name, type]) => [name, rnd.chance(0.1) ? rnd.pick(['text', 'number'] as const) : type]));
      const context: FilterContext = { attributeTypes, longTexts: await attributesWithLongTexts(t.database.db, { projectId, sandbox: false }, Object.keys(STORED)), segments };
      const input = randomGroup(rnd, 1);
      const parsed = segmentFilterSchema.safeParse(input);
      expect(parsed.success, `seed ${seed} case ${i}: ${JSON.stringify(input)} ${parsed.error?.message}`).toBe(true);
      const expected = people.filter((p) => matchesSegmentFilter(parsed.data!, p, NOW, context)).map((p) => p.id).sort();
      if (expected.length > 0 && expected.length < people.length) nonTrivial++;
      const label = `seed ${seed} case ${i}: ${JSON.stringify(input)} segments ${JSON.stringify([...segments])}`;
      expect(await sqlIds(parsed.data!, context, false), `${label} (one person's check)`).toEqual(expected);
      expect(await sqlIds(parsed.data!, context, true), `${label} (an audience)`).toEqual(expected);
    }
    expect(nonTrivial).toBeGreaterThan(100);
  });
});
