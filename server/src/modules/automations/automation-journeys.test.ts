// Wait-until steps and goals through HTTP and the real executor: an event in time takes the matched branch (its push
// reaching the local push service), a timeout the other, earlier events and unmatched properties do not count, a goal
// event ends the enrollment converted and counts in the stats, and an event racing the timeout yields one branch.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant, type Tenant } from '../../../test/fixtures.js';
import { startTestApp, type TestApp } from '../../../test/harness.js';
import { createFakeBrowser, startPushService, type FakeBrowser, type PushService } from '../../../test/push-service.js';
import { seedSubscribers } from '../../../test/subscriber-seed.js';
import { AutomationExecutor } from './automation-executor.js';

let t: TestApp;
let push: PushService;
let tenant: Tenant;

type Headers = Record<string, string>;
const request = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, headers: Headers, payload?: unknown) =>
  t.app.inject({ method, url, headers, ...(payload !== undefined && { payload: payload as Record<string, unknown> }) });
const query = async <T = Record<string, unknown>>(text: string, values: unknown[] = []) => (await t.database.pool.query(text, values)).rows as T[];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  t = await startTestApp({ ALLOW_INSECURE_PUSH_ENDPOINTS: 'true', DELIVERY_POLL_INTERVAL_MS: '50', PUBLIC_URL: 'https://herald.example.com' });
  push = await startPushService();
  t.services.delivery.start();
  tenant = await createTenant(t);
});
afterAll(async () => {
  await t?.services.delivery.stop();
  await push?.close();
  await t?.close();
});

async function create(flow: Record<string, unknown>): Promise<string> {
  const res = await request('POST', '/automations', tenant.jwt, { projectId: tenant.projectId, name: 'Journey', ...flow });
  expect(res.statusCode, res.body).toBe(201);
  const { id } = res.json<{ id: string }>();
  expect((await request('POST', `/automations/${id}/activate`, tenant.jwt)).statusCode).toBe(200);
  return id;
}

async function runDue(executor = t.services.automationExecutor) {
  for (let i = 0; i < 50; i++) if ((await executor.runOnce()).claimed === 0) return;
  throw new Error('due work never ran out');
}

/** As if `seconds` had passed for the automation's running enrollments: their due times and wait starts move back. */
const advance = (automationId: string, seconds: number) =>
  query(
    `UPDATE automation_enrollments SET due_at = due_at - make_interval(secs => $2), wait_since = wait_since - make_interval(secs => $2),
       enrolled_at = enrolled_at - make_interval(secs => $2) WHERE automation_id = $1`,
    [automationId, seconds],
  );

async function person(): Promise<{ browser: FakeBrowser; id: string }> {
  const b = createFakeBrowser();
  const [id] = await seedSubscribers(t.database.pool, tenant.projectId, [{ endpoint: push.endpointFor(b), p256dh: b.p256dh, auth: b.auth }]);
  return { browser: b, id: id! };
}

const event = async (name: string, subscriberId: string, extra: Record<string, unknown> = {}) => {
  const res = await request('POST', '/events', tenant.live, { name, subscriberId, ...extra });
  expect(res.statusCode, res.body).toBe(202);
};

/** The titles of the pushes the browser got, once there are `n` (then a moment more, to see none follows). */
async function titlesTo(b: FakeBrowser, n: number): Promise<string[]> {
  const answered = () => push.requestsFor(b.id).filter((r) => r.answeredAt !== undefined);
  const deadline = Date.now() + 10_000;
  while (answered().length < n && Date.now() < deadline) await sleep(25);
  await sleep(150);
  return answered().map((r) => (r.payload as { title: string }).title);
}

const enrollmentOf = async (automationId: string, subscriberId: string) => {
  const [row] = (await request('GET', `/automations/${automationId}/enrollments?subscriberId=${subscriberId}`, tenant.jwt)).json<{ data: { id: string; state: string; stepId: string | null }[] }>().data;
  const detail = (await request('GET', `/automations/${automationId}/enrollments/${row!.id}`, tenant.jwt)).json<{ state: string; stepId: string | null; history: { stepId: string; outcome: string | null }[] }>();
  return { ...detail, steps: detail.history.map((h) => [h.stepId, h.outcome]) };
};

const pushStep = (id: string, title: string, next: string | null) => ({ id, type: 'send_push', content: { title, body: 'Body' }, next });

/** cart.abandoned enrolls; then wait up to a day for an order of 50 or more: thanks if it comes, a nudge if not. */
const waitFlow = (trigger: string, before: unknown[] = []) => ({
  trigger: { type: 'event', eventName: trigger },
  steps: [
    ...before,
    {
      id: 'wait',
      type: 'wait_until',
      event: 'order.completed',
      conditions: [{ path: 'total', operator: 'gte', value: 50 }],
      timeout: '1d',
      matchedBranch: 'thanks',
      timeoutBranch: 'nudge',
    },
    pushStep('thanks', 'Thanks', null),
    pushStep('nudge', 'Come back', null),
  ],
});

describe('wait until', () => {
  it('takes the matched branch when the event comes in time, sending its push at once', async () => {
    const flow = await create(waitFlow('wait.in-time'));
    const { browser, id } = await person();
    await event('wait.in-time', id);
    await runDue();
    expect(await enrollmentOf(flow, id)).toMatchObject({ state: 'waiting', stepId: 'wait', steps: [['wait', null]] });

    await event('order.completed', id, { properties: { total: 80 } });
    await runDue();
    expect(await titlesTo(browser, 1)).toEqual(['Thanks']);
    expect(await enrollmentOf(flow, id)).toMatchObject({ state: 'completed', steps: [['wait', 'matched'], ['thanks', 'sent']] });
    // The timeout passing later changes nothing.
    await advance(flow, 2 * 86_400);
    await runDue();
    expect(await titlesTo(browser, 1)).toEqual(['Thanks']);
  });

  it('takes the timeout branch when the timeout passes first', async () => {
    const flow = await create(waitFlow('wait.timeout'));
    const { browser, id } = await person();
    await event('wait.timeout', id);
    await runDue();
    await advance(flow, 86_400 - 60);
    await runDue();
    expect(await enrollmentOf(flow, id)).toMatchObject({ state: 'waiting', stepId: 'wait' });
    await advance(flow, 60);
    await runDue();
    expect(await titlesTo(browser, 1)).toEqual(['Come back']);
    expect(await enrollmentOf(flow, id)).toMatchObject({ state: 'completed', steps: [['wait', 'timed_out'], ['nudge', 'sent']] });
    // An order after the timeout moves nothing.
    await event('order.completed', id, { properties: { total: 80 } });
    await runDue();
    expect(await titlesTo(browser, 1)).toEqual(['Come back']);
  });

  it('counts only events that occur after the enrollment reached the step', async () => {
    const flow = await create(waitFlow('wait.earlier', [{ id: 'first', type: 'delay', duration: '1h', next: 'wait' }]));
    const { browser, id } = await person();
    await event('wait.earlier', id);
    await runDue();
    // Ordered while still in the delay: not an order made while waiting.
    await event('order.completed', id, { properties: { total: 80 } });
    await advance(flow, 3600);
    await runDue();
    expect(await enrollmentOf(flow, id)).toMatchObject({ state: 'waiting', stepId: 'wait' });
    // Reported now, but it occurred before the step was reached.
    await event('order.completed', id, { properties: { total: 80 }, occurredAt: new Date(Date.now() - 60_000).toISOString() });
    await runDue();
    expect(await enrollmentOf(flow, id)).toMatchObject({ state: 'waiting', stepId: 'wait' });
    await advance(flow, 86_400);
    await runDue();
    expect(await titlesTo(browser, 1)).toEqual(['Come back']);
  });

  it("matches only events whose properties meet the step's conditions", async () => {
    const flow = await create(waitFlow('wait.props'));
    const { browser, id } = await person();
    await event('wait.props', id);
    await runDue();
    await event('order.completed', id, { properties: { total: 10 } });
    await event('order.completed', id, { properties: { currency: 'EUR' } });
    await runDue();
    expect(await enrollmentOf(flow, id)).toMatchObject({ state: 'waiting', stepId: 'wait' });
    await event('order.completed', id, { properties: { total: 50 } });
    await runDue();
    expect(await titlesTo(browser, 1)).toEqual(['Thanks']);
  });

  it('an event racing the timeout and two executors yield exactly one branch per person', async () => {
    const flow = await create(waitFlow('wait.race'));
    const people = await Promise.all(Array.from({ length: 12 }, () => person()));
    await request('POST', '/events', tenant.live, { events: people.map((p) => ({ name: 'wait.race', subscriberId: p.id })) });
    await runDue();
    // Two days pass: the timeout is due, while orders made in time (a mobile app reporting late) arrive.
    await advance(flow, 2 * 86_400);
    const occurredAt = new Date(Date.now() - 1.5 * 86_400_000).toISOString();
    const deps = { delivery: t.services.delivery, senders: t.services.smsSenders, whatsappTemplates: t.services.whatsappTemplates };
    const options = { lockSeconds: 300, pollIntervalMs: 50, batchSize: 3 };
    const [a, b] = [new AutomationExecutor(t.database.db, deps, options), new AutomationExecutor(t.database.db, deps, options)];
    await Promise.all([runDue(a), runDue(b), ...people.map((p) => event('order.completed', p.id, { properties: { total: 99 }, occurredAt }))]);
    await runDue();

    for (const p of people) {
      const enrollment = await enrollmentOf(flow, p.id);
      expect(enrollment.state).toBe('completed');
      const branch = enrollment.steps.filter(([step]) => step === 'thanks' || step === 'nudge');
      expect(branch, JSON.stringify(enrollment.steps)).toHaveLength(1);
      expect(enrollment.steps[0]).toEqual(['wait', branch[0]![0] === 'thanks' ? 'matched' : 'timed_out']);
      expect(await titlesTo(p.browser, 1)).toEqual([branch[0]![0] === 'thanks' ? 'Thanks' : 'Come back']);
    }
  });

  it('refuses a wait whose branches name no step, that loops back, or whose timeout is too long (422 naming the field)', async () => {
    const wait = (over: Record<string, unknown>) => ({ id: 'wait', type: 'wait_until', event: 'paid', timeout: '1d', matchedBranch: 'a', timeoutBranch: null, ...over });
    const cases: [unknown[], string, string][] = [
      [[wait({ matchedBranch: 'nowhere' }), pushStep('a', 'A', null)], 'steps[0].matchedBranch', 'step wait: matchedBranch names no step (nowhere)'],
      [[pushStep('a', 'A', 'wait'), wait({ matchedBranch: 'b', timeoutBranch: 'c' }), pushStep('b', 'B', null), pushStep('c', 'C', 'wait')], 'steps[1]', 'step wait: the flow comes back to it (a cycle)'],
      [[wait({}), pushStep('a', 'A', null), pushStep('orphan', 'O', null)], 'steps[2]', 'step orphan: no step leads to it from the entry step wait'],
      [[wait({ timeout: '400d' }), pushStep('a', 'A', null)], 'steps[0].timeout', 'step wait: a wait is at most 365 days'],
    ];
    for (const [steps, field, error] of cases) {
      const res = await request('POST', '/automations', tenant.jwt, { projectId: tenant.projectId, name: 'Bad', trigger: { type: 'subscriber_added' }, steps });
      expect(res.statusCode, res.body).toBe(422);
      expect(res.json<{ details: unknown[] }>().details).toContainEqual({ field, error });
    }
    const malformed = await request('POST', '/automations', tenant.jwt, {
      projectId: tenant.projectId,
      name: 'Bad',
      trigger: { type: 'subscriber_added' },
      steps: [wait({ timeout: '1 day', event: 'has space' }), pushStep('a', 'A', null)],
    });
    expect(malformed.statusCode).toBe(422);
    expect(malformed.json<{ details: { field: string }[] }>().details.map((d) => d.field).sort()).toEqual(['steps.0.event', 'steps.0.timeout']);
  });

  it('keeps each enrollment on its version when the flow is edited, and runs again after a pause', async () => {
    const flow = await create(waitFlow('wait.versions'));
    const { browser, id } = await person();
    await event('wait.versions', id);
    await runDue();
    const edited = await request('PATCH', `/automations/${flow}`, tenant.jwt, {
      steps: [{ id: 'wait', type: 'wait_until', event: 'review.left', timeout: '2d', matchedBranch: 'thanks', timeoutBranch: null }, pushStep('thanks', 'Thanks v2', null)],
    });
    expect(edited.statusCode, edited.body).toBe(200);
    expect(edited.json()).toMatchObject({ version: 2 });
    expect((await request('POST', `/automations/${flow}/pause`, tenant.jwt)).statusCode).toBe(200);
    // Version 1 waits for an order, not a review: the order counts while paused, and runs once resumed.
    await event('review.left', id);
    await event('order.completed', id, { properties: { total: 70 } });
    await runDue();
    expect(await enrollmentOf(flow, id)).toMatchObject({ state: 'waiting', stepId: 'wait' });
    expect((await request('POST', `/automations/${flow}/activate`, tenant.jwt)).statusCode).toBe(200);
    await runDue();
    expect(await titlesTo(browser, 1)).toEqual(['Thanks']);
  });
});

describe('goals', () => {
  it('a goal event ends the enrollment converted, and the stats count it per step', async () => {
    const res = await request('POST', '/automations', tenant.jwt, {
      projectId: tenant.projectId,
      name: 'Converts',
      trigger: { type: 'event', eventName: 'goal.start' },
      goal: { event: 'plan.upgraded', conditions: [{ path: 'plan', operator: 'in', value: ['pro', 'team'] }] },
      steps: [pushStep('first', 'First', 'pause'), { id: 'pause', type: 'delay', duration: '1d', next: 'second' }, pushStep('second', 'Second', null)],
    });
    expect(res.statusCode, res.body).toBe(201);
    const flow = res.json<{ id: string; goal: unknown }>();
    expect(flow.goal).toEqual({ event: 'plan.upgraded', conditions: [{ path: 'plan', operator: 'in', value: ['pro', 'team'] }] });
    expect((await request('POST', `/automations/${flow.id}/activate`, tenant.jwt)).statusCode).toBe(200);

    const [converts, stays] = [await person(), await person()];
    await request('POST', '/events', tenant.live, { events: [converts, stays].map((p) => ({ name: 'goal.start', subscriberId: p.id })) });
    await runDue();
    // Not the goal: a plan that is not one of those named.
    await event('plan.upgraded', stays.id, { properties: { plan: 'free' } });
    await event('plan.upgraded', converts.id, { properties: { plan: 'pro' } });
    const ended = await enrollmentOf(flow.id, converts.id);
    expect(ended).toMatchObject({ state: 'converted', stepId: null, steps: [['first', 'sent'], ['pause', null]] });
    expect((await request('GET', `/automations/${flow.id}/enrollments?state=converted`, tenant.jwt)).json()).toMatchObject({ total: 1 });

    await advance(flow.id, 86_400);
    await runDue();
    expect(await titlesTo(converts.browser, 1)).toEqual(['First']);
    expect(await titlesTo(stays.browser, 2)).toEqual(['First', 'Second']);

    const stats = (await request('GET', `/automations/${flow.id}/stats`, tenant.jwt)).json<{ totals: Record<string, number>; steps: Record<string, unknown>[] }>();
    expect(stats.totals).toMatchObject({ enrolled: 2, completed: 1, converted: 1, conversion: 0.5, goalConversion: 0.5 });
    expect(stats.steps.map((s) => [s.stepId, s.entered, s.converted])).toEqual([
      ['first', 2, 1],
      ['pause', 2, 1],
      ['second', 1, 0],
    ]);
    const listed = (await request('GET', `/automations/project/${tenant.projectId}?pageSize=100`, tenant.jwt)).json<{ data: { id: string; totals: Record<string, number> }[] }>().data;
    expect(listed.find((a) => a.id === flow.id)!.totals).toMatchObject({ converted: 1, goalConversion: 0.5 });
  });

  it('a goal is versioned with the flow: an enrollment converts on its own version’s goal', async () => {
    const flow = await create({ trigger: { type: 'event', eventName: 'goal.versions' }, goal: { event: 'paid.v1' }, steps: [{ id: 'hold', type: 'delay', duration: '1d', next: null }] });
    const { id } = await person();
    await event('goal.versions', id);
    await runDue();
    const edited = await request('PATCH', `/automations/${flow}`, tenant.jwt, { goal: { event: 'paid.v2' } });
    expect(edited.json()).toMatchObject({ version: 2, goal: { event: 'paid.v2' } });
    await event('paid.v2', id);
    expect(await enrollmentOf(flow, id)).toMatchObject({ state: 'waiting' });
    await event('paid.v1', id);
    expect(await enrollmentOf(flow, id)).toMatchObject({ state: 'converted' });
    const removed = await request('PATCH', `/automations/${flow}`, tenant.jwt, { goal: null });
    expect(removed.json()).toMatchObject({ version: 3, goal: null });
  });
});
