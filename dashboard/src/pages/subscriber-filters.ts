// The subscriber list's filters (spec 4.3) as URL search parameters and back; no DOM, so tested in Node.
import type { Query, Schemas } from '../api/client';
import { everyValue } from '../components/format';

export type SubscriberFilters = Omit<Query<'/subscribers/project/{projectId}', 'get'>, 'pageSize'>;
type Subscriber = Schemas['Subscriber'];

export const PLATFORMS = everyValue<NonNullable<Subscriber['platform']>>()('desktop', 'mobile', 'tablet');
export const BROWSERS = everyValue<NonNullable<Subscriber['browser']>>()('Chrome', 'Safari', 'Firefox', 'Edge');
export const OSES = everyValue<NonNullable<Subscriber['os']>>()('macOS', 'Windows', 'iOS', 'Android');
export const STATUSES = everyValue<Subscriber['status']>()('active', 'unsubscribed', 'inactive');

const TEXT_FILTERS = ['country', 'tag', 'email', 'createdAfter', 'createdBefore'] as const;

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
