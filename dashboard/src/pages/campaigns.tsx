// Push campaigns: the list (status, search, dates, archived) with CSV export, and a campaign's detail with its full
// stats, live progress over the event stream (spec 6.3), send (a draft), edit (a draft), cancel, archive and re-send.
import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate, useParams, useSearch } from '@tanstack/react-router';
import { useEffect, useState, type FormEvent } from 'react';
import { api, unwrap, type Query, type Schemas } from '../api/client';
import { download } from '../api/download';
import { useMembership } from '../auth/me';
import { session } from '../auth/session';
import { Confirm } from '../components/confirm';
import { Field, FilterActions, SelectField } from '../components/field';
import { NotificationPreview } from '../components/notification-preview';
import { dateTime, everyValue } from '../components/format';
import { Pagination } from '../components/pagination';
import { ErrorMessage, QueryState } from '../components/query-state';
import { SendingIssueBanner } from '../components/sending-issue';

type Campaign = Schemas['Campaign'];
type Stats = Schemas['CampaignStats'];
export type CampaignFilters = Pick<Query<'/campaigns/project/{projectId}', 'get'>, 'status' | 'q' | 'from' | 'to' | 'page'>;

const STATUSES = everyValue<Campaign['status']>()('draft', 'scheduled', 'sending', 'sent', 'cancelled', 'failed', 'archived');
const FINAL: readonly Campaign['status'][] = ['sent', 'cancelled', 'failed', 'archived'];

/** A list's filters: those of push campaigns, and of email campaigns (whose statuses add paused). */
export interface ListFilters<Status extends string> {
  status?: Status;
  q?: string;
  from?: string;
  to?: string;
  page?: number;
}

/** Search parameters (or the filter form, named query.status …) as a list's query; anything unknown is dropped. */
export function listFiltersFromSearch<Status extends string>(statuses: readonly Status[]) {
  return (search: Record<string, unknown>): ListFilters<Status> => {
    const value = (key: string) => {
      const found = search[key] ?? search[`query.${key}`];
      return typeof found === 'string' && found.trim() !== '' ? found.trim() : undefined;
    };
    const filters: ListFilters<Status> = {};
    const status = value('status');
    if (status && (statuses as readonly string[]).includes(status)) filters.status = status as Status;
    for (const key of ['q', 'from', 'to'] as const) {
      const text = value(key);
      if (text) filters[key] = text;
    }
    const page = Number(search.page);
    if (Number.isInteger(page) && page > 1) filters.page = page;
    return filters;
  };
}

export const campaignFiltersFromSearch: (search: Record<string, unknown>) => CampaignFilters = listFiltersFromSearch(STATUSES);

export function CampaignsPage() {
  const { projectId } = useParams({ from: '/signed-in/projects/$projectId/campaigns/' });
  const filters = useSearch({ from: '/signed-in/projects/$projectId/campaigns/' });
  const navigate = useNavigate({ from: '/projects/$projectId/campaigns/' });
  const [exportError, setExportError] = useState<unknown>();
  const { canWrite } = useMembership();
  const campaigns = useQuery({
    queryKey: ['campaigns', projectId, filters],
    queryFn: () => unwrap(api.GET('/campaigns/project/{projectId}', { params: { path: { projectId }, query: { ...filters, pageSize: 20 } } })),
    placeholderData: keepPreviousData,
    // Statuses and counters move while campaigns send.
    refetchInterval: 10_000,
  });
  const apply = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    void navigate({ search: campaignFiltersFromSearch(Object.fromEntries(new FormData(event.currentTarget))) });
  };
  const exportCsv = () => {
    setExportError(undefined);
    const range = new URLSearchParams(Object.entries({ from: filters.from?.slice(0, 10), to: filters.to?.slice(0, 10) }).filter(([, v]) => v) as [string, string][]);
    download(`/campaigns/export/project/${encodeURIComponent(projectId)}.csv?${range}`, 'campaigns.csv').catch(setExportError);
  };
  return (
    <section aria-labelledby="campaigns-title">
      <h2 id="campaigns-title">Campaigns</h2>
      {canWrite && (
        <p>
          <Link to="/projects/$projectId/campaigns/new" params={{ projectId }} className="button primary">
            New campaign
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
        <FilterActions onClear={() => void navigate({ search: {} })}>
          <button type="button" onClick={exportCsv}>
            Export CSV
          </button>
        </FilterActions>
      </form>
      <ErrorMessage error={exportError} />
      <QueryState query={campaigns} isEmpty={(list) => list.total === 0} empty={<p>No campaigns match.</p>}>
        {(list) => (
          <>
            <table>
              <caption className="visually-hidden">Campaigns</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Status</th>
                  <th scope="col">Queued</th>
                  <th scope="col">Sent</th>
                  <th scope="col">Clicked</th>
                  <th scope="col">Failed</th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                {list.data.map((campaign) => (
                  <tr key={campaign.id}>
                    <td>
                      <Link to="/projects/$projectId/campaigns/$campaignId" params={{ projectId, campaignId: campaign.id }}>
                        {campaign.name}
                      </Link>
                      {campaign.sandbox && <span className="badge test"> test</span>}
                    </td>
                    <td>{campaign.status}</td>
                    <td>{campaign.stats.queued}</td>
                    <td>{campaign.stats.sent}</td>
                    <td>{campaign.stats.clicked}</td>
                    <td>{campaign.stats.failed}</td>
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

type Progress = Stats & { status: Campaign['status']; sendingIssue: Campaign['sendingIssue'] };

/** The campaign's progress events (spec 6.3) while it is not final; the stream ends itself after a final status. */
function useProgress(campaign: Campaign | undefined): Progress | undefined {
  const [progress, setProgress] = useState<Progress>();
  const queryClient = useQueryClient();
  const id = campaign?.id;
  const live = campaign !== undefined && !FINAL.includes(campaign.status);
  useEffect(() => {
    if (!id || !live) return;
    const { token, orgId } = session.get();
    if (!token || !orgId) return;
    // EventSource cannot set headers: the stream takes the dashboard token and organization in its query (spec 5.1.6).
    const source = new EventSource(`/campaigns/${encodeURIComponent(id)}/stream?${new URLSearchParams({ token, orgId })}`);
    source.onmessage = (event: MessageEvent<string>) => {
      const next = JSON.parse(event.data) as Progress;
      setProgress(next);
      if (FINAL.includes(next.status)) {
        source.close();
        void queryClient.invalidateQueries({ queryKey: ['campaign', id] });
        void queryClient.invalidateQueries({ queryKey: ['campaigns'] });
      }
    };
    return () => source.close();
  }, [id, live, queryClient]);
  return progress;
}

const STAT_LABELS: [keyof Stats, string][] = [
  ['queued', 'Queued'],
  ['sent', 'Sent'],
  ['delivered', 'Delivered'],
  ['clicked', 'Clicked'],
  ['dismissed', 'Dismissed'],
  ['failed', 'Failed'],
  ['suppressed', 'Suppressed'],
];

export function CampaignPage() {
  const { projectId, campaignId } = useParams({ from: '/signed-in/projects/$projectId/campaigns/$campaignId' });
  const { canWrite } = useMembership();
  const queryClient = useQueryClient();
  const campaign = useQuery({
    queryKey: ['campaign', campaignId],
    queryFn: () => unwrap(api.GET('/campaigns/{id}', { params: { path: { id: campaignId } } })),
  });
  const progress = useProgress(campaign.data);
  const act = async (action: 'send' | 'cancel' | 'archive') => {
    const path = { params: { path: { id: campaignId } } };
    const updated =
      action === 'send'
        ? await unwrap(api.POST('/campaigns/{id}/send', path))
        : action === 'cancel'
          ? await unwrap(api.POST('/campaigns/{id}/cancel', path))
          : await unwrap(api.POST('/campaigns/{id}/archive', path));
    queryClient.setQueryData(['campaign', campaignId], updated);
    await queryClient.invalidateQueries({ queryKey: ['campaigns', projectId] });
  };
  return (
    <section aria-labelledby="campaign-title">
      <p className="breadcrumb">
        <Link to="/projects/$projectId/campaigns" params={{ projectId }}>
          Campaigns
        </Link>
      </p>
      <QueryState query={campaign}>
        {(c) => {
          // While the fetched campaign is not final, the stream's latest snapshot is newer; once it is (the stream's final
          // event refetches it), the fetched one is, and later changes (archive) come from it alone.
          const streamed = progress && !FINAL.includes(c.status) ? progress : undefined;
          const stats: Stats = streamed ?? c.stats;
          const status = streamed?.status ?? c.status;
          const issue = streamed ? streamed.sendingIssue : c.sendingIssue;
          return (
            <>
              <h2 id="campaign-title">{c.name}</h2>
              <p>
                Status: <strong data-testid="campaign-status">{status}</strong>
                {c.sandbox && <span className="badge test"> test (sandbox)</span>}
                {c.failureReason && <span className="error"> ({c.failureReason})</span>}
              </p>
              <SendingIssueBanner issue={issue} channel="push" />
              <dl className="details stats" aria-label="Statistics" aria-live="polite">
                {STAT_LABELS.map(([key, label]) => (
                  <div key={key}>
                    <dt>{label}</dt>
                    <dd data-testid={`stat-${key}`}>{stats[key]}</dd>
                  </div>
                ))}
                <div>
                  <dt>Click-through rate</dt>
                  <dd>{(stats.ctr * 100).toFixed(2)} %</dd>
                </div>
                <div>
                  <dt>Delivery rate</dt>
                  <dd>{(stats.deliveryRate * 100).toFixed(2)} %</dd>
                </div>
              </dl>
              <h3>Content</h3>
              <NotificationPreview content={c.content} origin={c.content.clickUrl ? new URL(c.content.clickUrl).host : 'your site'} />
              <dl className="details">
                <div>
                  <dt>Title</dt>
                  <dd>{c.content.title}</dd>
                </div>
                <div>
                  <dt>Body</dt>
                  <dd>{c.content.body}</dd>
                </div>
                <div>
                  <dt>Click URL</dt>
                  <dd>{c.content.clickUrl ?? '—'}</dd>
                </div>
                <div>
                  <dt>Audience</dt>
                  <dd>
                    <code>{JSON.stringify(c.segment)}</code>
                  </dd>
                </div>
                <div>
                  <dt>Schedule</dt>
                  <dd>
                    {c.schedule.mode}
                    {c.schedule.sendAt && ` at ${dateTime(c.schedule.sendAt)}${c.schedule.timezone ? ` (${c.schedule.timezone})` : ''}`}
                  </dd>
                </div>
                <div>
                  <dt>Created / sent / completed</dt>
                  <dd>
                    {dateTime(c.createdAt)} / {dateTime(c.sentAt)} / {dateTime(c.completedAt)}
                  </dd>
                </div>
              </dl>
              {canWrite && (
                <div className="actions start">
                  {status === 'draft' && (
                    <>
                      <Link to="/projects/$projectId/campaigns/$campaignId/edit" params={{ projectId, campaignId }} className="button">
                        Edit
                      </Link>
                      <Confirm
                        trigger={c.schedule.mode === 'scheduled' ? 'Schedule' : 'Send'}
                        title={`${c.schedule.mode === 'scheduled' ? 'Schedule' : 'Send'} “${c.name}”?`}
                        description={
                          c.schedule.mode === 'scheduled' && c.schedule.sendAt
                            ? `It goes out at ${dateTime(c.schedule.sendAt)} to its audience as it is then.`
                            : 'It goes out now to its audience as it is now. This cannot be undone, only cancelled while it sends.'
                        }
                        confirm={c.schedule.mode === 'scheduled' ? 'Schedule campaign' : 'Send campaign'}
                        onConfirm={() => act('send')}
                      />
                    </>
                  )}
                  {(status === 'scheduled' || status === 'sending') && (
                    <Confirm
                      trigger="Cancel campaign"
                      title={`Cancel “${c.name}”?`}
                      description="Deliveries not yet handed to a worker are suppressed and never sent; those being sent finish."
                      confirm="Cancel campaign"
                      onConfirm={() => act('cancel')}
                    />
                  )}
                  {['sent', 'cancelled', 'failed', 'archived'].includes(status) && <Resend projectId={projectId} campaign={c} />}
                  {status === 'sent' && (
                    <Confirm
                      trigger="Archive"
                      title={`Archive “${c.name}”?`}
                      description="It disappears from the list (unless the archived status is chosen) and stays readable and exportable."
                      confirm="Archive campaign"
                      onConfirm={() => act('archive')}
                    />
                  )}
                </div>
              )}
            </>
          );
        }}
      </QueryState>
    </section>
  );
}

/** Re-send a finished campaign as a new one, to its own segment (evaluated now) or a saved segment chosen here. */
function Resend({ projectId, campaign }: { projectId: string; campaign: Campaign }) {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [segmentId, setSegmentId] = useState('');
  const segments = useQuery({
    queryKey: ['segments', projectId, 'all'],
    queryFn: () => unwrap(api.GET('/segments/project/{projectId}', { params: { path: { projectId }, query: { pageSize: 100 } } })),
  });
  const resend = async () => {
    const body = segmentId ? { segment: { savedSegmentId: segmentId } } : {};
    const created = await unwrap(api.POST('/campaigns/{id}/send', { params: { path: { id: campaign.id } }, body }));
    await queryClient.invalidateQueries({ queryKey: ['campaigns', projectId] });
    await navigate({ to: '/projects/$projectId/campaigns/$campaignId', params: { projectId, campaignId: created.id } });
  };
  return (
    <div className="row resend">
      <label htmlFor="resend-segment">Re-send to</label>
      <select id="resend-segment" value={segmentId} onChange={(event) => setSegmentId(event.target.value)}>
        <option value="">its own segment (evaluated now)</option>
        {segments.data?.data.map((segment) => (
          <option key={segment.id} value={segment.id}>
            saved segment: {segment.name}
          </option>
        ))}
      </select>
      <Confirm
        trigger="Re-send"
        title={`Re-send “${campaign.name}”?`}
        description="A new campaign with the same content is created and sent at once; this one and its stats stay as they are."
        confirm="Re-send now"
        onConfirm={resend}
      />
    </div>
  );
}
