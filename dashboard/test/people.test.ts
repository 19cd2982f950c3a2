// The People page in Chromium against `herald serve`: partial search, sort, a selection tagged, exported and deleted in
// bulk, an attribute set on a selection, "select all matching", a person's attributes edited with their types, a
// VIEWER's read-only view, 390 px (skipped without a Chromium).
import { readFile } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, expectAccessible, findChromium, screenshot, startSession, VIEWER, ADMIN, type Herald, type Session } from './browser.js';

const chromiumPath = findChromium();

interface Person {
  id: string;
  name: string | null;
  tags: string[];
  attributes: Record<string, unknown>;
}

describe.skipIf(!chromiumPath)('the People page in Chromium', { timeout: 90_000 }, () => {
  let session: Session;
  let herald: Herald;
  let auth: Record<string, string>;
  let projectId: string;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    session = await startSession(chromiumPath!);
    ({ herald, auth, projectId } = session);
    const people: [string, Record<string, unknown>][] = [
      ['ada', { email: 'ada.lovelace@example.com', attributes: { first_name: 'Ada', last_name: 'Lovelace', plan: 'pro', seats: 3, trial: true } }],
      ['grace', { email: 'grace@example.com', attributes: { name: 'Grace Hopper' } }],
      ['alan', { email: 'alan@example.org', externalId: 'crm-100%', attributes: { name: 'Alan Turing' } }],
      ['phone', { phone: '+14155550123' }],
      ['zed', { email: 'zed@example.net', attributes: { name: 'Zed Shaw' }, tags: ['old'] }],
    ];
    for (const [key, fields] of people) ids[key] = (await api<{ id: string }>(herald, 'POST', '/contacts', { projectId, ...fields }, auth)).id;
  }, 120_000);

  afterAll(async () => {
    await session?.stop();
  }, 60_000);

  const names = async (page: Page) => (await page.locator('table.people tbody td.person-name').allInnerTexts()).map((text) => text.trim());
  const row = (page: Page, name: string) => page.locator('table.people tbody tr').filter({ has: page.getByRole('link', { name, exact: true }) });

  it('lists people by name with their email, phone and channels; searches partially and sorts', async () => {
    const { context, page } = await session.newPage();
    await session.openDemo(page, ADMIN);
    await page.goto(`${herald.url}/app/projects/${projectId}/subscribers`);
    await page.getByRole('link', { name: 'Ada Lovelace', exact: true }).waitFor();
    // A contact without a name is shown by its phone number; channels in words.
    await row(page, '+14155550123').waitFor();
    expect(await row(page, '+14155550123').getByRole('list', { name: 'Reachable on' }).innerText()).toMatch(/SMS\s*WhatsApp/);
    expect(await row(page, 'Grace Hopper').getByRole('cell').nth(2).innerText()).toBe('grace@example.com');
    await expectAccessible(page, 'people');
    await screenshot(page, 'people');

    // Partial search, debounced, in the URL: a part of the name, then of an external id with a % in it.
    await page.getByLabel('Search people').fill('lovel');
    await page.waitForURL(/q=lovel/);
    await expect.poll(() => names(page)).toEqual(['Ada Lovelace']);
    await page.getByLabel('Search people').fill('100%');
    await expect.poll(() => names(page)).toEqual(['Alan Turing']);
    await page.getByLabel('Search people').fill('');
    await expect.poll(() => names(page).then((list) => list.length)).toBe(5);

    // Sort by name: ascending, then descending; aria-sort says which.
    const nameHeader = page.getByRole('columnheader', { name: /^Name/ });
    await nameHeader.getByRole('link').click();
    // Without a name last, either way.
    await expect.poll(() => names(page)).toEqual(['Ada Lovelace', 'Alan Turing', 'Grace Hopper', 'Zed Shaw', '+14155550123']);
    expect(await nameHeader.getAttribute('aria-sort')).toBe('ascending');
    await nameHeader.getByRole('link').click();
    await expect.poll(() => names(page)).toEqual(['Zed Shaw', 'Grace Hopper', 'Alan Turing', 'Ada Lovelace', '+14155550123']);
    expect(await nameHeader.getAttribute('aria-sort')).toBe('descending');
    expect(await page.getByRole('columnheader', { name: /^Email/ }).getAttribute('aria-sort')).toBe('none');
    await context.close();
  });

  it('tags, exports and deletes a selection; tags everyone matching', async () => {
    const { context, page } = await session.newPage();
    await session.openDemo(page, ADMIN);
    await page.goto(`${herald.url}/app/projects/${projectId}/subscribers?sort=name&order=asc`);
    await page.getByRole('link', { name: 'Ada Lovelace', exact: true }).waitFor();

    await page.getByRole('checkbox', { name: 'Select Ada Lovelace' }).check();
    await page.getByRole('checkbox', { name: 'Select Grace Hopper' }).check();
    const bar = page.getByRole('form', { name: 'Selected people' });
    await bar.getByText('2 people selected.').waitFor();
    await expectAccessible(page, 'people with a selection');

    // A tag too long is refused beside the field, in words.
    await bar.getByLabel('Tags for the selection (comma-separated)').fill('x'.repeat(65));
    await bar.getByRole('button', { name: 'Add tags' }).click();
    await bar.getByText('Each tag can have at most 64 characters.').waitFor();
    await bar.getByLabel('Tags for the selection (comma-separated)').fill('vip, q3');
    await bar.getByRole('button', { name: 'Add tags' }).click();
    await bar.getByText('Tagged 2 people (2 changed).').waitFor();
    await expect.poll(() => row(page, 'Grace Hopper').getByRole('cell').nth(7).innerText()).toBe('vip, q3');
    await bar.getByLabel('Tags for the selection (comma-separated)').fill('q3');
    await bar.getByRole('button', { name: 'Remove tags' }).click();
    await bar.getByText('Untagged 2 people (2 changed).').waitFor();
    expect((await api<Person>(herald, 'GET', `/subscribers/${ids.ada}`, undefined, auth)).tags).toEqual(['vip']);

    const download = page.waitForEvent('download');
    await bar.getByRole('button', { name: 'Export CSV' }).click();
    const csv = (await readFile(await (await download).path(), 'utf8')).trim().split(/\r?\n/);
    expect(csv[0]).toBe('id,name,email,phone,externalId,channels,status,tags,lastSeenAt,createdAt');
    expect(csv.slice(1).map((line) => line.split(',')[1]).sort()).toEqual(['Ada Lovelace', 'Grace Hopper']);

    // Everyone on the page, then everyone matching (the page holds 25: here the page is everyone, so a search narrows).
    await bar.getByRole('button', { name: 'Clear selection' }).click();
    await page.getByRole('checkbox', { name: 'Select everyone on this page' }).check();
    await bar.getByText('5 people selected.').waitFor();
    await bar.getByLabel('Tags for the selection (comma-separated)').fill('everyone');
    await bar.getByRole('button', { name: 'Add tags' }).click();
    await bar.getByText('Tagged 5 people (5 changed).').waitFor();

    // Delete one, confirmed.
    await bar.getByRole('button', { name: 'Clear selection' }).click();
    await page.getByRole('checkbox', { name: 'Select Zed Shaw' }).check();
    await bar.getByRole('button', { name: 'Delete selected' }).click();
    await expectAccessible(page, 'the bulk delete confirmation');
    await page.getByRole('alertdialog').getByRole('button', { name: 'Delete' }).click();
    await page.getByText('Deleted 1 person.').waitFor();
    await expect.poll(() => names(page)).toEqual(['Ada Lovelace', 'Alan Turing', 'Grace Hopper', '+14155550123']);
    await context.close();
  });

  it('sets an attribute on a selection, typed as the attribute list has it, and removes it', async () => {
    const { context, page } = await session.newPage();
    await session.openDemo(page, ADMIN);
    await page.goto(`${herald.url}/app/projects/${projectId}/subscribers?sort=name&order=asc`);
    await page.getByRole('link', { name: 'Ada Lovelace', exact: true }).waitFor();
    await page.getByRole('checkbox', { name: 'Select Grace Hopper' }).check();
    await page.getByRole('checkbox', { name: 'Select Alan Turing' }).check();
    const bar = page.getByRole('form', { name: 'Selected people' });
    await bar.getByText('2 people selected.').waitFor();

    // `seats` is a number in the project's attribute list (Ada's 3): the type follows the name, still changeable.
    await bar.getByLabel('Attribute name').fill('seats');
    await expect.poll(() => bar.getByLabel('Type').inputValue()).toBe('number');
    await bar.getByLabel('Value').fill('many');
    await bar.getByRole('button', { name: 'Set attribute' }).click();
    await bar.getByText('Enter a number, such as 42 or 3.5.').waitFor();
    await expectAccessible(page, 'the bulk attribute form with an error');
    await bar.getByLabel('Value').fill('5');
    await bar.getByRole('button', { name: 'Set attribute' }).click();
    await bar.getByText('Updated 2 people (2 changed).').waitFor();
    expect((await api<Person>(herald, 'GET', `/subscribers/${ids.alan}`, undefined, auth)).attributes).toEqual({ name: 'Alan Turing', seats: 5 });
    expect((await api<Person>(herald, 'GET', `/subscribers/${ids.grace}`, undefined, auth)).attributes).toMatchObject({ seats: 5 });
    expect((await api<Person>(herald, 'GET', `/subscribers/${ids.ada}`, undefined, auth)).attributes).toMatchObject({ seats: 3 });

    // A new name: the type chosen here; yes / no is a choice, not typed text.
    await bar.getByLabel('Attribute name').fill('beta_tester');
    await bar.getByLabel('Type').selectOption('boolean');
    await bar.getByLabel('Value').selectOption('true');
    await bar.getByRole('button', { name: 'Set attribute' }).click();
    await expect.poll(async () => (await api<Person>(herald, 'GET', `/subscribers/${ids.alan}`, undefined, auth)).attributes.beta_tester).toBe(true);
    const listed = await api<{ data: { name: string; type: string }[] }>(herald, 'GET', `/projects/${projectId}/attributes`, undefined, auth);
    expect(listed.data).toContainEqual(expect.objectContaining({ name: 'beta_tester', type: 'boolean' }));

    await bar.getByLabel('Attribute name').fill('seats');
    await bar.getByRole('button', { name: 'Remove attribute' }).click();
    await expect.poll(async () => (await api<Person>(herald, 'GET', `/subscribers/${ids.alan}`, undefined, auth)).attributes).toEqual({
      name: 'Alan Turing',
      beta_tester: true,
    });
    await context.close();
  });

  it('selects all matching a search across pages and exports them', async () => {
    for (let i = 0; i < 27; i++) await api(herald, 'POST', '/contacts', { projectId, email: `bulk-${String(i).padStart(2, '0')}@many.example` }, auth);
    const { context, page } = await session.newPage();
    await session.openDemo(page, ADMIN);
    await page.goto(`${herald.url}/app/projects/${projectId}/subscribers?q=many.example`);
    await expect.poll(() => page.getByRole('navigation', { name: 'Pagination' }).textContent()).toContain('27 in all');
    await page.getByRole('checkbox', { name: 'Select everyone on this page' }).check();
    const bar = page.getByRole('form', { name: 'Selected people' });
    await bar.getByRole('button', { name: 'Select all 27 people matching' }).click();
    await bar.getByText('All 27 people matching selected.').waitFor();
    await bar.getByLabel('Tags for the selection (comma-separated)').fill('many');
    await bar.getByRole('button', { name: 'Add tags' }).click();
    await bar.getByText('Tagged 27 people (27 changed).').waitFor();
    const download = page.waitForEvent('download');
    await bar.getByRole('button', { name: 'Export CSV' }).click();
    const csv = (await readFile(await (await download).path(), 'utf8')).trim().split(/\r?\n/);
    expect(csv).toHaveLength(28);
    expect(csv.slice(1).every((line) => line.includes('@many.example') && line.includes('many'))).toBe(true);
    await context.close();
  });

  it("edits a person's attributes with their types, errors beside the field", async () => {
    const { context, page } = await session.newPage();
    await session.openDemo(page, ADMIN);
    await page.goto(`${herald.url}/app/projects/${projectId}/subscribers/${ids.ada}`);
    await page.getByRole('heading', { name: 'Ada Lovelace' }).waitFor();
    const editor = page.getByRole('form', { name: 'Attributes' });
    expect(await editor.getByLabel('Value of seats').inputValue()).toBe('3');
    expect(await editor.getByLabel('Type of seats').inputValue()).toBe('number');
    expect(await editor.getByLabel('Value of trial').inputValue()).toBe('true');
    await expectAccessible(page, 'person with the attribute editor');
    await screenshot(page, 'person');

    await editor.getByRole('button', { name: 'Save attributes' }).click();
    await editor.getByText('Nothing has changed: there is nothing to save.').waitFor();

    // A number that is not one, and an attribute without a name: refused in words, beside each field, nothing sent.
    await editor.getByLabel('Value of seats').fill('many');
    await editor.getByRole('button', { name: 'Add attribute' }).click();
    await editor.getByRole('button', { name: 'Save attributes' }).click();
    await editor.getByText('Enter a number, such as 42 or 3.5.').waitFor();
    await editor.getByText('Enter a name for this attribute.').waitFor();
    expect(await editor.getByLabel('Value of seats').getAttribute('aria-invalid')).toBe('true');
    await expectAccessible(page, 'attribute errors');

    await editor.getByLabel('Value of seats').fill('5');
    await editor.getByLabel('Name of attribute 6').fill('city');
    await editor.getByLabel('Value of city').fill('London');
    await editor.getByLabel('Value of trial').selectOption('false');
    await editor.getByRole('button', { name: 'Remove plan' }).click();
    // Rename first_name (rows are in the order the database keeps the keys).
    const keys = await editor.getByRole('textbox', { name: /^Name of attribute/ }).evaluateAll((inputs) => inputs.map((input) => (input as HTMLInputElement).value));
    await editor.getByLabel(`Name of attribute ${keys.indexOf('first_name') + 1}`, { exact: true }).fill('name');
    await editor.getByLabel('Value of name').fill('Countess Ada');
    await editor.getByRole('button', { name: 'Save attributes' }).click();
    await editor.getByText('Attributes saved.').waitFor();
    const saved = await api<Person>(herald, 'GET', `/subscribers/${ids.ada}`, undefined, auth);
    expect(saved.attributes).toEqual({ name: 'Countess Ada', last_name: 'Lovelace', seats: 5, trial: false, city: 'London' });
    await page.getByRole('heading', { name: 'Countess Ada' }).waitFor();
    await context.close();
  });

  it("shows a VIEWER the list and a person's attributes read-only, and exports", async () => {
    const { context, page } = await session.newPage();
    await session.openDemo(page, VIEWER);
    await page.goto(`${herald.url}/app/projects/${projectId}/subscribers?sort=name&order=asc`);
    await page.getByRole('checkbox', { name: 'Select Grace Hopper' }).check();
    const bar = page.getByRole('form', { name: 'Selected people' });
    await bar.getByRole('button', { name: 'Export CSV' }).waitFor();
    expect(await bar.getByRole('button', { name: 'Add tags' }).count()).toBe(0);
    expect(await bar.getByRole('button', { name: 'Delete selected' }).count()).toBe(0);
    const download = page.waitForEvent('download');
    await bar.getByRole('button', { name: 'Export CSV' }).click();
    expect((await readFile(await (await download).path(), 'utf8')).trim().split(/\r?\n/)).toHaveLength(2);
    await page.getByRole('link', { name: 'Grace Hopper', exact: true }).click();
    await page.getByRole('heading', { name: 'Grace Hopper' }).waitFor();
    expect(await page.getByRole('button', { name: 'Save attributes' }).count()).toBe(0);
    await expectAccessible(page, "a VIEWER's person page");
    await context.close();
  });

  it('at 390 px the table scrolls inside itself, not the page', async () => {
    const { context, page } = await session.newPage({ viewport: { width: 390, height: 844 } });
    await session.openDemo(page, ADMIN);
    await page.goto(`${herald.url}/app/projects/${projectId}/subscribers?sort=name&order=asc`);
    await page.getByRole('link', { name: 'Grace Hopper', exact: true }).waitFor();
    const widths = await page.evaluate(() => {
      const region = document.querySelector('.table-scroll')!;
      return { page: document.documentElement.scrollWidth, region: region.scrollWidth, visible: region.clientWidth };
    });
    expect(widths.page).toBeLessThanOrEqual(390);
    expect(widths.region).toBeGreaterThan(widths.visible);
    await expectAccessible(page, 'people at 390 px');
    await screenshot(page, 'people-mobile');
    await context.close();
  });

  it('no page broke its Content-Security-Policy', () => {
    expect(session.cspViolations).toEqual([]);
  });
});
