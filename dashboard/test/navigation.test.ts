// The project sidebar in Chromium against `herald serve`: its groups, the current place on list and detail pages, the
// project switcher, what a VIEWER is not shown (and no 403 anywhere they can go), the "Menu" at 390 px (skipped without a Chromium).
import type { Page, Response } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, api, expectAccessible, findChromium, sidewaysOverflow, startSession, VIEWER, type Herald, type Session } from './browser.js';

const chromiumPath = findChromium();

const GROUPS: [string, string[]][] = [
  ['Messages', ['Push campaigns', 'Email campaigns', 'Automations', 'Transactional log']],
  ['Audience', ['People', 'Segments', 'Events', 'Import contacts', 'Audience analytics']],
  ['Content', ['Email templates', 'WhatsApp templates']],
  ['Channels', ['Push', 'Sending domains', 'Email provider', 'Suppressions', 'SMS', 'WhatsApp']],
  ['Settings', ['Project', 'API keys', 'Members']],
];

describe.skipIf(!chromiumPath)('the project sidebar in Chromium', { timeout: 120_000 }, () => {
  let session: Session;
  let herald: Herald;
  let auth: Record<string, string>;
  let projectId: string;
  let shopId: string;
  let personId: string;

  beforeAll(async () => {
    session = await startSession(chromiumPath!);
    ({ herald, auth, projectId } = session);
    shopId = (await api<{ id: string }>(herald, 'POST', '/projects', { name: 'Shop' }, auth)).id;
    personId = (await api<{ id: string }>(herald, 'POST', '/contacts', { projectId, email: 'ada@example.org', attributes: { name: 'Ada' } }, auth)).id;
  }, 120_000);

  afterAll(async () => {
    await session?.stop();
  }, 60_000);

  const nav = (page: Page) => page.getByRole('navigation', { name: 'Project' });
  const current = (page: Page) => nav(page).locator('a[aria-current="page"]');
  const group = (page: Page, title: string) => nav(page).getByRole('list', { name: title });

  it('groups the pages, shows where the user is on lists and detail pages, and opens a project on its overview', async () => {
    const { context, page } = await session.newPage();
    await session.openDemo(page, ADMIN);
    await page.waitForURL(`**/app/projects/${projectId}/overview`);
    expect(await current(page).allInnerTexts()).toEqual(['Overview']);
    for (const [title, links] of GROUPS) {
      expect((await group(page, title).getByRole('link').allInnerTexts()).map((text) => text.trim()), title).toEqual(links);
    }
    expect(await page.title()).toBe('Overview · Demo · Herald');

    await group(page, 'Audience').getByRole('link', { name: 'People' }).click();
    await page.waitForURL(`**/app/projects/${projectId}/subscribers`);
    expect(await current(page).allInnerTexts()).toEqual(['People']);
    expect(await page.title()).toBe('People · Demo · Herald');
    await page.getByRole('link', { name: 'Ada', exact: true }).click();
    await page.waitForURL(`**/subscribers/${personId}`);
    // A person's page is still People's place.
    expect(await current(page).allInnerTexts()).toEqual(['People']);
    expect(await nav(page).locator('.nav-group.current .nav-heading').innerText()).toMatch(/audience/i);

    // Push is the settings' web push part; Project the settings as a whole.
    await group(page, 'Channels').getByRole('link', { name: 'Push', exact: true }).click();
    await page.waitForURL(`**/app/projects/${projectId}/settings#web-push`);
    expect(await current(page).allInnerTexts()).toEqual(['Push']);
    await group(page, 'Settings').getByRole('link', { name: 'Project' }).click();
    await page.waitForURL(`**/app/projects/${projectId}/settings`);
    expect(await current(page).allInnerTexts()).toEqual(['Project']);

    // The project's address alone opens its overview; the projects list links there too.
    await page.goto(`${herald.url}/app/projects/${projectId}`);
    await page.waitForURL(`**/app/projects/${projectId}/overview`);
    await page.getByRole('heading', { name: 'Overview', level: 2 }).waitFor();
    await page.goto(`${herald.url}/app/projects`);
    expect(await page.getByRole('link', { name: 'Demo' }).getAttribute('href')).toBe(`/app/projects/${projectId}/overview`);
    await context.close();
  });

  it('switches project onto the same page, a detail page onto its list', async () => {
    const { context, page } = await session.newPage();
    await session.openDemo(page, ADMIN);
    const switcher = page.getByRole('combobox', { name: 'Project' });
    expect(await switcher.locator('option').allInnerTexts()).toEqual(expect.arrayContaining(['Demo', 'Shop']));
    await nav(page).getByRole('link', { name: 'Segments' }).click();
    await page.waitForURL(`**/app/projects/${projectId}/segments`);
    await switcher.selectOption({ label: 'Shop' });
    await page.waitForURL(`**/app/projects/${shopId}/segments`);
    await page.getByRole('heading', { name: 'Shop', level: 1 }).waitFor();
    expect(await current(page).allInnerTexts()).toEqual(['Segments']);

    await page.goto(`${herald.url}/app/projects/${projectId}/subscribers/${personId}`);
    await page.getByRole('heading', { name: 'Ada' }).waitFor();
    await switcher.selectOption({ label: 'Shop' });
    await page.waitForURL(`**/app/projects/${shopId}/subscribers`);
    await page.getByRole('heading', { name: 'Shop', level: 1 }).waitFor();
    await context.close();
  });

  it('shows a VIEWER no API keys or import, and no page they can reach answers 403', async () => {
    const { context, page } = await session.newPage();
    const refused: string[] = [];
    page.on('response', (response: Response) => {
      if (response.status() === 403) refused.push(response.url());
    });
    await session.openDemo(page, VIEWER);
    const links = (await nav(page).getByRole('link').allInnerTexts()).map((text) => text.trim());
    expect(links).not.toContain('API keys');
    expect(links).not.toContain('Import contacts');
    expect(links).toContain('People');
    // Members, the organization's page, comes last: the project's sidebar is gone after it.
    expect(links.at(-1)).toBe('Members');
    for (const name of links) {
      await nav(page).getByRole('link', { name, exact: true }).click();
      await page.locator('main h2, main .empty, main table').first().waitFor();
      // Each page's first reads settle before the next.
      await page.waitForLoadState('networkidle');
      expect(await page.getByText('You do not have permission').count(), name).toBe(0);
    }
    expect(refused).toEqual([]);

    // Typed in, the address says whom the page is for, without asking the server (nothing to try again).
    await page.goto(`${herald.url}/app/projects/${projectId}/keys`);
    await page.getByText('API keys is for owners and admins of the organization; your role is viewer.').waitFor();
    expect(await page.getByRole('button', { name: 'Try again' }).count()).toBe(0);
    expect(refused).toEqual([]);
    await context.close();
  });

  it('folds behind "Menu" at 390 px, says where the page is, and closes on navigation', async () => {
    const { context, page } = await session.newPage({ viewport: { width: 390, height: 844 } });
    await session.openDemo(page, ADMIN);
    const menu = page.getByRole('button', { name: 'Menu' });
    expect(await menu.getAttribute('aria-expanded')).toBe('false');
    expect(await nav(page).count()).toBe(0);
    expect(await page.locator('.menu-place').innerText()).toBe('Overview');
    expect(await sidewaysOverflow(page)).toEqual([]);
    await expectAccessible(page, 'the overview at 390 px, menu closed');

    await menu.click();
    expect(await menu.getAttribute('aria-expanded')).toBe('true');
    await nav(page).waitFor();
    expect(await sidewaysOverflow(page)).toEqual([]);
    await expectAccessible(page, 'the open menu at 390 px');

    await group(page, 'Audience').getByRole('link', { name: 'Segments' }).click();
    await page.waitForURL(`**/app/projects/${projectId}/segments`);
    expect(await menu.getAttribute('aria-expanded')).toBe('false');
    expect(await nav(page).count()).toBe(0);
    expect(await page.locator('.menu-place').innerText()).toBe('Audience › Segments');
    await context.close();
  });
});
