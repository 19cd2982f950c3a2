// Saved segments of a project (list, CSV export, delete) and the builder: the condition tree with a live reach counter.
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
import type { Filters } from '../api/targeting';
import { ConditionBuilder, treeError, useSegmentNames } from '../components/condition-builder';
import { useDebounced } from '../components/segment-filter-fields';
import { EMPTY_TREE, filtersOf, problemsOf, treeOf, type Group } from './filters-tree-model';

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
  const names = useSegmentNames(projectId);
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
                      {audienceSentence(segment.filters, names)}
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
  const [tree, setTree] = useState<Group>(segment ? treeOf(segment.filters) : EMPTY_TREE);
  const [name, setName] = useState(segment?.name ?? '');
  const [tried, setTried] = useState(false);
  const names = useSegmentNames(projectId);
  const current = filtersOf(tree).filters;
  const complete = problemsOf(tree).length === 0;
  // Only a tree with nothing left to fill in is counted: a half-typed condition would only be a 422.
  const counted = useDebounced(complete ? current : undefined, 400);
  const reach = useQuery({
    queryKey: ['reach', projectId, counted],
    queryFn: () => unwrap(api.POST('/segments/reach', { body: { projectId, filters: counted! } })),
    placeholderData: keepPreviousData,
    enabled: canWrite && counted !== undefined,
  });
  const save = useMutation({
    mutationFn: (body: { name: string; filters: Filters }) =>
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
    setTried(true);
    if (problemsOf(tree).length === 0) save.mutate({ name, filters: current });
  };
  // Errors beside the fields: what is left to fill in once a save was tried, else the save's, else the reach count's
  // (the same filters, checked live).
  const error = treeError(tree, 'filters', tried, save.error ?? reach.error);
  return (
    <section aria-labelledby="segment-title">
      <p className="breadcrumb">
        <Link to="/projects/$projectId/segments" params={{ projectId }}>
          Segments
        </Link>
      </p>
      <h2 id="segment-title">{segment ? segment.name : 'New segment'}</h2>
      <p data-testid="audience-sentence">
        <strong>Who:</strong> {audienceSentence(current, names)}
      </p>
      <div className="reach card" role="status" aria-live="polite">
        {!canWrite ? (
          'A viewer sees the filters; counting the reach needs the MEMBER role.'
        ) : !complete ? (
          <span className="muted">Reach: counted once every condition is filled in.</span>
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
          <ConditionBuilder projectId={projectId} tree={tree} setTree={setTree} error={error} segmentId={segment?.id} />
        </fieldset>
        <FormError error={save.error} fields={['name', 'filters']} />
        {canWrite && (
          <div className="actions">
            <button type="button" onClick={() => setTree(EMPTY_TREE)}>
              Clear conditions
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
