// An automation's page and the flow editor: name, trigger settings, the steps (added, removed, moved, linked) with the
// API's 422 shown on the step it names, the flow drawn as a graph with each step's stats, and the state changes.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate, useParams } from '@tanstack/react-router';
import { useId, useState, type FormEvent, type ReactNode } from 'react';
import { api, ApiError, belongsTo, unwrap, type Schemas } from '../api/client';
import { useMembership } from '../auth/me';
import { Field, FormError, SelectField, TextAreaField } from '../components/field';
import { FlowGraph } from '../components/flow-graph';
import { dateTime } from '../components/format';
import { DetailList } from '../components/problem-text';
import { QueryState } from '../components/query-state';
import { ConditionBuilder, treeError, useSegments } from '../components/condition-builder';
import {
  appendStep,
  EMPTY_CONDITION,
  EMPTY_TRIGGER,
  formOf,
  goalText,
  moveStep,
  newStep,
  NO_GOAL,
  OPERATOR_LABEL,
  OPERATORS,
  problemsOf,
  removeStep,
  STEP_LABEL,
  STEP_TYPES,
  toBody,
  TRIGGER_LABEL,
  TRIGGER_TYPES,
  triggerText,
  type Automation,
  type ConditionRow,
  type FlowForm,
  type GoalForm,
  type Link as StepLink,
  type StepForm,
  type StepType,
  type TriggerForm,
} from './automation-model';
import { AutomationActions, percent, StateBadge, TotalsList } from './automations';
import { fieldOf } from './segment-builder-model';

type Stats = Schemas['AutomationStats'];
type Detail = NonNullable<ApiError['details']>[number];

const ZONES = Intl.supportedValuesOf('timeZone');

export function NewAutomationPage() {
  const { projectId } = useParams({ from: '/signed-in/projects/$projectId/automations/new' });
  return (
    <section aria-labelledby="automation-title">
      <Breadcrumb projectId={projectId} />
      <h2 id="automation-title">New automation</h2>
      <FlowEditor projectId={projectId} initial={{ name: '', trigger: EMPTY_TRIGGER, goal: NO_GOAL, steps: [newStep('send_push', [])] }} />
    </section>
  );
}

function Breadcrumb({ projectId }: { projectId: string }) {
  return (
    <p className="breadcrumb">
      <Link to="/projects/$projectId/automations" params={{ projectId }}>
        Automations
      </Link>
    </p>
  );
}

export function useAutomationStats(automation: Automation | undefined) {
  return useQuery({
    queryKey: ['automation-stats', automation?.id],
    queryFn: () => unwrap(api.GET('/automations/{id}/stats', { params: { path: { id: automation!.id } } })),
    enabled: automation !== undefined,
    // People move through an active flow.
    refetchInterval: automation?.state === 'active' ? 5_000 : false,
  });
}

export function AutomationPage() {
  const { projectId, automationId } = useParams({ from: '/signed-in/projects/$projectId/automations/$automationId' });
  const navigate = useNavigate();
  const automation = useQuery({
    queryKey: ['automation', automationId],
    queryFn: () => unwrap(api.GET('/automations/{id}', { params: { path: { id: automationId } } })),
  });
  const stats = useAutomationStats(automation.data);
  /** A refused activation, whose problems the editor shows on the steps they name until the next save. */
  const [activationError, setActivationError] = useState<unknown>();
  return (
    <section aria-labelledby="automation-title">
      <Breadcrumb projectId={projectId} />
      <QueryState query={automation}>
        {(a) => (
          <>
            <h2 id="automation-title">{a.name}</h2>
            <p>
              <StateBadge state={a.state} /> version {a.version} · {triggerText(a.trigger)}
              {a.goal && ` · ${goalText(a.goal)}`}
              {a.sandbox && <span className="badge test"> test (sandbox)</span>}
              {a.activatedAt && <span className="muted"> · activated {dateTime(a.activatedAt)}</span>}
            </p>
            <div className="row align-center">
              <AutomationActions
                automation={a}
                onDeleted={() => void navigate({ to: '/projects/$projectId/automations', params: { projectId } })}
                onActivateFailed={setActivationError}
              />
              <Link to="/projects/$projectId/automations/$automationId/enrollments" params={{ projectId, automationId }} className="button">
                Enrollments{stats.data ? ` (${stats.data.totals.enrolled})` : ''}
              </Link>
            </div>
            {stats.data && <TotalsList totals={stats.data.totals} />}
            <FlowEditor
              key={a.id}
              projectId={projectId}
              automation={a}
              stats={stats.data}
              initial={formOf(a)}
              activationError={a.state === 'active' ? undefined : activationError}
              onSaved={() => setActivationError(undefined)}
            />
          </>
        )}
      </QueryState>
    </section>
  );
}

/** The per-step stats as numbers, steps only an earlier version had included. */
function StatsTable({ stats }: { stats: Stats }) {
  return (
    <details>
      <summary>Numbers</summary>
      <table>
        <caption className="visually-hidden">Per-step stats</caption>
        <thead>
          <tr>
            <th scope="col">Step</th>
            <th scope="col">Type</th>
            <th scope="col">Entered</th>
            <th scope="col">Sent</th>
            <th scope="col">Clicked</th>
            <th scope="col">Completed</th>
            <th scope="col">Converted</th>
          </tr>
        </thead>
        <tbody>
          {stats.steps.map((step) => (
            <tr key={step.stepId}>
              <td>{step.stepId}</td>
              <td>{step.type}</td>
              <td>{step.entered}</td>
              <td>{step.sent}</td>
              <td>{step.clicked}</td>
              <td>{step.completed}</td>
              <td>{step.converted}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p className="muted">
        Completion: {percent(stats.totals.conversion)} of enrollments completed the flow. Goal conversion: {percent(stats.totals.goalConversion)} reached the goal (
        {stats.totals.converted} {stats.totals.converted === 1 ? 'person' : 'people'}); a step’s “converted” counts those who reached it after entering the step.
      </p>
    </details>
  );
}

/** Messages of a 422 no control shows: said in the block they concern, in words. */
function Problems({ details }: { details: Detail[] }) {
  if (details.length === 0) return null;
  return (
    <div role="alert" className="error">
      <DetailList details={details} />
    </div>
  );
}

const errorOf = (details: Detail[] | undefined) => (details && details.length > 0 ? new ApiError(422, 'validation_failed', 'Validation failed', details) : undefined);
const unshown = (details: Detail[], shown: string[]) => details.filter((detail) => !shown.some((field) => belongsTo(detail.field, field)));

function FlowEditor({
  projectId,
  automation,
  stats,
  initial,
  activationError,
  onSaved,
}: {
  projectId: string;
  automation?: Automation;
  stats?: Stats;
  initial: FlowForm;
  activationError?: unknown;
  onSaved?: () => void;
}) {
  const { canWrite } = useMembership();
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const [form, setForm] = useState(initial);
  const [saved, setSaved] = useState(initial);
  /** The step keys in the order the last save sent them: a 422's `steps[i]` is the i-th of these. */
  const [sentKeys, setSentKeys] = useState<string[]>([]);
  const [savedNote, setSavedNote] = useState<string>();
  const [newType, setNewType] = useState<StepType>('send_push');

  const save = useMutation({
    mutationFn: (body: ReturnType<typeof toBody>) =>
      automation
        ? unwrap(api.PATCH('/automations/{id}', { params: { path: { id: automation.id } }, body }))
        : unwrap(api.POST('/automations', { body: { projectId, ...body } })),
    onSuccess: async (result) => {
      await queryClient.invalidateQueries({ queryKey: ['automations', projectId] });
      queryClient.setQueryData(['automation', result.id], result);
      await queryClient.invalidateQueries({ queryKey: ['automation-stats', result.id] });
      if (!automation) {
        await navigate({ to: '/projects/$projectId/automations/$automationId', params: { projectId, automationId: result.id } });
        return;
      }
      const next = formOf(result);
      setForm(next);
      setSaved(next);
      setSavedNote(result.version > automation.version ? `Saved as version ${result.version}: new enrollments start on it.` : 'Saved.');
    },
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    setSavedNote(undefined);
    onSaved?.();
    setSentKeys(form.steps.map((step) => step.key));
    save.mutate(toBody(form));
  };

  const segments = useSegments(projectId);
  // A refused activation is about the steps as saved; a refused save, about the steps as sent.
  const activating = !save.error && activationError !== undefined;
  const failure = save.error ?? activationError;
  const problems = problemsOf(failure instanceof ApiError && failure.status === 422 ? (failure.details ?? []) : [], activating ? saved.steps.map((step) => step.key) : sentKeys);
  const formError = errorOf(problems.form);
  const readOnly = !canWrite || automation?.state === 'archived';
  const body = toBody(form);
  const dirty = JSON.stringify(body) !== JSON.stringify(toBody(saved));
  const running = stats ? stats.totals.active + stats.totals.waiting : 0;
  const setSteps = (steps: StepForm[]) => setForm({ ...form, steps });
  const setStep = (step: StepForm) => setSteps(form.steps.map((s) => (s.key === step.key ? step : s)));

  return (
    <>
      <section className="card" aria-labelledby="flow-title">
        <h3 id="flow-title">Flow</h3>
        {dirty && automation && <p className="notice">Drawn with the unsaved changes below; the stats are those of the saved steps, by step id.</p>}
        <FlowGraph steps={body.steps} stats={stats?.steps} segmentName={(id) => segments.data?.data.find((segment) => segment.id === id)?.name} />
        {stats && <StatsTable stats={stats} />}
      </section>
      {automation?.state === 'archived' && <p className="notice">Archived: it can no longer be changed or activated.</p>}
      {automation && (automation.state === 'active' || automation.state === 'paused') && (
        <p className="notice" role="note">
          This automation is {automation.state}. Saving a change to its trigger or steps makes version {automation.version + 1}: new enrollments start on it, while
          the {running} {running === 1 ? 'person' : 'people'} enrolled now keep version {automation.version} — its steps as they were — to the end. A new name alone
          makes no new version.
        </p>
      )}
      <form onSubmit={submit} aria-label="Automation" noValidate>
        <fieldset disabled={readOnly} className="plain">
          <div className="card">
            <Field label="Name" field="name" error={formError} value={form.name} onChange={(e) => setForm({ ...form, name: e.target.value })} />
          </div>
          <TriggerFields trigger={form.trigger} setTrigger={(trigger) => setForm({ ...form, trigger })} details={problems.form} />
          <GoalFields goal={form.goal} setGoal={(goal) => setForm({ ...form, goal })} details={problems.form} />
          <section className="card" aria-labelledby="steps-title">
            <h3 id="steps-title">Steps</h3>
            <p className="muted">
              The first step is the entry step: everyone enrolled starts there. Each step says where the flow goes next (a condition, for each answer); the order of the
              list only sets the entry step. Removing a step leaves the links to it for you to redirect.
            </p>
            <ol className="steps">
              {form.steps.map((step, i) => (
                <li key={step.key}>
                  <StepFields
                    step={step}
                    index={i}
                    steps={form.steps}
                    projectId={projectId}
                    details={problems.steps.get(step.key) ?? []}
                    setStep={setStep}
                    onMove={(by) => setSteps(moveStep(form.steps, step.key, by))}
                    onRemove={() => setSteps(removeStep(form.steps, step.key))}
                  />
                </li>
              ))}
            </ol>
            {!readOnly && (
              <div className="row align-end">
                <SelectField label="New step" field="newStepType" error={undefined} value={newType} onChange={(e) => setNewType(e.target.value as StepType)}>
                  {STEP_TYPES.map((type) => (
                    <option key={type} value={type}>
                      {STEP_LABEL[type]}
                    </option>
                  ))}
                </SelectField>
                <button type="button" className="field-button" onClick={() => setSteps(appendStep(form.steps, newStep(newType, form.steps)))}>
                  Add step
                </button>
              </div>
            )}
          </section>
        </fieldset>
        <Problems details={unshown(problems.form, ['name', 'trigger', 'goal'])} />
        {failure instanceof ApiError && failure.status === 422 ? (
          <p role="alert" className="error">
            {activating ? 'Not activated' : 'Not saved'}: the problems are shown on the {problems.steps.size > 0 ? 'steps and fields' : 'fields'} they concern.
          </p>
        ) : (
          <FormError error={failure} fields={[]} />
        )}
        {savedNote && !dirty && (
          <p role="status" className="success">
            {savedNote}
          </p>
        )}
        {!readOnly && (
          <div className="actions">
            <button type="submit" className="primary" disabled={save.isPending}>
              {automation ? 'Save automation' : 'Create automation'}
            </button>
          </div>
        )}
      </form>
    </>
  );
}

/** The trigger's fields each type shows. */
const TRIGGER_FIELDS: Record<TriggerForm['type'], string[]> = {
  subscriber_added: [],
  subscriber_inactive: ['trigger.inactiveDays'],
  event: ['trigger.eventName', 'trigger.conditions'],
  schedule: ['trigger.cron', 'trigger.defaultTimezone'],
};

function TriggerFields({ trigger, setTrigger, details }: { trigger: TriggerForm; setTrigger: (trigger: TriggerForm) => void; details: Detail[] }) {
  const error = errorOf(details);
  const set = (patch: Partial<TriggerForm>) => setTrigger({ ...trigger, ...patch });
  const shown = ['trigger.type', ...TRIGGER_FIELDS[trigger.type]];
  return (
    <fieldset className="card">
      <legend>Trigger</legend>
      <SelectField label="Enrolls people when" field="trigger.type" error={error} value={trigger.type} onChange={(e) => set({ type: e.target.value as TriggerForm['type'] })}>
        {TRIGGER_TYPES.map((type) => (
          <option key={type} value={type}>
            {TRIGGER_LABEL[type]}
          </option>
        ))}
      </SelectField>
      {trigger.type === 'subscriber_added' && <p className="muted">Each new subscriber of the project is enrolled when it registers.</p>}
      {trigger.type === 'subscriber_inactive' && (
        <Field
          label="Inactive for (days)"
          field="trigger.inactiveDays"
          error={error}
          type="number"
          min={1}
          value={trigger.inactiveDays}
          hint="A subscriber not seen for this many days is enrolled (checked every minute)."
          onChange={(e) => set({ inactiveDays: e.target.value })}
        />
      )}
      {trigger.type === 'event' && (
        <>
          <Field
            label="Event name"
            field="trigger.eventName"
            error={error}
            value={trigger.eventName}
            placeholder="cart.abandoned"
            hint="POST /events with this name enrolls the subscriber it names."
            onChange={(e) => set({ eventName: e.target.value })}
          />
          <ConditionRows
            legend="Event property conditions (all must hold)"
            prefix="trigger.conditions"
            rows={trigger.conditions}
            setRows={(conditions) => set({ conditions })}
            error={error}
          />
        </>
      )}
      {trigger.type === 'schedule' && (
        <div className="row">
          <Field
            label="Cron expression"
            field="trigger.cron"
            error={error}
            value={trigger.cron}
            hint="Five fields, read in each subscriber's time zone: 0 9 * * 1 is Mondays 9:00 local."
            onChange={(e) => set({ cron: e.target.value })}
          />
          <SelectField
            label="Default time zone"
            field="trigger.defaultTimezone"
            error={error}
            value={trigger.defaultTimezone}
            hint="For subscribers whose time zone is unknown."
            onChange={(e) => set({ defaultTimezone: e.target.value })}
          >
            <option value="">UTC</option>
            {ZONES.map((zone) => (
              <option key={zone}>{zone}</option>
            ))}
          </SelectField>
        </div>
      )}
      <Problems details={unshown(details.filter((d) => belongsTo(d.field, 'trigger')), shown)} />
    </fieldset>
  );
}

/** The goal: an event (with property conditions) that ends an enrollment as converted; no event, no goal. */
function GoalFields({ goal, setGoal, details }: { goal: GoalForm; setGoal: (goal: GoalForm) => void; details: Detail[] }) {
  const error = errorOf(details);
  return (
    <fieldset className="card">
      <legend>Goal (optional)</legend>
      <p className="muted">
        When a person enrolled performs this event, they leave the flow at once and count as converted in the stats. Leave the event empty for no goal.
      </p>
      <Field
        label="Goal event"
        field="goal.event"
        error={error}
        value={goal.event}
        placeholder="order.completed"
        onChange={(e) => setGoal({ ...goal, event: e.target.value })}
      />
      <ConditionRows legend="Goal properties (all must hold)" prefix="goal.conditions" rows={goal.conditions} setRows={(conditions) => setGoal({ ...goal, conditions })} error={error} />
      <Problems details={unshown(details.filter((d) => belongsTo(d.field, 'goal')), ['goal.event', 'goal.conditions'])} />
    </fieldset>
  );
}

/** A list of property conditions (path, operator, value), with its 422s beside each part (or under the list). */
function ConditionRows({
  legend,
  prefix,
  rows,
  setRows,
  error,
}: {
  legend: string;
  prefix: string;
  rows: ConditionRow[];
  setRows: (rows: ConditionRow[]) => void;
  error: ApiError | undefined;
}) {
  const set = (i: number, patch: Partial<ConditionRow>) => setRows(rows.map((row, j) => (j === i ? { ...row, ...patch } : row)));
  return (
    <fieldset className="conditions">
      <legend>{legend}</legend>
      {rows.length === 0 && <p className="muted">None.</p>}
      {rows.map((row, i) => (
        <div className="row align-end" role="group" aria-label={`${legend}: condition ${i + 1}`} key={i}>
          <Field label="Property" field={`${prefix}.${i}.path`} error={error} value={row.path} placeholder="cart.total" onChange={(e) => set(i, { path: e.target.value })} />
          <SelectField label="Operator" field={`${prefix}.${i}.operator`} error={error} value={row.operator} onChange={(e) => set(i, { operator: e.target.value as ConditionRow['operator'] })}>
            {OPERATORS.map((operator) => (
              <option key={operator} value={operator}>
                {OPERATOR_LABEL[operator]}
              </option>
            ))}
          </SelectField>
          {row.operator !== 'exists' && row.operator !== 'not_exists' && (
            <Field
              label="Value"
              field={`${prefix}.${i}.value`}
              error={error}
              value={row.value}
              hint={row.operator === 'in' ? 'Values separated by commas, or a JSON list' : '50, true, "text" or text'}
              onChange={(e) => set(i, { value: e.target.value })}
            />
          )}
          <button type="button" className="field-button" onClick={() => setRows(rows.filter((_, j) => j !== i))}>
            Remove condition
          </button>
        </div>
      ))}
      <button type="button" onClick={() => setRows([...rows, EMPTY_CONDITION])}>
        Add condition
      </button>
      <Problems
        details={unshown(
          (error?.details ?? []).filter((detail) => belongsTo(detail.field, prefix)),
          rows.flatMap((_, i) => ['path', 'operator', 'value'].map((part) => `${prefix}.${i}.${part}`)),
        )}
      />
    </fieldset>
  );
}

/** A step's link: the end of the flow, another step, or (after a removal) an id no step has. */
function LinkField({ label, field, link, step, steps, error, onChange }: { label: string; field: string; link: StepLink; step: StepForm; steps: StepForm[]; error: ApiError | undefined; onChange: (link: StepLink) => void }) {
  const value = link.to === 'end' ? 'end' : link.to === 'step' ? link.key : 'missing';
  return (
    <SelectField
      label={label}
      field={field}
      error={error}
      value={value}
      onChange={(e) => onChange(e.target.value === 'end' ? { to: 'end' } : e.target.value === 'missing' ? link : { to: 'step', key: e.target.value })}
    >
      <option value="end">End of the flow</option>
      {steps
        .filter((other) => other.key !== step.key)
        .map((other) => (
          <option key={other.key} value={other.key}>
            {other.id} ({STEP_LABEL[other.type]})
          </option>
        ))}
      {link.to === 'missing' && <option value="missing">{link.id} (no such step)</option>}
    </SelectField>
  );
}

function StepFields({
  step,
  index,
  steps,
  projectId,
  details,
  setStep,
  onMove,
  onRemove,
}: {
  step: StepForm;
  index: number;
  steps: StepForm[];
  projectId: string;
  details: Detail[];
  setStep: (step: StepForm) => void;
  onMove: (by: -1 | 1) => void;
  onRemove: () => void;
}) {
  const error = errorOf(details);
  const shown = ['id'];
  const link = (label: string, key: 'next' | 'trueBranch' | 'falseBranch' | 'matchedBranch' | 'timeoutBranch', current: StepLink) => {
    shown.push(key);
    return <LinkField label={label} field={key} link={current} step={step} steps={steps} error={error} onChange={(to) => setStep({ ...step, [key]: to } as StepForm)} />;
  };
  const field = (label: string, name: string, value: string, onChange: (value: string) => void, extra: { hint?: ReactNode; placeholder?: string; type?: string } = {}) => {
    shown.push(name);
    return <Field label={label} field={name} error={error} value={value} onChange={(e) => onChange(e.target.value)} {...extra} />;
  };
  const textArea = (label: string, name: string, value: string, onChange: (value: string) => void, hint?: ReactNode) => {
    shown.push(name);
    return <TextAreaField label={label} field={name} error={error} rows={4} value={value} hint={hint} onChange={(e) => onChange(e.target.value)} />;
  };

  let content: ReactNode;
  switch (step.type) {
    case 'send_push':
      content = (
        <>
          {field('Title', 'content.title', step.title, (title) => setStep({ ...step, title }))}
          {field('Body', 'content.body', step.body, (body) => setStep({ ...step, body }))}
          {field('Click URL', 'content.clickUrl', step.clickUrl, (clickUrl) => setStep({ ...step, clickUrl }), { hint: 'Optional: opened when the notification is clicked.' })}
          {link('Next step', 'next', step.next)}
        </>
      );
      break;
    case 'send_email':
      shown.push('content.templateId');
      content = (
        <>
          <ModeRadios
            legend="Content"
            value={step.mode}
            options={[
              ['write', 'Written here'],
              ['template', 'From a saved template'],
            ]}
            onChange={(mode) => setStep({ ...step, mode })}
          />
          {step.mode === 'template' ? (
            <TemplateSelect projectId={projectId} value={step.templateId} error={error} onChange={(templateId) => setStep({ ...step, templateId })} />
          ) : (
            <>
              {field('Subject', 'content.subject', step.subject, (subject) => setStep({ ...step, subject }), { hint: 'Merge tags: {{ first_name }}, {{ event.total }} …' })}
              {textArea('HTML', 'content.html', step.html, (html) => setStep({ ...step, html }))}
            </>
          )}
          <div className="row">
            {field('From address', 'content.from.email', step.fromEmail, (fromEmail) => setStep({ ...step, fromEmail }), {
              hint: 'On a verified sending domain of the project (checked at activation).',
            })}
            {field('From name', 'content.from.name', step.fromName, (fromName) => setStep({ ...step, fromName }))}
          </div>
          {link('Next step', 'next', step.next)}
        </>
      );
      break;
    case 'send_sms':
      content = (
        <>
          {textArea('Text', 'content.body', step.body, (body) => setStep({ ...step, body }), 'Sent to the subscriber’s phone number from the sender of its country.')}
          {link('Next step', 'next', step.next)}
        </>
      );
      break;
    case 'send_whatsapp':
      content = (
        <>
          <ModeRadios
            legend="Message"
            value={step.mode}
            options={[
              ['text', 'Free-form text (only inside the 24-hour service window)'],
              ['template', 'An approved template'],
            ]}
            onChange={(mode) => setStep({ ...step, mode })}
          />
          {step.mode === 'text' ? (
            textArea('Text', 'content.text', step.text, (text) => setStep({ ...step, text }))
          ) : (
            <div className="row">
              {field('Template name', 'content.templateName', step.templateName, (templateName) => setStep({ ...step, templateName }))}
              {field('Language', 'content.language', step.language, (language) => setStep({ ...step, language }), { placeholder: 'en_US' })}
            </div>
          )}
          {link('Next step', 'next', step.next)}
        </>
      );
      break;
    case 'delay':
      content = (
        <>
          {field('Wait for', 'duration', step.duration, (duration) => setStep({ ...step, duration }), {
            hint: 'A number and a unit: 30m (minutes), 2h (hours), 1d (days) or 2w (weeks); at most 365 days.',
          })}
          {link('Next step', 'next', step.next)}
        </>
      );
      break;
    case 'condition':
      shown.push('criteria.event', 'criteria.attributes', 'criteria.segmentId');
      shown.push(...(['tagsAny', 'tagsAll', 'tagsNone', 'lastSeenDays', 'country', 'city', 'device', 'language', 'platform', 'browser', 'os', 'emailStatus', 'subscribedFrom', 'subscribedTo'] as const).map((key) => fieldOf(key, 'criteria.subscriber')));
      content = (
        <>
          <fieldset>
            <legend>Criteria (all must hold for “true”)</legend>
            <ConditionRows
              legend="Properties of the event that enrolled the subscriber"
              prefix="criteria.event"
              rows={step.event}
              setRows={(event) => setStep({ ...step, event })}
              error={error}
            />
            <ConditionRows
              legend="Subscriber attributes"
              prefix="criteria.attributes"
              rows={step.attributes}
              setRows={(attributes) => setStep({ ...step, attributes })}
              error={error}
            />
            <SegmentSelect projectId={projectId} value={step.segmentId} error={error} onChange={(segmentId) => setStep({ ...step, segmentId })} />
            <details open={step.subscriber.rows.length > 0}>
              <summary>Subscriber’s fields and conditions (attributes, events, segments, tags, last seen, country …)</summary>
              <ConditionBuilder
                projectId={projectId}
                tree={step.subscriber}
                setTree={(subscriber) => setStep({ ...step, subscriber })}
                error={treeError(step.subscriber, 'criteria.subscriber', error !== undefined, error)}
                prefix="criteria.subscriber"
                who="Subscribers"
              />
            </details>
          </fieldset>
          <div className="row">
            {link('If true, go to', 'trueBranch', step.trueBranch)}
            {link('If false, go to', 'falseBranch', step.falseBranch)}
          </div>
        </>
      );
      break;
    case 'wait_until':
      shown.push('conditions');
      content = (
        <>
          {field('Event name', 'event', step.event, (event) => setStep({ ...step, event }), {
            placeholder: 'order.completed',
            hint: 'Only an event the person performs after reaching this step counts.',
          })}
          <ConditionRows
            legend="Event property conditions (all must hold)"
            prefix="conditions"
            rows={step.conditions}
            setRows={(conditions) => setStep({ ...step, conditions })}
            error={error}
          />
          {field('Wait at most', 'timeout', step.timeout, (timeout) => setStep({ ...step, timeout }), {
            hint: 'A number and a unit: 30m (minutes), 2h (hours), 1d (days) or 2w (weeks); at most 365 days.',
          })}
          <div className="row">
            {link('If the event comes, go to', 'matchedBranch', step.matchedBranch)}
            {link('If the time runs out, go to', 'timeoutBranch', step.timeoutBranch)}
          </div>
        </>
      );
      break;
    case 'exit':
      content = <p className="muted">The enrollment ends here, as exited.</p>;
      break;
  }

  return (
    <fieldset className="step">
      <legend>
        {index + 1}. {STEP_LABEL[step.type]} — {step.id || '(no id)'}
        {index === 0 && ' (entry step)'}
      </legend>
      <div className="row align-end">
        {field('Step id', 'id', step.id, (id) => setStep({ ...step, id }), { hint: 'Letters, digits, _ or -; links follow a rename.' })}
        <div className="row step-buttons">
          <button type="button" aria-label={`Move up ${step.id}`} disabled={index === 0} onClick={() => onMove(-1)}>
            Move up
          </button>
          <button type="button" aria-label={`Move down ${step.id}`} disabled={index === steps.length - 1} onClick={() => onMove(1)}>
            Move down
          </button>
          <button type="button" className="danger" aria-label={`Remove ${step.id}`} disabled={steps.length === 1} onClick={onRemove}>
            Remove
          </button>
        </div>
      </div>
      {content}
      <Problems details={unshown(details, shown)} />
    </fieldset>
  );
}

function ModeRadios<M extends string>({ legend, value, options, onChange }: { legend: string; value: M; options: [M, string][]; onChange: (mode: M) => void }) {
  const name = useId();
  return (
    <fieldset className="radios compact">
      <legend>{legend}</legend>
      {options.map(([mode, label]) => (
        <label key={mode}>
          <input type="radio" name={name} checked={value === mode} onChange={() => onChange(mode)} /> {label}
        </label>
      ))}
    </fieldset>
  );
}

function TemplateSelect({ projectId, value, error, onChange }: { projectId: string; value: string; error: ApiError | undefined; onChange: (id: string) => void }) {
  const templates = useQuery({
    queryKey: ['email-templates', projectId, 'all'],
    queryFn: () => unwrap(api.GET('/email-templates/project/{projectId}', { params: { path: { projectId }, query: { pageSize: 100 } } })),
  });
  return (
    <SelectField
      label="Email template"
      field="content.templateId"
      error={error}
      value={value}
      hint="Its subject and body are copied in each time the automation is saved."
      onChange={(e) => onChange(e.target.value)}
    >
      <option value="">choose one</option>
      {templates.data?.data.map((template) => (
        <option key={template.id} value={template.id}>
          {template.name}
        </option>
      ))}
      {value && templates.data && !templates.data.data.some((template) => template.id === value) && <option value={value}>{value}</option>}
    </SelectField>
  );
}

function SegmentSelect({ projectId, value, error, onChange }: { projectId: string; value: string; error: ApiError | undefined; onChange: (id: string) => void }) {
  const segments = useSegments(projectId);
  return (
    <SelectField label="In the saved segment" field="criteria.segmentId" error={error} value={value} onChange={(e) => onChange(e.target.value)}>
      <option value="">any (no segment)</option>
      {segments.data?.data.map((segment) => (
        <option key={segment.id} value={segment.id}>
          {segment.name}
        </option>
      ))}
      {value && segments.data && !segments.data.data.some((segment) => segment.id === value) && <option value={value}>{value}</option>}
    </SelectField>
  );
}
