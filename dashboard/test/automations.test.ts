// Automations and events in Chromium against `herald serve` and a local push service: a starter cloned and edited (a
// broken link refused on its step), activated, an event enrolling a subscriber whose push goes out, the stats on the
// flow, a new version while an enrollment keeps its own, the enrollments view, the events page, a flow written from
// scratch with every step type, a wait-until step and a goal whose conversion shows in the stats, the state changes,
// and a VIEWER's read-only pages. Skipped without a Chromium.
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROME_UA } from '../../server/test/fixtures.js';
import { createFakeBrowser, startPushService, type FakeBrowser, type PushService } from '../../server/test/push-service.js';
import { addCondition, ADMIN, api, expectAccessible, findChromium, screenshot, startSession, VIEWER, type Herald, type Session } from './browser.js';

const chromiumPath = findChromium();
if (!chromiumPath) {
  const message = '\n!!! Automation browser tests SKIPPED: no Chromium found (CHROME_PATH, or chromium on PATH): apt-get install -y chromium\n';
  if (process.env.CI === 'true') throw new Error(message);
  console.error(message);
}

interface Automation {
  id: string;
  name: string;
  state: string;
  version: number;
  steps: Record<string, unknown>[];
}

describe.skipIf(!chromiumPath)('automations and events in Chromium', { timeout: 90_000 }, () => {
  let session: Session;
  let herald: Herald;
  let auth: Record<string, string>;
  let projectId: string;
  let push: PushService;
  let shopper: FakeBrowser;
  let shopperId: string;
  let liveKey: Record<string, string>;
  let cartId: string;

  beforeAll(async () => {
    push = await startPushService();
    session = await startSession(chromiumPath!, { ALLOW_INSECURE_PUSH_ENDPOINTS: 'true', AUTOMATION_POLL_INTERVAL_MS: '200', DELIVERY_POLL_INTERVAL_MS: '100' });
    ({ herald, auth, projectId } = session);
    liveKey = { 'x-api-key': (await api<{ key: string }>(herald, 'POST', `/projects/${projectId}/api-keys`, { name: 'shop', mode: 'live' }, auth)).key };
    shopper = createFakeBrowser();
    const registered = await api<{ id: string; token: string }>(
      herald,
      'POST',
      '/subscribers',
      { projectId, endpoint: push.endpointFor(shopper), p256dh: shopper.p256dh, auth: shopper.auth, userAgent: CHROME_UA },
      liveKey,
    );
    shopperId = registered.id;
    await api(herald, 'POST', '/subscribers/identify', { token: registered.token, externalId: 'shopper-1' }, liveKey);
  }, 120_000);

  afterAll(async () => {
    await session?.stop();
    await push?.close();
  }, 60_000);

  async function signIn(who: { email: string; password: string }) {
    const opened = await session.newPage();
    await session.openDemo(opened.page, who);
    return opened;
  }

  async function openTab(page: Page, tab: 'Automations' | 'Events') {
    await page.getByRole('navigation', { name: 'Project' }).getByRole('link', { name: tab, exact: true }).click();
    await page.getByRole('heading', { name: tab, level: 2 }).waitFor();
  }

  const automation = (id: string) => api<Automation>(herald, 'GET', `/automations/${id}`, undefined, auth);
  const postEvent = (body: Record<string, unknown>) => api<{ data: { enrolled: number; subscriberId: string | null }[] }>(herald, 'POST', '/events', body, liveKey);
  /** The step's box in the form, by its legend ("3. Condition — big-cart"). */
  const stepForm = (page: Page, id: string) => page.getByRole('form', { name: 'Automation' }).getByRole('group', { name: new RegExp(`— ${id}( \\(entry step\\))?$`) });
  /** The step's box in the graph, and its stats as [label, value] pairs. */
  const node = (page: Page, id: string) => page.getByRole('figure', { name: 'Flow' }).getByRole('group', { name: `Step ${id}`, exact: true });
  const statsOf = async (box: Locator) => (await box.getByRole('definition').allTextContents()).map(Number);
  const titlesPushed = () => push.requestsFor(shopper.id).map((r) => (r.payload as { title?: string } | undefined)?.title);

  it('a starter becomes a draft in the editor; a broken link is refused on its step, then fixed, saved and activated', async () => {
    const { context, page } = await signIn(ADMIN);
    await openTab(page, 'Automations');
    await page.getByText('No automations yet').waitFor();
    const gallery = page.getByRole('list', { name: 'Starter automations' });
    expect(await gallery.getByRole('heading', { level: 4 }).allTextContents()).toEqual(['Welcome series', 'Re-engagement after 30 days', 'Onboarding drip (7 days)', 'Abandoned cart']);
    await gallery.getByText('On event cart.abandoned · 5 steps').waitFor();
    await expectAccessible(page, 'the automations list with the starters');

    await page.getByRole('button', { name: 'Use this starter: Abandoned cart' }).click();
    await page.waitForURL(/\/automations\/aut_[^/]+$/);
    cartId = page.url().split('/').at(-1)!;
    await page.getByRole('heading', { name: 'Abandoned cart', level: 2 }).waitFor();
    expect(await automation(cartId)).toMatchObject({ state: 'draft', version: 1, name: 'Abandoned cart' });
    // The graph: the condition's branches side by side.
    await node(page, 'big-cart').waitFor();
    await page.getByRole('group', { name: 'If true' }).getByRole('group', { name: 'Step discount-email' }).waitFor();
    await page.getByRole('group', { name: 'If false' }).getByText('End').waitFor();

    // The push goes at once (the first delay removed), and the email (its sender unverified) is taken out: the
    // condition's true branch now names a step that is gone.
    await page.getByRole('button', { name: 'Remove wait-1h' }).click();
    await page.getByRole('button', { name: 'Remove discount-email' }).click();
    const yes = stepForm(page, 'big-cart').getByLabel('If true, go to');
    expect(await yes.locator('option:checked').textContent()).toBe('discount-email (no such step)');
    await page.getByRole('figure', { name: 'Flow' }).getByText('→ discount-email: no such step').waitFor();
    await page.getByRole('button', { name: 'Save automation' }).click();
    await stepForm(page, 'big-cart').getByRole('alert').filter({ hasText: 'trueBranch names no step (discount-email)' }).waitFor();
    expect(await yes.getAttribute('aria-invalid')).toBe('true');
    await page.getByText('Not saved: the problems are shown on the steps and fields they concern.').waitFor();
    expect((await automation(cartId)).steps).toHaveLength(5);
    await expectAccessible(page, 'the flow editor with a 422 on a step');

    // A push step of its own for the true branch.
    await page.getByLabel('New step').selectOption({ label: 'Push' });
    await page.getByRole('button', { name: 'Add step' }).click();
    await stepForm(page, 'push-1').getByLabel('Step id').fill('discount-push');
    await stepForm(page, 'discount-push').getByLabel('Title').fill('10% off your cart');
    await stepForm(page, 'discount-push').getByLabel('Body').fill('Use COMEBACK10 today');
    await yes.selectOption({ label: 'discount-push (Push)' });
    await page.getByRole('button', { name: 'Save automation' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    const saved = await automation(cartId);
    expect(saved.steps.map((s) => s.id)).toEqual(['reminder-push', 'wait-1d', 'big-cart', 'discount-push']);
    expect(saved.steps[2]).toMatchObject({ trueBranch: 'discount-push', falseBranch: null });
    expect(saved.version).toBe(1);
    await stepForm(page, 'reminder-push').waitFor();
    expect(await page.getByRole('form', { name: 'Automation' }).getByRole('alert').count()).toBe(0);

    await page.getByRole('button', { name: 'Activate Abandoned cart' }).click();
    await expectAccessible(page, 'the activation dialog');
    await page.getByRole('alertdialog').getByRole('button', { name: 'Activate automation' }).click();
    await page.getByText('This automation is active. Saving a change to its trigger or steps makes version 2').waitFor();
    expect((await automation(cartId)).state).toBe('active');
    await context.close();
  });

  it("an event enrolls the subscriber: its push goes out and each step's stats show on the flow; a new version leaves the enrollment on its own", async () => {
    const accepted = await postEvent({ name: 'cart.abandoned', externalId: 'shopper-1', properties: { total: 80 }, eventId: 'cart-1' });
    expect(accepted.data[0]).toMatchObject({ enrolled: 1, subscriberId: shopperId });
    await expect.poll(titlesPushed).toEqual(['You left something behind']);

    const { context, page } = await signIn(ADMIN);
    await page.goto(`${herald.url}/app/projects/${projectId}/automations/${cartId}`);
    // entered, sent, clicked, completed for a send step; entered, completed for a delay (still waiting: not completed).
    await expect.poll(() => statsOf(node(page, 'reminder-push')), { timeout: 15_000 }).toEqual([1, 1, 0, 1]);
    expect(await statsOf(node(page, 'wait-1d'))).toEqual([1, 0]);
    expect(await statsOf(node(page, 'big-cart'))).toEqual([0, 0]);
    expect(await page.getByLabel('Enrollment totals').getByRole('definition').allTextContents()).toEqual(['1', '0', '1', '0', '0', '0', '0', '0%', '0%']);
    await page.getByRole('link', { name: 'Enrollments (1)' }).waitFor();
    await expectAccessible(page, 'an active automation with its stats');
    await screenshot(page, 'automation-editor');

    // Editing the active flow makes version 2; the running enrollment stays on version 1.
    await stepForm(page, 'reminder-push').getByLabel('Title').fill('Your cart misses you');
    await page.getByText('Drawn with the unsaved changes below').waitFor();
    await page.getByRole('button', { name: 'Save automation' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved as version 2: new enrollments start on it.' }).waitFor();
    await page.getByText('version 2 ·').waitFor();
    expect((await automation(cartId)).version).toBe(2);
    await context.close();
  });

  it('the enrollments view lists the enrollment with its step history, filters it, and deletes it so the subscriber can be enrolled again', async () => {
    const { context, page } = await signIn(ADMIN);
    await openTab(page, 'Automations');
    await page.getByRole('link', { name: 'Enrollments of Abandoned cart' }).click();
    await page.getByRole('heading', { name: 'Enrollments of Abandoned cart' }).waitFor();
    const table = page.getByRole('table', { name: 'Enrollments' });
    const rows = async () => (await table.getByRole('row').allInnerTexts()).slice(1).map((row) => row.split('\t').slice(0, 4).join(' | '));
    await expect.poll(rows).toEqual(['shopper-1 | waiting (in a delay, or for an event) | 1 | wait-1d']);

    await page.getByRole('button', { name: 'History of shopper-1' }).click();
    const history = page.getByRole('table', { name: 'Step history of shopper-1' });
    await history.waitFor();
    const runs = async () => (await history.getByRole('row').allInnerTexts()).slice(1).map((row) => row.split('\t').filter((_, i) => i !== 2 && i !== 3).join(' | '));
    expect(await runs()).toEqual(['reminder-push | Push | sent', 'wait-1d | Delay | running']);
    await expectAccessible(page, 'the enrollments view with a step history');
    await screenshot(page, 'automation-enrollments');
    await page.getByRole('button', { name: 'History of shopper-1' }).click();
    await expect.poll(() => history.count()).toBe(0);

    // Filters live in the URL.
    await page.getByLabel('State').selectOption('completed');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByText('No enrollments match.').waitFor();
    expect(page.url()).toContain('state=completed');
    await page.getByLabel('State').selectOption('waiting');
    await page.getByLabel('Subscriber id').fill(shopperId);
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await expect.poll(rows).toHaveLength(1);
    await page.reload();
    await expect.poll(rows).toHaveLength(1);
    expect(await page.getByLabel('State').inputValue()).toBe('waiting');

    await page.getByRole('button', { name: 'Delete the enrollment of shopper-1' }).click();
    const dialog = page.getByRole('alertdialog');
    await dialog.getByText('the subscriber may be enrolled again').waitFor();
    await expectAccessible(page, 'the enrollment delete confirmation');
    await dialog.getByRole('button', { name: 'Delete enrollment' }).click();
    await page.getByText('No enrollments match.').waitFor();

    // Enrolled again, on the current version: its push has the new title.
    expect((await postEvent({ name: 'cart.abandoned', externalId: 'shopper-1', properties: { total: 20 }, eventId: 'cart-2' })).data[0]!.enrolled).toBe(1);
    await expect.poll(titlesPushed).toEqual(['You left something behind', 'Your cart misses you']);
    await page.getByRole('button', { name: 'Clear' }).click();
    await expect.poll(rows).toEqual(['shopper-1 | waiting (in a delay, or for an event) | 2 | wait-1d']);
    await context.close();
  });

  it('the events page counts events per name over 7 or 30 days and lists the recent ones, filtered by name', async () => {
    await postEvent({ name: 'page.viewed', externalId: 'shopper-1', properties: { path: '/pricing' } });
    expect((await postEvent({ name: 'page.viewed', externalId: 'ghost', properties: {} })).data[0]).toMatchObject({ subscriberId: null, enrolled: 0 });
    const { context, page } = await signIn(ADMIN);
    await openTab(page, 'Events');
    const counts = page.getByRole('table', { name: 'Events per name' });
    const countRows = async () => (await counts.getByRole('row').allInnerTexts()).slice(1).map((row) => row.split('\t').slice(0, 2).join(' | '));
    await expect.poll(countRows).toEqual(['cart.abandoned | 2', 'page.viewed | 2']);
    await page.getByRole('heading', { name: 'Events per name, last 30 days' }).waitFor();
    await page.getByRole('navigation', { name: 'Period' }).getByRole('link', { name: '7 days' }).click();
    await page.getByRole('heading', { name: 'Events per name, last 7 days' }).waitFor();
    expect(page.url()).toContain('days=7');
    const period = page.getByRole('navigation', { name: 'Period' });
    await expect.poll(() => period.getByRole('link', { name: '7 days' }).getAttribute('aria-current')).toBe('page');
    expect(await period.getByRole('link', { name: '30 days' }).getAttribute('aria-current')).toBeNull();

    const recent = page.getByRole('table', { name: 'Recent events' });
    const eventRows = async () => (await recent.getByRole('row').allInnerTexts()).slice(1).map((row) => row.split('\t').slice(1, 4).join(' | '));
    await expect.poll(eventRows).toEqual([
      'page.viewed | Unknown person (external id ghost) | —',
      'page.viewed | shopper-1 | path: /pricing',
      'cart.abandoned | shopper-1 | total: 20',
      'cart.abandoned | shopper-1 | total: 80',
    ]);
    await expectAccessible(page, 'the events page');
    await screenshot(page, 'events');

    await page.getByRole('link', { name: 'Show the cart.abandoned events' }).click();
    await expect.poll(eventRows).toHaveLength(2);
    expect(page.url()).toContain('name=cart.abandoned');
    expect(page.url()).toContain('days=7');
    await page.getByLabel('Event name').fill('page.viewed');
    await page.getByRole('button', { name: 'Apply filter' }).click();
    await expect.poll(async () => (await eventRows()).every((row) => row.startsWith('page.viewed'))).toBe(true);
    await page.getByLabel('Event name').fill('nothing.here');
    await page.getByRole('button', { name: 'Apply filter' }).click();
    await page.getByText('No events named nothing.here.').waitFor();
    await context.close();
  });

  it('a flow written from scratch: trigger settings, every step type, links, a move, and a schema 422 beside its field', async () => {
    const template = await api<{ id: string }>(herald, 'POST', '/email-templates', { projectId, name: 'Receipt', subject: 'Your receipt', html: '<p>Thanks</p>' }, auth);
    const segment = await api<{ id: string }>(herald, 'POST', '/segments', { projectId, name: 'Big spenders', filters: { tags: ['vip'] } }, auth);
    const { context, page } = await signIn(ADMIN);
    await openTab(page, 'Automations');
    await page.getByRole('link', { name: 'New automation' }).click();
    await page.getByRole('heading', { name: 'New automation' }).waitFor();
    const form = page.getByRole('form', { name: 'Automation' });
    await form.getByLabel('Name', { exact: true }).fill('Order follow-up');
    await form.getByLabel('Enrolls people when').selectOption({ label: 'An event is reported' });
    await form.getByLabel('Event name').fill('order.paid');
    await form.getByRole('group', { name: 'Trigger' }).getByRole('button', { name: 'Add condition' }).click();
    const trigger = form.getByRole('group', { name: 'Event property conditions (all must hold): condition 1' });
    await trigger.getByLabel('Property').fill('total');
    await trigger.getByLabel('Operator').selectOption({ label: '≥' });
    await trigger.getByLabel('Value').fill('100');

    await stepForm(page, 'push-1').getByLabel('Title').fill('Thanks for your order');
    await stepForm(page, 'push-1').getByLabel('Body').fill('It is on its way');
    await stepForm(page, 'push-1').getByLabel('Click URL').fill('https://shop.example.com/orders');
    for (const type of ['Delay', 'Condition', 'Email', 'SMS', 'WhatsApp', 'Exit']) {
      await page.getByLabel('New step').selectOption({ label: type });
      await page.getByRole('button', { name: 'Add step' }).click();
    }
    // A delay in words is refused by the API's schema, beside its field.
    await stepForm(page, 'wait-1').getByLabel('Wait for').fill('3 days');
    const condition = stepForm(page, 'condition-1');
    await condition.getByRole('button', { name: 'Add condition' }).first().click();
    await condition.getByRole('group', { name: /Properties of the event.*condition 1/ }).getByLabel('Property').fill('items.count');
    await condition.getByRole('group', { name: /Properties of the event.*condition 1/ }).getByLabel('Operator').selectOption({ label: '>' });
    await condition.getByRole('group', { name: /Properties of the event.*condition 1/ }).getByLabel('Value').fill('2');
    await condition.getByRole('button', { name: 'Add condition' }).nth(1).click();
    await condition.getByRole('group', { name: /Subscriber attributes.*condition 1/ }).getByLabel('Property').fill('plan');
    await condition.getByRole('group', { name: /Subscriber attributes.*condition 1/ }).getByLabel('Operator').selectOption({ label: 'is one of' });
    await condition.getByRole('group', { name: /Subscriber attributes.*condition 1/ }).getByLabel('Value').fill('pro, team');
    await condition.getByLabel('In the saved segment').selectOption({ label: 'Big spenders' });
    await condition.getByText('Subscriber’s fields').click();
    await addCondition(condition, 'Tags');
    await condition.getByLabel('Tags: any of').fill('vip, loyal');
    await condition.getByLabel('If true, go to').selectOption({ label: 'email-1 (Email)' });
    await condition.getByLabel('If false, go to').selectOption({ label: 'sms-1 (SMS)' });
    const email = stepForm(page, 'email-1');
    await email.getByLabel('From a saved template').check();
    await email.getByLabel('Email template').selectOption({ label: 'Receipt' });
    await email.getByLabel('From address').fill('shop@example.com');
    await email.getByLabel('From name').fill('The Shop');
    await email.getByLabel('Next step').selectOption({ label: 'exit-1 (Exit)' });
    await stepForm(page, 'sms-1').getByLabel('Text').fill('Thanks! Reply STOP to stop.');
    const whatsapp = stepForm(page, 'whatsapp-1');
    await whatsapp.getByLabel('An approved template').check();
    await whatsapp.getByLabel('Template name').fill('order_update');
    await whatsapp.getByLabel('Language').fill('en_US');
    await page.getByRole('button', { name: 'Create automation' }).click();
    const duration = stepForm(page, 'wait-1').getByLabel('Wait for');
    await expect.poll(() => duration.getAttribute('aria-invalid')).toBe('true');
    await stepForm(page, 'wait-1').getByRole('alert').filter({ hasText: 'must be a number and a unit: 30m, 2h, 1d or 2w' }).waitFor();
    await expectAccessible(page, 'a new flow with every step type and a 422');

    await duration.fill('3d');
    // Moved to the top, the delay is the entry step; moved back, the push is again.
    await page.getByRole('button', { name: 'Move up wait-1' }).click();
    await stepForm(page, 'wait-1').getByText('1. Delay — wait-1 (entry step)').waitFor();
    await page.getByRole('button', { name: 'Move down wait-1' }).click();
    await stepForm(page, 'push-1').getByText('1. Push — push-1 (entry step)').waitFor();
    await page.getByRole('button', { name: 'Create automation' }).click();
    await page.waitForURL(/\/automations\/aut_[^/]+$/);
    await page.getByRole('heading', { name: 'Order follow-up', level: 2 }).waitFor();
    const created = await automation(page.url().split('/').at(-1)!);
    expect(created).toMatchObject({
      state: 'draft',
      trigger: { type: 'event', eventName: 'order.paid', conditions: [{ path: 'total', operator: 'gte', value: 100 }] },
    });
    expect(created.steps).toEqual([
      { id: 'push-1', type: 'send_push', content: { title: 'Thanks for your order', body: 'It is on its way', clickUrl: 'https://shop.example.com/orders' }, next: 'wait-1' },
      { id: 'wait-1', type: 'delay', duration: '3d', next: 'condition-1' },
      {
        id: 'condition-1',
        type: 'condition',
        criteria: {
          subscriber: { tags: { any: ['vip', 'loyal'] } },
          segmentId: segment.id,
          attributes: [{ path: 'plan', operator: 'in', value: ['pro', 'team'] }],
          event: [{ path: 'items.count', operator: 'gt', value: 2 }],
        },
        trueBranch: 'email-1',
        falseBranch: 'sms-1',
      },
      {
        id: 'email-1',
        type: 'send_email',
        // The template's parts are copied in when saved.
        content: { templateId: template.id, subject: 'Your receipt', html: '<p>Thanks</p>', from: { email: 'shop@example.com', name: 'The Shop' } },
        next: 'exit-1',
      },
      { id: 'sms-1', type: 'send_sms', content: { body: 'Thanks! Reply STOP to stop.' }, next: 'whatsapp-1' },
      { id: 'whatsapp-1', type: 'send_whatsapp', content: { templateName: 'order_update', language: 'en_US' }, next: 'exit-1' },
      { id: 'exit-1', type: 'exit' },
    ]);
    // The graph: the true branch goes to the email, the false one through SMS and WhatsApp, both meeting at the exit.
    await page.getByRole('group', { name: 'If true' }).getByRole('group', { name: 'Step email-1' }).waitFor();
    await page.getByRole('group', { name: 'If false' }).getByRole('group', { name: 'Step whatsapp-1' }).waitFor();
    expect(await page.getByRole('group', { name: 'If true' }).getByRole('group', { name: 'Step exit-1' }).count()).toBe(0);
    await node(page, 'exit-1').waitFor();
    await context.close();
  });

  it('a wait-until step and a goal written in the editor; the goal event converts the person, shown in the stats', async () => {
    const buyer = createFakeBrowser();
    const { id: buyerId } = await api<{ id: string }>(herald, 'POST', '/subscribers', { projectId, endpoint: push.endpointFor(buyer), p256dh: buyer.p256dh, auth: buyer.auth, userAgent: CHROME_UA }, liveKey);
    const { context, page } = await signIn(ADMIN);
    await openTab(page, 'Automations');
    await page.getByRole('link', { name: 'New automation' }).click();
    const form = page.getByRole('form', { name: 'Automation' });
    await form.getByLabel('Name', { exact: true }).fill('Trial nurture');
    await form.getByLabel('Enrolls people when').selectOption({ label: 'An event is reported' });
    await form.getByRole('group', { name: 'Trigger' }).getByLabel('Event name').fill('trial.started');
    await form.getByLabel('Goal event').fill('plan.upgraded');
    await form.getByRole('group', { name: 'Goal properties (all must hold)' }).getByRole('button', { name: 'Add condition' }).click();
    const goalCondition = form.getByRole('group', { name: 'Goal properties (all must hold): condition 1' });
    await goalCondition.getByLabel('Property').fill('plan');
    await goalCondition.getByLabel('Operator').selectOption({ label: 'is one of' });
    await goalCondition.getByLabel('Value').fill('pro, team');
    await stepForm(page, 'push-1').getByLabel('Title').fill('Welcome to your trial');
    await stepForm(page, 'push-1').getByLabel('Body').fill('Set up your first project');
    for (const type of ['Wait until', 'Push']) {
      await page.getByLabel('New step').selectOption({ label: type });
      await page.getByRole('button', { name: 'Add step' }).click();
    }
    const wait = stepForm(page, 'wait-until-1');
    await wait.getByLabel('Event name').fill('project.created');
    await wait.getByRole('button', { name: 'Add condition' }).click();
    const waitCondition = wait.getByRole('group', { name: 'Event property conditions (all must hold): condition 1' });
    await waitCondition.getByLabel('Property').fill('members');
    await waitCondition.getByLabel('Operator').selectOption({ label: '≥' });
    await waitCondition.getByLabel('Value').fill('2');
    await wait.getByLabel('Wait at most').fill('3d');
    await wait.getByLabel('If the time runs out, go to').selectOption({ label: 'push-2 (Push)' });
    await stepForm(page, 'push-2').getByLabel('Title').fill('Need a hand?');
    await stepForm(page, 'push-2').getByLabel('Body').fill('Reply to this and we will help');
    await page.getByRole('button', { name: 'Create automation' }).click();
    await page.getByRole('heading', { name: 'Trial nurture' }).waitFor();
    await page.getByText('Converted on event plan.upgraded where plan is one of').waitFor();
    // The graph: the wait's two outcomes side by side.
    await page.getByRole('group', { name: 'If the event comes' }).getByText('End').waitFor();
    await page.getByRole('group', { name: 'If the time runs out' }).getByRole('group', { name: 'Step push-2' }).waitFor();
    const automationId = page.url().split('/').at(-1)!;
    const saved = await automation(automationId);
    expect(saved).toMatchObject({
      goal: { event: 'plan.upgraded', conditions: [{ path: 'plan', operator: 'in', value: ['pro', 'team'] }] },
      steps: [
        { id: 'push-1', next: 'wait-until-1' },
        { id: 'wait-until-1', type: 'wait_until', event: 'project.created', conditions: [{ path: 'members', operator: 'gte', value: 2 }], timeout: '3d', matchedBranch: null, timeoutBranch: 'push-2' },
        { id: 'push-2', next: null },
      ],
    });

    await api(herald, 'POST', `/automations/${automationId}/activate`, undefined, auth);
    await postEvent({ name: 'trial.started', subscriberId: buyerId });
    await expect.poll(() => push.requestsFor(buyer.id).length, { timeout: 15_000 }).toBe(1);
    await expect.poll(async () => (await api<{ data: { state: string }[] }>(herald, 'GET', `/automations/${automationId}/enrollments`, undefined, auth)).data[0]?.state).toBe('waiting');
    await postEvent({ name: 'plan.upgraded', subscriberId: buyerId, properties: { plan: 'pro' } });
    await page.reload();
    // Enrolled, active, waiting, completed, converted, exited, failed, completion, goal conversion.
    await expect
      .poll(async () => page.getByLabel('Enrollment totals').getByRole('definition').allTextContents(), { timeout: 15_000 })
      .toEqual(['1', '0', '0', '0', '1', '0', '0', '0%', '100%']);
    await page.locator('summary', { hasText: 'Numbers' }).click();
    const row = page.getByRole('table', { name: 'Per-step stats' }).getByRole('row').filter({ hasText: 'wait-until-1' });
    expect(await row.getByRole('cell').allTextContents()).toEqual(['wait-until-1', 'wait_until', '1', '0', '0', '0', '1']);
    await expectAccessible(page, 'a wait-until step and a goal with a conversion');

    // The list: the people converted and the goal conversion for a flow with a goal, "No goal" for one without.
    await openTab(page, 'Automations');
    const listed = page.getByRole('table', { name: 'Automations' });
    const conversions = async (name: string) => (await listed.getByRole('row', { name: new RegExp(`^${name}`) }).getByRole('cell').allInnerTexts())[9];
    await expect.poll(() => conversions('Trial nurture')).toBe('1 (100%)');
    expect(await conversions('Abandoned cart')).toBe('No goal');
    expect(await listed.getByRole('columnheader').allInnerTexts()).toContain('Conversions');
    await context.close();
  });

  it('the list pauses, archives and deletes automations, each confirmed', async () => {
    const { context, page } = await signIn(ADMIN);
    await openTab(page, 'Automations');
    const row = (name: string) => page.getByRole('table', { name: 'Automations' }).getByRole('row', { name: new RegExp(`^${name}`) });
    const cells = async (name: string) => (await row(name).getByRole('cell').allInnerTexts()).slice(0, 9);
    await expect.poll(() => cells('Abandoned cart')).toEqual(['Abandoned cart', 'active', 'On event cart.abandoned', '2', '1', '0', '1', '0', '0%']);
    expect(await cells('Order follow-up')).toEqual(['Order follow-up', 'draft', 'On event order.paid where total ≥ 100', '1', '0', '0', '0', '0', '0%']);
    await screenshot(page, 'automations');

    await page.getByRole('button', { name: 'Pause Abandoned cart' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Pause automation' }).click();
    await expect.poll(async () => (await cells('Abandoned cart'))[1]).toBe('paused');
    // The draft's email sender is on no verified domain: activation is refused, in the dialog, naming the step.
    await page.getByRole('button', { name: 'Activate Order follow-up' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Activate automation' }).click();
    await page.getByRole('alertdialog').getByRole('alert').filter({ hasText: /Step \d+ \(Send email\), sender address: the sender’s domain \S+ is not verified — verify it in Sending domains/ }).waitFor();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Cancel' }).click();
    await page.getByRole('button', { name: 'Archive Order follow-up' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Archive automation' }).click();
    await expect.poll(async () => (await cells('Order follow-up'))[1]).toBe('archived');
    expect(await row('Order follow-up').getByRole('button', { name: /^(Activate|Pause|Archive) / }).count()).toBe(0);
    await page.getByRole('button', { name: 'Delete Order follow-up' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Delete automation' }).click();
    await expect.poll(() => row('Order follow-up').count()).toBe(0);
    await context.close();
  });

  it('a VIEWER sees automations, the flow with its stats, enrollments and events, read-only', async () => {
    const { context, page } = await signIn(VIEWER);
    await openTab(page, 'Automations');
    await page.getByRole('link', { name: 'Abandoned cart', exact: true }).click();
    // The deleted enrollment took its step history with it: the stats count the enrollment on record.
    await expect.poll(() => statsOf(node(page, 'reminder-push'))).toEqual([1, 1, 0, 1]);
    expect(await page.getByRole('form', { name: 'Automation' }).getByLabel('Name', { exact: true }).isDisabled()).toBe(true);
    expect(await page.getByRole('button', { name: /^(Save automation|Activate|Pause|Archive|Delete)/ }).count()).toBe(0);
    await expectAccessible(page, 'an automation as a viewer');
    await page.getByRole('link', { name: 'Enrollments (1)' }).click();
    await page.getByRole('table', { name: 'Enrollments' }).waitFor();
    expect(await page.getByRole('button', { name: /^Delete/ }).count()).toBe(0);
    await openTab(page, 'Automations');
    expect(await page.getByRole('link', { name: 'New automation' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: /^Use this starter/ }).count()).toBe(0);
    await openTab(page, 'Events');
    await page.getByRole('table', { name: 'Recent events' }).waitFor();
    await context.close();
  });

  it('no page broke its Content-Security-Policy', () => {
    expect(session.cspViolations).toEqual([]);
  });
});
