// The condition builder in Chromium against `herald serve`: "pro plan AND ordered in the last 30 days" built with the
// keyboard and typeahead from seeded people, attributes and events, the reach following each condition, saved, reopened
// and said in words; axe at 1280 and 390 px (skipped without a Chromium).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROME_UA, pushSubscription } from '../../server/test/fixtures.js';
import { addCondition, ADMIN, api, expectAccessible, findChromium, screenshot, sidewaysOverflow, startSession, type Session } from './browser.js';

const chromiumPath = findChromium();
const DAY = 24 * 60 * 60 * 1000;
const SENTENCE = 'plan is “pro” · performed order.completed in the last 30 days';

describe.skipIf(!chromiumPath)('the segment condition builder in Chromium', { timeout: 120_000 }, () => {
  let session: Session;

  beforeAll(async () => {
    session = await startSession(chromiumPath!);
    const { herald, auth, projectId } = session;
    // Four people: pro and ordered 5 days ago, pro and ordered 60 days ago, free and ordered 3 days ago, pro and never ordered.
    const people = [
      { plan: 'pro', orderedDaysAgo: 5 },
      { plan: 'pro', orderedDaysAgo: 60 },
      { plan: 'free', orderedDaysAgo: 3 },
      { plan: 'pro', orderedDaysAgo: undefined },
    ];
    for (const [i, person] of people.entries()) {
      const made = await api<{ id: string; token: string }>(herald, 'POST', '/subscribers', { projectId, ...pushSubscription(), userAgent: CHROME_UA }, auth);
      await api(herald, 'POST', '/subscribers/update', { token: made.token, email: `person${i}@example.com`, attributes: { plan: person.plan } }, auth);
      if (person.orderedDaysAgo !== undefined) {
        const occurredAt = new Date(Date.now() - person.orderedDaysAgo * DAY).toISOString();
        await api(herald, 'POST', '/events', { projectId, name: 'order.completed', subscriberId: made.id, occurredAt, properties: { total: 80 } }, auth);
      }
    }
  }, 120_000);

  afterAll(async () => {
    await session?.stop();
  }, 60_000);

  it('builds "pro plan AND ordered in the last 30 days" with the reach following, saves it and says it in words', async () => {
    const { herald, projectId, auth } = session;
    const { page } = await session.newPage();
    await session.openDemo(page, ADMIN);
    await page.goto(`${herald.url}/app/projects/${projectId}/segments/new`);
    const reach = page.getByTestId('reach');
    await expect.poll(() => reach.textContent()).toBe('4');
    await expectAccessible(page, 'the empty condition builder');

    // With the keyboard: "+ Condition" opens the kinds, Attribute adds a row and its first control takes the focus.
    await page.getByRole('button', { name: '+ Condition' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('group', { name: 'Kind of condition' }).getByRole('button', { name: 'Attribute', exact: true }).focus();
    await page.keyboard.press('Enter');
    const plan = page.getByRole('group', { name: 'Condition 1: Attribute' });
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute('name'))).toBe('filters.all.0.attribute');
    // Typeahead: the project's attributes, then the attribute's frequent values.
    await expect.poll(() => page.locator('datalist option[value="plan"]').count()).toBe(1);
    await page.keyboard.type('plan');
    expect(await plan.getByLabel('Operator').inputValue()).toBe('eq');
    await plan.getByLabel('Value').fill('pro');
    await expect.poll(() => plan.locator('datalist option').evaluateAll((options) => options.map((o) => (o as HTMLOptionElement).value))).toContain('pro');
    await expect.poll(() => reach.textContent()).toBe('3');

    await addCondition(page, 'Event');
    const order = page.getByRole('group', { name: 'Condition 2: Event' });
    await expect.poll(() => page.locator('datalist option[value="order.completed"]').count()).toBe(1);
    await order.getByLabel('Event').fill('order.completed');
    await expect.poll(() => reach.textContent()).toBe('2');
    await order.getByLabel('When').selectOption({ label: 'in the last … days' });
    await order.getByLabel('Days').fill('30');
    await expect.poll(() => reach.textContent()).toBe('1');
    await expect.poll(() => page.getByTestId('audience-sentence').innerText()).toBe(`Who: ${SENTENCE}`);
    await expectAccessible(page, 'the condition builder with an attribute and an event condition');
    await screenshot(page, 'segment-conditions');

    await page.getByLabel('Segment name').fill('Pro customers who ordered');
    await page.getByRole('button', { name: 'Save segment' }).click();
    const row = page.getByRole('row').filter({ hasText: 'Pro customers who ordered' });
    await row.waitFor();
    expect(await row.getByRole('cell').nth(1).innerText()).toBe(SENTENCE);
    const saved = await api<{ data: { id: string; filters: unknown }[] }>(herald, 'GET', `/segments/project/${projectId}`, undefined, auth);
    expect(saved.data[0]!.filters).toStrictEqual({
      all: [
        { attribute: 'plan', operator: 'eq', value: 'pro' },
        { event: 'order.completed', withinLastDays: 30 },
      ],
    });

    // Reopened: the same rows, the same sentence and reach.
    await row.getByRole('link', { name: 'Pro customers who ordered' }).click();
    await expect.poll(() => page.getByTestId('audience-sentence').innerText()).toBe(`Who: ${SENTENCE}`);
    expect(await page.getByRole('group', { name: 'Condition 1: Attribute' }).getByLabel('Attribute').inputValue()).toBe('plan');
    expect(await page.getByRole('group', { name: 'Condition 2: Event' }).getByLabel('Days').inputValue()).toBe('30');
    await expect.poll(() => reach.textContent()).toBe('1');

    // A group of "any": removing it again leaves the saved tree as it was.
    await page.getByRole('button', { name: '+ Group' }).last().click();
    const group = page.getByRole('group', { name: 'Group 3' });
    await addCondition(group, 'Tags');
    await group.getByLabel('Tags: any of').fill('vip');
    await expect.poll(() => page.getByTestId('audience-sentence').innerText()).toBe(`Who: ${SENTENCE} · tagged vip`);
    await expect.poll(() => reach.textContent()).toBe('0');
    await page.getByRole('button', { name: 'Remove group 3' }).click();
    await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe('+ Condition');
    await expect.poll(() => reach.textContent()).toBe('1');
    expect(session.cspViolations).toEqual([]);
  });

  it('is usable at 390 px: no sideways scroll, axe passes with the menu open', async () => {
    const { herald, projectId } = session;
    const { page } = await session.newPage({ viewport: { width: 390, height: 844 } });
    await session.openDemo(page, ADMIN);
    await page.goto(`${herald.url}/app/projects/${projectId}/segments`);
    await page.getByRole('link', { name: 'Pro customers who ordered' }).click();
    await expect.poll(() => page.getByTestId('audience-sentence').innerText()).toBe(`Who: ${SENTENCE}`);
    const order = page.getByRole('group', { name: 'Condition 2: Event' });
    await order.getByRole('button', { name: '+ Where' }).click();
    await page.getByRole('button', { name: '+ Condition' }).last().click();
    await page.getByRole('group', { name: 'Kind of condition' }).waitFor();
    expect(await sidewaysOverflow(page)).toEqual([]);
    await expectAccessible(page, 'the condition builder at 390 px');
    await screenshot(page, 'segment-conditions-mobile');
    expect(session.cspViolations).toEqual([]);
  });
});
