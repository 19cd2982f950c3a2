// The events a project's application reported (POST /events): counts per name over the last 7 or 30 days, and the
// recent events, filtered by name in the URL and paged.
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { Link, useNavigate, useParams, useSearch } from '@tanstack/react-router';
import type { FormEvent } from 'react';
import { api, unwrap, type Query } from '../api/client';
import { Field } from '../components/field';
import { dateTime, valueWords } from '../components/format';
import { Pagination } from '../components/pagination';
import { PersonLink } from '../components/person';
import { QueryState } from '../components/query-state';

export type EventFilters = Pick<Query<'/events/project/{projectId}', 'get'>, 'name' | 'page'> & { days?: 7 };

const IDENTITY_LABEL: Record<string, string> = { externalId: 'external id', token: 'push token', subscriberId: 'subscriber id' };

/** How the application named a person no subscriber matched: "external id ghost". */
const identityWords = (identity: Record<string, string>) =>
  Object.entries(identity)
    .map(([key, value]) => `${IDENTITY_LABEL[key] ?? key} ${value}`)
    .join(', ');

/** An event's properties as "total: 120 · coupon: SPRING"; none is a dash. */
function propertiesWords(properties: Record<string, unknown>): string {
  const entries = Object.entries(properties);
  if (entries.length === 0) return '—';
  return entries.map(([key, value]) => `${key}: ${typeof value === 'string' ? value : valueWords(value)}`).join(' · ');
}

/** Search parameters (or the filter form) as the page's queries; anything unknown is dropped. The counts cover 30 days unless 7 is asked. */
export function eventFiltersFromSearch(search: Record<string, unknown>): EventFilters {
  const filters: EventFilters = {};
  const name = String(search.name ?? search['query.name'] ?? '').trim();
  if (name) filters.name = name;
  if (Number(search.days) === 7) filters.days = 7;
  const page = Number(search.page);
  if (Number.isInteger(page) && page > 1) filters.page = page;
  return filters;
}

export function EventsPage() {
  const { projectId } = useParams({ from: '/signed-in/projects/$projectId/events' });
  const filters = useSearch({ from: '/signed-in/projects/$projectId/events' });
  const navigate = useNavigate({ from: '/projects/$projectId/events' });
  const days = filters.days ?? 30;
  const counts = useQuery({
    queryKey: ['event-counts', projectId, days],
    queryFn: () => unwrap(api.GET('/events/project/{projectId}/counts', { params: { path: { projectId }, query: { days } } })),
    refetchInterval: 15_000,
  });
  const events = useQuery({
    queryKey: ['events', projectId, filters.name, filters.page],
    queryFn: () =>
      unwrap(api.GET('/events/project/{projectId}', { params: { path: { projectId }, query: { name: filters.name, page: filters.page, pageSize: 25 } } })),
    placeholderData: keepPreviousData,
    refetchInterval: 15_000,
  });
  const apply = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    void navigate({ search: eventFiltersFromSearch({ ...Object.fromEntries(new FormData(event.currentTarget)), days: filters.days }) });
  };
  return (
    <section aria-labelledby="events-title">
      <h2 id="events-title">Events</h2>
      <p>
        What the application reports with <code>POST /events</code> (a server API key): each event enrolls its subscriber in the active automations triggered by its
        name. An event naming no known subscriber is kept, and enrolls nobody.
      </p>
      <section className="card" aria-labelledby="counts-title">
        <div className="row align-center">
          <h3 id="counts-title">Events per name, last {days} days</h3>
          <nav className="row" aria-label="Period">
            <Link to="/projects/$projectId/events" params={{ projectId }} search={{ ...filters, days: 7 }} activeOptions={{ exact: true }} activeProps={{ 'aria-current': 'page' }}>
              7 days
            </Link>
            <Link to="/projects/$projectId/events" params={{ projectId }} search={{ ...filters, days: undefined }} activeOptions={{ exact: true }} activeProps={{ 'aria-current': 'page' }}>
              30 days
            </Link>
          </nav>
        </div>
        <QueryState query={counts} isEmpty={(c) => c.data.length === 0} empty={<p>No events in the last {days} days.</p>}>
          {(c) => (
            <table>
              <caption className="visually-hidden">Events per name</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Events</th>
                  <th scope="col">Last received</th>
                </tr>
              </thead>
              <tbody>
                {c.data.map((row) => (
                  <tr key={row.name}>
                    <td>
                      <Link to="/projects/$projectId/events" params={{ projectId }} search={{ name: row.name, days: filters.days }} aria-label={`Show the ${row.name} events`}>
                        {row.name}
                      </Link>
                    </td>
                    <td>{row.count}</td>
                    <td>{dateTime(row.lastReceivedAt)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </QueryState>
      </section>
      <h3>Recent events</h3>
      <form className="card filters" onSubmit={apply} aria-label="Filters" key={filters.name ?? ''}>
        <Field label="Event name" field="query.name" error={events.error} defaultValue={filters.name ?? ''} autoComplete="off" />
        <div className="actions">
          <button type="submit" className="primary">
            Apply filter
          </button>
          <button type="button" onClick={() => void navigate({ search: { days: filters.days } })}>
            Clear
          </button>
        </div>
      </form>
      <QueryState query={events} isEmpty={(list) => list.total === 0} empty={<p>No events {filters.name ? `named ${filters.name}` : 'yet'}.</p>}>
        {(list) => (
          <>
            <table>
              <caption className="visually-hidden">Recent events</caption>
              <thead>
                <tr>
                  <th scope="col">Received</th>
                  <th scope="col">Name</th>
                  <th scope="col">Subscriber</th>
                  <th scope="col">Properties</th>
                  <th scope="col">Occurred</th>
                  <th scope="col">Event id</th>
                </tr>
              </thead>
              <tbody>
                {list.data.map((event) => (
                  <tr key={event.id}>
                    <td>{dateTime(event.receivedAt)}</td>
                    <td>{event.name}</td>
                    <td>
                      {event.subscriber ? (
                        <PersonLink projectId={projectId} person={event.subscriber} />
                      ) : (
                        <span className="muted">Unknown person ({identityWords(event.identity)})</span>
                      )}
                    </td>
                    <td className="event-detail">{propertiesWords(event.properties)}</td>
                    <td>{dateTime(event.occurredAt)}</td>
                    <td>{event.eventId ?? '—'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            <Pagination page={list.page} pageSize={list.pageSize} total={list.total} onPage={(page) => void navigate({ search: { ...filters, page } })} />
          </>
        )}
      </QueryState>
    </section>
  );
}
