// The subscriber list's filters (spec 4.3) as URL search parameters and back; no DOM, so tested in Node.
import type { Query, Schemas } from '../api/client';
import { everyValue } from '../components/format';

export type SubscriberFilters = Omit<Query<'/subscribers/project/{projectId}', 'get'>, 'pageSize'>;
type Subscriber = Schemas['Subscriber'];

export const PLATFORMS = everyValue<NonNullable<Subscriber['platform']>>()('desktop', 'mobile', 'tablet');
export const BROWSERS = everyValue<NonNullable<Subscriber['browser']>>()('Chrome', 'Safari', 'Firefox', 'Edge');
export const OSES = everyValue<NonNullable<Subscriber['os']>>()('macOS', 'Windows', 'iOS', 'Android');
export const STATUSES = everyValue<Subscriber['status']>()('active', 'unsubscribed', 'inactive');
export type SortKey = NonNullable<SubscriberFilters['sort']>;
export const SORTS = everyValue<SortKey>()('createdAt', 'lastSeenAt', 'email', 'name');
const ORDERS = everyValue<NonNullable<SubscriberFilters['order']>>()('asc', 'desc');

const TEXT_FILTERS = ['q', 'country', 'tag', 'email', 'createdAfter', 'createdBefore'] as const;

/**
 * The URL's search parameters as the list's query: unknown keys, values outside an enum, empty strings and page 1 are
 * dropped (a hand-edited URL); what is left is sent as it is, and the API's 422 is shown beside its field.
 */
export function filtersFromSearch(search: Record<string, unknown>): SubscriberFilters {
  const filters: SubscriberFilters = {};
  const pick = <T extends string>(values: readonly T[], value: unknown) => (values as readonly unknown[]).includes(value) ? (value as T) : undefined;
  filters.platform = pick(PLATFORMS, search.platform);
  filters.browser = pick(BROWSERS, search.browser);
  filters.os = pick(OSES, search.os);
  filters.status = pick(STATUSES, search.status);
  filters.sort = pick(SORTS, search.sort);
  filters.order = pick(ORDERS, search.order);
  for (const key of TEXT_FILTERS) {
    const value = search[key];
    if (typeof value === 'string' && value !== '') filters[key] = value;
  }
  const page = Number(search.page);
  if (Number.isInteger(page) && page > 1) filters.page = page;
  return Object.fromEntries(Object.entries(filters).filter(([, value]) => value !== undefined)) as SubscriberFilters;
}

/** The filter form's fields, named as the error envelope names them (`query.tag` …), as search parameters. */
export function filtersFromForm(form: FormData): SubscriberFilters {
  return filtersFromSearch(Object.fromEntries([...form].map(([name, value]) => [name.replace(/^query\./, ''), value])));
}

/** The rows a bulk action or an export of "all matching" selects: the list's filters without its page and order. */
export function selectionFilter(filters: SubscriberFilters) {
  const { page: _page, sort: _sort, order: _order, ...filter } = filters;
  return filter;
}

/** The URL after a click on a column's header: the other direction of the same key, or the new key in its natural direction. */
export function nextSort(filters: SubscriberFilters, key: SortKey): SubscriberFilters {
  const current = filters.sort ?? 'createdAt';
  const order = filters.order ?? 'desc';
  const { page: _page, ...rest } = filters;
  if (current === key) return { ...rest, sort: key, order: order === 'asc' ? 'desc' : 'asc' };
  return { ...rest, sort: key, order: key === 'email' || key === 'name' ? 'asc' : 'desc' };
}
