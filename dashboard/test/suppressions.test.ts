// The suppression list page in a real Chromium against a real `herald serve`: add (a 422 beside the field), filter and
// search in the URL, lift confirmed, a complaint never lifted (its 409 shown), a CSV import with per-row errors then a
// good one, paging, the CSV export, a VIEWER's read-only view, axe-core on each. Skipped without a Chromium.
import { readFile } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, api, expectAccessible, findChromium, screenshot, startSession, VIEWER, type Herald, type Session } from './browser.js';

const chromiumPath = findChromium();

interface Suppressions {
  data: { email: string; reason: string; source: string | null }[];
  total: number;
}

describe.skipIf(!chromiumPath)('the suppression list in Chromium', { timeout: 60_000 }, () => {
  let session: Session;
  let herald: Herald;
  let auth: Record<string, string>;
  let projectId: string;

  beforeAll(async () => {
    session = await startSession(chromiumPath!);
    ({ herald, auth, projectId } = session);
  }, 120_000);

  afterAll(async () => {
    await session?.stop();
  }, 60_000);

  const newPage = () => session.newPage({ acceptDownloads: true });

  async function openSuppressions(page: Page, who: { email: string; password: string }) {
    await session.openDemo(page, who);
    await page.getByRole('navigation', { name: 'Project' }).getByRole('link', { name: 'Suppressions' }).click();
    await page.waitForURL(`**/app/projects/${projectId}/suppressions`);
    await page.getByRole('heading', { name: 'Suppression list' }).waitFor();
  }

  const listed = (query = '') => api<Suppressions>(herald, 'GET', `/projects/${projectId}/suppressions?pageSize=100${query}`, undefined, auth);
  const table = (page: Page) => page.getByRole('table', { name: 'Suppressed addresses' });
  /** The addresses of the table's rows, top to bottom. */
  const addresses = async (page: Page) => (await table(page).locator('tbody tr td:first-child').allTextContents()).sort();
  const filters = (page: Page) => page.getByRole('form', { name: 'Filters' });

  async function suppress(page: Page, email: string, reason: string) {
    const form = page.getByRole('form', { name: 'Suppress an address' });
    await form.getByLabel('Email address').fill(email);
    await form.getByLabel('Reason').selectOption(reason);
    await form.getByRole('button', { name: 'Suppress' }).click();
    await form.getByRole('status').filter({ hasText: `${email.toLowerCase()} is suppressed` }).waitFor();
  }

  it('an admin adds addresses (a 422 beside the field first), filters and searches them in the URL, and lifts one', async () => {
    const { context, page } = await newPage();
    await openSuppressions(page, ADMIN);
    await page.getByText('No suppressed addresses yet.').waitFor();
    await expectAccessible(page, 'the suppression list, empty');

    const form = page.getByRole('form', { name: 'Suppress an address' });
    await form.getByLabel('Email address').fill('not-an-email');
    await form.getByRole('button', { name: 'Suppress' }).click();
    await form.getByText('must be an email address').waitFor();
    expect(await form.getByLabel('Email address').getAttribute('aria-invalid')).toBe('true');
    await expectAccessible(page, 'the add form with a 422');

    await suppress(page, 'Ann@Example.com', 'unsubscribed');
    await suppress(page, 'bob@example.com', 'bounced');
    await expect.poll(() => addresses(page)).toEqual(['ann@example.com', 'bob@example.com']);
    expect(await table(page).getByRole('row', { name: /^ann@example\.com unsubscribed — the recipient asked for no more email api / }).count()).toBe(1);
    expect((await listed()).data.map((s) => [s.email, s.reason, s.source])).toEqual(
      expect.arrayContaining([
        ['ann@example.com', 'unsubscribed', 'api'],
        ['bob@example.com', 'bounced', 'api'],
      ]),
    );
    await expectAccessible(page, 'the suppression list');

    // The reason filter is in the URL: a reload keeps it.
    await filters(page).getByLabel('Reason').selectOption('bounced');
    await filters(page).getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/[?&]reason=bounced/);
    await expect.poll(() => addresses(page)).toEqual(['bob@example.com']);
    await page.reload();
    await expect.poll(() => addresses(page)).toEqual(['bob@example.com']);
    expect(await filters(page).getByLabel('Reason').inputValue()).toBe('bounced');

    await filters(page).getByRole('button', { name: 'Clear' }).click();
    await filters(page).getByLabel('Address contains').fill('ANN');
    await filters(page).getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/[?&]q=ANN/);
    await expect.poll(() => addresses(page)).toEqual(['ann@example.com']);
    await filters(page).getByLabel('Address contains').fill('nobody');
    await filters(page).getByRole('button', { name: 'Apply filters' }).click();
    await page.getByText('No suppressed addresses match.').waitFor();
    await filters(page).getByRole('button', { name: 'Clear' }).click();
    await expect.poll(() => addresses(page)).toEqual(['ann@example.com', 'bob@example.com']);

    await page.getByRole('button', { name: 'Lift suppression of bob@example.com' }).click();
    const confirm = page.getByRole('alertdialog');
    await confirm.getByText(/bounced as a dead mailbox/).waitFor();
    await expectAccessible(page, 'the lift confirmation');
    await confirm.getByRole('button', { name: 'Lift suppression' }).click();
    await expect.poll(() => addresses(page)).toEqual(['ann@example.com']);
    expect(await confirm.count()).toBe(0);
    expect((await listed()).data.map((s) => s.email)).toEqual(['ann@example.com']);
    await context.close();
  });

  it('a complaint cannot be lifted: its button is disabled, and a 409 for one that turned into a complaint is shown', async () => {
    const { context, page } = await newPage();
    await openSuppressions(page, ADMIN);
    await suppress(page, 'carol@example.com', 'complained');
    const carol = table(page).getByRole('row', { name: /^carol@example\.com complained/ });
    await carol.waitFor();
    expect(await carol.getByRole('button', { name: 'Lift suppression of carol@example.com' }).isDisabled()).toBe(true);
    expect(await carol.textContent()).toContain('Permanent: the recipient marked mail as spam.');

    // The list read dave as manual; a complaint arrives before the lift is confirmed.
    await suppress(page, 'dave@example.com', 'manual');
    await table(page).getByRole('row', { name: /^dave@example\.com manual/ }).waitFor();
    await api(herald, 'POST', `/projects/${projectId}/suppressions`, { email: 'dave@example.com', reason: 'complained' }, auth);
    await page.getByRole('button', { name: 'Lift suppression of dave@example.com' }).click();
    const confirm = page.getByRole('alertdialog');
    await confirm.getByRole('button', { name: 'Lift suppression' }).click();
    await confirm.getByRole('alert').filter({ hasText: 'A complaint is a permanent suppression' }).waitFor();
    await expectAccessible(page, 'the 409 of a lift');
    // The error is shown once the list has been read again, and the dialog stayed: dave is a complaint now.
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    const dave = table(page).getByRole('row', { name: /^dave@example\.com complained/ });
    await dave.waitFor();
    expect(await dave.getByRole('button', { name: 'Lift suppression of dave@example.com' }).isDisabled()).toBe(true);
    expect((await listed('&reason=complained')).data.map((s) => s.email).sort()).toEqual(['carol@example.com', 'dave@example.com']);
    await context.close();
  });

  it('imports a CSV (its bad rows listed and nothing written, then a good one), pages through it and exports it', async () => {
    const { context, page } = await newPage();
    await openSuppressions(page, ADMIN);
    const before = (await listed()).total;
    const file = page.getByLabel('CSV file (email, optional reason)');
    await file.setInputFiles({ name: 'bad.csv', mimeType: 'text/csv', buffer: Buffer.from('email,reason\nerin@example.com,manual\nnot-an-email,spam\n') });
    await page.getByRole('button', { name: 'Import' }).click();
    const errors = page.getByRole('table', { name: 'Errors by row' });
    await errors.waitFor();
    // rows[1] is the file's third line (after the header and erin).
    expect(await errors.getByRole('row').allTextContents()).toEqual(['LineFieldError', '3emailmust be an email address', expect.stringMatching(/^3reasonmust be one of /)]);
    expect((await listed()).total).toBe(before);
    await expectAccessible(page, 'an import with errors');

    // An extra column is ignored; 30 addresses make a second page of 25.
    const lines = Array.from({ length: 30 }, (_, i) => `user${String(i + 1).padStart(2, '0')}@example.org,${i % 2 ? 'unsubscribed' : ''},User ${i + 1}`);
    await file.setInputFiles({ name: 'good.csv', mimeType: 'text/csv', buffer: Buffer.from(['email,reason,name', ...lines].join('\n')) });
    await page.getByRole('button', { name: 'Import' }).click();
    await page.getByText('Imported 30 rows: 30 added or changed.').waitFor();
    expect(await errors.count()).toBe(0);
    const total = before + 30;
    expect((await listed()).total).toBe(total);
    expect((await listed('&q=user02')).data).toEqual([expect.objectContaining({ email: 'user02@example.org', reason: 'unsubscribed', source: 'import' })]);
    const pagination = page.getByRole('navigation', { name: 'Pagination' });
    await expect.poll(() => pagination.textContent()).toContain(`Page 1 of 2 (${total} in all)`);
    expect(await table(page).locator('tbody tr').count()).toBe(25);
    await expectAccessible(page, 'the suppression list after an import');
    await pagination.getByRole('button', { name: 'Next' }).click();
    await page.waitForURL(/[?&]page=2/);
    await expect.poll(() => table(page).locator('tbody tr').count()).toBe(total - 25);
    // The second page holds the oldest: the complaints, their lift disabled.
    await screenshot(page, 'suppressions');

    const download = page.waitForEvent('download');
    await filters(page).getByRole('button', { name: 'Export CSV' }).click();
    const csv = (await readFile(await (await download).path(), 'utf8')).trim().split(/\r?\n/);
    expect(csv[0]).toBe('email,reason,source,suppressedAt');
    expect(csv).toHaveLength(total + 1);
    expect(csv).toEqual(expect.arrayContaining([expect.stringMatching(/^carol@example\.com,complained,api,/), expect.stringMatching(/^user30@example\.org,unsubscribed,import,/)]));
    await context.close();
  });

  it('a VIEWER sees the list and exports it, with nothing to add, import or lift', async () => {
    const { context, page } = await newPage();
    await openSuppressions(page, VIEWER);
    await table(page).waitFor();
    await page.getByText('A viewer sees the suppression list read-only.').waitFor();
    expect(await page.getByRole('form', { name: 'Suppress an address' }).count()).toBe(0);
    expect(await page.getByRole('form', { name: 'Import suppressions' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: /^Lift/ }).count()).toBe(0);
    expect(await table(page).getByRole('columnheader').allTextContents()).toEqual(['Address', 'Reason', 'Source', 'Suppressed']);
    await expectAccessible(page, 'the suppression list as a viewer');

    const download = page.waitForEvent('download');
    await filters(page).getByRole('button', { name: 'Export CSV' }).click();
    const csv = (await readFile(await (await download).path(), 'utf8')).trim().split(/\r?\n/);
    expect(csv).toHaveLength((await listed()).total + 1);
    await context.close();
  });

  it('no page broke its Content-Security-Policy', () => {
    expect(session.cspViolations).toEqual([]);
  });
});
