// People of a project: partial search, sort, every filter of spec 4.3 (kept in the URL), bulk actions and export; a person's page with its attribute editor.
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate, useParams, useSearch } from '@tanstack/react-router';
import { useEffect, useId, useRef, useState, type FormEvent } from 'react';
import { api, ApiError, unwrap, type Schemas } from '../api/client';
import { download } from '../api/download';
import { useMembership } from '../auth/me';
import { Confirm } from '../components/confirm';
import { Field, FilterActions, FormError, SelectField } from '../components/field';
import { dateTime } from '../components/format';
import { Pagination } from '../components/pagination';
import { ErrorMessage, QueryState } from '../components/query-state';
import { PersonTimeline } from './person-timeline';
import { CONSENT_LABELS } from './segment-builder-model';
import { AttributeEditor } from '../components/attribute-editor';
import { BROWSERS, filtersFromForm, nextSort, OSES, PLATFORMS, selectionFilter, STATUSES, type SortKey, type SubscriberFilters } from './subscriber-filters';
import { REASON_LABEL } from './suppressions';
import { personLabel } from '../components/person';
import { reasonCell } from './transactional';

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
  const selection = useSelection(JSON.stringify(selectionFilter(filters)));
  const { q, sort, order } = filters;
  const apply = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    void navigate({ search: { ...filtersFromForm(new FormData(event.currentTarget)), q, sort, order } });
  };
  const search = (text: string) => {
    const { page: _page, q: _q, ...rest } = filters;
    void navigate({ search: text ? { ...rest, q: text } : rest, replace: true });
  };
  return (
    <section aria-labelledby="subscribers-title">
      <h2 id="subscribers-title">People</h2>
      <SearchBox value={q ?? ''} onSearch={search} error={subscribers.error} />
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
      <QueryState query={subscribers} isEmpty={(list) => list.total === 0} empty={<p>{q ? `No one matches “${q}”.` : 'No subscribers match.'}</p>}>
        {(list) => {
          const pageIds = list.data.map((person) => person.id);
          const pageSelected = pageIds.length > 0 && pageIds.every((id) => selection.ids.has(id));
          return (
            <>
              <BulkBar projectId={projectId} filters={filters} total={list.total} pageSelected={pageSelected} selection={selection} />
              <div className="table-scroll" role="region" aria-label="People list" tabIndex={0}>
                <table className="people">
                  <caption className="visually-hidden">People, {sortCaption(sort, order)}</caption>
                  <thead>
                    <tr>
                      <th scope="col">
                        <input
                          type="checkbox"
                          aria-label="Select everyone on this page"
                          checked={selection.all || pageSelected}
                          disabled={selection.all}
                          onChange={(event) => selection.setPage(pageIds, event.target.checked)}
                        />
                      </th>
                      <SortHeader label="Name" sortKey="name" filters={filters} />
                      <SortHeader label="Email" sortKey="email" filters={filters} />
                      <th scope="col">Phone</th>
                      <th scope="col">Channels</th>
                      <th scope="col">Marketing</th>
                      <SortHeader label="Last seen" sortKey="lastSeenAt" filters={filters} />
                      <th scope="col">Tags</th>
                      <SortHeader label="Created" sortKey="createdAt" filters={filters} />
                    </tr>
                  </thead>
                  <tbody>
                    {list.data.map((person) => (
                      <tr key={person.id}>
                        <td>
                          <input
                            type="checkbox"
                            aria-label={`Select ${displayName(person)}`}
                            checked={selection.all || selection.ids.has(person.id)}
                            disabled={selection.all}
                            onChange={(event) => selection.setPage([person.id], event.target.checked)}
                          />
                        </td>
                        <td className="person-name">
                          <Link to="/projects/$projectId/subscribers/$subscriberId" params={{ projectId, subscriberId: person.id }}>
                            {displayName(person)}
                          </Link>
                        </td>
                        <td className="person-email">{person.email ?? '—'}</td>
                        <td>{person.phone ?? '—'}</td>
                        <td>
                          <Channels channels={person.channels} />
                        </td>
                        <td>{marketingConsent(person) || '—'}</td>
                        <td>{dateTime(person.lastSeenAt)}</td>
                        <td>{person.tags.join(', ') || '—'}</td>
                        <td>{dateTime(person.createdAt)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              <Pagination page={list.page} pageSize={list.pageSize} total={list.total} onPage={(page) => void navigate({ search: { ...filters, page } })} />
            </>
          );
        }}
      </QueryState>
    </section>
  );
}

/** How a person is named in lists and headings: their name, else email, else phone, else external id, else their device. */
export function displayName(person: Pick<Subscriber, 'name' | 'email' | 'phone' | 'externalId' | 'id' | 'browser' | 'os'>): string {
  return personLabel(person);
}

const CHANNEL_LABEL = { push: 'Push', email: 'Email', sms: 'SMS', whatsapp: 'WhatsApp' } as const;

/** The channels that reach a person now, in words (no icon to name). */
function Channels({ channels }: { channels: Subscriber['channels'] }) {
  if (!channels || channels.length === 0) return <span className="muted">None</span>;
  return (
    <ul className="tags" aria-label="Reachable on">
      {channels.map((channel) => (
        <li key={channel} className="badge">
          {CHANNEL_LABEL[channel]}
        </li>
      ))}
    </ul>
  );
}

const SORT_WORDS: Record<SortKey, string> = { createdAt: 'creation', lastSeenAt: 'last seen', email: 'email', name: 'name' };
const sortCaption = (sort: SortKey | undefined, order: 'asc' | 'desc' | undefined) =>
  `sorted by ${SORT_WORDS[sort ?? 'createdAt']}, ${(order ?? 'desc') === 'asc' ? 'ascending' : 'descending'}`;

/** A column header that sorts the list by its key (a click on the sorted one reverses it), with aria-sort. */
function SortHeader({ label, sortKey, filters }: { label: string; sortKey: SortKey; filters: SubscriberFilters }) {
  const active = (filters.sort ?? 'createdAt') === sortKey;
  const order = filters.order ?? 'desc';
  return (
    <th scope="col" aria-sort={active ? (order === 'asc' ? 'ascending' : 'descending') : 'none'}>
      <Link from="/projects/$projectId/subscribers/" to="." search={nextSort(filters, sortKey)} className="sort">
        {label}
        <span aria-hidden="true">{active ? (order === 'asc' ? ' ▲' : ' ▼') : ''}</span>
      </Link>
    </th>
  );
}

/** The search box: the list follows what is typed, 300 ms after the last key (Enter searches at once). */
function SearchBox({ value, onSearch, error }: { value: string; onSearch: (text: string) => void; error: unknown }) {
  const [text, setText] = useState(value);
  const sent = useRef(value);
  useEffect(() => {
    if (value !== sent.current) {
      sent.current = value;
      setText(value);
    }
  }, [value]);
  useEffect(() => {
    const wanted = text.trim();
    if (wanted === sent.current) return;
    const timer = setTimeout(() => {
      sent.current = wanted;
      onSearch(wanted);
    }, 300);
    return () => clearTimeout(timer);
  }, [text, onSearch]);
  return (
    <form
      role="search"
      className="card inline"
      aria-label="People search"
      onSubmit={(event) => {
        event.preventDefault();
        sent.current = text.trim();
        onSearch(text.trim());
      }}
    >
      <Field
        label="Search people"
        field="query.q"
        error={error}
        type="search"
        value={text}
        maxLength={200}
        onChange={(event) => setText(event.target.value)}
        hint="Any part of a name, email, phone or external id"
      />
    </form>
  );
}

interface Selection {
  /** Rows ticked one by one (across pages). */
  ids: ReadonlySet<string>;
  /** Every row matching the filters, however many. */
  all: boolean;
  setPage: (ids: readonly string[], on: boolean) => void;
  selectAll: () => void;
  clear: () => void;
}

/** What is selected; emptied when the filters change (`filterKey`), since "all matching" meant the old ones. */
function useSelection(filterKey: string): Selection {
  const [ids, setIds] = useState<ReadonlySet<string>>(new Set());
  const [all, setAll] = useState(false);
  const [key, setKey] = useState(filterKey);
  if (key !== filterKey) {
    setKey(filterKey);
    setIds(new Set());
    setAll(false);
  }
  return {
    ids,
    all,
    setPage: (changed, on) =>
      setIds((current) => {
        const next = new Set(current);
        for (const id of changed) {
          if (on) next.add(id);
          else next.delete(id);
        }
        return next;
      }),
    selectAll: () => setAll(true),
    clear: () => {
      setIds(new Set());
      setAll(false);
    },
  };
}

/** Tag, untag, delete or export what is selected: rows ticked, or everyone matching the filters. */
function BulkBar({
  projectId,
  filters,
  total,
  pageSelected,
  selection,
}: {
  projectId: string;
  filters: SubscriberFilters;
  total: number;
  pageSelected: boolean;
  selection: Selection;
}) {
  const { canWrite } = useMembership();
  const queryClient = useQueryClient();
  const [done, setDone] = useState<string>();
  const [exportError, setExportError] = useState<unknown>();
  // Checked here first, so the words are ours rather than the schema's.
  const [tagError, setTagError] = useState<ApiError>();
  const count = selection.all ? total : selection.ids.size;
  const target = selection.all ? { filter: selectionFilter(filters) } : { ids: [...selection.ids] };
  const people = (n: number) => `${n} ${n === 1 ? 'person' : 'people'}`;
  const act = useMutation({
    mutationFn: (body: { action: 'tag' | 'untag' | 'delete' | 'set_attributes'; tags?: string[]; attributes?: Record<string, unknown> }) =>
      unwrap(api.POST('/projects/{projectId}/subscribers/bulk', { params: { path: { projectId } }, body: { ...body, ...target } })),
    onSuccess: async (result, body) => {
      const verb = { tag: 'Tagged', untag: 'Untagged', delete: 'Deleted', set_attributes: 'Updated' }[body.action];
      setDone(
        body.action === 'delete'
          ? `Deleted ${people(result.changed)}.`
          : `${verb} ${people(result.matched)} (${result.changed} changed).`,
      );
      if (body.action === 'delete') selection.clear();
      await queryClient.invalidateQueries({ queryKey: ['subscribers', projectId] });
    },
  });
  if (count === 0) return done ? <p role="status">{done}</p> : null;
  const tagsOf = (form: HTMLFormElement) =>
    String(new FormData(form).get('tags'))
      .split(',')
      .map((tag) => tag.trim())
      .filter(Boolean);
  const run = (action: 'tag' | 'untag') => (event: { currentTarget: HTMLButtonElement }) => {
    const form = event.currentTarget.form;
    if (!form) return;
    setDone(undefined);
    const tags = tagsOf(form);
    const problem = tags.length === 0 ? 'Enter at least one tag.' : tags.some((tag) => tag.length > 64) ? 'Each tag can have at most 64 characters.' : undefined;
    setTagError(problem && new ApiError(422, 'validation_failed', problem, [{ field: 'tags', error: problem }]));
    if (!problem) act.mutate({ action, tags });
  };
  return (
    <form className="card bulk-bar" aria-label="Selected people" onSubmit={(event) => event.preventDefault()}>
      <p role="status" className="bulk-count">
        {selection.all ? `All ${people(total)} matching selected.` : `${people(count)} selected.`}{' '}
        {!selection.all && pageSelected && total > count && (
          <button type="button" className="link" onClick={selection.selectAll}>
            Select all {people(total)} matching
          </button>
        )}{' '}
        <button type="button" className="link" onClick={selection.clear}>
          Clear selection
        </button>
      </p>
      {canWrite && (
        <>
          <Field label="Tags for the selection (comma-separated)" field="tags" error={tagError ?? act.error} />
          <div className="actions">
            <button type="button" onClick={run('tag')} disabled={act.isPending}>
              Add tags
            </button>
            <button type="button" onClick={run('untag')} disabled={act.isPending}>
              Remove tags
            </button>
            <Confirm
              trigger="Delete selected"
              title={`Delete ${people(count)}?`}
              description="Their devices, tags, attributes and personal data are deleted for good. This cannot be undone."
              confirm="Delete"
              onConfirm={() => (setDone(undefined), act.mutateAsync({ action: 'delete' }))}
            />
          </div>
          <BulkAttribute
            projectId={projectId}
            pending={act.isPending}
            error={act.error}
            onSet={(attributes) => (setDone(undefined), act.mutate({ action: 'set_attributes', attributes }))}
          />
        </>
      )}
      <div className="actions">
        <button
          type="button"
          onClick={() => {
            setExportError(undefined);
            download(`/projects/${encodeURIComponent(projectId)}/subscribers/export`, 'people.csv', target).catch(setExportError);
          }}
        >
          Export CSV
        </button>
      </div>
      <FormError error={act.error} fields={['tags', 'attributes']} />
      <ErrorMessage error={exportError} />
      {done && <p role="status">{done}</p>}
    </form>
  );
}

const BULK_TYPES = { text: 'Text', number: 'Number', boolean: 'Yes / no', date: 'Date' } as const;
type BulkType = keyof typeof BULK_TYPES;

/**
 * One attribute set on (or removed from) the selection, its value read as the chosen type; the type starts as the
 * project's attribute list has it once the name is one of its attributes.
 */
function BulkAttribute({ projectId, pending, error, onSet }: { projectId: string; pending: boolean; error: unknown; onSet: (attributes: Record<string, unknown>) => void }) {
  const uid = useId();
  const [name, setName] = useState('');
  const [type, setType] = useState<BulkType>('text');
  const [value, setValue] = useState('');
  const [problem, setProblem] = useState<ApiError>();
  const known = useQuery({
    queryKey: ['attributes', projectId],
    queryFn: () => unwrap(api.GET('/projects/{projectId}/attributes', { params: { path: { projectId } } })),
    staleTime: 60_000,
  });
  const refuse = (field: string, message: string) => setProblem(new ApiError(422, 'validation_failed', message, [{ field, error: message }]));
  const submit = (remove: boolean) => {
    setProblem(undefined);
    const key = name.trim();
    if (key === '' || key.length > 100) return refuse('attributes', key === '' ? 'Enter the name of an attribute.' : 'Use at most 100 characters.');
    if (remove) return onSet({ [key]: null });
    if (type === 'number') {
      const number = Number(value.trim());
      if (value.trim() === '' || !Number.isFinite(number)) return refuse('attributeValue', 'Enter a number, such as 42 or 3.5.');
      return onSet({ [key]: number });
    }
    if (type === 'boolean') return onSet({ [key]: value === 'true' });
    if (type === 'date' && !/^\d{4}-\d{2}-\d{2}$/.test(value)) return refuse('attributeValue', 'Choose a date.');
    onSet({ [key]: value });
  };
  const retype = (next: BulkType) => {
    setType(next);
    setValue(next === 'boolean' ? 'true' : '');
  };
  return (
    <fieldset className="bulk-attribute">
      <legend>Set an attribute on the selection</legend>
      <Field
        label="Attribute name"
        field="attributes"
        error={problem ?? error}
        list={`${uid}-attributes`}
        value={name}
        maxLength={100}
        onChange={(event) => {
          setName(event.target.value);
          const declared = known.data?.data.find((attribute) => attribute.name === event.target.value.trim());
          if (declared && declared.type !== type) retype(declared.type);
        }}
      />
      <datalist id={`${uid}-attributes`}>
        {known.data?.data.map((attribute) => <option key={attribute.name} value={attribute.name} />)}
      </datalist>
      <SelectField label="Type" field="attributeType" error={undefined} value={type} onChange={(event) => retype(event.target.value as BulkType)}>
        {Object.entries(BULK_TYPES).map(([key, label]) => (
          <option key={key} value={key}>
            {label}
          </option>
        ))}
      </SelectField>
      {type === 'boolean' ? (
        <SelectField label="Value" field="attributeValue" error={undefined} value={value} onChange={(event) => setValue(event.target.value)}>
          <option value="true">Yes</option>
          <option value="false">No</option>
        </SelectField>
      ) : (
        <Field
          label="Value"
          field="attributeValue"
          error={problem}
          type={type === 'date' ? 'date' : 'text'}
          inputMode={type === 'number' ? 'decimal' : undefined}
          value={value}
          onChange={(event) => setValue(event.target.value)}
        />
      )}
      <div className="actions">
        <button type="button" onClick={() => submit(false)} disabled={pending}>
          Set attribute
        </button>
        <button type="button" onClick={() => submit(true)} disabled={pending}>
          Remove attribute
        </button>
      </div>
    </fieldset>
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
          People
        </Link>
      </p>
      <QueryState query={subscriber}>
        {(s) => (
          <>
            <h2 id="subscriber-title">{s.name ?? s.externalId ?? s.email ?? s.phone ?? s.token}</h2>
            <dl className="details">
              {(
                [
                  ['Status', s.status],
                  ['Token', s.token],
                  ['External id', s.externalId],
                  ['Phone', s.phone],
                  ['Reachable on', (s.channels ?? []).map((channel) => CHANNEL_LABEL[channel]).join(', ') || 'No channel'],
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
            <section aria-labelledby="attributes-title">
              <h3 id="attributes-title">Attributes</h3>
              <AttributeEditor subscriber={s} canWrite={canWrite} />
            </section>
            <PersonTimeline projectId={projectId} subscriberId={subscriberId} />
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
                    <td>{send.reason ? reasonCell(send.reason) : '—'}</td>
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
