// A channel's campaigns: the list, filtered by status, name and creation dates (all in the URL), with its CSV export
// where the channel has one (push).
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { Link, useNavigate, useParams, useSearch } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { useMembership } from '../auth/me';
import { Field, FilterActions, SelectField } from '../components/field';
import { dateTime } from '../components/format';
import { Pagination } from '../components/pagination';
import { ErrorMessage, QueryState } from '../components/query-state';
import { listFiltersFromSearch, type AnyCampaign, type CampaignChannel } from './campaign-channel';

/** The way back to a channel's list, above its builder and its campaigns' pages. */
export function CampaignsBreadcrumb({ channel, projectId }: { channel: Pick<CampaignChannel, 'routes' | 'title'>; projectId: string }) {
  return (
    <p className="breadcrumb">
      <Link to={channel.routes.list} params={{ projectId }}>
        {channel.title}
      </Link>
    </p>
  );
}

export function CampaignListPage<C extends AnyCampaign>({ channel }: { channel: CampaignChannel<C> }) {
  const { projectId } = useParams({ strict: false }) as { projectId: string };
  const filters = useSearch({ strict: false }) as ReturnType<ReturnType<typeof listFiltersFromSearch>>;
  const navigate = useNavigate();
  const [exportError, setExportError] = useState<unknown>();
  const { canWrite } = useMembership();
  const campaigns = useQuery({
    queryKey: [channel.listKey, projectId, filters],
    queryFn: () => channel.list(projectId, { ...filters, pageSize: 20 }),
    placeholderData: keepPreviousData,
    // Statuses and counters move while campaigns send.
    refetchInterval: 10_000,
  });
  const search = (next: object) => void navigate({ to: channel.routes.list, params: { projectId }, search: next });
  const apply = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    search(listFiltersFromSearch(channel.statuses)(Object.fromEntries(new FormData(event.currentTarget))));
  };
  const { exportCsv, listed } = channel;
  const label = (key: string) => channel.counters.find(([counter]) => counter === key)?.[1] ?? key;
  const columns: [string, (campaign: C) => string | number][] = [
    ...(listed.content ? [listed.content] : []),
    ...listed.counters.map((key): [string, (campaign: C) => number] => [label(key), (campaign) => (campaign.stats as unknown as Record<string, number>)[key]!]),
  ];
  const titleId = `${channel.listKey}-title`;
  return (
    <section aria-labelledby={titleId}>
      <h2 id={titleId}>{channel.title}</h2>
      {canWrite && (
        <p>
          <Link to={channel.routes.new} params={{ projectId }} className="button primary">
            {channel.newTitle}
          </Link>
        </p>
      )}
      <form className="card filters" onSubmit={apply} aria-label="Filters" key={JSON.stringify(filters)}>
        <SelectField label="Status" field="query.status" error={campaigns.error} defaultValue={filters.status ?? ''}>
          <option value="">any but archived</option>
          {channel.statuses.map((status) => (
            <option key={status}>{status}</option>
          ))}
        </SelectField>
        <Field label="Name contains" field="query.q" error={campaigns.error} defaultValue={filters.q ?? ''} type="search" />
        <Field label="Created from" field="query.from" error={campaigns.error} type="date" defaultValue={filters.from ?? ''} />
        <Field label="Created until" field="query.to" error={campaigns.error} type="date" defaultValue={filters.to ?? ''} />
        <FilterActions onClear={() => search({})}>
          {exportCsv && (
            <button
              type="button"
              onClick={() => {
                setExportError(undefined);
                exportCsv(projectId, filters).catch(setExportError);
              }}
            >
              Export CSV
            </button>
          )}
        </FilterActions>
      </form>
      <ErrorMessage error={exportError} />
      <QueryState query={campaigns} isEmpty={(list) => list.total === 0} empty={<p>No {channel.title.toLowerCase()} match.</p>}>
        {(list) => (
          <>
            <table>
              <caption className="visually-hidden">{channel.title}</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Status</th>
                  {columns.map(([header]) => (
                    <th key={header} scope="col">
                      {header}
                    </th>
                  ))}
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                {list.data.map((campaign) => (
                  <tr key={campaign.id}>
                    <td>
                      <Link to={channel.routes.page} params={{ projectId, campaignId: campaign.id }}>
                        {campaign.name}
                      </Link>
                      {campaign.sandbox && <span className="badge test"> test</span>}
                    </td>
                    <td>{campaign.status}</td>
                    {columns.map(([header, cell]) => (
                      <td key={header}>{cell(campaign)}</td>
                    ))}
                    <td>{dateTime(campaign.createdAt)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            <Pagination page={list.page} pageSize={list.pageSize} total={list.total} onPage={(page) => search({ ...filters, page })} />
          </>
        )}
      </QueryState>
    </section>
  );
}
