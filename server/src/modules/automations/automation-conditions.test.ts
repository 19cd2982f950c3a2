// Conditions as the executor and the event trigger read them: every operator, dotted paths, ISO 8601 instants, a
// condition step's segment filters and saved segment, and an enrollment without an event.
import { describe, expect, it } from 'vitest';
import type { PropertyCondition } from '../../db/schema.js';
import type { SegmentFilter } from '../segments/index.js';
import { allHold, criteriaHold, type ConditionSubject } from './automation-conditions.js';

const test = (path: string, operator: PropertyCondition['operator'], value?: unknown): PropertyCondition[] => [{ path, operator, ...(value !== undefined && { value }) }];
const holds = (object: Record<string, unknown> | null, path: string, operator: PropertyCondition['operator'], value?: unknown) => allHold(test(path, operator, value), object);

const NOW = new Date('2026-06-01T12:00:00Z');

const subscriber = (fields: Partial<ConditionSubject['subscriber']> = {}): ConditionSubject['subscriber'] => ({
  platform: 'desktop',
  browser: 'chrome',
  os: 'windows',
  country: 'FR',
  city: 'Paris',
  device: null,
  language: 'fr-FR',
  tags: ['vip', 'beta'],
  emailStatus: 'active',
  consent: { email: 'subscribed', sms: null, whatsapp: null },
  subscribedAt: new Date('2026-01-15T10:00:00Z'),
  lastSeenAt: new Date('2026-05-30T10:00:00Z'),
  attributes: { plan: 'pro', seats: 12 },
  ...fields,
});

describe('property tests', () => {
  const order = { total: 80, currency: 'EUR', coupon: null, paid: false, items: ['shoes', 'socks'], address: { city: 'Lyon', zip: '69001' }, note: 'gift for mum' };

  it('eq and neq compare JSON values: types count, object keys in any order', () => {
    expect(holds(order, 'total', 'eq', 80)).toBe(true);
    expect(holds(order, 'total', 'eq', '80')).toBe(false);
    expect(holds(order, 'paid', 'eq', false)).toBe(true);
    expect(holds(order, 'coupon', 'eq', null)).toBe(true);
    expect(holds(order, 'items', 'eq', ['shoes', 'socks'])).toBe(true);
    expect(holds(order, 'items', 'eq', ['socks', 'shoes'])).toBe(false);
    // Stored as jsonb, an object comes back with its keys reordered: equality does not depend on their order.
    expect(holds(order, 'address', 'eq', { zip: '69001', city: 'Lyon' })).toBe(true);
    expect(holds(order, 'missing', 'eq', null)).toBe(false);
    expect(holds(order, 'currency', 'neq', 'USD')).toBe(true);
    expect(holds(order, 'currency', 'neq', 'EUR')).toBe(false);
    expect(holds(order, 'missing', 'neq', 'EUR')).toBe(true);
  });

  it('gt, gte, lt, lte compare numbers', () => {
    expect([holds(order, 'total', 'gt', 50), holds(order, 'total', 'gt', 80), holds(order, 'total', 'gte', 80), holds(order, 'total', 'lt', 80.5), holds(order, 'total', 'lte', 79)]).toEqual([
      true,
      false,
      true,
      true,
      false,
    ]);
    expect(holds({ n: -1.5 }, 'n', 'lt', 0)).toBe(true);
  });

  it('compare two ISO 8601 dates or timestamps as instants, whatever their offsets', () => {
    const event = { at: '2026-03-29T01:30:00+02:00', day: '2026-03-29', local: '2026-03-29T00:00:00' };
    expect(holds(event, 'at', 'lt', '2026-03-29T00:00:00Z')).toBe(true); // 23:30 UTC the day before
    expect(holds(event, 'at', 'gte', '2026-03-28T23:30:00.000Z')).toBe(true);
    expect(holds(event, 'at', 'gt', '2026-03-28T23:30:00Z')).toBe(false);
    expect(holds(event, 'day', 'gte', '2026-03-29T00:00:00Z')).toBe(true); // a date is its UTC midnight
    expect(holds(event, 'day', 'lt', '2026-03-30')).toBe(true);
    expect(holds(event, 'local', 'lte', '2026-03-29')).toBe(true); // a timestamp without offset reads as UTC
  });

  it('do not order anything else: mixed types, and strings that are not ISO 8601', () => {
    expect(holds(order, 'total', 'gt', '50')).toBe(false);
    expect(holds({ total: '80' }, 'total', 'gt', 50)).toBe(false);
    expect(holds(order, 'missing', 'lt', 100)).toBe(false);
    expect(holds(order, 'address', 'gt', 1)).toBe(false);
    // JavaScript's Date.parse reads these as dates; they are no instants.
    for (const [actual, value] of [
      ['10', '9'],
      ['Gold 2', 'abc 12'],
      ['plan 2024', '2023-01-01'],
      ['1/2/2024', '2023-01-01'],
    ]) {
      expect(holds({ v: actual }, 'v', 'gt', value), `${actual} > ${value}`).toBe(false);
      expect(holds({ v: actual }, 'v', 'lte', value), `${actual} <= ${value}`).toBe(false);
    }
  });

  it('contains looks into a string or an array; in takes one of a list', () => {
    expect(holds(order, 'note', 'contains', 'gift')).toBe(true);
    expect(holds(order, 'note', 'contains', 'Gift')).toBe(false);
    expect(holds(order, 'items', 'contains', 'socks')).toBe(true);
    expect(holds(order, 'items', 'contains', 'sock')).toBe(false);
    expect(holds({ lines: [{ sku: 'A' }, { sku: 'B' }] }, 'lines', 'contains', { sku: 'B' })).toBe(true);
    expect(holds(order, 'total', 'contains', 8)).toBe(false);
    expect(holds(order, 'currency', 'in', ['USD', 'EUR'])).toBe(true);
    expect(holds(order, 'currency', 'in', ['USD'])).toBe(false);
    expect(holds(order, 'missing', 'in', ['USD'])).toBe(false);
    expect(holds(order, 'total', 'in', ['80'])).toBe(false);
  });

  it('exists and not_exists: null is no value, false and 0 are', () => {
    expect(holds(order, 'paid', 'exists')).toBe(true);
    expect(holds({ n: 0, s: '' }, 'n', 'exists')).toBe(true);
    expect(holds({ n: 0, s: '' }, 's', 'exists')).toBe(true);
    expect(holds(order, 'coupon', 'exists')).toBe(false);
    expect(holds(order, 'coupon', 'not_exists')).toBe(true);
    expect(holds(order, 'missing', 'not_exists')).toBe(true);
    expect(holds(order, 'total', 'not_exists')).toBe(false);
  });

  it('follows dotted paths into nested objects, and no further than an object goes', () => {
    const event = { cart: { total: 120, customer: { tier: 'gold' } }, items: [{ sku: 'A' }], label: 'x' };
    expect(holds(event, 'cart.total', 'gte', 100)).toBe(true);
    expect(holds(event, 'cart.customer.tier', 'eq', 'gold')).toBe(true);
    expect(holds(event, 'cart.customer.tier.name', 'exists')).toBe(false);
    expect(holds(event, 'label.length', 'exists')).toBe(false);
    // Arrays are values, not objects to step into.
    expect(holds(event, 'items.0.sku', 'exists')).toBe(false);
    expect(holds(event, 'cart.missing.deeper', 'not_exists')).toBe(true);
    // A key with a dot in its name is not reached by a path.
    expect(holds({ 'a.b': 1 }, 'a.b', 'exists')).toBe(false);
  });

  it('holds with no tests, and only when every test holds', () => {
    expect(allHold(undefined, null)).toBe(true);
    expect(allHold([], {})).toBe(true);
    expect(allHold([...test('total', 'gt', 50), ...test('currency', 'eq', 'EUR')], order)).toBe(true);
    expect(allHold([...test('total', 'gt', 50), ...test('currency', 'eq', 'USD')], order)).toBe(false);
    expect(allHold(test('total', 'exists'), null)).toBe(false);
  });
});

describe('criteriaHold', () => {
  const subject = (fields: Partial<ConditionSubject> = {}): ConditionSubject => ({ subscriber: subscriber(), event: null, segment: undefined, ...fields });
  const filter = (f: Record<string, unknown>) => f as SegmentFilter;

  it("reads the subscriber's fields as a segment's filters: tags, country, language, last seen", () => {
    expect(criteriaHold({ subscriber: filter({ tags: ['vip'] }) }, subject(), NOW)).toBe(true);
    expect(criteriaHold({ subscriber: filter({ tags: { all: ['vip', 'beta'], none: ['churned'] } }) }, subject(), NOW)).toBe(true);
    expect(criteriaHold({ subscriber: filter({ tags: { none: ['beta'] } }) }, subject(), NOW)).toBe(false);
    expect(criteriaHold({ subscriber: filter({ country: ['DE', 'FR'], language: 'fr' }) }, subject(), NOW)).toBe(true);
    expect(criteriaHold({ subscriber: filter({ country: 'DE' }) }, subject(), NOW)).toBe(false);
    expect(criteriaHold({ subscriber: filter({ country: 'FR' }) }, subject({ subscriber: subscriber({ country: null }) }), NOW)).toBe(false);
    expect(criteriaHold({ subscriber: filter({ lastSeenDays: 7 }) }, subject(), NOW)).toBe(true);
    expect(criteriaHold({ subscriber: filter({ lastSeenDays: 1 }) }, subject(), NOW)).toBe(false);
  });

  it("holds for a saved segment's members; a segment that no longer exists matches nobody", () => {
    const criteria = { segmentId: 'seg_1' };
    expect(criteriaHold(criteria, subject({ segment: filter({ tags: ['vip'] }) }), NOW)).toBe(true);
    expect(criteriaHold(criteria, subject({ segment: filter({ tags: ['vip'], country: 'US' }) }), NOW)).toBe(false);
    expect(criteriaHold(criteria, subject({ segment: filter({}) }), NOW)).toBe(true);
    expect(criteriaHold(criteria, subject({ segment: undefined }), NOW)).toBe(false);
  });

  it("reads the subscriber's attributes and the event's properties; event tests fail without an event", () => {
    expect(criteriaHold({ attributes: test('plan', 'eq', 'pro') }, subject(), NOW)).toBe(true);
    expect(criteriaHold({ attributes: test('seats', 'gt', 20) }, subject(), NOW)).toBe(false);
    expect(criteriaHold({ event: test('total', 'gte', 50) }, subject({ event: { total: 80 } }), NOW)).toBe(true);
    expect(criteriaHold({ event: test('total', 'gte', 50) }, subject({ event: null }), NOW)).toBe(false);
    // Even a test that holds of nothing: without an event there is nothing to test.
    expect(criteriaHold({ event: test('total', 'not_exists') }, subject({ event: null }), NOW)).toBe(false);
    expect(criteriaHold({ event: test('total', 'not_exists') }, subject({ event: {} }), NOW)).toBe(true);
  });

  it('needs every part given to hold', () => {
    const criteria = { subscriber: filter({ tags: ['vip'] }), segmentId: 'seg_1', attributes: test('plan', 'eq', 'pro'), event: test('total', 'gt', 10) };
    const all = subject({ segment: filter({ country: 'FR' }), event: { total: 80 } });
    expect(criteriaHold(criteria, all, NOW)).toBe(true);
    expect(criteriaHold(criteria, { ...all, event: { total: 5 } }, NOW)).toBe(false);
    expect(criteriaHold(criteria, { ...all, segment: filter({ country: 'DE' }) }, NOW)).toBe(false);
    expect(criteriaHold(criteria, { ...all, subscriber: subscriber({ attributes: { plan: 'free' } }) }, NOW)).toBe(false);
    expect(criteriaHold(criteria, { ...all, subscriber: subscriber({ tags: [] }) }, NOW)).toBe(false);
  });
});
