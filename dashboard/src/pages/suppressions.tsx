// A project's email suppression list: filtered and paged in the URL, add, lift (never a complaint), CSV import and export.
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useNavigate, useParams, useSearch } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { api, unwrap, type Body, type Query, type Schemas } from '../api/client';
import { download } from '../api/download';
import { useMembership } from '../auth/me';
import { Confirm } from '../components/confirm';
import { Field, FilterActions, FormError, SelectField } from '../components/field';
import { dateTime, everyValue } from '../components/format';
import { Pagination } from '../components/pagination';
import { ErrorMessage, QueryState } from '../components/query-state';
import { RowErrors, rowErrors } from '../components/row-errors';
import { reasonWords } from '../components/reasons';

type Suppression = Schemas['Suppression'];
type Reason = Suppression['reason'];
type ImportBody = Body<'/projects/{projectId}/suppressions/import', 'post'>;
export type SuppressionFilters = Pick<Query<'/projects/{projectId}/suppressions', 'get'>, 'reason' | 'q' | 'page'>;

const REASONS = everyValue<Reason>()('manual', 'unsubscribed', 'bounced', 'complained');

export const REASON_LABEL: Record<Reason, string> = {
  manual: 'manual (added by the project)',
  unsubscribed: 'unsubscribed (the recipient asked)',
  bounced: 'bounced (the mailbox does not exist)',
  complained: 'complained (marked as spam; permanent)',
};

const LIFT_WARNING: Record<Exclude<Reason, 'complained'>, string> = {
  manual: 'Email goes to this address again.',
  unsubscribed: 'The recipient asked for no more email: lifting this makes the project answerable for mailing them again. Their subscribers become active.',
  bounced: 'It bounced as a dead mailbox: lift it only if the mailbox works again, as repeated bounces hurt delivery. Its subscribers become active.',
};

/** Search parameters (or the filter form, named query.reason …) as the list's query; anything unknown is dropped. */
export function suppressionFiltersFromSearch(search: Record<string, unknown>): SuppressionFilters {
  const value = (key: string) => {
    const found = search[key] ?? search[`query.${key}`];
    return typeof found === 'string' && found.trim() !== '' ? found.trim() : undefined;
  };
  const filters: SuppressionFilters = {};
  const reason = value('reason');
  if (reason && (REASONS as readonly string[]).includes(reason)) filters.reason = reason as Reason;
  const q = value('q');
  if (q) filters.q = q;
  const page = Number(search.page);
  if (Number.isInteger(page) && page > 1) filters.page = page;
  return filters;
}

export function SuppressionsPage() {
  const { projectId } = useParams({ from: '/signed-in/projects/$projectId/suppressions' });
  const filters = useSearch({ from: '/signed-in/projects/$projectId/suppressions' });
  const navigate = useNavigate({ from: '/projects/$projectId/suppressions' });
  const { canWrite } = useMembership();
  const queryClient = useQueryClient();
  const [exportError, setExportError] = useState<unknown>();
  const suppressions = useQuery({
    queryKey: ['suppressions', projectId, filters],
    queryFn: () => unwrap(api.GET('/projects/{projectId}/suppressions', { params: { path: { projectId }, query: { ...filters, pageSize: 25 } } })),
    placeholderData: keepPreviousData,
  });
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['suppressions', projectId] });
  // Refreshed even when refused: a 409 means the address was complained about since the list was read.
  const lift = (email: string) =>
    unwrap(api.DELETE('/projects/{projectId}/suppressions/{email}', { params: { path: { projectId, email } } })).finally(refresh);
  const apply = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    void navigate({ search: suppressionFiltersFromSearch(Object.fromEntries(new FormData(event.currentTarget))) });
  };
  const exportCsv = () => {
    setExportError(undefined);
    download(`/projects/${encodeURIComponent(projectId)}/suppressions/export.csv`, 'suppressions.csv').catch(setExportError);
  };
  const filtered = filters.reason !== undefined || filters.q !== undefined;
  return (
    <section aria-labelledby="suppressions-title">
      <h2 id="suppressions-title">Suppression list</h2>
      <p className="muted">
        No email goes to these addresses, from campaigns or transactional sends. Hard bounces, spam complaints and unsubscribes land here on their own; a
        complaint is permanent and can never be lifted.
      </p>
      {canWrite ? (
        <>
          <AddSuppression projectId={projectId} onAdded={refresh} />
          <ImportSuppressions projectId={projectId} onImported={refresh} />
        </>
      ) : (
        <p className="notice">A viewer sees the suppression list read-only.</p>
      )}
      <form className="card filters" onSubmit={apply} aria-label="Filters" key={JSON.stringify(filters)}>
        <SelectField label="Reason" field="query.reason" error={suppressions.error} defaultValue={filters.reason ?? ''}>
          <option value="">any</option>
          {REASONS.map((reason) => (
            <option key={reason} value={reason}>
              {REASON_LABEL[reason]}
            </option>
          ))}
        </SelectField>
        <Field label="Address contains" field="query.q" error={suppressions.error} type="search" defaultValue={filters.q ?? ''} maxLength={254} />
        <FilterActions onClear={() => void navigate({ search: {} })}>
          <button type="button" onClick={exportCsv}>
            Export CSV
          </button>
        </FilterActions>
      </form>
      <ErrorMessage error={exportError} />
      <QueryState
        query={suppressions}
        isEmpty={(list) => list.total === 0}
        empty={<p>{filtered ? 'No suppressed addresses match.' : 'No suppressed addresses yet.'}</p>}
      >
        {(list) => (
          <>
            <table>
              <caption className="visually-hidden">Suppressed addresses</caption>
              <thead>
                <tr>
                  <th scope="col">Address</th>
                  <th scope="col">Reason</th>
                  <th scope="col">Source</th>
                  <th scope="col">Suppressed</th>
                  {canWrite && <th scope="col">Lift</th>}
                </tr>
              </thead>
              <tbody>
                {list.data.map((suppression) => (
                  <tr key={suppression.email}>
                    <td>{suppression.email}</td>
                    <td>
                      {suppression.reason} <span className="muted">— {reasonWords(suppression.reason)}</span>
                    </td>
                    <td>{suppression.source ?? '—'}</td>
                    <td>{dateTime(suppression.suppressedAt)}</td>
                    {canWrite && (
                      <td>
                        <LiftButton suppression={suppression} onLift={() => lift(suppression.email)} />
                      </td>
                    )}
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

/** Kept mounted (disabled) for a complaint, so a 409 that turned the row into one stays on screen in its dialog. */
function LiftButton({ suppression, onLift }: { suppression: Suppression; onLift: () => Promise<unknown> }) {
  const { email, reason } = suppression;
  return (
    <>
      <Confirm
        trigger="Lift"
        label={`Lift suppression of ${email}`}
        title={`Lift the suppression of ${email}?`}
        description={reason === 'complained' ? 'A complaint is permanent.' : LIFT_WARNING[reason]}
        confirm="Lift suppression"
        onConfirm={onLift}
        disabled={reason === 'complained'}
      />
      {reason === 'complained' && (
        <>
          {' '}
          <span className="hint">Permanent: the recipient marked mail as spam.</span>
        </>
      )}
    </>
  );
}

function AddSuppression({ projectId, onAdded }: { projectId: string; onAdded: () => Promise<unknown> }) {
  const add = useMutation({
    mutationFn: (body: { email: string; reason: Reason }) => unwrap(api.POST('/projects/{projectId}/suppressions', { params: { path: { projectId } }, body })),
    onSuccess: onAdded,
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const target = event.currentTarget;
    const form = new FormData(target);
    add.mutate({ email: String(form.get('email')).trim(), reason: form.get('reason') as Reason }, { onSuccess: () => target.reset() });
  };
  return (
    <form className="card inline" onSubmit={submit} aria-label="Suppress an address" noValidate>
      <Field label="Email address" field="email" error={add.error} type="email" required placeholder="someone@example.com" />
      <SelectField label="Reason" field="reason" error={add.error} defaultValue="manual" hint="A complaint can never be lifted.">
        {REASONS.map((reason) => (
          <option key={reason} value={reason}>
            {REASON_LABEL[reason]}
          </option>
        ))}
      </SelectField>
      <button type="submit" className="primary" disabled={add.isPending}>
        Suppress
      </button>
      <FormError error={add.error} fields={['email', 'reason']} />
      {add.data && (
        <p role="status" className="success">
          {add.data.email} is suppressed ({add.data.reason}).
        </p>
      )}
    </form>
  );
}

function ImportSuppressions({ projectId, onImported }: { projectId: string; onImported: () => Promise<unknown> }) {
  const run = useMutation({
    mutationFn: async (file: File) =>
      // The file as it is, sent as the route's text/csv body.
      unwrap(
        api.POST('/projects/{projectId}/suppressions/import', {
          params: { path: { projectId } },
          body: (await file.text()) as unknown as ImportBody,
          bodySerializer: (body) => body as unknown as string,
          headers: { 'content-type': 'text/csv' },
        }),
      ),
    onSuccess: onImported,
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const file = new FormData(event.currentTarget).get('file');
    if (file instanceof File && file.size > 0) run.mutate(file);
  };
  const rows = rowErrors(run.error);
  return (
    <>
      <form className="card inline" onSubmit={submit} aria-label="Import suppressions">
        <div className="field">
          <label htmlFor="suppressions-file">CSV file (email, optional reason)</label>
          <input id="suppressions-file" name="file" type="file" accept=".csv,text/csv" required aria-describedby="suppressions-file-hint" />
          <span id="suppressions-file-hint" className="hint">
            A header row, then one address a line; other columns are ignored, so an export imports as it is. All or nothing: a bad row imports nothing.
          </span>
        </div>
        <button type="submit" disabled={run.isPending}>
          Import
        </button>
      </form>
      {run.isPending && (
        <p role="status" className="muted">
          Importing…
        </p>
      )}
      {run.data && (
        <p role="status" className="success">
          Imported {run.data.received} rows: {run.data.suppressed} added or changed.
        </p>
      )}
      {rows.length > 0 ? <RowErrors rows={rows} csv /> : <FormError error={run.error} fields={[]} />}
    </>
  );
}
