// The contacts import page in Chromium against `herald serve`: a CSV with its own header names mapped to fields and
// typed attributes, a bad cell listed by line and column, then the people stored with typed values; types taken from the
// project's attribute list (skipped without a Chromium).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, api, expectAccessible, findChromium, screenshot, sidewaysOverflow, startSession, type Session } from './browser.js';

const chromiumPath = findChromium();

interface Person {
  email: string | null;
  tags: string[];
  attributes: Record<string, unknown>;
}

describe.skipIf(!chromiumPath)('the contacts import page in Chromium', { timeout: 120_000 }, () => {
  let session: Session;

  beforeAll(async () => {
    session = await startSession(chromiumPath!);
  }, 120_000);

  afterAll(async () => {
    await session?.stop();
  }, 60_000);

  const csv = (score: string) =>
    Buffer.from(
      [
        'Customer ID,E-mail,First name,Score,VIP,Signed up,Notes,Labels',
        `imp-1,ada@example.com,Ada,"1,250.5",Yes,2024-03-01,call back,vip|beta`,
        `imp-2,bo@example.com,Bo,${score},no,2024-03-02T09:30:00+02:00,,`,
      ].join('\n'),
    );

  it('maps non-standard headers with guessed fields and types, lists a bad cell by line and column, then imports typed attributes', async () => {
    const { herald, auth, projectId } = session;
    const { context, page } = await session.newPage();
    await session.openDemo(page, ADMIN);
    await page.goto(`${herald.url}/app/projects/${projectId}/import`);
    const file = page.getByLabel('File (.csv or .json)');
    await file.setInputFiles({ name: 'crm export.csv', mimeType: 'text/csv', buffer: csv('lots') });

    const table = page.getByRole('table', { name: 'Where each column goes' });
    await table.waitFor();
    // Guesses from the header names and the samples.
    expect(await page.getByLabel('Where “Customer ID” goes').inputValue()).toBe('externalId');
    expect(await page.getByLabel('Where “E-mail” goes').inputValue()).toBe('email');
    expect(await page.getByLabel('Where “Labels” goes').inputValue()).toBe('tags');
    expect(await page.getByLabel('Where “First name” goes').inputValue()).toBe('attribute');
    expect(await page.getByLabel('Attribute name for “First name”').inputValue()).toBe('first_name');
    expect(await page.getByLabel('Type of “First name”').inputValue()).toBe('text');
    expect(await page.getByLabel('Type of “VIP”').inputValue()).toBe('boolean');
    expect(await page.getByLabel('Type of “Signed up”').inputValue()).toBe('date');
    // "lots" among the samples: the guess is text, so the user says number.
    expect(await page.getByLabel('Type of “Score”').inputValue()).toBe('text');
    expect(await table.getByRole('row').filter({ hasText: 'Score' }).textContent()).toContain('1,250.5');

    // By keyboard: Notes skipped, Score a number named points.
    await page.getByLabel('Where “Notes” goes').focus();
    await page.keyboard.press('End');
    expect(await page.getByLabel('Where “Notes” goes').inputValue()).toBe('skip');
    await page.getByLabel('Type of “Score”').selectOption('number');
    await page.getByLabel('Attribute name for “Score”').fill('points');
    await expectAccessible(page, 'contacts import mapping');
    await screenshot(page, 'contact-import-mapping');

    await page.getByRole('button', { name: 'Import' }).click();
    const errors = page.getByRole('table', { name: 'Errors by row' });
    await errors.waitFor();
    // rows[1] is line 3 of the file; the field is named by the file's column.
    const cells = await errors.getByRole('row').nth(1).getByRole('cell').allInnerTexts();
    expect(cells.slice(0, 2)).toEqual(['3', 'Score (attributes.points)']);
    expect(cells[2]).toMatch(/"lots" is not a number/);
    await expectAccessible(page, 'contacts import with a bad cell');

    // The corrected file: the mapping is guessed again from it (Score now a number), Notes skipped again.
    await file.setInputFiles({ name: 'crm export.csv', mimeType: 'text/csv', buffer: csv('12') });
    await expect.poll(() => page.getByLabel('Type of “Score”').inputValue()).toBe('number');
    await page.getByLabel('Where “Notes” goes').selectOption('skip');
    await page.getByLabel('Attribute name for “Score”').fill('points');
    await page.getByRole('button', { name: 'Import' }).click();
    await page.getByText('Imported 2 rows: 2 created, 0 updated.').waitFor();

    const person = async (externalId: string) =>
      (await api<{ data: Person[] }>(herald, 'GET', `/subscribers/project/${projectId}/external-id/${externalId}`, undefined, auth)).data[0]!;
    expect(await person('imp-1')).toMatchObject({
      email: 'ada@example.com',
      tags: ['vip', 'beta'],
      attributes: { first_name: 'Ada', points: 1250.5, vip: true, signed_up: '2024-03-01T00:00:00.000Z' },
    });
    const bo = await person('imp-2');
    expect(bo.attributes).toEqual({ first_name: 'Bo', points: 12, vip: false, signed_up: '2024-03-02T07:30:00.000Z' });

    // At 390 px: nothing scrolls sideways outside the table's own scroller, and axe still passes.
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await sidewaysOverflow(page)).toEqual([]);
    await expectAccessible(page, 'contacts import mapping at 390 px');
    await context.close();
  });

  it("takes each attribute column's type from the project's attribute list, still changeable", async () => {
    const { herald, auth, projectId } = session;
    const { context, page } = await session.newPage();
    await session.openDemo(page, ADMIN);
    await page.goto(`${herald.url}/app/projects/${projectId}/import`);
    // The first import listed points (number), vip (boolean) and first_name (text).
    const file = ['E-mail,Points,VIP,Level', 'cy@example.com,n/a,1,3', 'di@example.com,7,0,4'].join('\n');
    await page.getByLabel('File (.csv or .json)').setInputFiles({ name: 'more.csv', mimeType: 'text/csv', buffer: Buffer.from(file) });
    await page.getByRole('table', { name: 'Where each column goes' }).waitFor();
    // The samples say text ("n/a") and number (1 / 0); the list says number and yes / no.
    expect(await page.getByLabel('Type of “Points”').inputValue()).toBe('number');
    expect(await page.getByLabel('Type of “VIP”').inputValue()).toBe('boolean');
    expect(await page.getByLabel('Type of “Level”').inputValue()).toBe('number');
    // Renamed to a listed attribute: its type follows; then changed by hand, it stays.
    await page.getByLabel('Attribute name for “Level”').fill('first_name');
    await expect.poll(() => page.getByLabel('Type of “Level”').inputValue()).toBe('text');
    await page.getByLabel('Type of “Points”').selectOption('text');
    expect(await page.getByLabel('Type of “Points”').inputValue()).toBe('text');
    await expectAccessible(page, 'contacts import with listed types');
    await page.getByLabel('Type of “Points”').selectOption('number');
    await page.getByLabel('Attribute name for “Points”').fill('points');
    await page.getByLabel('Where “Points” goes').selectOption('skip');
    await page.getByLabel('Match existing subscribers by').selectOption('email');

    await page.getByRole('button', { name: 'Import' }).click();
    await page.getByText('Imported 2 rows: 2 created, 0 updated.').waitFor();
    const listed = await api<{ data: Person[] }>(herald, 'GET', `/subscribers/project/${projectId}?email=di@example.com`, undefined, auth);
    expect(listed.data[0]!.attributes).toEqual({ vip: false, first_name: '4' });
    await context.close();
  });
});
