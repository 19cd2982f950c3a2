// The email template pages in a real Chromium against a real `herald serve`: editor with variables and a live
// preview in a sandboxed frame, a 422 beside its part, list, search, edit, delete, and a VIEWER's read-only view.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, api, expectAccessible, findChromium, screenshot, startSession, VIEWER, type Herald, type Session } from './browser.js';

const chromiumPath = findChromium();
if (!chromiumPath) {
  const message = '\n!!! Email template browser tests SKIPPED: no Chromium found (CHROME_PATH, or chromium on PATH): apt-get install -y chromium\n';
  if (process.env.CI === 'true') throw new Error(message);
  console.error(message);
}


describe.skipIf(!chromiumPath)('email templates in Chromium', { timeout: 60_000 }, () => {
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

  const newPage = () => session.newPage();

  async function logIn(page: Page, who: { email: string; password: string }) {
    await page.goto(`${herald.url}/app/login`);
    await page.getByLabel('Email').fill(who.email);
    await page.getByLabel('Password').fill(who.password);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL('**/app/projects');
  }

  const frame = (page: Page) => page.locator('iframe[title="Email HTML preview"]');

  it('builds a template with its variables and a live preview, shows a 422 beside its part, saves, edits and deletes it', async () => {
    const { context, page } = await newPage();
    await logIn(page, ADMIN);
    await page.getByRole('link', { name: 'Demo' }).click();
    await page.getByRole('navigation', { name: 'Project' }).getByRole('link', { name: 'Email templates' }).click();
    await page.getByText('No email templates yet.').waitFor();
    await expectAccessible(page, 'email templates, empty');
    await page.getByRole('link', { name: 'New template' }).click();

    await page.getByLabel('Template name').fill('Welcome');
    await page.getByLabel('Subject').fill('Hello {{ first_name | default: "there" }}');
    // A new template opens in the visual editor (dashboard/test/email-editor.test.ts); this one is written as HTML.
    await page.getByRole('radio', { name: 'HTML' }).check();
    await page.getByLabel('HTML body').fill('<h1>Welcome</h1><p>{{ note }}</p>{% if vip %}<p>VIP</p>{% endif %}');
    const subject = page.getByTestId('preview-subject');
    await expect.poll(() => subject.textContent()).toBe('Hello there');
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Missing' }).textContent()).toContain('note');

    // The variables listed, defaults marked; a sample value fills the preview, escaped in the HTML.
    expect(await page.getByText('Has a default: may be left out.').count()).toBe(2);
    await page.getByLabel('note', { exact: true }).fill('<script>alert(1)</script>');
    await page.getByLabel('first_name', { exact: true }).fill('Ada');
    await expect.poll(() => subject.textContent()).toBe('Hello Ada');
    expect(await frame(page).getAttribute('sandbox')).toBe('');
    await expect.poll(() => frame(page).getAttribute('srcdoc')).toBe('<h1>Welcome</h1><p>&lt;script&gt;alert(1)&lt;/script&gt;</p>');
    expect(await page.getByRole('status').filter({ hasText: 'Missing' }).count()).toBe(0);
    await page.getByText('Plain text').click();
    expect(await page.getByTestId('preview-text').textContent()).toBe('WELCOME\n\n<script>alert(1)</script>');
    await expectAccessible(page, 'email template editor');
    await screenshot(page, 'email-template-editor');

    // A part liquid refuses: its message beside it, live; then fixed.
    await page.getByLabel('Subject').fill('Hello {{ first_name | shout }}');
    await expect.poll(() => page.getByLabel('Subject').getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('.field-error').first().textContent()).toMatch(/undefined filter: shout/);
    await page.getByRole('button', { name: 'Save template' }).click();
    await page.getByText('Please correct the highlighted fields.').waitFor();
    await page.getByLabel('Subject').fill('Hello {{ first_name | default: "there" }}');
    await expect.poll(() => page.getByLabel('Subject').getAttribute('aria-invalid')).toBeNull();

    await page.getByRole('button', { name: 'Save template' }).click();
    const row = page.getByRole('row', { name: /Welcome/ });
    await row.waitFor();
    expect(await row.textContent()).toContain('first_name, note, vip');
    await expectAccessible(page, 'email templates');
    await screenshot(page, 'email-templates');
    const saved = await api<{ data: { id: string; subject: string }[] }>(herald, 'GET', `/email-templates/project/${projectId}`, undefined, auth);
    expect(saved.data.map((template) => template.subject)).toEqual(['Hello {{ first_name | default: "there" }}']);

    // Edited: the stored template opens in the editor, and the change is listed.
    await page.getByRole('link', { name: 'Welcome' }).click();
    await expect.poll(() => page.getByLabel('HTML body').inputValue()).toContain('{{ note }}');
    await page.getByLabel('Subject').fill('Welcome aboard');
    await page.getByRole('button', { name: 'Save template' }).click();
    await page.getByRole('cell', { name: 'Welcome aboard' }).waitFor();

    // Searched by name, then deleted with confirmation.
    await page.getByLabel('Search by name').fill('nothing like it');
    await page.getByText('No template has that name.').waitFor();
    await page.getByLabel('Search by name').fill('welc');
    await page.getByRole('button', { name: 'Delete template Welcome' }).click();
    await expectAccessible(page, 'delete template dialog');
    await page.getByRole('alertdialog').getByRole('button', { name: 'Delete template' }).click();
    await page.getByText('No template has that name.').waitFor();
    expect((await api<{ total: number }>(herald, 'GET', `/email-templates/project/${projectId}`, undefined, auth)).total).toBe(0);
    await context.close();
  });

  it('a VIEWER reads and previews a template, with no write controls', async () => {
    const template = await api<{ id: string }>(
      herald,
      'POST',
      '/email-templates',
      { projectId, name: 'Receipt', subject: 'Receipt {{ number }}', html: '<p>Total: {{ total | default: "0" }}</p>' },
      auth,
    );
    const { context, page } = await newPage();
    await logIn(page, VIEWER);
    await page.goto(`${herald.url}/app/projects/${projectId}/email-templates`);
    await page.getByRole('link', { name: 'Receipt' }).waitFor();
    expect(await page.getByRole('link', { name: 'New template' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: /^Delete/ }).count()).toBe(0);

    await page.getByRole('link', { name: 'Receipt' }).click();
    await page.waitForURL(`**/email-templates/${template.id}`);
    await expect.poll(() => page.getByTestId('preview-subject').textContent()).toBe('Receipt ');
    expect(await page.getByLabel('Subject').isDisabled()).toBe(true);
    expect(await page.getByRole('button', { name: 'Save template' }).count()).toBe(0);
    await page.getByLabel('number', { exact: true }).fill('A-17');
    await expect.poll(() => page.getByTestId('preview-subject').textContent()).toBe('Receipt A-17');
    await expect.poll(() => frame(page).getAttribute('srcdoc')).toBe('<p>Total: 0</p>');
    await expectAccessible(page, 'email template as a viewer');
    await context.close();
  });

  it('no page broke its Content-Security-Policy', () => {
    expect(session.cspViolations).toEqual([]);
  });
});
