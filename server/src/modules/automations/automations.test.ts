// Automations through HTTP and the real executor: flows checked at save, states, versions, starters, events enrolling
// once, subscriber_added (with and without an entry rule) and subscriber_inactive and schedule triggers, conditions on both branches, delays with the
// clock advanced, pushes through the local push service, per-step stats, enrollments deleted, locks fenced, tenancy.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROME_UA, createTenant, type Tenant } from '../../../test/fixtures.js';
import { startTestApp, type TestApp } from '../../../test/harness.js';
import { createFakeBrowser, startPushService, type FakeBrowser, type PushService } from '../../../test/push-service.js';
import { seedSubscribers } from '../../../test/subscriber-seed.js';
import { AutomationExecutor } from './automation-executor.js';

let t: TestApp;
let push: PushService;
let tenant: Tenant;
let other: Tenant;

type Headers = Record<string, string>;
const request = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, headers: Headers, payload?: unknown) =>
  t.app.inject({ method, url, headers, ...(payload !== undefined && { payload: payload as Record<string, unknown> }) });
const query = async <T = Record<string, unknown>>(text: string, values: unknown[] = []) => (await t.database.pool.query(text, values)).rows as T[];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  t = await startTestApp({ ALLOW_INSECURE_PUSH_ENDPOINTS: 'true', DELIVERY_POLL_INTERVAL_MS: '50', PUBLIC_URL: 'https://herald.example.com' });
  push = await startPushService();
  t.services.delivery.start();
  [tenant, other] = await Promise.all([createTenant(t), createTenant(t)]);
});
afterAll(async () => {
  await t?.services.delivery.stop();
  await push?.close();
  await t?.close();
});

interface Automation {
  id: string;
  state: string;
  version: number;
  steps: { id: string; type: string }[];
}

async function create(who: Tenant, trigger: Record<string, unknown>, steps: unknown[], name = 'Flow'): Promise<Automation> {
  const res = await request('POST', '/automations', who.jwt, { projectId: who.projectId, name, trigger, steps });
  expect(res.statusCode, res.body).toBe(201);
  return res.json<Automation>();
}

async function activate(who: Tenant, id: string) {
  const res = await request('POST', `/automations/${id}/activate`, who.jwt);
  expect(res.statusCode, res.body).toBe(200);
  return res.json<Automation>();
}

/** Runs executor passes until none finds due work. */
async function runDue(executor = t.services.automationExecutor) {
  for (let i = 0; i < 50; i++) if ((await executor.runOnce()).claimed === 0) return;
  throw new Error('due work never ran out');
}

/** Moves the automation's waiting enrollments' clocks forward, as if `seconds` had passed. */
const advance = (automationId: string, seconds: number) =>
  query(`UPDATE automation_enrollments SET due_at = due_at - make_interval(secs => $2) WHERE automation_id = $1`, [automationId, seconds]);

/** A browser subscribed through the local push service, its subscriber seeded in the project. */
async function browser(who: Tenant, extra: Parameters<typeof seedSubscribers>[2][number] = {}): Promise<{ browser: FakeBrowser; id: string }> {
  const b = createFakeBrowser();
  const [id] = await seedSubscribers(t.database.pool, who.projectId, [{ endpoint: push.endpointFor(b), p256dh: b.p256dh, auth: b.auth, ...extra }]);
  return { browser: b, id: id! };
}

/** The pushes the browser got (answered), once there are `n` or after the timeout. */
async function pushesTo(b: FakeBrowser, n: number, timeoutMs = 10_000) {
  const answered = () => push.requestsFor(b.id).filter((r) => r.answeredAt !== undefined);
  const deadline = Date.now() + timeoutMs;
  while (answered().length < n && Date.now() < deadline) await sleep(25);
  return answered();
}

const stats = async (who: Tenant, id: string) => (await request('GET', `/automations/${id}/stats`, who.jwt)).json<{ totals: Record<string, number>; steps: Record<string, unknown>[] }>();

const pushStep = (id: string, title: string, next: string | null) => ({ id, type: 'send_push', content: { title, body: 'Body' }, next });

describe('saving a flow', () => {
  it('answers 422 naming the step for a broken link, a cycle, an unreachable step, a bad delay and bad content', async () => {
    const cases: [unknown[], string, string][] = [
      [[pushStep('a', 'A', 'nowhere')], 'steps[0].next', 'step a: next names no step (nowhere)'],
      [[pushStep('a', 'A', 'b'), pushStep('b', 'B', 'c'), pushStep('c', 'C', 'b')], 'steps[1]', 'step b: the flow comes back to it (a cycle)'],
      [[pushStep('a', 'A', null), pushStep('b', 'B', null)], 'steps[1]', 'step b: no step leads to it from the entry step a'],
      [[pushStep('a', 'A', 'a')], 'steps[0].next', 'step a: next goes back to the entry step a'],
      [[{ id: 'w', type: 'delay', duration: '400d', next: null }], 'steps[0].duration', 'step w: a delay is at most 365 days'],
      [[pushStep('a', 'A', null), pushStep('a', 'B', null)], 'steps[1].id', 'step a: the id is used by another step'],
      [[{ id: 'p', type: 'send_push', content: { title: 'x', body: 'y'.repeat(2000), iconUrl: `https://example.com/${'i'.repeat(2000)}` }, next: null }], 'steps[0].content', 'step p:'],
    ];
    for (const [steps, field, error] of cases) {
      const res = await request('POST', '/automations', tenant.jwt, { projectId: tenant.projectId, name: 'Bad', trigger: { type: 'subscriber_added' }, steps });
      expect(res.statusCode, res.body).toBe(422);
      const details = res.json<{ details: { field: string; error: string }[] }>().details;
      expect(details, JSON.stringify(details)).toContainEqual(expect.objectContaining({ field: expect.stringContaining(field), error: expect.stringContaining(error) }));
    }
  });

  it("answers 422 naming the step for a condition on a segment not of the automation's project and environment", async () => {
    const segment = async (who: Record<string, string>, projectId: string) => {
      const res = await request('POST', '/segments', who, { projectId, name: 'VIPs', filters: { tags: { any: ['vip'] } } });
      expect(res.statusCode, res.body).toBe(201);
      return res.json<{ id: string }>().id;
    };
    const flow = (segmentId: string) => ({
      projectId: tenant.projectId,
      name: 'VIP branch',
      trigger: { type: 'subscriber_added' },
      steps: [
        { id: 'vip', type: 'condition', criteria: { segmentId }, trueBranch: 'hello', falseBranch: null },
        pushStep('hello', 'Hello', null),
      ],
    });
    const [sandboxSegment, othersSegment, ownSegment] = [await segment(tenant.test, tenant.projectId), await segment(other.jwt, other.projectId), await segment(tenant.jwt, tenant.projectId)];
    for (const segmentId of ['seg_unknown', sandboxSegment, othersSegment]) {
      const res = await request('POST', '/automations', tenant.jwt, flow(segmentId));
      expect(res.statusCode, res.body).toBe(422);
      expect(res.json<{ details: unknown[] }>().details).toEqual([{ field: 'steps[0].criteria.segmentId', error: `step vip: segment ${segmentId} not found` }]);
    }
    expect((await request('POST', '/automations', tenant.jwt, flow(ownSegment))).statusCode).toBe(201);
  });

  it('refuses malformed triggers and steps with 422 from the schema', async () => {
    for (const [trigger, steps] of [
      [{ type: 'schedule', cron: 'every monday' }, [pushStep('a', 'A', null)]],
      [{ type: 'subscriber_inactive' }, [pushStep('a', 'A', null)]],
      [{ type: 'event', eventName: 'has space' }, [pushStep('a', 'A', null)]],
      [{ type: 'subscriber_added' }, [{ id: 'w', type: 'delay', duration: '1y', next: null }]],
      [{ type: 'subscriber_added' }, [{ id: 'c', type: 'condition', criteria: {}, trueBranch: null, falseBranch: null }]],
      [{ type: 'subscriber_added' }, []],
    ] as const) {
      const res = await request('POST', '/automations', tenant.jwt, { projectId: tenant.projectId, name: 'Bad', trigger, steps });
      expect(res.statusCode, `${JSON.stringify(trigger)} ${res.body}`).toBe(422);
    }
  });
});

describe('starters', () => {
  it('lists the four starters and clones each into the project as a valid draft', async () => {
    const list = await request('GET', '/automations/starters', tenant.live);
    expect(list.statusCode).toBe(200);
    const ids = list.json<{ data: { id: string }[] }>().data.map((s) => s.id);
    expect(ids).toEqual(['welcome-series', 'reengagement-30d', 'onboarding-drip-7d', 'abandoned-cart']);
    for (const starter of ids) {
      const res = await request('POST', '/automations/from-starter', tenant.jwt, { projectId: tenant.projectId, starter });
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json()).toMatchObject({ state: 'draft', starter, version: 1 });
    }
    const cart = (await request('GET', '/automations/starters', tenant.jwt)).json<{ data: { id: string; trigger: unknown }[] }>().data.find((s) => s.id === 'abandoned-cart');
    expect(cart?.trigger).toEqual({ type: 'event', eventName: 'cart.abandoned' });
  });

  it('refuses to activate a starter whose emails go from an unverified domain, naming the step', async () => {
    const draft = (await request('POST', '/automations/from-starter', tenant.jwt, { projectId: tenant.projectId, starter: 'onboarding-drip-7d' })).json<Automation>();
    const res = await request('POST', `/automations/${draft.id}/activate`, tenant.jwt);
    expect(res.statusCode).toBe(422);
    expect(res.json<{ details: { field: string; error: string }[] }>().details[0]).toMatchObject({
      field: 'steps[0].content.from.email',
      error: expect.stringContaining('step day-0: is not on a verified sending domain'),
    });
  });

  it('runs the welcome series starter (push steps) for a new registration', async () => {
    const draft = (await request('POST', '/automations/from-starter', other.jwt, { projectId: other.projectId, starter: 'welcome-series' })).json<Automation>();
    // Without email on the project, keep the pushes: the email step is taken out.
    const steps = (await request('GET', `/automations/${draft.id}`, other.jwt)).json<{ steps: Record<string, unknown>[] }>().steps.filter((s) => s.type !== 'send_email');
    steps.find((s) => s.id === 'wait-1d')!.next = 'wait-3d';
    const patched = await request('PATCH', `/automations/${draft.id}`, other.jwt, { steps });
    expect(patched.statusCode, patched.body).toBe(200);
    await activate(other, draft.id);
    const b = createFakeBrowser();
    const registered = await request('POST', '/subscribers', other.live, { projectId: other.projectId, endpoint: push.endpointFor(b), p256dh: b.p256dh, auth: b.auth, userAgent: CHROME_UA });
    expect(registered.statusCode, registered.body).toBe(201);
    await runDue();
    const first = await pushesTo(b, 1);
    expect(first[0]?.payload, JSON.stringify(first)).toMatchObject({ title: 'Welcome!' });
    // Two delays, one after the other: a day, then three.
    await advance(draft.id, 86_400);
    await runDue();
    await advance(draft.id, 3 * 86_400);
    await runDue();
    expect((await pushesTo(b, 2)).map((p) => (p.payload as { title: string }).title)).toEqual(['Welcome!', 'Did you know?']);
  });
});

describe('a subscriber_added entry rule', () => {
  const FIREFOX_UA = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14.1; rv:121.0) Gecko/20100101 Firefox/121.0';
  const enrolled = async (who: Tenant, id: string) =>
    (await request('GET', `/automations/${id}/enrollments`, who.jwt)).json<{ data: { subscriber: { id: string } }[] }>().data.map((e) => e.subscriber.id).sort();

  it('enrolls only the registered people matching it at registration, beside a flow without a rule that takes both', async () => {
    const who = await createTenant(t);
    const declared = await t.app.inject({ method: 'PUT', url: `/projects/${who.projectId}/attributes/plan`, headers: who.jwt, payload: { type: 'text' } });
    expect(declared.statusCode, declared.body).toBe(200);
    const misfit = await request('POST', '/automations', who.jwt, {
      projectId: who.projectId,
      name: 'Bad',
      trigger: { type: 'subscriber_added', segment: { filters: { all: [{ attribute: 'plan', operator: 'gt', value: 1 }] } } },
      steps: [pushStep('p', 'x', null)],
    });
    expect(misfit.statusCode).toBe(422);
    expect(misfit.json().details).toEqual([{ field: 'trigger.segment.filters.all.0.operator', error: expect.any(String) }]);

    const ruled = await create(who, { type: 'subscriber_added', segment: { filters: { any: [{ browser: 'Firefox' }, { tags: ['never'] }] } } }, [pushStep('p', 'Firefox only', null)]);
    const everyone = await create(who, { type: 'subscriber_added' }, [pushStep('p', 'Everyone', null)]);
    await activate(who, ruled.id);
    await activate(who, everyone.id);
    const register = async (userAgent: string) => {
      const b = createFakeBrowser();
      const res = await request('POST', '/subscribers', who.live, { projectId: who.projectId, endpoint: push.endpointFor(b), p256dh: b.p256dh, auth: b.auth, userAgent });
      expect(res.statusCode, res.body).toBe(201);
      return res.json<{ id: string }>().id;
    };
    const [chrome, firefox] = await Promise.all([register(CHROME_UA), register(FIREFOX_UA)]);
    expect(await enrolled(who, ruled.id)).toEqual([firefox]);
    expect(await enrolled(who, everyone.id)).toEqual([chrome, firefox].sort());

    // A saved segment as the rule, read at each registration: the segment's filters now let Chrome in.
    const segment = await request('POST', '/segments', who.jwt, { projectId: who.projectId, name: 'Chrome', filters: { browser: 'Chrome' } });
    expect(segment.statusCode, segment.body).toBe(201);
    const saved = await create(who, { type: 'subscriber_added', segment: { savedSegmentId: segment.json<{ id: string }>().id } }, [pushStep('p', 'Chrome only', null)]);
    await activate(who, saved.id);
    const [later] = await Promise.all([register(CHROME_UA), register(FIREFOX_UA)]);
    expect(await enrolled(who, saved.id)).toEqual([later]);
  });
});

describe('a subscriber_added flow with a delay', () => {
  it('sends, waits, sends again, and counts each step as the spec defines', async () => {
    const flow = await create(tenant, { type: 'subscriber_added' }, [pushStep('hello', 'Hello', 'wait'), { id: 'wait', type: 'delay', duration: '2h', next: 'again' }, pushStep('again', 'Again', null)]);
    await activate(tenant, flow.id);
    const b = createFakeBrowser();
    const res = await request('POST', '/subscribers', tenant.live, { projectId: tenant.projectId, endpoint: push.endpointFor(b), p256dh: b.p256dh, auth: b.auth, userAgent: CHROME_UA });
    expect(res.statusCode, res.body).toBe(201);
    await runDue();
    expect(await pushesTo(b, 1)).toHaveLength(1);

    const waiting = await stats(tenant, flow.id);
    expect(waiting.totals).toMatchObject({ enrolled: 1, waiting: 1, completed: 0 });
    // `sent` counts the delivery once it is marked sent, just after the push service has it.
    await expect.poll(async () => (await stats(tenant, flow.id)).steps, { timeout: 15_000 }).toEqual([
      { stepId: 'hello', type: 'send_push', entered: 1, sent: 1, clicked: 0, completed: 1, converted: 0 },
      { stepId: 'wait', type: 'delay', entered: 1, sent: 0, clicked: 0, completed: 0, converted: 0 },
      { stepId: 'again', type: 'send_push', entered: 0, sent: 0, clicked: 0, completed: 0, converted: 0 },
    ]);

    // Not yet due: nothing happens.
    await advance(flow.id, 3600);
    await runDue();
    expect(push.requestsFor(b.id)).toHaveLength(1);
    await advance(flow.id, 3600);
    await runDue();
    expect(await pushesTo(b, 2)).toHaveLength(2);
    await sleep(200);
    const done = await stats(tenant, flow.id);
    expect(done.totals).toMatchObject({ enrolled: 1, completed: 1, conversion: 1 });
    expect(done.steps.map((s) => [s.stepId, s.entered, s.completed])).toEqual([
      ['hello', 1, 1],
      ['wait', 1, 1],
      ['again', 1, 1],
    ]);

    const [enrollment] = (await request('GET', `/automations/${flow.id}/enrollments`, tenant.jwt)).json<{ data: { id: string; state: string }[] }>().data;
    // The person it is about, for the dashboard to name them: a browser known only by its device.
    expect(enrollment).toMatchObject({ state: 'completed', stepId: null, subscriber: { id: res.json<{ id: string }>().id, name: null, email: null, phone: null, externalId: null, browser: 'Chrome' } });
    const detail = (await request('GET', `/automations/${flow.id}/enrollments/${enrollment!.id}`, tenant.jwt)).json<{ history: { stepId: string; outcome: string; messageId: string | null }[] }>();
    expect(detail).toMatchObject({ subscriber: { id: res.json<{ id: string }>().id } });
    expect(detail.history.map((h) => [h.stepId, h.outcome])).toEqual([
      ['hello', 'sent'],
      ['wait', 'waited'],
      ['again', 'sent'],
    ]);
    expect(detail.history[0]!.messageId).toMatch(/^msg_/);
  });
});

describe('events', () => {
  it('records events, ignores a repeated eventId, records unknown people without enrolling them', async () => {
    const { id: subscriberId } = await browser(tenant);
    await query(`UPDATE subscribers SET external_id = 'user-events', email = 'ada@example.com', attributes = '{"first_name": "Ada"}' WHERE id = $1`, [subscriberId]);
    const first = await request('POST', '/events', tenant.live, { name: 'signed.up', externalId: 'user-events', properties: { plan: 'pro' }, eventId: 'e-1' });
    expect(first.statusCode, first.body).toBe(202);
    expect(first.json()).toMatchObject({ recorded: 1, duplicates: 0, data: [{ status: 'recorded', subscriberId, name: 'signed.up', eventId: 'e-1', enrolled: 0 }] });
    const again = await request('POST', '/events', tenant.live, { events: [{ name: 'signed.up', externalId: 'user-events', eventId: 'e-1' }, { name: 'visited', externalId: 'nobody-knows' }] });
    expect(again.json()).toMatchObject({
      recorded: 1,
      duplicates: 1,
      data: [
        { status: 'duplicate', id: first.json<{ data: { id: string }[] }>().data[0]!.id },
        { status: 'recorded', subscriberId: null },
      ],
    });
    const listed = (await request('GET', `/events/project/${tenant.projectId}?name=signed.up`, tenant.jwt)).json<{ total: number; data: { properties: unknown; subscriber: unknown }[] }>();
    expect(listed.total).toBe(1);
    expect(listed.data[0]!.properties).toEqual({ plan: 'pro' });
    // Named for the dashboard by the person's summary, read within the project.
    expect(listed.data[0]!.subscriber).toMatchObject({ id: subscriberId, name: 'Ada', email: 'ada@example.com', externalId: 'user-events' });
    const unknown = (await request('GET', `/events/project/${tenant.projectId}?name=visited`, tenant.jwt)).json<{ data: { subscriber: unknown }[] }>();
    expect(unknown.data[0]!.subscriber).toBeNull();
    const counts = (await request('GET', `/events/project/${tenant.projectId}/counts`, tenant.jwt)).json<{ data: { name: string; count: number }[] }>();
    expect(counts.data).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'signed.up', count: 1 }), expect.objectContaining({ name: 'visited', count: 1 })]));
  });

  it('an automation made with a test key says so in its list and detail, as campaigns and templates do', async () => {
    const res = await request('POST', '/automations', tenant.test, { projectId: tenant.projectId, name: 'Sandbox flow', trigger: { type: 'event', eventName: 'sandbox.flow' }, steps: [pushStep('p', 'Hi', null)] });
    expect(res.statusCode, res.body).toBe(201);
    const sandbox = res.json<{ id: string; sandbox: boolean }>();
    expect(sandbox.sandbox).toBe(true);
    const live = await create(tenant, { type: 'event', eventName: 'live.flow' }, [pushStep('p', 'Hi', null)], 'Live flow');
    expect((await request('GET', `/automations/${sandbox.id}`, tenant.jwt)).json()).toMatchObject({ sandbox: true });
    expect((await request('GET', `/automations/${live.id}`, tenant.jwt)).json()).toMatchObject({ sandbox: false });
    const listed = (await request('GET', `/automations/project/${tenant.projectId}?pageSize=100`, tenant.jwt)).json<{ data: { id: string; sandbox: boolean }[] }>().data;
    expect(listed.find((a) => a.id === sandbox.id)?.sandbox).toBe(true);
    expect(listed.find((a) => a.id === live.id)?.sandbox).toBe(false);
  });

  it('422s an event naming nobody, or two identities', async () => {
    expect((await request('POST', '/events', tenant.live, { name: 'x' })).statusCode).toBe(422);
    expect((await request('POST', '/events', tenant.live, { name: 'x', externalId: 'a', token: 'b' })).statusCode).toBe(422);
  });

  it('takes a JWT + x-org-id naming the project in the body, like every other project route (spec 4)', async () => {
    const { id: subscriberId } = await browser(tenant);
    const flow = await create(tenant, { type: 'event', eventName: 'dashboard.sent' }, [pushStep('hello', 'Hi', null)]);
    await activate(tenant, flow.id);
    const sent = await request('POST', '/events', tenant.jwt, { projectId: tenant.projectId, name: 'dashboard.sent', subscriberId, eventId: 'jwt-1' });
    expect(sent.statusCode, sent.body).toBe(202);
    expect(sent.json()).toMatchObject({ recorded: 1, data: [{ status: 'recorded', subscriberId, enrolled: 1 }] });
    expect(await query('SELECT project_id, sandbox, subscriber_id FROM events WHERE event_key = $1', ['jwt-1'])).toEqual([{ project_id: tenant.projectId, sandbox: false, subscriber_id: subscriberId }]);
    expect(await query('SELECT subscriber_id FROM automation_enrollments WHERE automation_id = $1', [flow.id])).toEqual([{ subscriber_id: subscriberId }]);
    const batch = await request('POST', '/events', tenant.jwt, { projectId: tenant.projectId, events: [{ name: 'dashboard.seen', subscriberId }] });
    expect(batch.statusCode, batch.body).toBe(202);

    const { authorization } = tenant.jwt;
    const noOrg = await request('POST', '/events', { authorization: authorization! }, { projectId: tenant.projectId, name: 'x', subscriberId });
    expect(noOrg.statusCode).toBe(403);
    expect(noOrg.json()).toMatchObject({ message: 'Missing x-org-id header' });
    const unnamed = await request('POST', '/events', tenant.jwt, { name: 'x', subscriberId });
    expect(unnamed.statusCode).toBe(422);
    expect(unnamed.json()).toMatchObject({ code: 'validation_failed', details: [{ field: 'projectId', error: 'is required with a JWT' }] });
    expect((await request('POST', '/events', other.jwt, { projectId: tenant.projectId, name: 'x', subscriberId })).statusCode).toBe(404);
    expect((await request('POST', '/events', other.live, { projectId: tenant.projectId, name: 'x', subscriberId })).statusCode).toBe(403);
    expect((await request('POST', '/events', tenant.live, { projectId: tenant.projectId, name: 'x', subscriberId })).statusCode).toBe(202);
  });

  it('enrolls once under many parallel identical events, and branches on the event properties', async () => {
    const flow = await create(tenant, { type: 'event', eventName: 'cart.abandoned', conditions: [{ path: 'total', operator: 'gt', value: 0 }] }, [
      { id: 'big', type: 'condition', criteria: { event: [{ path: 'total', operator: 'gte', value: 50 }] }, trueBranch: 'vip', falseBranch: 'small' },
      pushStep('vip', 'Big cart', null),
      pushStep('small', 'Small cart', null),
    ]);
    await activate(tenant, flow.id);
    const big = await browser(tenant);
    const small = await browser(tenant);
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) => request('POST', '/events', tenant.live, { name: 'cart.abandoned', subscriberId: big.id, properties: { total: 80, n: i } })),
    );
    expect(answers.every((a) => a.statusCode === 202)).toBe(true);
    expect(answers.reduce((sum, a) => sum + a.json<{ data: { enrolled: number }[] }>().data[0]!.enrolled, 0)).toBe(1);
    // A zero total does not meet the trigger's condition; then a small cart does.
    expect((await request('POST', '/events', tenant.live, { name: 'cart.abandoned', subscriberId: small.id, properties: { total: 0 } })).json()).toMatchObject({ data: [{ enrolled: 0 }] });
    expect((await request('POST', '/events', tenant.live, { name: 'cart.abandoned', subscriberId: small.id, properties: { total: 20 } })).json()).toMatchObject({ data: [{ enrolled: 1 }] });
    await runDue();
    expect((await pushesTo(big.browser, 1)).map((p) => (p.payload as { title: string }).title)).toEqual(['Big cart']);
    expect((await pushesTo(small.browser, 1)).map((p) => (p.payload as { title: string }).title)).toEqual(['Small cart']);
    const rows = await query<{ n: string }>(`SELECT count(*) AS n FROM automation_enrollments WHERE automation_id = $1`, [flow.id]);
    expect(Number(rows[0]!.n)).toBe(2);
  });
});

describe('enrollment rules', () => {
  it('re-enrolls only after the enrollment is deleted; an exit step ends the flow as exited', async () => {
    const flow = await create(tenant, { type: 'event', eventName: 'ping' }, [pushStep('p', 'Ping', 'out'), { id: 'out', type: 'exit' }]);
    await activate(tenant, flow.id);
    const { browser: b, id } = await browser(tenant);
    await request('POST', '/events', tenant.live, { name: 'ping', subscriberId: id });
    await runDue();
    await request('POST', '/events', tenant.live, { name: 'ping', subscriberId: id });
    await runDue();
    expect(await pushesTo(b, 1)).toHaveLength(1);
    const [enrollment] = (await request('GET', `/automations/${flow.id}/enrollments?subscriberId=${id}`, tenant.jwt)).json<{ data: { id: string; state: string; reason: string }[] }>().data;
    expect(enrollment).toMatchObject({ state: 'exited', reason: 'exit_step' });
    expect((await request('DELETE', `/automations/${flow.id}/enrollments/${enrollment!.id}`, tenant.jwt)).statusCode).toBe(204);
    await request('POST', '/events', tenant.live, { name: 'ping', subscriberId: id });
    await runDue();
    expect(await pushesTo(b, 2)).toHaveLength(2);
  });

  it('pausing holds due steps and enrollments; archiving exits running enrollments; moves are checked', async () => {
    const flow = await create(tenant, { type: 'event', eventName: 'hold' }, [{ id: 'w', type: 'delay', duration: '1h', next: 'p' }, pushStep('p', 'Held', null)]);
    await activate(tenant, flow.id);
    const { browser: b, id } = await browser(tenant);
    await request('POST', '/events', tenant.live, { name: 'hold', subscriberId: id });
    await runDue();
    expect((await request('POST', `/automations/${flow.id}/pause`, tenant.jwt)).json()).toMatchObject({ state: 'paused' });
    await advance(flow.id, 7200);
    await runDue();
    const late = await browser(tenant);
    expect((await request('POST', '/events', tenant.live, { name: 'hold', subscriberId: late.id })).json()).toMatchObject({ data: [{ enrolled: 0 }] });
    await sleep(100);
    expect(push.requestsFor(b.id)).toHaveLength(0);
    expect((await request('POST', `/automations/${flow.id}/pause`, tenant.jwt)).statusCode).toBe(409);
    await activate(tenant, flow.id);
    await runDue();
    expect(await pushesTo(b, 1)).toHaveLength(1);

    const second = await browser(tenant);
    await request('POST', '/events', tenant.live, { name: 'hold', subscriberId: second.id });
    await runDue();
    expect((await request('POST', `/automations/${flow.id}/archive`, tenant.jwt)).json()).toMatchObject({ state: 'archived' });
    const [archived] = (await request('GET', `/automations/${flow.id}/enrollments?subscriberId=${second.id}`, tenant.jwt)).json<{ data: unknown[] }>().data;
    expect(archived).toMatchObject({ state: 'exited', reason: 'automation_archived' });
    expect((await request('POST', `/automations/${flow.id}/activate`, tenant.jwt)).statusCode).toBe(409);
    expect((await request('PATCH', `/automations/${flow.id}`, tenant.jwt, { name: 'x' })).statusCode).toBe(409);
  });

  it('keeps a running enrollment on the version it started on when the flow changes', async () => {
    const flow = await create(tenant, { type: 'event', eventName: 'versioned' }, [{ id: 'w', type: 'delay', duration: '1d', next: 'p' }, pushStep('p', 'Version 1', null)]);
    await activate(tenant, flow.id);
    const early = await browser(tenant);
    await request('POST', '/events', tenant.live, { name: 'versioned', subscriberId: early.id });
    await runDue();
    const patched = await request('PATCH', `/automations/${flow.id}`, tenant.jwt, { steps: [{ id: 'w', type: 'delay', duration: '1d', next: 'p' }, pushStep('p', 'Version 2', null)] });
    expect(patched.json()).toMatchObject({ version: 2 });
    const late = await browser(tenant);
    await request('POST', '/events', tenant.live, { name: 'versioned', subscriberId: late.id });
    await runDue();
    await advance(flow.id, 86_400);
    await runDue();
    expect((await pushesTo(early.browser, 1)).map((p) => (p.payload as { title: string }).title)).toEqual(['Version 1']);
    expect((await pushesTo(late.browser, 1)).map((p) => (p.payload as { title: string }).title)).toEqual(['Version 2']);
  });
});

describe('tick triggers', () => {
  it('subscriber_inactive enrolls everyone not seen for N days on activation, then those who cross the threshold', async () => {
    const flow = await create(other, { type: 'subscriber_inactive', inactiveDays: 30 }, [pushStep('p', 'We miss you', null)]);
    const [gone, recent, crossing] = await Promise.all([browser(other), browser(other), browser(other)]);
    await query(`UPDATE subscribers SET last_seen_at = now() - interval '45 days' WHERE id = $1`, [gone.id]);
    await query(`UPDATE subscribers SET last_seen_at = now() - interval '2 days' WHERE id = $1`, [recent.id]);
    await query(`UPDATE subscribers SET last_seen_at = now() - interval '29 days 23 hours' WHERE id = $1`, [crossing.id]);
    await activate(other, flow.id);
    await t.services.automations.evaluateTriggers();
    const enrolled = async () => (await query<{ subscriber_id: string }>(`SELECT subscriber_id FROM automation_enrollments WHERE automation_id = $1`, [flow.id])).map((r) => r.subscriber_id);
    expect(await enrolled()).toEqual([gone.id]);
    // Two hours pass for the crossing subscriber (its last visit moves back), and the window moves on.
    await query(`UPDATE subscribers SET last_seen_at = last_seen_at - interval '2 hours' WHERE id = $1`, [crossing.id]);
    await query(`UPDATE automations SET evaluated_until = evaluated_until - interval '2 hours' WHERE id = $1`, [flow.id]);
    await t.services.automations.evaluateTriggers();
    expect((await enrolled()).sort()).toEqual([gone.id, crossing.id].sort());
    // Enrollments of a tick are spread over the minute after it.
    await advance(flow.id, 60);
    await runDue();
    expect(await pushesTo(gone.browser, 1)).toHaveLength(1);
    expect(push.requestsFor(recent.browser.id)).toHaveLength(0);
  });

  it('enrolls only subscribers that take marketing on some channel: a push device or a subscribed address', async () => {
    const fresh = await createTenant(t);
    const flow = await create(fresh, { type: 'subscriber_inactive', inactiveDays: 30 }, [pushStep('p', 'We miss you', null)]);
    const device = await browser(fresh);
    const contact = async (email: string, consent: string) => {
      const res = await request('POST', '/contacts', fresh.live, { projectId: fresh.projectId, email, marketingConsent: { email: consent } });
      expect(res.statusCode, res.body).toBe(201);
      return res.json<{ id: string }>().id;
    };
    const [reader, customer, left] = [await contact('reader@example.org', 'subscribed'), await contact('customer@example.org', 'transactional'), await contact('left@example.org', 'unsubscribed')];
    await query(`UPDATE subscribers SET last_seen_at = now() - interval '45 days' WHERE project_id = $1`, [fresh.projectId]);
    await activate(fresh, flow.id);
    await t.services.automations.evaluateTriggers();
    const enrolled = await query<{ subscriber_id: string }>(`SELECT subscriber_id FROM automation_enrollments WHERE automation_id = $1`, [flow.id]);
    expect(enrolled.map((r) => r.subscriber_id).sort()).toEqual([device.id, reader].sort());
    void [customer, left];
  });

  it('schedule enrolls the subscribers of the zones where the cron just fired', async () => {
    // A cron for the current minute in Paris: it has fired there within the window, not in Tokyo.
    const parts = new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Paris', hour: 'numeric', minute: 'numeric', hourCycle: 'h23' }).formatToParts(new Date(Date.now() - 60_000));
    const [hour, minute] = ['hour', 'minute'].map((type) => Number(parts.find((p) => p.type === type)!.value));
    const fresh = await createTenant(t);
    const flow = await create(fresh, { type: 'schedule', cron: `${minute} ${hour} * * *`, defaultTimezone: 'Europe/Paris' }, [pushStep('p', 'Scheduled', null)]);
    const [paris, tokyo, unknown] = await Promise.all([browser(fresh, { timezone: 'Europe/Paris' }), browser(fresh, { timezone: 'Asia/Tokyo' }), browser(fresh, { timezone: 'Mars/Olympus' })]);
    await activate(fresh, flow.id);
    await query(`UPDATE automations SET evaluated_until = now() - interval '3 minutes' WHERE id = $1`, [flow.id]);
    await t.services.automations.evaluateTriggers();
    const rows = await query<{ subscriber_id: string; due_at: Date }>(`SELECT subscriber_id, due_at FROM automation_enrollments WHERE automation_id = $1`, [flow.id]);
    expect(rows.map((r) => r.subscriber_id).sort()).toEqual([paris.id, unknown.id].sort());
    void tokyo;
    await advance(flow.id, 60);
    await runDue();
    expect(await pushesTo(paris.browser, 1)).toHaveLength(1);
  });
});

describe('executors and locks', () => {
  it('two executors at once never run the same enrollment: each push goes once', async () => {
    const flow = await create(other, { type: 'event', eventName: 'crowd' }, [pushStep('p', 'Crowd', null)]);
    await activate(other, flow.id);
    const crowd = await Promise.all(Array.from({ length: 40 }, () => browser(other)));
    await request('POST', '/events', other.live, { events: crowd.map((c) => ({ name: 'crowd', subscriberId: c.id })) });
    const options = { lockSeconds: 300, pollIntervalMs: 50, batchSize: 7 };
    const [a, b] = [new AutomationExecutor(t.database.db, { delivery: t.services.delivery, senders: t.services.smsSenders, whatsappTemplates: t.services.whatsappTemplates }, options), new AutomationExecutor(t.database.db, { delivery: t.services.delivery, senders: t.services.smsSenders, whatsappTemplates: t.services.whatsappTemplates }, options)];
    await Promise.all([runDue(a), runDue(b)]);
    for (const c of crowd) expect(await pushesTo(c.browser, 1)).toHaveLength(1);
    await sleep(200);
    for (const c of crowd) expect(push.requestsFor(c.browser.id)).toHaveLength(1);
  });

  it("a lock expires after its executor dies; the taker runs the step once", async () => {
    const flow = await create(other, { type: 'event', eventName: 'crash' }, [pushStep('p', 'Once', null)]);
    await activate(other, flow.id);
    const { browser: b, id } = await browser(other);
    await request('POST', '/events', other.live, { name: 'crash', subscriberId: id });
    const deps = { delivery: t.services.delivery, senders: t.services.smsSenders, whatsappTemplates: t.services.whatsappTemplates };
    const options = { lockSeconds: 300, pollIntervalMs: 50, batchSize: 10 };
    // The dead executor's claim, as it left it.
    const dead = new AutomationExecutor(t.database.db, deps, options);
    await query(`UPDATE automation_enrollments SET locked_by = $2, locked_until = now() + interval '5 minutes', lock_version = lock_version + 1 WHERE automation_id = $1`, [flow.id, dead.id]);
    const taker = new AutomationExecutor(t.database.db, deps, options);
    expect((await taker.runOnce()).claimed).toBe(0);
    // Five minutes pass.
    await query(`UPDATE automation_enrollments SET locked_until = locked_until - interval '5 minutes' WHERE automation_id = $1`, [flow.id]);
    const pass = await taker.runOnce();
    expect(pass).toMatchObject({ claimed: 1, takenOver: 1, fenced: 0 });
    expect(await pushesTo(b, 1)).toHaveLength(1);
    await sleep(200);
    expect(push.requestsFor(b.id)).toHaveLength(1);
  });
});

describe('tenant isolation', () => {
  it("answers 404 for another organization's automation and 403 for another project's key", async () => {
    const flow = await create(tenant, { type: 'subscriber_added' }, [pushStep('p', 'Mine', null)]);
    expect((await request('GET', `/automations/${flow.id}`, other.jwt)).statusCode).toBe(404);
    expect((await request('GET', `/automations/${flow.id}/stats`, other.live)).statusCode).toBe(404);
    expect((await request('POST', `/automations/${flow.id}/activate`, other.jwt)).statusCode).toBe(404);
    expect((await request('GET', `/automations/project/${tenant.projectId}`, other.live)).statusCode).toBe(403);
    expect((await request('GET', `/events/project/${tenant.projectId}`, other.jwt)).statusCode).toBe(404);
    expect((await request('POST', '/automations', other.live, { projectId: tenant.projectId, name: 'x', trigger: { type: 'subscriber_added' }, steps: [pushStep('p', 'x', null)] })).statusCode).toBe(403);
  });
});
