// Input limits in a real Chromium: a field's limit is said before submit (a long paste is not cut without a word, and
// nothing is sent while it is over), and a long unbroken name wraps instead of widening the page, at 1280 and 390 px.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, api, expectAccessible, findChromium, startSession, type Session } from './browser.js';

const chromiumPath = findChromium();

describe.skipIf(!chromiumPath)('input limits in Chromium', { timeout: 60_000 }, () => {
  let session: Session;

  beforeAll(async () => {
    session = await startSession(chromiumPath!);
  }, 120_000);

  afterAll(async () => {
    await session?.stop();
  }, 60_000);

  const projectNames = async () =>
    (await api<{ data: { name: string }[] }>(session.herald, 'GET', '/projects', undefined, session.auth)).data.map((project) => project.name);
  const pageWidth = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth);

  it('says a field’s limit before submit and sends nothing while the text is over it', async () => {
    const { context, page } = await session.newPage();
    await session.openDemo(page, ADMIN);
    await page.goto(`${session.herald.url}/app/projects`);
    const name = page.getByLabel('New project name');
    await name.fill('x'.repeat(150));
    expect(await page.getByText(/characters/).count()).toBe(0);
    await name.fill('x'.repeat(170));
    await page.getByText('170 / 200 characters').waitFor();
    await name.fill('y'.repeat(5000));
    // Nothing cut: the whole paste is there, with how much to shorten it.
    expect((await name.inputValue()).length).toBe(5000);
    await page.getByText('4,800 characters over the limit of 200: shorten it.').waitFor();
    const before = await projectNames();
    await page.getByRole('button', { name: 'Create project' }).click();
    expect(await name.evaluate((input: HTMLInputElement) => input.validity.valid)).toBe(false);
    expect(await projectNames()).toEqual(before);
    await expectAccessible(page, 'a field over its limit');

    const unbroken = 'z'.repeat(200);
    await name.fill(unbroken);
    await page.getByText('200 / 200 characters').waitFor();
    await page.getByRole('button', { name: 'Create project' }).click();
    await expect.poll(projectNames).toContain(unbroken);
    await page.goto(`${session.herald.url}/app/projects`);
    await page.getByRole('link', { name: unbroken }).waitFor();
    expect(await pageWidth(page)).toBeLessThanOrEqual(1280);
    await page.setViewportSize({ width: 390, height: 800 });
    expect(await pageWidth(page)).toBeLessThanOrEqual(390);
    await context.close();
  });
});
