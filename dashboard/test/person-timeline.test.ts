// A person's timeline in Chromium against `herald serve`: the events the app sent and the automation they started,
// newest first, older pages on demand, links to the automation, axe (skipped without a Chromium).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pushSubscription, CHROME_UA } from '../../server/test/fixtures.js';
import { api, expectAccessible, findChromium, screenshot, startSession, ADMIN, type Session } from './browser.js';

const chromiumPath = findChromium();

describe.skipIf(!chromiumPath)('the person timeline in Chromium', { timeout: 90_000 }, () => {
  let session: Session;
  let personId: string;
  let automationId: string;

  beforeAll(async () => {
    session = await startSession(chromiumPath!);
    const { herald, auth, projectId } = session;
    const person = await api<{ id: string; token: string }>(herald, 'POST', '/subscribers', { projectId, ...pushSubscription(), userAgent: CHROME_UA }, auth);
    personId = person.id;
    await api(herald, 'POST', '/subscribers/update', { token: person.token, email: 'ada@example.com', attributes: { name: 'Ada Lovelace' } }, auth);
    const automation = await api<{ id: string }>(
      herald,
      'POST',
      '/automations',
      { projectId, name: 'Upgrade follow-up', trigger: { type: 'event', eventName: 'upgraded' }, steps: [{ id: 'wait', type: 'delay', duration: '1d', next: null }] },
      auth,
    );
    automationId = automation.id;
    await api(herald, 'POST', `/automations/${automationId}/activate`, undefined, auth);
    // 30 page views, then the upgrade: more than a page of the timeline.
    const minute = 60_000;
    const start = Date.now() - 40 * minute;
    await api(
      herald,
      'POST',
      '/events',
      { projectId, events: Array.from({ length: 30 }, (_, i) => ({ name: 'page_viewed', subscriberId: personId, occurredAt: new Date(start + i * minute).toISOString(), properties: { path: `/docs/${i}` } })) },
      auth,
    );
    await api(herald, 'POST', '/events', { projectId, name: 'upgraded', subscriberId: personId, properties: { plan: 'pro', seats: 3 } }, auth);
  }, 120_000);

  afterAll(async () => {
    await session?.stop();
  }, 60_000);

  it("shows the person's events and automation runs newest first, links the automation and loads older items on demand", async () => {
    const { herald, projectId } = session;
    const { page } = await session.newPage();
    await session.openDemo(page, ADMIN);
    await page.goto(`${herald.url}/app/projects/${projectId}/subscribers/${personId}`);
    const timeline = page.getByRole('region', { name: 'Timeline' });
    const rows = timeline.locator('tbody tr');
    await rows.first().waitFor();
    expect(await rows.count()).toBe(25);
    // The upgrade and the automation it started come first; the properties read in words.
    const top = (await rows.allInnerTexts()).slice(0, 2).join('\n');
    expect(top).toContain('Entered automation Upgrade follow-up');
    expect(top).toMatch(/Event upgraded\s.*plan: pro, seats: 3/);
    await timeline.getByRole('link', { name: 'Upgrade follow-up' }).first().waitFor();
    expect(await timeline.getByRole('link', { name: 'Upgrade follow-up' }).first().getAttribute('href')).toBe(`/app/projects/${projectId}/automations/${automationId}`);
    await expectAccessible(page, 'person timeline');
    await screenshot(page, 'person-timeline');

    await timeline.getByRole('button', { name: 'Show older' }).click();
    await expect.poll(() => rows.count()).toBe(32);
    await timeline.getByText('That is everything.').waitFor();
    expect(await rows.last().innerText()).toMatch(/Event page_viewed\s.*path: \/docs\/0/);
    expect(session.cspViolations).toEqual([]);
  });
});
