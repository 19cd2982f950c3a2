// The flow editor's form (trigger, steps linked by stable keys) and the API's automation body, one into the other; the
// flow laid out as a graph; triggers, steps and conditions in words. No DOM: tested in Node (automation-model.test.ts).
import type { Body, Envelope, Schemas } from '../api/client';
import { audienceParts, type SegmentNames } from '../components/audience-sentence';
import { fieldWords, stepIndexOf } from '../components/reasons';
import { everyValue, valueWords } from '../components/format';
import { EMPTY_TREE, filtersOf, treeOf, type Group } from './filters-tree-model';

export type Automation = Schemas['Automation'];
export type Step = Schemas['AutomationStep'];
export type Trigger = Schemas['AutomationTrigger'];
export type Goal = Schemas['AutomationGoal'];
export type StepType = Step['type'];
export type TriggerType = Trigger['type'];
type PropertyCondition = Schemas['PropertyCondition'];
export type Operator = PropertyCondition['operator'];
export type AutomationBody = Body<'/automations', 'post'>;
type StepOf<T extends StepType> = Extract<Step, { type: T }>;
type PushContent = StepOf<'send_push'>['content'];
type EmailContent = StepOf<'send_email'>['content'];
type WhatsAppContent = StepOf<'send_whatsapp'>['content'];

export const TRIGGER_TYPES = everyValue<TriggerType>()('subscriber_added', 'subscriber_inactive', 'event', 'schedule');
export const STEP_TYPES = everyValue<StepType>()('send_push', 'send_email', 'send_sms', 'send_whatsapp', 'delay', 'condition', 'wait_until', 'exit');
export const OPERATORS = everyValue<Operator>()('eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'contains', 'in', 'exists', 'not_exists');

export const TRIGGER_LABEL: Record<TriggerType, string> = {
  subscriber_added: 'A subscriber registers',
  subscriber_inactive: 'A subscriber is inactive',
  event: 'An event is reported',
  schedule: 'On a schedule',
};

export const STEP_LABEL: Record<StepType, string> = {
  send_push: 'Push',
  send_email: 'Email',
  send_sms: 'SMS',
  send_whatsapp: 'WhatsApp',
  delay: 'Delay',
  condition: 'Condition',
  wait_until: 'Wait until',
  exit: 'Exit',
};

export const OPERATOR_LABEL: Record<Operator, string> = {
  eq: '=',
  neq: '≠',
  gt: '>',
  gte: '≥',
  lt: '<',
  lte: '≤',
  contains: 'contains',
  in: 'is one of',
  exists: 'exists',
  not_exists: 'does not exist',
};

/** Where a step goes: the flow's end, a step of the form (by key, so renaming a step keeps its links), or an id no step has. */
export type Link = { to: 'end' } | { to: 'step'; key: string } | { to: 'missing'; id: string };
const END: Link = { to: 'end' };

/** A property condition as typed: the value is text, read as JSON when it is JSON (50, true, "50"), else as text. */
export interface ConditionRow {
  path: string;
  operator: Operator;
  value: string;
}

type Linked = { key: string; id: string; next: Link };
export type StepForm =
  | (Linked & { type: 'send_push'; title: string; body: string; clickUrl: string; rest: Omit<PushContent, 'title' | 'body' | 'clickUrl'> })
  | (Linked & {
      type: 'send_email';
      /** `template`: the subject and body are the template's, copied in again at each save. */
      mode: 'write' | 'template';
      templateId: string;
      subject: string;
      html: string;
      fromEmail: string;
      fromName: string;
      rest: Pick<EmailContent, 'preheader' | 'text' | 'replyTo'>;
    })
  | (Linked & { type: 'send_sms'; body: string })
  | (Linked & { type: 'send_whatsapp'; mode: 'text' | 'template'; text: string; templateName: string; language: string; components: WhatsAppContent['components'] })
  | (Linked & { type: 'delay'; duration: string })
  | {
      key: string;
      id: string;
      type: 'condition';
      trueBranch: Link;
      falseBranch: Link;
      event: ConditionRow[];
      attributes: ConditionRow[];
      segmentId: string;
      subscriber: Group;
    }
  | {
      key: string;
      id: string;
      type: 'wait_until';
      event: string;
      conditions: ConditionRow[];
      timeout: string;
      matchedBranch: Link;
      timeoutBranch: Link;
    }
  | { key: string; id: string; type: 'exit' };

/** The automation's goal: no event named, no goal. */
export interface GoalForm {
  event: string;
  conditions: ConditionRow[];
}

export interface TriggerForm {
  type: TriggerType;
  inactiveDays: string;
  eventName: string;
  conditions: ConditionRow[];
  cron: string;
  /** Empty: UTC. */
  defaultTimezone: string;
}

export interface FlowForm {
  name: string;
  trigger: TriggerForm;
  goal: GoalForm;
  steps: StepForm[];
}

export const NO_GOAL: GoalForm = { event: '', conditions: [] };

let keys = 0;
/** A step's key in the form: stable while its id is edited and the steps move. */
const newKey = () => `step-${++keys}`;

export const EMPTY_TRIGGER: TriggerForm = { type: 'subscriber_added', inactiveDays: '30', eventName: '', conditions: [], cron: '0 9 * * 1', defaultTimezone: '' };

export const EMPTY_CONDITION: ConditionRow = { path: '', operator: 'eq', value: '' };

const hasNoValue = (operator: Operator) => operator === 'exists' || operator === 'not_exists';

/** The text as JSON when it is JSON (a number, true, "quoted"), else the text itself. */
function scalar(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The text that reads back as `value`: a string that would read as something else is quoted. */
function scalarText(value: unknown): string {
  if (typeof value === 'string') return scalar(value) === value ? value : JSON.stringify(value);
  return JSON.stringify(value);
}

/** `in` takes a JSON list, or values separated by commas. */
function listValue(text: string): unknown {
  if (text.trim().startsWith('[')) return scalar(text.trim());
  return text
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean)
    .map(scalar);
}

function listText(value: unknown): string {
  if (!Array.isArray(value)) return scalarText(value);
  const items = value.map(scalarText);
  return items.every((item) => item !== '' && !item.includes(',') && !item.startsWith('[')) ? items.join(', ') : JSON.stringify(value);
}

export function toCondition(row: ConditionRow): PropertyCondition {
  const path = row.path.trim();
  if (hasNoValue(row.operator)) return { path, operator: row.operator };
  return { path, operator: row.operator, value: row.operator === 'in' ? listValue(row.value) : scalar(row.value.trim()) };
}

export function conditionRowOf(condition: PropertyCondition): ConditionRow {
  const value = condition.value === undefined ? '' : condition.operator === 'in' ? listText(condition.value) : scalarText(condition.value);
  return { path: condition.path, operator: condition.operator, value };
}

export function toTrigger(form: TriggerForm): Trigger {
  switch (form.type) {
    case 'subscriber_added':
      return { type: 'subscriber_added' };
    case 'subscriber_inactive':
      // Sent as typed: the API's 422 says what is wrong beside the field.
      return { type: 'subscriber_inactive', inactiveDays: Number(form.inactiveDays.trim()) };
    case 'event':
      return { type: 'event', eventName: form.eventName.trim(), ...(form.conditions.length > 0 && { conditions: form.conditions.map(toCondition) }) };
    case 'schedule':
      return { type: 'schedule', cron: form.cron.trim(), ...(form.defaultTimezone && { defaultTimezone: form.defaultTimezone }) };
  }
}

export function triggerFormOf(trigger: Trigger): TriggerForm {
  switch (trigger.type) {
    case 'subscriber_added':
      return EMPTY_TRIGGER;
    case 'subscriber_inactive':
      return { ...EMPTY_TRIGGER, type: trigger.type, inactiveDays: String(trigger.inactiveDays) };
    case 'event':
      return { ...EMPTY_TRIGGER, type: trigger.type, eventName: trigger.eventName, conditions: (trigger.conditions ?? []).map(conditionRowOf) };
    case 'schedule':
      return { ...EMPTY_TRIGGER, type: trigger.type, cron: trigger.cron, defaultTimezone: trigger.defaultTimezone ?? '' };
  }
}

const ID_BASE: Record<StepType, string> = {
  send_push: 'push',
  send_email: 'email',
  send_sms: 'sms',
  send_whatsapp: 'whatsapp',
  delay: 'wait',
  condition: 'condition',
  wait_until: 'wait-until',
  exit: 'exit',
};

/** A new step of `type` with an id no step of the form has (push-1, wait-2 …) and empty content. */
export function newStep(type: StepType, steps: readonly StepForm[]): StepForm {
  let n = 1;
  while (steps.some((step) => step.id === `${ID_BASE[type]}-${n}`)) n++;
  const base = { key: newKey(), id: `${ID_BASE[type]}-${n}` };
  switch (type) {
    case 'send_push':
      return { ...base, type, next: END, title: '', body: '', clickUrl: '', rest: {} };
    case 'send_email':
      return { ...base, type, next: END, mode: 'write', templateId: '', subject: '', html: '', fromEmail: '', fromName: '', rest: {} };
    case 'send_sms':
      return { ...base, type, next: END, body: '' };
    case 'send_whatsapp':
      return { ...base, type, next: END, mode: 'text', text: '', templateName: '', language: '', components: undefined };
    case 'delay':
      return { ...base, type, next: END, duration: '1d' };
    case 'condition':
      return { ...base, type, trueBranch: END, falseBranch: END, event: [], attributes: [], segmentId: '', subscriber: EMPTY_TREE };
    case 'wait_until':
      return { ...base, type, event: '', conditions: [], timeout: '1d', matchedBranch: END, timeoutBranch: END };
    case 'exit':
      return { ...base, type };
  }
}

/**
 * Appends a step; when the last step ended the flow (its `next` was the end), it now leads to the new one, so a step
 * added to a straight flow runs after the others.
 */
export function appendStep(steps: readonly StepForm[], step: StepForm): StepForm[] {
  const last = steps.at(-1);
  const linked = last && 'next' in last && last.next.to === 'end' ? [...steps.slice(0, -1), { ...last, next: { to: 'step', key: step.key } as Link }] : [...steps];
  return [...linked, step];
}

/** Removes a step; links to it become links to a missing id (shown, and refused by the API), for the user to redirect. */
export function removeStep(steps: readonly StepForm[], key: string): StepForm[] {
  const removed = steps.find((step) => step.key === key);
  if (!removed) return [...steps];
  const relink = (link: Link): Link => (link.to === 'step' && link.key === key ? { to: 'missing', id: removed.id } : link);
  return steps.filter((step) => step.key !== key).map((step) => mapLinks(step, relink));
}

/** Moves a step up (-1) or down (+1) the list: the first step is the entry step; links stay as they are. */
export function moveStep(steps: readonly StepForm[], key: string, by: -1 | 1): StepForm[] {
  const from = steps.findIndex((step) => step.key === key);
  const to = from + by;
  if (from < 0 || to < 0 || to >= steps.length) return [...steps];
  const moved = [...steps];
  [moved[from], moved[to]] = [moved[to]!, moved[from]!];
  return moved;
}

function mapLinks(step: StepForm, relink: (link: Link) => Link): StepForm {
  if (step.type === 'condition') return { ...step, trueBranch: relink(step.trueBranch), falseBranch: relink(step.falseBranch) };
  if (step.type === 'wait_until') return { ...step, matchedBranch: relink(step.matchedBranch), timeoutBranch: relink(step.timeoutBranch) };
  if (step.type === 'exit') return step;
  return { ...step, next: relink(step.next) };
}

function linkTo(id: string | null, keyOf: Map<string, string>): Link {
  if (id === null) return END;
  const key = keyOf.get(id);
  return key === undefined ? { to: 'missing', id } : { to: 'step', key };
}

function idOf(link: Link, steps: readonly StepForm[]): string | null {
  if (link.to === 'end') return null;
  if (link.to === 'missing') return link.id;
  // A link always names a step of the form (removing one turns its links into missing ones).
  return steps.find((step) => step.key === link.key)!.id;
}

export function stepFormsOf(steps: readonly Step[]): StepForm[] {
  const withKeys = steps.map((step) => ({ step, key: newKey() }));
  const keyOf = new Map<string, string>();
  for (const { step, key } of withKeys) if (!keyOf.has(step.id)) keyOf.set(step.id, key);
  return withKeys.map(({ step, key }): StepForm => {
    const base = { key, id: step.id };
    switch (step.type) {
      case 'send_push': {
        const { title, body, clickUrl, ...rest } = step.content;
        return { ...base, type: step.type, next: linkTo(step.next, keyOf), title, body, clickUrl: clickUrl ?? '', rest };
      }
      case 'send_email': {
        const { templateId, subject, html, from, preheader, text, replyTo } = step.content;
        return {
          ...base,
          type: step.type,
          next: linkTo(step.next, keyOf),
          mode: templateId === undefined ? 'write' : 'template',
          templateId: templateId ?? '',
          subject: subject ?? '',
          html: html ?? '',
          fromEmail: from.email,
          fromName: from.name ?? '',
          rest: { ...(preheader !== undefined && { preheader }), ...(text !== undefined && { text }), ...(replyTo !== undefined && { replyTo }) },
        };
      }
      case 'send_sms':
        return { ...base, type: step.type, next: linkTo(step.next, keyOf), body: step.content.body };
      case 'send_whatsapp':
        return {
          ...base,
          type: step.type,
          next: linkTo(step.next, keyOf),
          mode: step.content.templateName === undefined ? 'text' : 'template',
          text: step.content.text ?? '',
          templateName: step.content.templateName ?? '',
          language: step.content.language ?? '',
          components: step.content.components,
        };
      case 'delay':
        return { ...base, type: step.type, next: linkTo(step.next, keyOf), duration: step.duration };
      case 'condition':
        return {
          ...base,
          type: step.type,
          trueBranch: linkTo(step.trueBranch, keyOf),
          falseBranch: linkTo(step.falseBranch, keyOf),
          event: (step.criteria.event ?? []).map(conditionRowOf),
          attributes: (step.criteria.attributes ?? []).map(conditionRowOf),
          segmentId: step.criteria.segmentId ?? '',
          subscriber: treeOf(step.criteria.subscriber),
        };
      case 'wait_until':
        return {
          ...base,
          type: step.type,
          event: step.event,
          conditions: (step.conditions ?? []).map(conditionRowOf),
          timeout: step.timeout,
          matchedBranch: linkTo(step.matchedBranch, keyOf),
          timeoutBranch: linkTo(step.timeoutBranch, keyOf),
        };
      case 'exit':
        return { ...base, type: step.type };
    }
  });
}

const optional = (value: string) => (value.trim() === '' ? undefined : value.trim());

export function toSteps(steps: readonly StepForm[]): Step[] {
  return steps.map((step): Step => {
    const id = step.id.trim();
    switch (step.type) {
      case 'send_push':
        return {
          id,
          type: step.type,
          next: idOf(step.next, steps),
          content: { title: step.title, body: step.body, ...(optional(step.clickUrl) && { clickUrl: optional(step.clickUrl) }), ...step.rest },
        };
      case 'send_email': {
        const from = { email: step.fromEmail.trim(), ...(optional(step.fromName) && { name: optional(step.fromName) }) };
        const content: EmailContent =
          step.mode === 'template'
            ? { templateId: step.templateId, from, ...(step.rest.replyTo && { replyTo: step.rest.replyTo }) }
            : { subject: step.subject, html: step.html, from, ...step.rest };
        return { id, type: step.type, next: idOf(step.next, steps), content };
      }
      case 'send_sms':
        return { id, type: step.type, next: idOf(step.next, steps), content: { body: step.body } };
      case 'send_whatsapp':
        return {
          id,
          type: step.type,
          next: idOf(step.next, steps),
          content:
            step.mode === 'text'
              ? { text: step.text }
              : {
                  templateName: step.templateName.trim(),
                  ...(optional(step.language) && { language: optional(step.language) }),
                  ...(step.components && { components: step.components }),
                },
        };
      case 'delay':
        return { id, type: step.type, next: idOf(step.next, steps), duration: step.duration.trim() };
      case 'condition': {
        const subscriber = filtersOf(step.subscriber).filters;
        return {
          id,
          type: step.type,
          criteria: {
            ...(Object.keys(subscriber).length > 0 && { subscriber }),
            ...(step.segmentId && { segmentId: step.segmentId }),
            ...(step.attributes.length > 0 && { attributes: step.attributes.map(toCondition) }),
            ...(step.event.length > 0 && { event: step.event.map(toCondition) }),
          },
          trueBranch: idOf(step.trueBranch, steps),
          falseBranch: idOf(step.falseBranch, steps),
        };
      }
      case 'wait_until':
        return {
          id,
          type: step.type,
          event: step.event.trim(),
          ...(step.conditions.length > 0 && { conditions: step.conditions.map(toCondition) }),
          timeout: step.timeout.trim(),
          matchedBranch: idOf(step.matchedBranch, steps),
          timeoutBranch: idOf(step.timeoutBranch, steps),
        };
      case 'exit':
        return { id, type: step.type };
    }
  });
}

export function formOf(automation: Pick<Automation, 'name' | 'trigger' | 'steps'> & { goal?: Goal | null }): FlowForm {
  const goal = automation.goal ? { event: automation.goal.event, conditions: (automation.goal.conditions ?? []).map(conditionRowOf) } : NO_GOAL;
  return { name: automation.name, trigger: triggerFormOf(automation.trigger), goal, steps: stepFormsOf(automation.steps) };
}

export function toGoal(form: GoalForm): Goal | null {
  if (form.event.trim() === '' && form.conditions.length === 0) return null;
  return { event: form.event.trim(), ...(form.conditions.length > 0 && { conditions: form.conditions.map(toCondition) }) };
}

export function toBody(form: FlowForm): Omit<AutomationBody, 'projectId'> {
  return { name: form.name, trigger: toTrigger(form.trigger), goal: toGoal(form.goal), steps: toSteps(form.steps) };
}

type Detail = NonNullable<Envelope['details']>[number];

/** A 422's details: per step key, those about the step they named when the flow was sent; the rest for the form. */
export interface FlowProblems {
  /** Fields relative to the step (`next`, `content.title`; '' for the step itself). */
  steps: Map<string, Detail[]>;
  /** Everything not about one step (name, trigger …). */
  form: Detail[];
}

/** `steps[2].next` (the service's) and `steps.2.next` (the schema's) both name step 2. */
const STEP_FIELD = /^steps(?:\[(\d+)\]|\.(\d+))(?:\.(.*))?$/;

export function problemsOf(details: readonly Detail[], sentKeys: readonly string[]): FlowProblems {
  const problems: FlowProblems = { steps: new Map(), form: [] };
  for (const detail of details) {
    const match = STEP_FIELD.exec(detail.field);
    const key = match ? sentKeys[Number(match[1] ?? match[2])] : undefined;
    if (!match || key === undefined) problems.form.push(detail);
    else problems.steps.set(key, [...(problems.steps.get(key) ?? []), { field: match[3] ?? '', error: detail.error }]);
  }
  return problems;
}

/** What a step's type does, as the place of a problem is said: "Step 5 (Send email)". */
const STEP_ACTION: Record<StepType, string> = {
  send_push: 'Send push',
  send_email: 'Send email',
  send_sms: 'Send SMS',
  send_whatsapp: 'Send WhatsApp',
  delay: 'Delay',
  condition: 'Condition',
  wait_until: 'Wait until',
  exit: 'Exit',
};

/** Where a detail of the API's 422 is, in words: "Step 5 (Send email), sender address"; the trigger's and name's too. */
export function problemPlace(field: string, steps: readonly Pick<Step, 'type'>[]): string {
  const index = stepIndexOf(field);
  const what = fieldWords(field);
  if (index === undefined) return what.charAt(0).toUpperCase() + what.slice(1);
  const step = steps[index];
  const place = `Step ${index + 1}${step ? ` (${STEP_ACTION[step.type]})` : ''}`;
  return what ? `${place}, ${what}` : place;
}

/** The value a detail names in the steps sent (`steps[4].content.from.email` → the sender address), when it is text. */
export function problemValue(field: string, steps: readonly Step[]): string | undefined {
  const index = stepIndexOf(field);
  if (index === undefined) return undefined;
  let value: unknown = steps[index];
  for (const part of field.replace(/^steps(?:\[\d+\]|\.\d+)\.?/, '').split('.').filter(Boolean)) {
    value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[part] : undefined;
  }
  return typeof value === 'string' ? value : undefined;
}

const plural = (n: number, unit: string) => `${n} ${unit}${n === 1 ? '' : 's'}`;
const UNITS: Record<string, string> = { m: 'minute', h: 'hour', d: 'day', w: 'week' };

/** `2h` → "2 hours"; anything else as written. */
export function durationText(duration: string): string {
  const match = /^(\d+)([mhdw])$/.exec(duration.trim());
  return match ? plural(Number(match[1]), UNITS[match[2]!]!) : duration;
}

export function conditionText(condition: PropertyCondition): string {
  if (hasNoValue(condition.operator)) return `${condition.path} ${OPERATOR_LABEL[condition.operator]}`;
  return `${condition.path} ${OPERATOR_LABEL[condition.operator]} ${valueWords(condition.value)}`;
}

export function triggerText(trigger: Trigger): string {
  switch (trigger.type) {
    case 'subscriber_added':
      return 'When a subscriber registers';
    case 'subscriber_inactive':
      return `When a subscriber has not been seen for ${plural(trigger.inactiveDays, 'day')}`;
    case 'event':
      return `On event ${trigger.eventName}${trigger.conditions?.length ? ` where ${trigger.conditions.map(conditionText).join(' and ')}` : ''}`;
    case 'schedule':
      return `On schedule “${trigger.cron}” in each subscriber's time zone (else ${trigger.defaultTimezone ?? 'UTC'})`;
  }
}

export function goalText(goal: Goal): string {
  return `Converted on event ${goal.event}${goal.conditions?.length ? ` where ${goal.conditions.map(conditionText).join(' and ')}` : ''}`;
}

export function criteriaText(criteria: Schemas['ConditionCriteria'], segmentName?: SegmentNames): string {
  const parts: string[] = [];
  if (criteria.segmentId) {
    const name = segmentName?.(criteria.segmentId);
    parts.push(name === undefined ? 'in a saved segment' : `in segment “${name}”`);
  }
  const subscriber = audienceParts(criteria.subscriber, segmentName);
  if (subscriber.length > 0) parts.push(`subscriber ${subscriber.join(', ')}`);
  for (const c of criteria.attributes ?? []) parts.push(`attribute ${conditionText(c)}`);
  for (const c of criteria.event ?? []) parts.push(`event ${conditionText(c)}`);
  return parts.length > 0 ? parts.join(' and ') : 'no criteria';
}

/** What a step does, in a line. */
export function stepText(step: Step, segmentName?: SegmentNames): string {
  switch (step.type) {
    case 'send_push':
      return `Push “${step.content.title}”`;
    case 'send_email':
      return step.content.subject !== undefined ? `Email “${step.content.subject}”` : 'Email from a template';
    case 'send_sms':
      return `SMS “${step.content.body}”`;
    case 'send_whatsapp':
      return step.content.templateName !== undefined ? `WhatsApp template ${step.content.templateName}` : `WhatsApp “${step.content.text ?? ''}”`;
    case 'delay':
      return `Wait ${durationText(step.duration)}`;
    case 'condition':
      return `If ${criteriaText(step.criteria, segmentName)}`;
    case 'wait_until':
      return `Wait up to ${durationText(step.timeout)} for event ${step.event}${step.conditions?.length ? ` where ${step.conditions.map(conditionText).join(' and ')}` : ''}`;
    case 'exit':
      return 'Exit the flow';
  }
}

/**
 * The flow as the graph draws it, from the entry step: steps in order, the two branches of a condition or a wait-until step side by side until
 * the step where they meet (drawn once, after them), the end of each path, and a link to a step drawn elsewhere (or
 * missing) instead of drawing it twice.
 */
export type FlowNode =
  | { kind: 'step'; step: Step }
  | { kind: 'branches'; labels: [string, string]; yes: FlowNode[]; no: FlowNode[] }
  | { kind: 'goto'; id: string; missing: boolean }
  | { kind: 'end' };

export function flowLayout(steps: readonly Step[]): { nodes: FlowNode[]; unreached: Step[] } {
  const byId = new Map<string, Step>();
  for (const step of steps) if (!byId.has(step.id)) byId.set(step.id, step);
  const successors = (step: Step): (string | null)[] =>
    step.type === 'condition' ? [step.trueBranch, step.falseBranch] : step.type === 'wait_until' ? [step.matchedBranch, step.timeoutBranch] : step.type === 'exit' ? [] : [step.next];
  const reach = (from: string): Set<string> => {
    const seen = new Set<string>();
    const stack = [from];
    while (stack.length > 0) {
      const id = stack.pop()!;
      const step = byId.get(id);
      if (seen.has(id) || !step) continue;
      seen.add(id);
      for (const next of successors(step)) if (next !== null) stack.push(next);
    }
    return seen;
  };
  /** Where two branches meet: the first step both lead to (one no other such step leads to). */
  const meeting = (a: string | null, b: string | null): string | undefined => {
    if (a === null || b === null) return undefined;
    const fromB = reach(b);
    const common = [...reach(a)].filter((id) => fromB.has(id));
    return common.find((id) => !common.some((other) => other !== id && reach(other).has(id)));
  };
  const placed = new Set<string>();
  const chain = (start: string | null, stops: ReadonlySet<string>): FlowNode[] => {
    const nodes: FlowNode[] = [];
    let id = start;
    for (;;) {
      if (id === null) return [...nodes, { kind: 'end' }];
      if (stops.has(id)) return nodes;
      const step = byId.get(id);
      if (!step || placed.has(id)) return [...nodes, { kind: 'goto', id, missing: !step }];
      placed.add(id);
      nodes.push({ kind: 'step', step });
      if (step.type === 'exit') return nodes;
      if (step.type !== 'condition' && step.type !== 'wait_until') {
        id = step.next;
        continue;
      }
      const [yes, no] = successors(step) as [string | null, string | null];
      const meet = meeting(yes, no);
      const inner = meet === undefined ? stops : new Set([...stops, meet]);
      const labels: [string, string] = step.type === 'condition' ? ['If true', 'If false'] : ['If the event comes', 'If the time runs out'];
      nodes.push({ kind: 'branches', labels, yes: chain(yes, inner), no: chain(no, inner) });
      if (meet === undefined) return nodes;
      id = meet;
    }
  };
  const nodes = steps.length > 0 ? chain(steps[0]!.id, new Set()) : [];
  // A step no path reaches, or a second step with an id already used.
  return { nodes, unreached: steps.filter((step) => !placed.has(step.id) || byId.get(step.id) !== step) };
}
