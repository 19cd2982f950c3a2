// An automation's enrollments (spec 3.3): filtered by state and subscriber in the URL, paged, each with its step
// history on request, and deleted with confirmation (the subscriber may then be enrolled again).
import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate, useParams, useSearch } from '@tanstack/react-router';
import { Fragment, useState, type FormEvent } from 'react';
import { api, unwrap, type Query, type Schemas } from '../api/client';
import { useMembership } from '../auth/me';
import { Confirm } from '../components/confirm';
import { Field, FilterActions, SelectField } from '../components/field';
import { dateTime, everyValue } from '../components/format';
import { Pagination } from '../components/pagination';
import { PersonLink, personLabel } from '../components/person';
import { QueryState } from '../components/query-state';
import { reasonWords } from '../components/reasons';
import { STEP_LABEL, type StepType } from './automation-model';
import { StateBadge } from './automations';

type EnrollmentQuery = Query<'/automations/{id}/enrollments', 'get'>;
export type EnrollmentFilters = Pick<EnrollmentQuery, 'state' | 'subscriberId' | 'page'>;
type Enrollment = Schemas['Enrollment'];
type State = Enrollment['state'];

const STATES = everyValue<State>()('active', 'waiting', 'completed', 'converted', 'exited', 'failed');

export const STATE_TEXT: Record<State, string> = {
  active: 'active (a step is due)',
  waiting: 'waiting (in a delay, or for an event)',
  completed: 'completed',
  converted: 'converted (reached the goal)',
  exited: 'exited',
  failed: 'failed',
};

/** A step's outcome in words; `skipped:…` and `failed:…` through the reason map. */
const OUTCOME_TEXT: Record<string, string> = {
  sent: 'sent',
  waited: 'waited',
  exited: 'exited',
  true: 'condition true',
  false: 'condition false',
  matched: 'the event came',
  timed_out: 'the wait timed out',
};

const who = (enrollment: Enrollment) => (enrollment.subscriber ? personLabel(enrollment.subscriber) : 'a deleted subscriber');

/** Search parameters (or the filter form) as the list's query; anything unknown is dropped. */
export function enrollmentFiltersFromSearch(search: Record<string, unknown>): EnrollmentFilters {
  const filters: EnrollmentFilters = {};
  const state = String(search.state ?? search['query.state'] ?? '');
  if ((STATES as readonly string[]).includes(state)) filters.state = state as State;
  const subscriberId = String(search.subscriberId ?? search['query.subscriberId'] ?? '').trim();
  if (subscriberId) filters.subscriberId = subscriberId;
  const page = Number(search.page);
  if (Number.isInteger(page) && page > 1) filters.page = page;
  return filters;
}

export function AutomationEnrollmentsPage() {
  const route = '/signed-in/projects/$projectId/automations/$automationId/enrollments' as const;
  const { projectId, automationId } = useParams({ from: route });
  const filters = useSearch({ from: route });
  const navigate = useNavigate({ from: '/projects/$projectId/automations/$automationId/enrollments' });
  const queryClient = useQueryClient();
  const { canWrite } = useMembership();
  const [open, setOpen] = useState<string>();
  const automation = useQuery({
    queryKey: ['automation', automationId],
    queryFn: () => unwrap(api.GET('/automations/{id}', { params: { path: { id: automationId } } })),
  });
  const enrollments = useQuery({
    queryKey: ['enrollments', automationId, filters],
    queryFn: () => unwrap(api.GET('/automations/{id}/enrollments', { params: { path: { id: automationId }, query: { ...filters, pageSize: 20 } } })),
    placeholderData: keepPreviousData,
    refetchInterval: 10_000,
  });
  const apply = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    void navigate({ search: enrollmentFiltersFromSearch(Object.fromEntries(new FormData(event.currentTarget))) });
  };
  const remove = async (enrollmentId: string) => {
    await unwrap(api.DELETE('/automations/{id}/enrollments/{enrollmentId}', { params: { path: { id: automationId, enrollmentId } } }));
    await queryClient.invalidateQueries({ queryKey: ['enrollments', automationId] });
    await queryClient.invalidateQueries({ queryKey: ['automation-stats', automationId] });
    await queryClient.invalidateQueries({ queryKey: ['automations', projectId] });
  };
  const name = automation.data?.name ?? automationId;
  return (
    <section aria-labelledby="enrollments-title">
      <p className="breadcrumb">
        <Link to="/projects/$projectId/automations" params={{ projectId }}>
          Automations
        </Link>{' '}
        /{' '}
        <Link to="/projects/$projectId/automations/$automationId" params={{ projectId, automationId }}>
          {name}
        </Link>
      </p>
      <h2 id="enrollments-title">Enrollments of {name}</h2>
      {automation.data && (
        <p>
          <StateBadge state={automation.data.state} /> version {automation.data.version}. A subscriber is enrolled at most once per automation; deleting the enrollment
          lets the trigger enroll them again.
        </p>
      )}
      <form className="card filters" onSubmit={apply} aria-label="Filters" key={JSON.stringify(filters)}>
        <SelectField label="State" field="query.state" error={enrollments.error} defaultValue={filters.state ?? ''}>
          <option value="">any</option>
          {STATES.map((state) => (
            <option key={state} value={state}>
              {STATE_TEXT[state]}
            </option>
          ))}
        </SelectField>
        <Field
          label="Subscriber id"
          field="query.subscriberId"
          error={enrollments.error}
          defaultValue={filters.subscriberId ?? ''}
          autoComplete="off"
          hint="The id on a person’s page (or in its address), for one person’s enrollment."
        />
        <FilterActions onClear={() => void navigate({ search: {} })} />
      </form>
      <QueryState query={enrollments} isEmpty={(list) => list.total === 0} empty={<p>No enrollments match.</p>}>
        {(list) => (
          <>
            <table>
              <caption className="visually-hidden">Enrollments</caption>
              <thead>
                <tr>
                  <th scope="col">Subscriber</th>
                  <th scope="col">State</th>
                  <th scope="col">Version</th>
                  <th scope="col">Next step</th>
                  <th scope="col">Due</th>
                  <th scope="col">Enrolled</th>
                  <th scope="col">Ended</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {list.data.map((enrollment) => (
                  <Fragment key={enrollment.id}>
                    <tr>
                      <td>
                        <PersonLink projectId={projectId} person={enrollment.subscriber} />
                      </td>
                      <td>
                        {STATE_TEXT[enrollment.state]}
                        {enrollment.reason && <span className="muted"> ({reasonWords(enrollment.reason)})</span>}
                      </td>
                      <td>{enrollment.version}</td>
                      <td>{enrollment.stepId ?? '—'}</td>
                      <td>{dateTime(enrollment.dueAt)}</td>
                      <td>{dateTime(enrollment.enrolledAt)}</td>
                      <td>{dateTime(enrollment.endedAt)}</td>
                      <td className="row">
                        <button
                          type="button"
                          aria-expanded={open === enrollment.id}
                          aria-label={`History of ${who(enrollment)}`}
                          onClick={() => setOpen(open === enrollment.id ? undefined : enrollment.id)}
                        >
                          History
                        </button>
                        {canWrite && (
                          <Confirm
                            trigger="Delete"
                            label={`Delete the enrollment of ${who(enrollment)}`}
                            title="Delete this enrollment?"
                            description="Its step history goes with it, and the subscriber may be enrolled again: the next time the trigger selects them, they start the flow anew."
                            confirm="Delete enrollment"
                            onConfirm={() => remove(enrollment.id)}
                          />
                        )}
                      </td>
                    </tr>
                    {open === enrollment.id && (
                      <tr>
                        <td colSpan={8}>
                          <History automationId={automationId} enrollment={enrollment} />
                        </td>
                      </tr>
                    )}
                  </Fragment>
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

/** The steps an enrollment went through, oldest first, with what each did. */
function History({ automationId, enrollment }: { automationId: string; enrollment: Enrollment }) {
  const detail = useQuery({
    queryKey: ['enrollment', enrollment.id],
    queryFn: () => unwrap(api.GET('/automations/{id}/enrollments/{enrollmentId}', { params: { path: { id: automationId, enrollmentId: enrollment.id } } })),
  });
  return (
    <QueryState query={detail} isEmpty={(d) => d.history.length === 0} empty={<p>No step has run yet.</p>}>
      {(d) => (
        <table>
          <caption>Step history of {who(enrollment)}</caption>
          <thead>
            <tr>
              <th scope="col">Step</th>
              <th scope="col">Type</th>
              <th scope="col">Entered</th>
              <th scope="col">Completed</th>
              <th scope="col">Outcome</th>
            </tr>
          </thead>
          <tbody>
            {d.history.map((run, i) => (
              <tr key={i}>
                <td>{run.stepId}</td>
                <td>{STEP_LABEL[run.type as StepType] ?? run.type}</td>
                <td>{dateTime(run.enteredAt)}</td>
                <td>{dateTime(run.completedAt)}</td>
                <td>{run.outcome === null ? 'running' : (OUTCOME_TEXT[run.outcome] ?? reasonWords(run.outcome))}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </QueryState>
  );
}
