// The subscriber filters between the form, the URL and the API query: what goes in comes back out, nothing else.
import { describe, expect, it } from 'vitest';
import { filtersFromForm, filtersFromSearch, nextSort, selectionFilter, type SubscriberFilters } from './subscriber-filters';

const every: SubscriberFilters = {
  platform: 'mobile',
  browser: 'Firefox',
  os: 'Android',
  status: 'unsubscribed',
  country: 'FR',
  tag: 'vip',
  email: 'ada@example.com',
  createdAfter: '2026-01-01',
  createdBefore: '2026-02-01',
  q: 'ada 100%',
  sort: 'lastSeenAt',
  order: 'asc',
  page: 3,
};

describe('filtersFromSearch', () => {
  it('keeps every filter of spec 4.3 and the page, unchanged', () => {
    expect(filtersFromSearch({ ...every })).toEqual(every);
  });

  it('round-trips through the URL the router writes', () => {
    const url = new URLSearchParams(Object.entries(every).map(([key, value]) => [key, String(value)]));
    expect(filtersFromSearch(Object.fromEntries(url))).toEqual(every);
  });

  it('drops unknown keys, values outside an enum, empty strings and page 1', () => {
    expect(filtersFromSearch({ platform: 'toaster', os: 'windows', tag: '', page: 1, pageSize: 100, sort: 'x', order: 'up' })).toEqual({});
    expect(filtersFromSearch({ page: 'two', status: 'active' })).toEqual({ status: 'active' });
  });
});

describe('filtersFromForm', () => {
  it('reads the fields named as the error envelope names them, leaving out the ones set to "any"', () => {
    const form = new FormData();
    form.set('query.status', 'active');
    form.set('query.platform', '');
    form.set('query.tag', 'vip');
    form.set('query.createdAfter', '2026-03-01');
    expect(filtersFromForm(form)).toEqual({ status: 'active', tag: 'vip', createdAfter: '2026-03-01' });
  });
});

describe('sort and selection', () => {
  it('flips the direction of the same key, starts a new one in its natural direction, back to page 1', () => {
    expect(nextSort({ tag: 'vip', page: 2 }, 'createdAt')).toEqual({ tag: 'vip', sort: 'createdAt', order: 'asc' });
    expect(nextSort({ sort: 'name', order: 'asc' }, 'name')).toEqual({ sort: 'name', order: 'desc' });
    expect(nextSort({ sort: 'name', order: 'asc' }, 'email')).toEqual({ sort: 'email', order: 'asc' });
    expect(nextSort({}, 'lastSeenAt')).toEqual({ sort: 'lastSeenAt', order: 'desc' });
  });

  it('selects with the filters only', () => {
    expect(selectionFilter(every)).toEqual({
      platform: 'mobile',
      browser: 'Firefox',
      os: 'Android',
      status: 'unsubscribed',
      country: 'FR',
      tag: 'vip',
      email: 'ada@example.com',
      createdAfter: '2026-01-01',
      createdBefore: '2026-02-01',
      q: 'ada 100%',
    });
  });
});
