// Automations of a project: the list with each one's trigger, version and enrollment totals, the state changes
// (activate, pause, archive, delete, confirmed), and the starter gallery that clones a starter into a draft.
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate, useParams } from '@tanstack/react-router';
import { useState } from 'react';
import { api, ApiError, unwrap, type Body, type Schemas } from '../api/client';
import { useMembership } from '../auth/me';
import { Confirm } from '../components/confirm';
import { FormError } from '../components/field';
import { Pagination } from '../components/pagination';
import { DetailList } from '../components/problem-text';
import { ErrorMessage, QueryState } from '../components/query-state';
import { problemPlace, problemValue, triggerText, type Automation } from './automation-model';

type Totals = Schemas['AutomationTotals'];
type StarterId = Body<'/automations/from-starter', 'post'>['starter'];

const STATE_TONE: Record<Automation['state'], string> = { draft: '', active: 'verified', paused: 'pending', archived: 'failing' };

export function StateBadge({ state }: { state: Automation['state'] }) {
  return <span className={`badge ${STATE_TONE[state]}`}>{state}</span>;
}

export const percent = (ratio: number) => `${Math.round(ratio * 1000) / 10}%`;

/** An activation refused with a 422: each problem on its step and field, in words, with the link to its fix. */
function ActivationProblems({ error, automation }: { error: unknown; automation: Automation }) {
  if (!(error instanceof ApiError && error.status === 422 && error.details?.length)) return <FormError error={error} fields={[]} />;
  return (
    <div role="alert" className="error">
      <p>Not activated:</p>
      <DetailList details={error.details} where={(field) => problemPlace(field, automation.steps)} valueAt={(field) => problemValue(field, automation.steps)} />
    </div>
  );
}

/**
 * The four state changes of an automation, each confirmed; a 422 (a sender not on a verified domain) shows in the
 * dialog, and goes to `onActivateFailed` for the editor to mark the steps it names.
 */
export function AutomationActions({ automation, onDeleted, onActivateFailed }: { automation: Automation; onDeleted?: () => void; onActivateFailed?: (error: unknown) => void }) {
  const queryClient = useQueryClient();
  const { canWrite } = useMembership();
  if (!canWrite) return null;
  const path = { params: { path: { id: automation.id } } };
  const refresh = async (updated?: Automation) => {
    if (updated) queryClient.setQueryData(['automation', automation.id], updated);
    await queryClient.invalidateQueries({ queryKey: ['automations', automation.projectId] });
  };
  const move = async (action: 'activate' | 'pause' | 'archive') => {
    const updated =
      action === 'activate'
        ? await unwrap(api.POST('/automations/{id}/activate', path))
        : action === 'pause'
          ? await unwrap(api.POST('/automations/{id}/pause', path))
          : await unwrap(api.POST('/automations/{id}/archive', path));
    await refresh(updated);
  };
  const remove = async () => {
    await unwrap(api.DELETE('/automations/{id}', path));
    queryClient.removeQueries({ queryKey: ['automation', automation.id] });
    await refresh();
    onDeleted?.();
  };
  const { state, name } = automation;
  return (
    <div className="row">
      {(state === 'draft' || state === 'paused') && (
        <Confirm
          trigger="Activate"
          label={`Activate ${name}`}
          title={`Activate “${name}”?`}
          description="Its trigger starts enrolling people and their steps run: messages go out. Email senders must be on verified domains of the project."
          confirm="Activate automation"
          onConfirm={() => move('activate')}
          errorView={(error) => <ActivationProblems error={error} automation={automation} />}
          onError={onActivateFailed}
        />
      )}
      {state === 'active' && (
        <Confirm
          trigger="Pause"
          label={`Pause ${name}`}
          title={`Pause “${name}”?`}
          description="Nobody is enrolled and no step runs until it is activated again; the steps that came due meanwhile run then."
          confirm="Pause automation"
          onConfirm={() => move('pause')}
        />
      )}
      {state !== 'archived' && (
        <Confirm
          trigger="Archive"
          label={`Archive ${name}`}
          title={`Archive “${name}”?`}
          description="For good: it cannot be activated or edited again, and the people still in it leave it (their enrollments exit). It stays readable."
          confirm="Archive automation"
          onConfirm={() => move('archive')}
        />
      )}
      <Confirm
        trigger="Delete"
        label={`Delete ${name}`}
        title={`Delete “${name}”?`}
        description="The automation goes with its enrollments, their step history and its stats. The messages already sent stay in each subscriber's history."
        confirm="Delete automation"
        onConfirm={remove}
      />
    </div>
  );
}

export function TotalsList({ totals }: { totals: Totals }) {
  const items: [string, string | number][] = [
    ['Enrolled', totals.enrolled],
    ['Active', totals.active],
    ['Waiting', totals.waiting],
    ['Completed', totals.completed],
    ['Converted', totals.converted],
    ['Exited', totals.exited],
    ['Failed', totals.failed],
    ['Completion', percent(totals.conversion)],
    ['Goal conversion', percent(totals.goalConversion)],
  ];
  return (
    <dl className="details stats" aria-label="Enrollment totals">
      {items.map(([label, value]) => (
        <div key={label}>
          <dt>{label}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

export function AutomationsPage() {
  const { projectId } = useParams({ from: '/signed-in/projects/$projectId/automations/' });
  const { canWrite } = useMembership();
  const [page, setPage] = useState(1);
  const automations = useQuery({
    queryKey: ['automations', projectId, page],
    queryFn: () => unwrap(api.GET('/automations/project/{projectId}', { params: { path: { projectId }, query: { page, pageSize: 20 } } })),
    placeholderData: keepPreviousData,
    // Enrollment totals move while automations run.
    refetchInterval: 10_000,
  });
  return (
    <section aria-labelledby="automations-title">
      <h2 id="automations-title">Automations</h2>
      <p>
        An automation enrolls each subscriber its trigger selects — at most once — and runs its steps for them: messages, delays and conditions. Drafts do nothing
        until activated. Events reported with <code>POST /events</code> are on the{' '}
        <Link to="/projects/$projectId/events" params={{ projectId }}>
          Events
        </Link>{' '}
        tab.
      </p>
      {canWrite && (
        <p>
          <Link to="/projects/$projectId/automations/new" params={{ projectId }} className="button primary">
            New automation
          </Link>
        </p>
      )}
      <QueryState query={automations} isEmpty={(list) => list.total === 0} empty={<p>No automations yet: start from a starter below, or write one.</p>}>
        {(list) => (
          <>
            <table>
              <caption className="visually-hidden">Automations</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">State</th>
                  <th scope="col">Trigger</th>
                  <th scope="col">Version</th>
                  <th scope="col">Enrolled</th>
                  <th scope="col">Active</th>
                  <th scope="col">Waiting</th>
                  <th scope="col">Completed</th>
                  <th scope="col">Conversion</th>
                  <th scope="col">Conversions</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {list.data.map((automation) => (
                  <tr key={automation.id}>
                    <td>
                      <Link to="/projects/$projectId/automations/$automationId" params={{ projectId, automationId: automation.id }}>
                        {automation.name}
                      </Link>
                      {automation.sandbox && <span className="badge test"> test</span>}
                    </td>
                    <td>
                      <StateBadge state={automation.state} />
                    </td>
                    <td>{triggerText(automation.trigger)}</td>
                    <td>{automation.version}</td>
                    <td>
                      <Link to="/projects/$projectId/automations/$automationId/enrollments" params={{ projectId, automationId: automation.id }} aria-label={`${automation.totals.enrolled}: enrollments of ${automation.name}`}>
                        {automation.totals.enrolled}
                      </Link>
                    </td>
                    <td>{automation.totals.active}</td>
                    <td>{automation.totals.waiting}</td>
                    <td>{automation.totals.completed}</td>
                    <td>{percent(automation.totals.conversion)}</td>
                    <td>
                      {automation.goal ? (
                        `${automation.totals.converted} (${percent(automation.totals.goalConversion)})`
                      ) : (
                        <span className="muted">No goal</span>
                      )}
                    </td>
                    <td>
                      <AutomationActions automation={automation} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
            <Pagination page={list.page} pageSize={list.pageSize} total={list.total} onPage={setPage} />
          </>
        )}
      </QueryState>
      <StarterGallery projectId={projectId} />
    </section>
  );
}

/** The starters (spec 2.5): each card clones its flow into the project as a draft and opens it in the editor. */
function StarterGallery({ projectId }: { projectId: string }) {
  const { canWrite } = useMembership();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const starters = useQuery({ queryKey: ['automation-starters'], queryFn: () => unwrap(api.GET('/automations/starters')), staleTime: Infinity });
  const use = useMutation({
    mutationFn: (starter: StarterId) => unwrap(api.POST('/automations/from-starter', { body: { projectId, starter } })),
    onSuccess: async (draft) => {
      await queryClient.invalidateQueries({ queryKey: ['automations', projectId] });
      queryClient.setQueryData(['automation', draft.id], draft);
      await navigate({ to: '/projects/$projectId/automations/$automationId', params: { projectId, automationId: draft.id } });
    },
  });
  return (
    <section aria-labelledby="starters-title">
      <h3 id="starters-title">Starters</h3>
      <p className="muted">Ready-made flows: each becomes a draft of this project, to edit before activating (its emails need a sender on a verified domain).</p>
      <ErrorMessage error={use.error} />
      <QueryState query={starters}>
        {({ data }) => (
          <ul className="cards" aria-label="Starter automations">
            {data.map((starter) => (
              <li key={starter.id} className="card" aria-labelledby={`starter-${starter.id}`}>
                <h4 id={`starter-${starter.id}`}>{starter.name}</h4>
                <p>{starter.description}</p>
                <p className="muted">
                  {triggerText(starter.trigger)} · {starter.steps.length} steps
                </p>
                {canWrite && (
                  <button type="button" className="primary" disabled={use.isPending} aria-label={`Use this starter: ${starter.name}`} onClick={() => use.mutate(starter.id as StarterId)}>
                    Use this starter
                  </button>
                )}
              </li>
            ))}
          </ul>
        )}
      </QueryState>
    </section>
  );
}
