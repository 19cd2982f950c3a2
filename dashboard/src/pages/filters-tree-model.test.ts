// The condition builder's tree ⇄ the filters object of docs/TARGETING.md: the same JSON back when nothing is edited,
// edits written as the API takes them, the paths of each row for 422s, and what is left to fill in.
import { describe, expect, it } from 'vitest';
import type { Filters } from '../api/targeting';
import { editField, filtersOf, newRow, newWhere, problemsOf, propertyType, retype, treeOf, updateRow, type Group, type Row } from './filters-tree-model';

const roundTrip = (filters: Filters) => JSON.stringify(filtersOf(treeOf(filters)).filters);

describe('filters ⇄ tree', () => {
  it('writes a filters object of only spec fields back as exactly the same JSON (single values and plain tag lists kept)', () => {
    const spec = {
      platform: 'mobile',
      browser: ['Firefox'],
      os: ['Android', 'iOS'],
      country: 'FR',
      city: ['Paris'],
      device: ['Apple iPhone'],
      language: ['en', 'pt-BR'],
      tags: ['vip', 'beta'],
      lastSeenDays: 30,
      emailStatus: ['active'],
      subscriptionDate: { from: '2026-01-01' },
      emailConsent: ['subscribed'],
      smsConsent: 'transactional',
      whatsappConsent: ['unsubscribed'],
    } as Filters;
    expect(roundTrip(spec)).toBe(JSON.stringify(spec));
    expect(roundTrip({ tags: { any: ['a'], none: ['b'] } })).toBe('{"tags":{"any":["a"],"none":["b"]}}');
    expect(roundTrip({})).toBe('{}');
  });

  it('reads and writes back every kind of condition, nested groups and a parent’s own any', () => {
    const tree: Filters = {
      country: ['US', 'CA'],
      all: [
        { attribute: 'plan', operator: 'eq', value: 'pro' },
        { attribute: 'age', operator: 'between', value: [18, 30] },
        { attribute: 'score', operator: 'in', value: [1, 2, 3] },
        { attribute: 'code', operator: 'in', value: ['10', '20'] },
        { attribute: 'beta', operator: 'neq', value: true },
        { attribute: 'nickname', operator: 'not_exists' },
        { attribute: 'signedUpAt', operator: 'within_last_days', value: 7 },
        { attribute: 'renewsAt', operator: 'between', value: ['2026-01-01', '2026-02-01T12:00:00Z'] },
        {
          event: 'order.completed',
          count: { operator: 'gte', value: 2 },
          withinLastDays: 30,
          where: [
            { property: 'total', operator: 'gt', value: 50 },
            { property: 'items.sku', operator: 'starts_with', value: 'A-' },
          ],
          first: { operator: 'more_than_days_ago', value: 90 },
          last: { operator: 'gte', value: '2026-01-01' },
        },
        { event: 'app.opened', performed: false, between: { from: '2026-01-01' } },
        { event: 'page.viewed', performed: true },
        { notInSegment: 'seg_2' },
        { country: ['DE'] },
        { any: [{ attribute: 'plan', operator: 'eq', value: 'team' }, { all: [{ inSegment: 'seg_3' }, { tags: ['x'] }] }] },
      ],
      any: [{ tags: ['vip'] }, { inSegment: 'seg_1' }, { lastSeenDays: 3, city: ['Paris'] }],
    };
    expect(filtersOf(treeOf(tree)).filters).toStrictEqual(tree);
    const onlyAny: Filters = { any: [{ tags: ['vip'] }, { event: 'signup' }] };
    expect(treeOf(onlyAny).match).toBe('any');
    expect(roundTrip(onlyAny)).toBe(JSON.stringify(onlyAny));
    expect(filtersOf(treeOf({ all: [{ attribute: 'a', operator: 'exists' }] })).filters).toStrictEqual({ all: [{ attribute: 'a', operator: 'exists' }] });
  });

  it('reads the same filters into equal trees (rows are named by their place)', () => {
    const filters: Filters = { country: ['FR'], all: [{ event: 'x' }] };
    expect(treeOf(filters)).toStrictEqual(treeOf(filters));
  });

  it('writes rows added in the builder: "pro plan AND ordered in the last 30 days where total > 50"', () => {
    const plan = newRow('attribute') as Extract<Row, { kind: 'attribute' }>;
    const order = newRow('event') as Extract<Row, { kind: 'event' }>;
    const where = newWhere();
    const tree: Group = {
      match: 'all',
      rows: [
        { ...plan, name: 'plan', comparison: { ...plan.comparison, value: 'pro' } },
        { ...order, event: 'order.completed', window: 'days', days: '30', where: [{ ...where, property: 'total', comparison: { ...retype(where.comparison, 'number'), operator: 'gt', value: '50' } }] },
      ],
    };
    expect(filtersOf(tree).filters).toStrictEqual({
      all: [
        { attribute: 'plan', operator: 'eq', value: 'pro' },
        { event: 'order.completed', withinLastDays: 30, where: [{ property: 'total', operator: 'gt', value: 50 }] },
      ],
    });
    expect(problemsOf(tree)).toEqual([]);
  });

  it('writes an "any" top group as any, its device fields as objects of their own, and a new group in all', () => {
    const tags = newRow('tags') as Extract<Row, { kind: 'field' }>;
    const segment = { ...(newRow('segment') as Extract<Row, { kind: 'segment' }>), segmentId: 'seg_9', negate: true };
    const group = newRow('group') as Extract<Row, { kind: 'group' }>;
    const any: Group = { match: 'any', rows: [editField(tags, { ...tags.state, tagsAll: 'a, b' }), segment] };
    expect(filtersOf(any).filters).toStrictEqual({ any: [{ tags: { all: ['a', 'b'] } }, { notInSegment: 'seg_9' }] });
    const nested: Group = { match: 'all', rows: [{ ...group, group: any }] };
    expect(filtersOf(nested).filters).toStrictEqual({ all: [{ any: [{ tags: { all: ['a', 'b'] } }, { notInSegment: 'seg_9' }] }] });
    // Two rows of the same field in an "all" group: the second cannot share the key, so it is a condition of `all`.
    const [first, second] = [newRow('country'), newRow('country')] as Extract<Row, { kind: 'field' }>[];
    const twice: Group = { match: 'all', rows: [editField(first!, { ...first!.state, country: 'FR' }), editField(second!, { ...second!.state, country: 'DE' })] };
    expect(filtersOf(twice).filters).toStrictEqual({ country: ['FR'], all: [{ country: ['DE'] }] });
  });

  it('writes an edited spec field from the form, and an untouched one as it was read', () => {
    const tree = treeOf({ country: 'FR', tags: ['vip'] });
    const [country] = tree.rows as Extract<Row, { kind: 'field' }>[];
    const edited = updateRow(tree, country!.id, editField(country!, { ...country!.state, country: 'FR, BE' }));
    expect(filtersOf(edited).filters).toStrictEqual({ country: ['FR', 'BE'], tags: ['vip'] });
    expect(filtersOf(updateRow(tree, country!.id, undefined)).filters).toStrictEqual({ tags: ['vip'] });
  });

  it('gives each row the path of its condition in the body, for the 422 details', () => {
    const tree = treeOf({ country: ['FR'], all: [{ attribute: 'plan', operator: 'eq', value: 'pro' }, { any: [{ event: 'x' }] }], any: [{ inSegment: 's' }] });
    const { paths } = filtersOf(tree, 'segment.filters');
    const [country, plan, group, parentsAny] = tree.rows;
    expect(paths[country!.id]).toBe('segment.filters');
    expect(paths[plan!.id]).toBe('segment.filters.all.0');
    expect(paths[group!.id]).toBe('segment.filters.all.1');
    expect(paths[(group as Extract<Row, { kind: 'group' }>).group.rows[0]!.id]).toBe('segment.filters.all.1.any.0');
    expect(paths[(parentsAny as Extract<Row, { kind: 'group' }>).group.rows[0]!.id]).toBe('segment.filters.any.0');
  });

  it('takes an attribute’s operators by type, keeping the operator when the new type takes it', () => {
    const text = { type: 'text' as const, operator: 'contains' as const, value: '', value2: '' };
    expect(retype(text, 'number').operator).toBe('eq');
    expect(retype({ ...text, operator: 'exists' }, 'date').operator).toBe('exists');
  });

  it('compares an event property as its most frequent JSON type, and asks for one of an object or list', () => {
    const seen = (...types: ('string' | 'number' | 'boolean' | 'object')[]) => ({ path: 'p', seen: 3, types: types.map((type) => ({ type, count: 1 })), values: [] });
    expect([propertyType(seen('number', 'string')), propertyType(seen('string')), propertyType(seen('boolean')), propertyType(seen('object'))]).toEqual(['number', 'text', 'boolean', undefined]);
  });
});

describe('problemsOf', () => {
  it('says what is left to fill in, on the path of the control that needs it', () => {
    const attribute = newRow('attribute');
    const event = newRow('event') as Extract<Row, { kind: 'event' }>;
    const segment = newRow('segment');
    const group = newRow('group');
    const city = newRow('city');
    const tree: Group = {
      match: 'all',
      rows: [
        attribute,
        { ...event, event: 'order', window: 'days', days: '0', count: { operator: 'gte', value: '1.5' }, where: [newWhere()] },
        segment,
        group,
        city,
      ],
    };
    expect(problemsOf(tree)).toEqual([
      { field: 'filters.all.0.attribute', error: 'Choose an attribute.' },
      { field: 'filters.all.0.value', error: 'Enter a value.' },
      { field: 'filters.all.1.count.value', error: 'Enter a whole number of times from 0 to 1,000,000.' },
      { field: 'filters.all.1.withinLastDays', error: 'Enter a whole number of days from 1 to 36,500.' },
      { field: 'filters.all.1.where.0.property', error: 'Choose a property.' },
      { field: 'filters.all.1.where.0.value', error: 'Enter a value.' },
      { field: 'filters.all.2.inSegment', error: 'Choose a segment.' },
      { field: 'filters.all.3', error: 'Add a condition to this group, or remove it.' },
      { field: 'filters.city', error: 'Choose or enter a value, or remove this condition.' },
    ]);
  });

  it('checks values against their type', () => {
    const at = (type: 'number' | 'date', operator: 'eq' | 'gt' | 'between' | 'in', value: string, value2 = '') =>
      problemsOf({ match: 'all', rows: [{ id: 'a', kind: 'attribute', name: 'x', comparison: { type, operator, value, value2 } }] });
    expect(at('number', 'eq', 'ten')).toEqual([{ field: 'filters.all.0.value', error: 'Enter a number, such as 42 or 3.5.' }]);
    expect(at('date', 'gt', '31/01/2026')).toEqual([{ field: 'filters.all.0.value', error: 'Enter a date, such as 2026-01-31.' }]);
    expect(at('number', 'between', '1', '')).toEqual([{ field: 'filters.all.0.value.1', error: 'Enter a value.' }]);
    expect(at('number', 'in', '1, x')).toEqual([{ field: 'filters.all.0.value', error: 'Enter a number, such as 42 or 3.5.' }]);
    expect(at('date', 'eq', '2026-01-31')).toEqual([{ field: 'filters.all.0.operator', error: 'A date value cannot be compared with “is”.' }]);
    expect(at('date', 'between', '2026-01-01', '2026-02-01T10:00:00Z')).toEqual([]);
  });

  it('refuses a group nested deeper than three levels', () => {
    const deep = treeOf({ all: [{ all: [{ all: [{ all: [{ event: 'x' }] }] }] }] });
    expect(problemsOf(deep)).toEqual([{ field: 'filters.all.0.all.0.all.0', error: 'Groups nest at most 3 levels deep.' }]);
    expect(problemsOf(treeOf({ all: [{ all: [{ any: [{ event: 'x' }, { tags: ['a'] }] }] }] }))).toEqual([
      { field: 'filters.all.0.all.0.any.1.tags', error: 'At this depth a field in an “any” group is a group too deep (at most 3 levels): move it up a level.' },
    ]);
  });
});
