// Saved segments of a project (list, CSV export, delete) and the builder: all 11 filters with a live reach counter.
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate, useParams } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { api, unwrap, type Schemas } from '../api/client';
import { download } from '../api/download';
import { useMembership } from '../auth/me';
import { Confirm } from '../components/confirm';
import { Field, FormError } from '../components/field';
import { audienceSentence } from '../components/audience-sentence';
import { dateTime } from '../components/format';
import { Pagination } from '../components/pagination';
import { ErrorMessage, QueryState } from '../components/query-state';
import { SegmentFilterFields, useDebounced } from '../components/segment-filter-fields';
import { EMPTY, fromFilters, toFilters, type BuilderState, type SegmentFilters } from './segment-builder-model';

/** The segment's subscribers as a CSV file. */
function downloadExport(projectId: string, segment: Schemas['Segment']) {
  const query = new URLSearchParams({ segmentId: segment.id });
  return download(`/segments/project/${encodeURIComponent(projectId)}/export.csv?${query}`, `${segment.name.replace(/[^\w.-]+/g, '_')}.csv`);
}

export function SegmentsPage() {
  const { projectId } = useParams({ from: '/signed-in/projects/$projectId/segments/' });
  const { canWrite } = useMembership();
  const queryClient = useQueryClient();
  const [page, setPage] = useState(1);
  const segments = useQuery({
    queryKey: ['segments', projectId, page],
    queryFn: () => unwrap(api.GET('/segments/project/{projectId}', { params: { path: { projectId }, query: { page, pageSize: 20 } } })),
    placeholderData: keepPreviousData,
  });
  const exporting = useMutation({ mutationFn: (segment: Schemas['Segment']) => downloadExport(projectId, segment) });
  const remove = async (id: string) => {
    await unwrap(api.DELETE('/segments/{id}', { params: { path: { id } } }));
    await queryClient.invalidateQueries({ queryKey: ['segments', projectId] });
  };
  return (
    <section aria-labelledby="segments-title">
      <h2 id="segments-title">Segments</h2>
      {canWrite && (
        <p>
          <Link to="/projects/$projectId/segments/new" params={{ projectId }} className="button primary">
            New segment
          </Link>
        </p>
      )}
      <ErrorMessage error={exporting.error} />
      <QueryState query={segments} isEmpty={(list) => list.total === 0} empty={<p>No saved segments yet.</p>}>
        {(list) => (
          <>
            <table>
              <caption className="visually-hidden">Saved segments</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Who</th>
                  <th scope="col">Updated</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {list.data.map((segment) => (
                  <tr key={segment.id}>
                    <td>
                      <Link to="/projects/$projectId/segments/$segmentId" params={{ projectId, segmentId: segment.id }}>
                        {segment.name}
                      </Link>
                    </td>
                    <td>
                      {audienceSentence(segment.filters)}
                    </td>
                    <td>{dateTime(segment.updatedAt)}</td>
                    <td className="row">
                      <button type="button" onClick={() => exporting.mutate(segment)} aria-label={`Export CSV of ${segment.name}`}>
                        Export CSV
                      </button>
                      {canWrite && (
                        <Confirm
                          trigger="Delete"
                          label={`Delete segment ${segment.name}`}
                          title={`Delete “${segment.name}”?`}
                          description="The saved segment is deleted for good. This cannot be undone."
                          confirm="Delete segment"
                          onConfirm={() => remove(segment.id)}
                        />
                      )}
                    </td>
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

export function NewSegmentPage() {
  const { projectId } = useParams({ from: '/signed-in/projects/$projectId/segments/new' });
  return <SegmentEditor projectId={projectId} />;
}

export function SegmentPage() {
  const { projectId, segmentId } = useParams({ from: '/signed-in/projects/$projectId/segments/$segmentId' });
  const segment = useQuery({ queryKey: ['segment', segmentId], queryFn: () => unwrap(api.GET('/segments/{id}', { params: { path: { id: segmentId } } })) });
  return <QueryState query={segment}>{(s) => <SegmentEditor key={s.updatedAt} projectId={projectId} segment={s} />}</QueryState>;
}

function SegmentEditor({ projectId, segment }: { projectId: string; segment?: Schemas['Segment'] }) {
  const { canWrite } = useMembership();
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const [state, setState] = useState<BuilderState>(segment ? fromFilters(segment.filters) : EMPTY);
  const [name, setName] = useState(segment?.name ?? '');
  const filters = useDebounced(toFilters(state), 400);
  const reach = useQuery({
    queryKey: ['reach', projectId, filters],
    queryFn: () => unwrap(api.POST('/segments/reach', { body: { projectId, filters } })),
    placeholderData: keepPreviousData,
    enabled: canWrite,
  });
  const save = useMutation({
    mutationFn: (body: { name: string; filters: SegmentFilters }) =>
      segment
        ? unwrap(api.PATCH('/segments/{id}', { params: { path: { id: segment.id } }, body }))
        : unwrap(api.POST('/segments', { body: { projectId, ...body } })),
    onSuccess: async (saved) => {
      await queryClient.invalidateQueries({ queryKey: ['segments', projectId] });
      queryClient.setQueryData(['segment', saved.id], saved);
      await navigate({ to: '/projects/$projectId/segments', params: { projectId } });
    },
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    save.mutate({ name, filters: toFilters(state) });
  };
  // Errors beside the fields: the save's if there is one, else the reach count's (the same filters, checked live).
  const error = save.error ?? reach.error;
  return (
    <section aria-labelledby="segment-title">
      <p className="breadcrumb">
        <Link to="/projects/$projectId/segments" params={{ projectId }}>
          Segments
        </Link>
      </p>
      <h2 id="segment-title">{segment ? segment.name : 'New segment'}</h2>
      <p data-testid="audience-sentence">
        <strong>Who:</strong> {audienceSentence(toFilters(state))}
      </p>
      <div className="reach card" role="status" aria-live="polite">
        {!canWrite ? (
          'A viewer sees the filters; counting the reach needs the MEMBER role.'
        ) : reach.isError ? (
          <span className="error">Reach: the filters are not valid yet.</span>
        ) : reach.data ? (
          <>
            Reach: <strong data-testid="reach">{reach.data.count}</strong> active subscriber{reach.data.count === 1 ? '' : 's'}
            {reach.isFetching && <span className="muted"> (updating…)</span>}
          </>
        ) : (
          'Counting…'
        )}
      </div>
      <form onSubmit={submit} className="card" aria-label="Segment">
        <fieldset disabled={!canWrite}>
          <Field label="Segment name" field="name" error={save.error} value={name} onChange={(event) => setName(event.target.value)} required maxLength={200} />
          <SegmentFilterFields state={state} setState={setState} error={error} />
        </fieldset>
        <FormError error={save.error} fields={['name', 'filters']} />
        {canWrite && (
          <div className="actions">
            <button type="button" onClick={() => setState(EMPTY)}>
              Clear filters
            </button>
            <button type="submit" className="primary" disabled={save.isPending}>
              Save segment
            </button>
          </div>
        )}
      </form>
    </section>
  );
}
