// Email campaigns: the list, filtered by status (paused included), name and creation dates, all in the URL.
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { Link, useNavigate, useParams, useSearch } from '@tanstack/react-router';
import type { FormEvent } from 'react';
import { api, unwrap, type Schemas } from '../api/client';
import { useMembership } from '../auth/me';
import { Field, FilterActions, SelectField } from '../components/field';
import { dateTime, everyValue } from '../components/format';
import { Pagination } from '../components/pagination';
import { QueryState } from '../components/query-state';
import { listFiltersFromSearch } from './campaigns';

type Status = Schemas['EmailCampaign']['status'];

const STATUSES = everyValue<Status>()('draft', 'scheduled', 'sending', 'paused', 'sent', 'cancelled', 'failed', 'archived');

export const emailCampaignFiltersFromSearch = listFiltersFromSearch(STATUSES);

export function EmailCampaignsPage() {
  const { projectId } = useParams({ from: '/signed-in/projects/$projectId/email-campaigns/' });
  const filters = useSearch({ from: '/signed-in/projects/$projectId/email-campaigns/' });
  const navigate = useNavigate({ from: '/projects/$projectId/email-campaigns/' });
  const { canWrite } = useMembership();
  const campaigns = useQuery({
    queryKey: ['email-campaigns', projectId, filters],
    queryFn: () => unwrap(api.GET('/email-campaigns/project/{projectId}', { params: { path: { projectId }, query: { ...filters, pageSize: 20 } } })),
    placeholderData: keepPreviousData,
    // Statuses and counters move while campaigns send.
    refetchInterval: 10_000,
  });
  const apply = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    void navigate({ search: emailCampaignFiltersFromSearch(Object.fromEntries(new FormData(event.currentTarget))) });
  };
  return (
    <section aria-labelledby="email-campaigns-title">
      <h2 id="email-campaigns-title">Email campaigns</h2>
      {canWrite && (
        <p>
          <Link to="/projects/$projectId/email-campaigns/new" params={{ projectId }} className="button primary">
            New email campaign
          </Link>
        </p>
      )}
      <form className="card filters" onSubmit={apply} aria-label="Filters" key={JSON.stringify(filters)}>
        <SelectField label="Status" field="query.status" error={campaigns.error} defaultValue={filters.status ?? ''}>
          <option value="">any but archived</option>
          {STATUSES.map((status) => (
            <option key={status}>{status}</option>
          ))}
        </SelectField>
        <Field label="Name contains" field="query.q" error={campaigns.error} defaultValue={filters.q ?? ''} type="search" />
        <Field label="Created from" field="query.from" error={campaigns.error} type="date" defaultValue={filters.from ?? ''} />
        <Field label="Created until" field="query.to" error={campaigns.error} type="date" defaultValue={filters.to ?? ''} />
        <FilterActions onClear={() => void navigate({ search: {} })} />
      </form>
      <QueryState query={campaigns} isEmpty={(list) => list.total === 0} empty={<p>No email campaigns match.</p>}>
        {(list) => (
          <>
            <table>
              <caption className="visually-hidden">Email campaigns</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Status</th>
                  <th scope="col">Subject</th>
                  <th scope="col">Targeted</th>
                  <th scope="col">Sent</th>
                  <th scope="col">Opened</th>
                  <th scope="col">Clicked</th>
                  <th scope="col">Bounced</th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                {list.data.map((campaign) => (
                  <tr key={campaign.id}>
                    <td>
                      <Link to="/projects/$projectId/email-campaigns/$campaignId" params={{ projectId, campaignId: campaign.id }}>
                        {campaign.name}
                      </Link>
                      {campaign.sandbox && <span className="badge test"> test</span>}
                    </td>
                    <td>{campaign.status}</td>
                    <td>{campaign.content.subject}</td>
                    <td>{campaign.stats.totalTargeted}</td>
                    <td>{campaign.stats.sent}</td>
                    <td>{campaign.stats.opened}</td>
                    <td>{campaign.stats.clicked}</td>
                    <td>{campaign.stats.bounced}</td>
                    <td>{dateTime(campaign.createdAt)}</td>
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
