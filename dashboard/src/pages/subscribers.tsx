// Subscribers of a project: every filter of spec 4.3 (kept in the URL), server-side pagination, detail, delete.
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate, useParams, useSearch } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { api, unwrap, type Schemas } from '../api/client';
import { useMembership } from '../auth/me';
import { Confirm } from '../components/confirm';
import { Field, FilterActions, FormError, SelectField } from '../components/field';
import { dateTime } from '../components/format';
import { Pagination } from '../components/pagination';
import { ErrorMessage, QueryState } from '../components/query-state';
import { CONSENT_LABELS } from './segment-builder-model';
import { BROWSERS, filtersFromForm, OSES, PLATFORMS, STATUSES } from './subscriber-filters';
import { REASON_LABEL } from './suppressions';

type Subscriber = Schemas['Subscriber'];
type SubscriberEvent = Schemas['SubscriberEvent'];

const EVENT_LABEL: Record<SubscriberEvent['type'], string> = {
  delivered: 'Delivered',
  opened: 'Opened',
  clicked: 'Clicked',
  dismissed: 'Dismissed',
  unsubscribed: 'Unsubscribed',
  complained: 'Marked as spam',
  bounced: 'Bounced',
  soft_bounced: 'Soft bounce',
  failed: 'Not delivered by the carrier',
};

export function SubscribersPage() {
  const { projectId } = useParams({ from: '/signed-in/projects/$projectId/subscribers/' });
  const filters = useSearch({ from: '/signed-in/projects/$projectId/subscribers/' });
  const navigate = useNavigate({ from: '/projects/$projectId/subscribers/' });
  const subscribers = useQuery({
    queryKey: ['subscribers', projectId, filters],
    queryFn: () => unwrap(api.GET('/subscribers/project/{projectId}', { params: { path: { projectId }, query: { ...filters, pageSize: 25 } } })),
    placeholderData: keepPreviousData,
  });
  const apply = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    void navigate({ search: filtersFromForm(new FormData(event.currentTarget)) });
  };
  return (
    <section aria-labelledby="subscribers-title">
      <h2 id="subscribers-title">Subscribers</h2>
      <FindSubscriber projectId={projectId} />
      <form className="card filters" onSubmit={apply} aria-label="Filters" key={JSON.stringify(filters)}>
        <SelectField label="Status" field="query.status" error={subscribers.error} defaultValue={filters.status ?? ''}>
          <option value="">any</option>
          {STATUSES.map((value) => (
            <option key={value}>{value}</option>
          ))}
        </SelectField>
        <SelectField label="Platform" field="query.platform" error={subscribers.error} defaultValue={filters.platform ?? ''}>
          <option value="">any</option>
          {PLATFORMS.map((value) => (
            <option key={value}>{value}</option>
          ))}
        </SelectField>
        <SelectField label="Browser" field="query.browser" error={subscribers.error} defaultValue={filters.browser ?? ''}>
          <option value="">any</option>
          {BROWSERS.map((value) => (
            <option key={value}>{value}</option>
          ))}
        </SelectField>
        <SelectField label="OS" field="query.os" error={subscribers.error} defaultValue={filters.os ?? ''}>
          <option value="">any</option>
          {OSES.map((value) => (
            <option key={value}>{value}</option>
          ))}
        </SelectField>
        <Field label="Country" field="query.country" error={subscribers.error} defaultValue={filters.country ?? ''} placeholder="FR" size={4} />
        <Field label="Tag" field="query.tag" error={subscribers.error} defaultValue={filters.tag ?? ''} />
        <Field label="Email" field="query.email" error={subscribers.error} type="email" defaultValue={filters.email ?? ''} />
        <Field label="Created from" field="query.createdAfter" error={subscribers.error} type="date" defaultValue={filters.createdAfter ?? ''} />
        <Field label="Created before" field="query.createdBefore" error={subscribers.error} type="date" defaultValue={filters.createdBefore ?? ''} />
        <FilterActions onClear={() => void navigate({ search: {} })} />
      </form>
      <QueryState query={subscribers} isEmpty={(list) => list.total === 0} empty={<p>No subscribers match.</p>}>
        {(list) => (
          <>
            <table>
              <caption className="visually-hidden">Subscribers</caption>
              <thead>
                <tr>
                  <th scope="col">Subscriber</th>
                  <th scope="col">Platform</th>
                  <th scope="col">Browser / OS</th>
                  <th scope="col">Country</th>
                  <th scope="col">Tags</th>
                  <th scope="col">Status</th>
                  <th scope="col">Marketing</th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                {list.data.map((subscriber) => (
                  <tr key={subscriber.id}>
                    <td>
                      <Link to="/projects/$projectId/subscribers/$subscriberId" params={{ projectId, subscriberId: subscriber.id }}>
                        {subscriber.externalId ?? subscriber.email ?? subscriber.token}
                      </Link>
                    </td>
                    <td>{subscriber.platform ?? '—'}</td>
                    <td>
                      {subscriber.browser ?? '—'} / {subscriber.os ?? '—'}
                    </td>
                    <td>{[subscriber.country, subscriber.city].filter(Boolean).join(', ') || '—'}</td>
                    <td>{subscriber.tags.join(', ') || '—'}</td>
                    <td>{subscriber.status}</td>
                    <td>{marketingConsent(subscriber) || '—'}</td>
                    <td>{dateTime(subscriber.createdAt)}</td>
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

/** Looks a subscriber up by externalId (all its devices) or token, and opens it. */
function FindSubscriber({ projectId }: { projectId: string }) {
  const navigate = useNavigate();
  const [error, setError] = useState<unknown>();
  const [matches, setMatches] = useState<Subscriber[]>();
  const find = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const value = String(new FormData(event.currentTarget).get('lookup')).trim();
    if (!value) return;
    setError(undefined);
    setMatches(undefined);
    try {
      const byExternalId = await unwrap(api.GET('/subscribers/project/{projectId}/external-id/{externalId}', { params: { path: { projectId, externalId: value } } }));
      const found = byExternalId.data.length > 0 ? byExternalId.data : [await unwrap(api.GET('/subscribers/token/{token}', { params: { path: { token: value } } }))];
      if (found.length === 1 && found[0]) await navigate({ to: '/projects/$projectId/subscribers/$subscriberId', params: { projectId, subscriberId: found[0].id } });
      else setMatches(found);
    } catch (failure) {
      setError(failure);
    }
  };
  return (
    <form className="card inline" onSubmit={(event) => void find(event)} aria-label="Find a subscriber">
      <Field label="Find by external id or token" field="lookup" error={undefined} />
      <button type="submit">Find</button>
      <ErrorMessage error={error} />
      {matches && (
        <ul className="list">
          {matches.map((subscriber) => (
            <li key={subscriber.id}>
              <Link to="/projects/$projectId/subscribers/$subscriberId" params={{ projectId, subscriberId: subscriber.id }}>
                {subscriber.token} ({subscriber.browser ?? 'unknown'} on {subscriber.os ?? 'unknown'})
              </Link>
            </li>
          ))}
        </ul>
      )}
    </form>
  );
}

export function SubscriberPage() {
  const { projectId, subscriberId } = useParams({ from: '/signed-in/projects/$projectId/subscribers/$subscriberId' });
  const { canWrite } = useMembership();
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const subscriber = useQuery({
    queryKey: ['subscriber', subscriberId],
    queryFn: () => unwrap(api.GET('/subscribers/{id}', { params: { path: { id: subscriberId } } })),
  });
  const remove = async () => {
    await unwrap(api.DELETE('/subscribers/{id}', { params: { path: { id: subscriberId } } }));
    queryClient.removeQueries({ queryKey: ['subscriber', subscriberId] });
    await queryClient.invalidateQueries({ queryKey: ['subscribers', projectId] });
    await navigate({ to: '/projects/$projectId/subscribers', params: { projectId } });
  };
  return (
    <section aria-labelledby="subscriber-title">
      <p className="breadcrumb">
        <Link to="/projects/$projectId/subscribers" params={{ projectId }}>
          Subscribers
        </Link>
      </p>
      <QueryState query={subscriber}>
        {(s) => (
          <>
            <h2 id="subscriber-title">{s.externalId ?? s.email ?? s.token}</h2>
            <dl className="details">
              {(
                [
                  ['Status', s.status],
                  ['Token', s.token],
                  ['External id', s.externalId],
                  ['Phone', s.phone],
                  ['Channels', [s.endpoint && 'push', s.email && 'email', s.phone && 'sms'].filter(Boolean).join(', ')],
                  ['Marketing', marketingConsent(s)],
                  ['Platform', s.platform],
                  ['Browser', s.browser],
                  ['OS', s.os],
                  ['Device', s.device],
                  ['Country', s.country],
                  ['City', s.city],
                  ['Language', s.language],
                  ['Time zone', s.timezone],
                  ['Sandbox', s.sandbox ? 'yes (registered with a test key)' : 'no'],
                  ['Subscribed', dateTime(s.subscribedAt)],
                  ['Last seen', dateTime(s.lastSeenAt)],
                  ['Created', dateTime(s.createdAt)],
                  ['Updated', dateTime(s.updatedAt)],
                  ['User agent', s.userAgent],
                ] as const
              ).map(([label, value]) => (
                <div key={label}>
                  <dt>{label}</dt>
                  <dd>{value || '—'}</dd>
                </div>
              ))}
            </dl>
            {s.email && <SubscriberEmail projectId={projectId} subscriberId={s.id} email={s.email} emailStatus={s.emailStatus} />}
            <Tags subscriber={s} canWrite={canWrite} />
            <h3>Attributes</h3>
            {Object.keys(s.attributes).length === 0 ? <p className="muted">None.</p> : <pre className="json">{JSON.stringify(s.attributes, null, 2)}</pre>}
            <RecentSends projectId={projectId} subscriberId={subscriberId} />
            {canWrite && (
              <Confirm
                trigger="Delete subscriber"
                title="Delete this subscriber?"
                description="Its devices, tags, attributes and personal data are deleted for good. This cannot be undone."
                confirm="Delete"
                onConfirm={remove}
              />
            )}
          </>
        )}
      </QueryState>
    </section>
  );
}

const CONSENT_CHANNELS = [
  ['push', 'Push'],
  ['email', 'Email'],
  ['sms', 'SMS'],
  ['whatsapp', 'WhatsApp'],
] as const;

/** Marketing consent per channel the subscriber has an address on, in plain words: "Email: Transactional only; SMS: Subscribed". */
function marketingConsent(subscriber: Subscriber): string {
  const consent = subscriber.marketingConsent;
  if (!consent) return '';
  return CONSENT_CHANNELS.flatMap(([channel, name]) => {
    const state = consent[channel];
    return state ? [`${name}: ${CONSENT_LABELS[state]}`] : [];
  }).join('; ');
}

/** The subscriber's address, its emailStatus and whether the project's suppression list holds it (a 404 says not). */
function SubscriberEmail({
  projectId,
  subscriberId,
  email,
  emailStatus,
}: {
  projectId: string;
  subscriberId: string;
  email: string;
  emailStatus: Subscriber['emailStatus'];
}) {
  const suppression = useQuery({
    queryKey: ['suppression', projectId, email.toLowerCase()],
    queryFn: () => unwrap(api.GET('/projects/{projectId}/suppressions/{email}', { params: { path: { projectId, email } } })),
  });
  return (
    <section aria-labelledby="subscriber-email-title">
      <h3 id="subscriber-email-title">Email</h3>
      <dl className="details">
        <div>
          <dt>Address</dt>
          <dd>{email}</dd>
        </div>
        <div>
          <dt>Email status</dt>
          <dd>{emailStatus}</dd>
        </div>
        <div>
          <dt>Suppression list</dt>
          <dd>
            <QueryState query={suppression}>
              {(found) =>
                found.suppressed ? (
                  <>
                    Suppressed: {REASON_LABEL[found.reason]}, {found.source ?? 'unknown source'}, {dateTime(found.suppressedAt)}.{' '}
                    <Link to="/projects/$projectId/suppressions" params={{ projectId }} search={{ q: found.email }}>
                      See it in the list
                    </Link>
                  </>
                ) : (
                  'Not suppressed.'
                )
              }
            </QueryState>
          </dd>
        </div>
      </dl>
      <p className="hint">Email deliveries are listed under Recent sends with the channel email.</p>
      <DeliveryEvents projectId={projectId} subscriberId={subscriberId} channel="email" title="Email events" />
    </section>
  );
}

/** What the event says beyond its type: the URL of a click, the code and diagnostic of a bounce. */
function eventDetail(event: SubscriberEvent): string {
  if (event.url) return event.url;
  return [event.bounceCode, event.diagnostic].filter(Boolean).join(': ') || '—';
}

/**
 * What happened to what was sent to this subscriber on one channel, newest first: every open and click (a later one
 * of the same message marked as a repeat, a likely proxy or scanner marked as a machine), bounces, complaints.
 */
function DeliveryEvents({ projectId, subscriberId, channel, title }: { projectId: string; subscriberId: string; channel: SubscriberEvent['channel']; title: string }) {
  const [page, setPage] = useState(1);
  const events = useQuery({
    queryKey: ['subscriber-events', subscriberId, channel, page],
    queryFn: () => unwrap(api.GET('/subscribers/{id}/events', { params: { path: { id: subscriberId }, query: { channel, page, pageSize: 10 } } })),
    placeholderData: keepPreviousData,
  });
  const titleId = `${channel}-events-title`;
  return (
    <section aria-labelledby={titleId}>
      <h4 id={titleId}>{title}</h4>
      <QueryState
        query={events}
        isEmpty={(list) => list.total === 0}
        empty={<p className="muted">Nothing yet: deliveries, opens, clicks, bounces and complaints will show here.</p>}
      >
        {(list) => (
          <>
            <table>
              <caption className="visually-hidden">{title}</caption>
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Event</th>
                  <th scope="col">Message</th>
                  <th scope="col">Link or detail</th>
                  <th scope="col">Flags</th>
                </tr>
              </thead>
              <tbody>
                {list.data.map((event, index) => (
                  <tr key={`${event.occurredAt}-${index}`}>
                    <td>{dateTime(event.occurredAt)}</td>
                    <td>{EVENT_LABEL[event.type]}</td>
                    <td>
                      {event.source === 'transactional' ? (
                        'Transactional'
                      ) : event.campaignId && (event.channel === 'push' || event.channel === 'email') ? (
                        <CampaignLink projectId={projectId} channel={event.channel} campaignId={event.campaignId} name={event.campaignName} />
                      ) : (
                        (event.campaignName ?? 'Campaign (deleted)')
                      )}
                    </td>
                    <td className="event-detail">{eventDetail(event)}</td>
                    <td>
                      {!event.machine && !event.repeat && '—'}
                      {event.machine && <span className="badge machine">Machine</span>} {event.repeat && <span className="badge">Repeat</span>}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
            <p className="hint">
              Machine: likely a privacy proxy (Apple Mail fetches images as mail arrives) or a link scanner, not the person. Repeat: a later open or
              click of the same message; only the first one is counted.
            </p>
            <Pagination page={list.page} pageSize={list.pageSize} total={list.total} onPage={setPage} label={`${title} pages`} />
          </>
        )}
      </QueryState>
    </section>
  );
}

/** Tags of a subscriber: shown, added (comma-separated) and removed one by one by a MEMBER or above. */
function Tags({ subscriber, canWrite }: { subscriber: Subscriber; canWrite: boolean }) {
  const queryClient = useQueryClient();
  const refresh = () =>
    Promise.all([
      queryClient.invalidateQueries({ queryKey: ['subscriber', subscriber.id] }),
      queryClient.invalidateQueries({ queryKey: ['subscribers', subscriber.projectId] }),
    ]);
  const tag = useMutation({
    mutationFn: (tags: string[]) => unwrap(api.POST('/subscribers/tag', { body: { token: subscriber.token, tags } })),
    onSuccess: refresh,
  });
  const untag = useMutation({
    mutationFn: (name: string) => unwrap(api.POST('/subscribers/untag', { body: { token: subscriber.token, tags: [name] } })),
    onSuccess: refresh,
  });
  const add = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    const tags = String(new FormData(form).get('tags'))
      .split(',')
      .map((name) => name.trim())
      .filter(Boolean);
    if (tags.length > 0) tag.mutate(tags, { onSuccess: () => form.reset() });
  };
  return (
    <section aria-labelledby="tags-title">
      <h3 id="tags-title">Tags</h3>
      {subscriber.tags.length === 0 ? (
        <p className="muted">No tags.</p>
      ) : (
        <ul className="tags">
          {subscriber.tags.map((name) => (
            <li key={name} className="badge">
              {name}
              {canWrite && (
                <button type="button" className="link" aria-label={`Remove tag ${name}`} disabled={untag.isPending} onClick={() => untag.mutate(name)}>
                  ×
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      <ErrorMessage error={untag.error} />
      {canWrite && (
        <form className="card inline" onSubmit={add} aria-label="Add tags">
          <Field label="Add tags (comma-separated)" field="tags" error={tag.error} />
          <button type="submit" disabled={tag.isPending}>
            Add
          </button>
          <FormError error={tag.error} fields={['tags']} />
        </form>
      )}
    </section>
  );
}

/** What was sent to this subscriber: campaign pushes (linked) and transactional sends, newest first. */
function RecentSends({ projectId, subscriberId }: { projectId: string; subscriberId: string }) {
  const [page, setPage] = useState(1);
  const sends = useQuery({
    queryKey: ['subscriber-deliveries', subscriberId, page],
    queryFn: () => unwrap(api.GET('/subscribers/{id}/deliveries', { params: { path: { id: subscriberId }, query: { page, pageSize: 10 } } })),
    placeholderData: keepPreviousData,
  });
  return (
    <section aria-labelledby="recent-sends-title">
      <h3 id="recent-sends-title">Recent sends</h3>
      <QueryState query={sends} isEmpty={(list) => list.total === 0} empty={<p className="muted">Nothing sent yet.</p>}>
        {(list) => (
          <>
            <table>
              <caption className="visually-hidden">Recent sends</caption>
              <thead>
                <tr>
                  <th scope="col">Created</th>
                  <th scope="col">Message</th>
                  <th scope="col">Channel</th>
                  <th scope="col">Status</th>
                  <th scope="col">Reason</th>
                </tr>
              </thead>
              <tbody>
                {list.data.map((send) => (
                  <tr key={send.messageId}>
                    <td>{dateTime(send.createdAt)}</td>
                    <td>
                      {send.campaignId && (send.channel === 'push' || send.channel === 'email') ? (
                        <CampaignLink projectId={projectId} channel={send.channel} campaignId={send.campaignId} name={send.campaignName} />
                      ) : send.campaignId ? (
                        (send.campaignName ?? 'Campaign')
                      ) : (
                        'Transactional'
                      )}
                    </td>
                    <td>{send.channel}</td>
                    <td>{send.status}</td>
                    <td>{send.reason ?? '—'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            <Pagination page={list.page} pageSize={list.pageSize} total={list.total} onPage={setPage} />
          </>
        )}
      </QueryState>
    </section>
  );
}

/** A campaign's name linked to its page: push and email campaigns each have their own. */
function CampaignLink({ projectId, channel, campaignId, name }: { projectId: string; channel: 'push' | 'email'; campaignId: string; name: string | null }) {
  return channel === 'email' ? (
    <Link to="/projects/$projectId/email-campaigns/$campaignId" params={{ projectId, campaignId }}>
      {name ?? 'Email campaign'}
    </Link>
  ) : (
    <Link to="/projects/$projectId/campaigns/$campaignId" params={{ projectId, campaignId }}>
      {name ?? 'Campaign'}
    </Link>
  );
}
