// The flow editor between its form and the API's automation body (every trigger and step type back out as they came
// in), links kept across renames and moves, removed steps' links left for the API to name, 422s put on their steps,
// and the graph's layout of branches.
import { describe, expect, it } from 'vitest';
import {
  appendStep,
  conditionRowOf,
  flowLayout,
  formOf,
  moveStep,
  newStep,
  problemsOf,
  removeStep,
  stepText,
  toBody,
  toCondition,
  toSteps,
  triggerText,
  type Automation,
  type FlowNode,
  type Step,
} from './automation-model';

const steps: Step[] = [
  { id: 'hello', type: 'send_push', content: { title: 'Hi', body: 'There', clickUrl: 'https://example.com/a', iconUrl: 'https://example.com/i.png' }, next: 'wait' },
  { id: 'wait', type: 'delay', duration: '2h', next: 'check' },
  {
    id: 'check',
    type: 'condition',
    criteria: {
      event: [{ path: 'cart.total', operator: 'gte', value: 50 }],
      attributes: [{ path: 'plan', operator: 'in', value: ['pro', 'team'] }],
      segmentId: 'seg_1',
      subscriber: { lastSeenDays: 3, tags: { any: ['vip'] } },
    },
    trueBranch: 'mail',
    falseBranch: 'text',
  },
  { id: 'mail', type: 'send_email', content: { templateId: 'etp_1', subject: 'Copied', html: '<p>Copied</p>', from: { email: 'a@news.example.com', name: 'A' } }, next: 'out' },
  {
    id: 'text',
    type: 'send_email',
    content: { subject: 'Hi {{ first_name }}', html: '<p>x</p>', text: 'x', preheader: 'p', from: { email: 'a@news.example.com' }, replyTo: { email: 'r@news.example.com' } },
    next: 'sms',
  },
  { id: 'sms', type: 'send_sms', content: { body: 'Reply STOP to stop' }, next: 'wa' },
  { id: 'wa', type: 'send_whatsapp', content: { templateName: 'order_update', language: 'en_US', components: [{ type: 'body', parameters: [{ type: 'text', text: 'x' }] }] }, next: 'wa2' },
  { id: 'wa2', type: 'send_whatsapp', content: { text: 'Hello' }, next: null },
  { id: 'out', type: 'exit' },
];

const automation: Pick<Automation, 'name' | 'trigger' | 'steps'> = {
  name: 'Everything',
  trigger: { type: 'event', eventName: 'cart.abandoned', conditions: [{ path: 'total', operator: 'exists' }] },
  steps,
};

describe('form ⇄ body', () => {
  it('gives back every step type and trigger as it came, except a template email, which is sent as its template (copied again at save)', () => {
    const body = toBody(formOf(automation));
    expect(body.name).toBe('Everything');
    expect(body.trigger).toEqual(automation.trigger);
    expect(body.steps.filter((s) => s.id !== 'mail')).toEqual(steps.filter((s) => s.id !== 'mail'));
    expect(body.steps.find((s) => s.id === 'mail')).toEqual({ id: 'mail', type: 'send_email', content: { templateId: 'etp_1', from: { email: 'a@news.example.com', name: 'A' } }, next: 'out' });
  });

  it('gives back a wait-until step and the goal as they came, and no goal as null', () => {
    const waiting: Step[] = [
      { id: 'wait', type: 'wait_until', event: 'order.completed', conditions: [{ path: 'total', operator: 'gte', value: 50 }], timeout: '2d', matchedBranch: 'thanks', timeoutBranch: null },
      { id: 'thanks', type: 'send_push', content: { title: 'Thanks', body: 'x' }, next: null },
    ];
    const goal = { event: 'plan.upgraded', conditions: [{ path: 'plan', operator: 'in' as const, value: ['pro', 'team'] }] };
    const body = toBody(formOf({ ...automation, steps: waiting, goal }));
    expect(body.steps).toEqual(waiting);
    expect(body.goal).toEqual(goal);
    expect(toBody(formOf(automation)).goal).toBeNull();
    expect(stepText(waiting[0]!)).toBe('Wait up to 2 days for event order.completed where total ≥ 50');
    const [, branches] = flowLayout(waiting).nodes;
    expect(branches).toMatchObject({ kind: 'branches', labels: ['If the event comes', 'If the time runs out'], no: [{ kind: 'end' }] });
  });

  it('round-trips each trigger type', () => {
    for (const trigger of [
      { type: 'subscriber_added' },
      { type: 'subscriber_inactive', inactiveDays: 30 },
      { type: 'event', eventName: 'signup' },
      { type: 'schedule', cron: '0 9 * * 1', defaultTimezone: 'Europe/Paris' },
      { type: 'schedule', cron: '*/5 * * * *' },
    ] as const) {
      expect(toBody(formOf({ ...automation, trigger })).trigger).toEqual(trigger);
    }
  });

  it('reads a condition value as JSON when it is JSON, else as text, and writes it back the same way', () => {
    expect(toCondition({ path: 'total', operator: 'gte', value: '50' })).toEqual({ path: 'total', operator: 'gte', value: 50 });
    expect(toCondition({ path: 'code', operator: 'eq', value: '"50"' })).toEqual({ path: 'code', operator: 'eq', value: '50' });
    expect(toCondition({ path: 'city', operator: 'eq', value: 'Paris' })).toEqual({ path: 'city', operator: 'eq', value: 'Paris' });
    expect(toCondition({ path: 'vip', operator: 'eq', value: 'true' })).toEqual({ path: 'vip', operator: 'eq', value: true });
    expect(toCondition({ path: 'plan', operator: 'in', value: 'pro, 2, team' })).toEqual({ path: 'plan', operator: 'in', value: ['pro', 2, 'team'] });
    expect(toCondition({ path: 'plan', operator: 'in', value: '["a,b", "c"]' })).toEqual({ path: 'plan', operator: 'in', value: ['a,b', 'c'] });
    expect(toCondition({ path: 'x', operator: 'exists', value: 'ignored' })).toEqual({ path: 'x', operator: 'exists' });
    for (const condition of [
      { path: 'a', operator: 'eq', value: '50' },
      { path: 'a', operator: 'eq', value: 50 },
      { path: 'a', operator: 'eq', value: 'Paris' },
      { path: 'a', operator: 'eq', value: { nested: [1] } },
      { path: 'a', operator: 'in', value: ['a,b', 'c'] },
      { path: 'a', operator: 'in', value: ['US', 'FR', 3] },
      { path: 'a', operator: 'not_exists' },
    ] as const) {
      expect(toCondition(conditionRowOf(condition))).toEqual(condition);
    }
  });
});

describe('editing steps', () => {
  it('keeps links to a step through a rename and a move; the first step is the entry', () => {
    const form = formOf(automation);
    const renamed = form.steps.map((s) => (s.id === 'wait' ? { ...s, id: 'pause' } : s));
    const moved = moveStep(renamed, renamed[1]!.key, -1);
    const out = toSteps(moved);
    expect(out.map((s) => s.id).slice(0, 2)).toEqual(['pause', 'hello']);
    expect(out.find((s) => s.id === 'hello')).toMatchObject({ next: 'pause' });
    expect(moveStep(moved, moved[0]!.key, -1)).toEqual(moved);
  });

  it('leaves the links to a removed step pointing at its id, for the API to refuse and the user to redirect', () => {
    const form = formOf(automation);
    const out = toSteps(removeStep(form.steps, form.steps.find((s) => s.id === 'mail')!.key));
    expect(out.map((s) => s.id)).not.toContain('mail');
    expect(out.find((s) => s.id === 'check')).toMatchObject({ trueBranch: 'mail', falseBranch: 'text' });
  });

  it('gives a new step an unused id and links it after a last step that ended the flow', () => {
    const form = formOf({ ...automation, steps: [{ id: 'push-1', type: 'send_push', content: { title: 'a', body: 'b' }, next: null }] });
    const added = appendStep(form.steps, newStep('send_push', form.steps));
    expect(toSteps(added)).toEqual([
      { id: 'push-1', type: 'send_push', content: { title: 'a', body: 'b' }, next: 'push-2' },
      { id: 'push-2', type: 'send_push', content: { title: '', body: '' }, next: null },
    ]);
    // After a condition (or an exit) nothing is linked: the branches are the user's to set.
    const afterCondition = appendStep(added, newStep('condition', added));
    const withDelay = appendStep(afterCondition, newStep('delay', afterCondition));
    expect(toSteps(withDelay).slice(2)).toEqual([
      { id: 'condition-1', type: 'condition', criteria: {}, trueBranch: null, falseBranch: null },
      { id: 'wait-1', type: 'delay', duration: '1d', next: null },
    ]);
  });
});

describe('problemsOf', () => {
  it("puts each step's 422 details on the step they named when sent, in either notation, and keeps the others for the form", () => {
    const problems = problemsOf(
      [
        { field: 'steps[3].trueBranch', error: 'step big-cart: trueBranch names no step (discount-email)' },
        { field: 'steps.0.content.title', error: 'Too small' },
        { field: 'steps[1]', error: 'step b: the flow comes back to it (a cycle)' },
        { field: 'trigger.eventName', error: 'must be …' },
        { field: 'steps[9].next', error: 'a step the form no longer has' },
      ],
      ['k0', 'k1', 'k2', 'k3'],
    );
    expect(Object.fromEntries(problems.steps)).toEqual({
      k3: [{ field: 'trueBranch', error: 'step big-cart: trueBranch names no step (discount-email)' }],
      k0: [{ field: 'content.title', error: 'Too small' }],
      k1: [{ field: '', error: 'step b: the flow comes back to it (a cycle)' }],
    });
    expect(problems.form).toEqual([
      { field: 'trigger.eventName', error: 'must be …' },
      { field: 'steps[9].next', error: 'a step the form no longer has' },
    ]);
  });
});

describe('words', () => {
  it('describes triggers and steps', () => {
    expect(triggerText(automation.trigger)).toBe('On event cart.abandoned where total exists');
    expect(triggerText({ type: 'subscriber_inactive', inactiveDays: 30 })).toBe('When a subscriber has not been seen for 30 days');
    expect(steps.map((step) => stepText(step, (id) => (id === 'seg_1' ? 'VIPs' : undefined)))).toEqual([
      'Push “Hi”',
      'Wait 2 hours',
      'If in segment “VIPs” and subscriber tagged vip, seen in the last 3 days and attribute plan is one of “pro” or “team” and event cart.total ≥ 50',
      'Email “Copied”',
      'Email “Hi {{ first_name }}”',
      'SMS “Reply STOP to stop”',
      'WhatsApp template order_update',
      'WhatsApp “Hello”',
      'Exit the flow',
    ]);
    expect(stepText(steps[2]!)).toMatch(/^If in a saved segment and /);
  });
});

describe('flowLayout', () => {
  const ids = (nodes: FlowNode[]): unknown[] =>
    nodes.map((node) =>
      node.kind === 'step' ? node.step.id : node.kind === 'branches' ? { yes: ids(node.yes), no: ids(node.no) } : node.kind === 'goto' ? `→${node.id}${node.missing ? '?' : ''}` : 'end',
    );
  const push = (id: string, next: string | null): Step => ({ id, type: 'send_push', content: { title: id, body: id }, next });
  const cond = (id: string, yes: string | null, no: string | null): Step => ({ id, type: 'condition', criteria: { segmentId: 's' }, trueBranch: yes, falseBranch: no });

  it('draws branches side by side until they meet, then the rest once', () => {
    const layout = flowLayout([push('a', 'c'), cond('c', 'y', 'n'), push('y', 'm'), push('n', 'n2'), push('n2', 'm'), push('m', null)]);
    expect(ids(layout.nodes)).toEqual(['a', 'c', { yes: ['y'], no: ['n', 'n2'] }, 'm', 'end']);
    expect(layout.unreached).toEqual([]);
  });

  it('ends each branch on its own when they never meet, nests conditions, and shows exits, missing steps and unreached ones', () => {
    const layout = flowLayout([cond('c', 'c2', null), cond('c2', 'x', 'gone'), { id: 'x', type: 'exit' }, push('lost', null)]);
    expect(ids(layout.nodes)).toEqual(['c', { yes: ['c2', { yes: ['x'], no: ['→gone?'] }], no: ['end'] }]);
    expect(layout.unreached.map((s) => s.id)).toEqual(['lost']);
  });

  it('draws a branch that goes straight to the meeting step as empty', () => {
    expect(ids(flowLayout([cond('c', 'm', 'n'), push('n', 'm'), push('m', null)]).nodes)).toEqual(['c', { yes: [], no: ['n'] }, 'm', 'end']);
  });
});
