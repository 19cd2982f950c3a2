// The dashboard in a real Chromium against a real `herald serve`: login, API keys, projects, subscribers, members,
// read-only VIEWERs, a 401 back to the login page, and axe-core on every page. Skipped (loudly) without a Chromium.
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pushSubscription, CHROME_UA } from '../../server/test/fixtures.js';
import { addCondition, admin, ADMIN, api, expectAccessible, findChromium, launch, screenshot, startHerald, VIEWER, type Herald } from './browser.js';

const chromiumPath = findChromium();
if (!chromiumPath) {
  const message = [
    '',
    '!!! Dashboard browser tests SKIPPED: no Chromium found (CHROME_PATH, or chromium on PATH).',
    '!!! Install one to run them: apt-get install -y chromium   (or set CHROME_PATH to a Chrome/Chromium binary)',
    '',
  ].join('\n');
  if (process.env.CI === 'true') throw new Error(message);
  console.error(message);
}

interface Login {
  access_token: string;
  user: { organizations: { id: string; name: string }[] };
}

describe.skipIf(!chromiumPath)('dashboard in Chromium', { timeout: 60_000 }, () => {
  let herald: Herald;
  let browser: Browser;
  let orgId: string;
  let projectId: string;
  /** Content-Security-Policy violations reported by any page: there must be none. */
  const cspViolations: string[] = [];

  beforeAll(async () => {
    herald = await startHerald();
    const login = await api<Login>(herald, 'POST', '/auth/login', ADMIN);
    orgId = login.user.organizations[0]!.id;
    const auth = { authorization: `Bearer ${login.access_token}`, 'x-org-id': orgId };
    const projects = await api<{ data: { id: string; name: string }[] }>(herald, 'GET', '/projects', undefined, auth);
    projectId = projects.data.find((project) => project.name === 'Demo')!.id;
    await admin(herald, 'create-user', '--email', VIEWER.email, '--password', VIEWER.password, '--name', 'Vera Viewer');
    await admin(herald, 'add-member', '--org', orgId, '--email', VIEWER.email, '--role', 'VIEWER');
    // Subscribers registered the way the SDK does, with a live key.
    const key = await api<{ key: string }>(herald, 'POST', `/projects/${projectId}/api-keys`, { name: 'sdk', mode: 'live' }, auth);
    for (let i = 0; i < 3; i++) {
      const registered = await api<{ token: string }>(
        herald,
        'POST',
        '/subscribers',
        { projectId, ...pushSubscription(), userAgent: CHROME_UA },
        { 'x-api-key': key.key },
      );
      await api(herald, 'POST', '/subscribers/identify', { token: registered.token, externalId: `user-${i}` }, { 'x-api-key': key.key });
      await api(herald, 'POST', '/subscribers/tag', { token: registered.token, tags: [i === 0 ? 'vip' : 'regular'] }, { 'x-api-key': key.key });
    }
    // A transactional send to nobody: logged with its reason.
    await api(herald, 'POST', '/transactional/send', { externalId: 'nobody', title: 'Hi', body: 'there' }, { 'x-api-key': key.key });
    browser = await launch(chromiumPath!);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await herald?.stop();
  }, 60_000);

  async function newPage(): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    page.on('console', (message) => {
      if (/Content.Security.Policy/i.test(message.text())) cspViolations.push(message.text());
    });
    return { context, page };
  }

  async function logIn(page: Page, who: { email: string; password: string }) {
    await page.goto(`${herald.url}/app/`);
    await page.waitForURL('**/app/login');
    await page.getByLabel('Email').fill(who.email);
    await page.getByLabel('Password').fill(who.password);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL('**/app/projects');
  }

  it('/ leads to the login page, which refuses a wrong password with a message', async () => {
    const { context, page } = await newPage();
    await page.goto(herald.url);
    await page.waitForURL('**/app/login');
    await expectAccessible(page, 'login');
    await screenshot(page, 'login');
    await page.getByLabel('Email').fill(ADMIN.email);
    await page.getByLabel('Password').fill('wrong-password');
    await page.getByRole('button', { name: 'Log in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/invalid/i);
    await context.close();
  });

  it('an admin logs in, creates a test key whose secret is shown once, and sees it listed by prefix', async () => {
    const { context, page } = await newPage();
    await logIn(page, ADMIN);
    await page.getByRole('link', { name: 'Demo' }).waitFor();
    await expectAccessible(page, 'projects');
    await screenshot(page, 'projects');

    await page.getByRole('link', { name: 'Demo' }).click();
    await page.getByRole('heading', { name: 'Overview', level: 2 }).waitFor();
    await page.waitForURL(`**/app/projects/${projectId}/overview`);
    await page.getByRole('navigation', { name: 'Project' }).getByRole('link', { name: 'API keys' }).click();
    await page.waitForURL(`**/app/projects/${projectId}/keys`);
    await page.getByRole('cell', { name: 'sdk', exact: true }).waitFor();
    await expectAccessible(page, 'API keys');

    await page.getByLabel('Key name').fill('e2e key');
    await page.getByRole('radio', { name: 'Test' }).check();
    await page.getByRole('button', { name: 'Create key' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    const secret = (await dialog.getByTestId('api-key-secret').textContent())!.trim();
    expect(secret).toMatch(/^hrd_test_/);
    await expect.poll(() => dialog.textContent()).toMatch(/shown once/);
    await expectAccessible(page, 'the new key dialog');
    await screenshot(page, 'api-key-created');
    await dialog.getByRole('button', { name: 'I have stored it' }).click();
    await dialog.waitFor({ state: 'detached' });

    const row = page.getByRole('row', { name: /e2e key/ });
    await row.waitFor();
    expect(await row.textContent()).toContain(`hrd_test_…${secret.slice(-4)}`);
    // Shown once: nowhere on the page any more, nor after a reload.
    expect(await page.content()).not.toContain(secret);
    await page.reload();
    await page.getByRole('row', { name: /e2e key/ }).waitFor();
    expect(await page.content()).not.toContain(secret);
    await screenshot(page, 'api-keys');

    // The key works against the API.
    const res = await fetch(`${herald.url}/subscribers/project/${projectId}`, { headers: { 'x-api-key': secret } });
    expect(res.status).toBe(200);

    // Revoke, confirmed.
    await page.getByRole('button', { name: 'Revoke key e2e key' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Revoke key' }).click();
    await expect.poll(() => page.getByRole('row', { name: /e2e key/ }).textContent()).toMatch(/revoked/);
    expect((await fetch(`${herald.url}/subscribers/project/${projectId}`, { headers: { 'x-api-key': secret } })).status).toBe(401);

    // A publishable key, for a web page: the SDK's routes only.
    await page.getByLabel('Key name').fill('web site');
    await page.getByRole('radio', { name: 'Live' }).check();
    await page.getByRole('radio', { name: 'Publishable (web pages)' }).check();
    await page.getByRole('button', { name: 'Create key' }).click();
    const published = (await page.getByRole('dialog').getByTestId('api-key-secret').textContent())!.trim();
    expect(published).toMatch(/^hrd_pub_live_/);
    // With it, the lines a site adds to use the browser SDK, this key and project in them.
    const snippet = await page.getByRole('dialog').getByTestId('sdk-snippet').textContent();
    expect(snippet).toContain(`<script src="${herald.url}/sdk/herald.js"></script>`);
    expect(snippet).toContain(`projectId: '${projectId}', key: '${published}'`);
    expect(snippet).toContain(`importScripts('${herald.url}/sdk/herald-sw.js');`);
    await page.getByRole('dialog').getByRole('button', { name: 'I have stored it' }).click();
    await expect.poll(() => page.getByRole('row', { name: /web site/ }).textContent()).toMatch(/publishable/);
    expect((await fetch(`${herald.url}/subscribers/project/${projectId}`, { headers: { 'x-api-key': published } })).status).toBe(403);
    const config = await fetch(`${herald.url}/projects/${projectId}/push-config`, { headers: { 'x-api-key': published } });
    expect(config.status).toBe(200);
    await context.close();
  });

  it('project settings save the delivery policy and show a 422 beside its field', async () => {
    const { context, page } = await newPage();
    await logIn(page, ADMIN);
    await page.goto(`${herald.url}/app/projects/${projectId}/settings`);
    await page.getByLabel('Quiet hours').check();
    await page.getByLabel('From (HH:mm)').fill('25:00');
    await page.getByRole('button', { name: 'Save settings' }).click();
    const from = page.getByLabel('From (HH:mm)');
    await expect.poll(() => from.getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('.field-error').first().textContent()).toMatch(/HH:mm/);
    await expectAccessible(page, 'project settings with an error');

    await from.fill('22:30');
    await page.getByLabel('Frequency cap').check();
    await page.getByLabel('At most (pushes)').fill('5');
    await page.getByLabel('Time zone').fill('Europe/Paris');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Settings saved.').waitFor();
    await screenshot(page, 'project-settings');
    const login = await api<Login>(herald, 'POST', '/auth/login', ADMIN);
    const project = await api<{ settings: Record<string, unknown> }>(herald, 'GET', `/projects/${projectId}`, undefined, {
      authorization: `Bearer ${login.access_token}`,
      'x-org-id': orgId,
    });
    expect(project.settings).toMatchObject({
      timezone: 'Europe/Paris',
      deliveryPolicy: { quietHours: { start: '22:30', end: '07:00' }, frequencyCap: { max: 5, windowSeconds: 86400 } },
    });
    await context.close();
  });

  it('project settings: identity verification and allowed origins saved, the identity secret revealed and rotated', async () => {
    const { context, page } = await newPage();
    await logIn(page, ADMIN);
    await page.goto(`${herald.url}/app/projects/${projectId}/settings`);
    const origins = page.getByLabel('Allowed origins');
    await origins.fill('not an origin');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await expect.poll(() => origins.getAttribute('aria-invalid')).toBe('true');

    await page.getByLabel('Identity verification (recommended)').check();
    await origins.fill('https://www.example.com\nhttps://shop.example.com');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Settings saved.').waitFor();
    const login = await api<Login>(herald, 'POST', '/auth/login', ADMIN);
    const auth = { authorization: `Bearer ${login.access_token}`, 'x-org-id': orgId };
    const project = await api<{ settings: Record<string, unknown> }>(herald, 'GET', `/projects/${projectId}`, undefined, auth);
    expect(project.settings).toMatchObject({ identityVerification: true, allowedOrigins: ['https://www.example.com', 'https://shop.example.com'] });

    await page.getByRole('button', { name: 'Reveal identity secret' }).click();
    const first = (await page.getByTestId('identity-secret').textContent())!.trim();
    expect(first).toMatch(/^hrd_ids_/);
    await expectAccessible(page, 'project settings with the identity secret');
    await page.getByRole('button', { name: 'Rotate identity secret' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Rotate secret' }).click();
    await expect.poll(async () => (await page.getByTestId('identity-secret').textContent())!.trim()).not.toBe(first);
    const stored = await api<{ identitySecret: string }>(herald, 'GET', `/projects/${projectId}/identity-secret`, undefined, auth);
    expect(await page.getByTestId('identity-secret').textContent()).toBe(stored.identitySecret);

    // Back to the defaults, so the later tests' pages are any origin's again.
    await page.getByLabel('Identity verification (recommended)').uncheck();
    await origins.fill('');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Settings saved.').waitFor();
    await context.close();
  });

  it('subscribers: filters in the URL, pagination, detail, delete with confirmation', async () => {
    const { context, page } = await newPage();
    await logIn(page, ADMIN);
    await page.goto(`${herald.url}/app/projects/${projectId}/subscribers`);
    await page.getByRole('link', { name: 'user-2' }).waitFor();
    expect(await page.getByRole('navigation', { name: 'Pagination' }).textContent()).toContain('3 in all');
    await expectAccessible(page, 'subscribers');
    await screenshot(page, 'subscribers');

    await page.getByLabel('Tag').fill('vip');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/tag=vip/);
    await expect.poll(() => page.getByRole('navigation', { name: 'Pagination' }).textContent()).toContain('1 in all');
    // A reload keeps the filter (it is in the URL, and index.html answers the deep link).
    await page.reload();
    await expect.poll(() => page.getByRole('navigation', { name: 'Pagination' }).textContent()).toContain('1 in all');
    expect(await page.getByLabel('Tag').inputValue()).toBe('vip');

    await page.getByRole('link', { name: 'user-0' }).click();
    await page.getByRole('heading', { name: 'user-0' }).waitFor();
    const tags = page.getByRole('region', { name: 'Tags' });
    await tags.getByText('vip').waitFor();
    await expectAccessible(page, 'subscriber detail');
    await screenshot(page, 'subscriber');

    await page.getByLabel('Add tags (comma-separated)').fill('beta, early');
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    await tags.getByText('early').waitFor();
    await page.getByRole('button', { name: 'Remove tag vip' }).click();
    await expect.poll(() => tags.textContent()).not.toContain('vip');
    expect(await tags.textContent()).toContain('beta');

    await page.getByRole('button', { name: 'Delete subscriber' }).click();
    await expectAccessible(page, 'the delete confirmation');
    await page.getByRole('alertdialog').getByRole('button', { name: 'Delete' }).click();
    await page.waitForURL(`**/app/projects/${projectId}/subscribers`);
    await expect.poll(() => page.getByRole('navigation', { name: 'Pagination' }).textContent()).toContain('2 in all');

    // Find by external id opens the subscriber.
    await page.getByLabel('Find by external id or token').fill('user-1');
    await page.getByRole('button', { name: 'Find' }).click();
    await page.getByRole('heading', { name: 'user-1' }).waitFor();
    await context.close();
  });

  it('audience: bar charts of the active subscribers, with their numbers', async () => {
    const { context, page } = await newPage();
    await logIn(page, ADMIN);
    await page.goto(`${herald.url}/app/projects/${projectId}/audience`);
    const browsers = page.getByRole('img', { name: /^Browser: Chrome \d/ });
    await browsers.waitFor();
    await page.getByRole('figure', { name: 'Browser' }).getByText('Numbers').click();
    await page.getByRole('figure', { name: 'Browser' }).getByRole('cell', { name: 'Chrome' }).waitFor();
    // No geo source is configured: the country chart says so rather than drawing nothing.
    await page.getByRole('figure', { name: 'Country' }).getByText('No data.').waitFor();
    await expectAccessible(page, 'audience');
    await screenshot(page, 'audience');
    await context.close();
  });

  it('contacts import: per-row errors of a bad CSV, then a good one imported', async () => {
    const { context, page } = await newPage();
    await logIn(page, ADMIN);
    await page.goto(`${herald.url}/app/projects/${projectId}/import`);
    const file = page.getByLabel('File (.csv or .json)');
    await file.setInputFiles({
      name: 'contacts.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from('externalId,email\ncrm-1,ann@example.com\ncrm-2,not-an-email\n'),
    });
    await page.getByRole('button', { name: 'Import' }).click();
    const errors = page.getByRole('table', { name: 'Errors by row' });
    await errors.waitFor();
    // rows[1] is the file's third line (after the header and crm-1).
    expect(await errors.getByRole('row').nth(1).textContent()).toMatch(/^3email/);
    await expectAccessible(page, 'contacts import with errors');
    await screenshot(page, 'contact-import');

    await file.setInputFiles({ name: 'contacts.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify([{ externalId: 'crm-1', email: 'ann@example.com' }, { externalId: 'crm-2', tags: ['imported'] }])) });
    await page.getByRole('button', { name: 'Import' }).click();
    await page.getByText('Imported 2 rows: 2 created, 0 updated.').waitFor();
    await page.goto(`${herald.url}/app/projects/${projectId}/subscribers?tag=imported`);
    await page.getByRole('link', { name: 'crm-2' }).waitFor();
    await context.close();
  });

  it('segments: the builder counts the reach live, saves, exports CSV and deletes', async () => {
    const { context, page } = await newPage();
    await logIn(page, ADMIN);
    await page.goto(`${herald.url}/app/projects/${projectId}/segments`);
    await page.getByText('No saved segments yet.').waitFor();
    await page.getByRole('link', { name: 'New segment' }).click();
    const reach = page.getByTestId('reach');
    await addCondition(page, 'Tags');
    await page.getByLabel('Tags: any of').fill('regular');
    await addCondition(page, 'Browser');
    await page.getByLabel('Chrome').check();
    const login = await api<Login>(herald, 'POST', '/auth/login', ADMIN);
    const expected = await api<{ count: number }>(
      herald,
      'POST',
      '/segments/reach',
      { projectId, filters: { tags: { any: ['regular'] }, browser: ['Chrome'] } },
      { authorization: `Bearer ${login.access_token}`, 'x-org-id': orgId },
    );
    expect(expected.count).toBeGreaterThan(0);
    await expect.poll(() => reach.textContent()).toBe(String(expected.count));
    await expectAccessible(page, 'segment builder');
    await screenshot(page, 'segment-builder');

    // A bad value: the API's message beside its field, then the count again once its condition is removed.
    await addCondition(page, 'Country');
    await page.getByLabel('Countries').fill('FRA');
    await expect.poll(() => page.getByLabel('Countries').getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('.field-error').first().textContent()).toMatch(/ISO 3166/);
    await page.getByRole('button', { name: 'Remove condition 3' }).click();
    await expect.poll(() => reach.textContent()).toBe(String(expected.count));

    await page.getByLabel('Segment name').fill('Regular Chrome');
    await page.getByRole('button', { name: 'Save segment' }).click();
    await page.getByRole('link', { name: 'Regular Chrome' }).waitFor();
    await expectAccessible(page, 'segments');

    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Export CSV of Regular Chrome' }).click();
    const file = await (await download).path();
    const { readFile } = await import('node:fs/promises');
    const csv = await readFile(file, 'utf8');
    expect(csv.split('\n')[0]).toContain('externalId');
    expect(csv.trim().split('\n')).toHaveLength(expected.count + 1);

    await page.getByRole('button', { name: 'Delete segment Regular Chrome' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Delete segment' }).click();
    await page.getByText('No saved segments yet.').waitFor();
    await context.close();
  });

  it('campaigns: an immediate campaign reaches sent on the page without a reload, is archived, exported and re-sent', async () => {
    // A project of its own: the Demo project's quiet hours (set above) would hold a campaign at night.
    const login = await api<Login>(herald, 'POST', '/auth/login', ADMIN);
    const auth = { authorization: `Bearer ${login.access_token}`, 'x-org-id': orgId };
    const launch = await api<{ id: string }>(herald, 'POST', '/projects', { name: 'Launch' }, auth);
    const testKey = await api<{ key: string }>(herald, 'POST', `/projects/${launch.id}/api-keys`, { name: 'sandbox', mode: 'test' }, auth);
    const headers = { 'x-api-key': testKey.key };
    const recipient = await api<{ id: string }>(herald, 'POST', '/subscribers', { projectId: launch.id, ...pushSubscription(), userAgent: CHROME_UA }, headers);

    const { context, page } = await newPage();
    await logIn(page, ADMIN);
    await page.goto(`${herald.url}/app/projects/${launch.id}/campaigns`);
    await page.getByText('No campaigns match.').waitFor();

    const campaign = await api<{ id: string }>(
      herald,
      'POST',
      '/campaigns',
      { projectId: launch.id, name: 'Spring sale', content: { title: 'Sale', body: 'Now on' }, segment: { filters: {} }, schedule: { mode: 'immediate' } },
      headers,
    );
    await page.goto(`${herald.url}/app/projects/${launch.id}/campaigns/${campaign.id}`);
    await page.getByRole('heading', { name: 'Spring sale' }).waitFor();
    // The stream (or the first read, when the sandbox was faster) brings it to sent; the page is never reloaded.
    await expect.poll(() => page.getByTestId('campaign-status').textContent(), { timeout: 20_000 }).toBe('sent');
    await expect.poll(() => page.getByTestId('stat-sent').textContent()).toBe('1');
    expect(await page.getByRole('figure', { name: 'Notification preview' }).textContent()).toMatch(/Sale.*Now on/);
    await expectAccessible(page, 'campaign');
    await screenshot(page, 'campaign');

    await page.getByRole('button', { name: 'Archive' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Archive campaign' }).click();
    await expect.poll(() => page.getByTestId('campaign-status').textContent()).toBe('archived');

    await page.getByRole('navigation', { name: 'Project' }).getByRole('link', { name: 'Push campaigns' }).click();
    await page.getByText('No campaigns match.').waitFor();
    await page.getByLabel('Status').selectOption('archived');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByRole('link', { name: 'Spring sale' }).waitFor();
    await expectAccessible(page, 'campaigns');
    await screenshot(page, 'campaigns');

    const csv = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Export CSV' }).click();
    const { readFile } = await import('node:fs/promises');
    expect(await readFile(await (await csv).path(), 'utf8')).toContain('Spring sale');

    // Re-sent (an archived campaign may be): a new campaign, sent on its own.
    await page.getByRole('link', { name: 'Spring sale' }).click();
    await page.getByRole('button', { name: 'Re-send' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Re-send now' }).click();
    await page.waitForURL((url) => url.pathname.includes('/campaigns/') && !url.pathname.endsWith(campaign.id));
    await expect.poll(() => page.getByTestId('campaign-status').textContent(), { timeout: 20_000 }).toBe('sent');
    await expect.poll(() => page.getByTestId('stat-sent').textContent()).toBe('1');

    // Only the event stream can move this page: it opens on a scheduled campaign (the page reads it once and does not
    // poll), and without a reload it must show the campaign going out and its counters.
    const sendAt = new Date(Date.now() + 4_000).toISOString();
    const scheduled = await api<{ id: string }>(
      herald,
      'POST',
      '/campaigns',
      { projectId: launch.id, name: 'Flash sale', content: { title: 'Flash', body: 'Now' }, segment: { filters: {} }, schedule: { mode: 'scheduled', sendAt } },
      headers,
    );
    await page.goto(`${herald.url}/app/projects/${launch.id}/campaigns/${scheduled.id}`);
    await page.getByRole('heading', { name: 'Flash sale' }).waitFor();
    expect(await page.getByTestId('campaign-status').textContent()).toBe('scheduled');
    await page.evaluate(() => ((window as unknown as { notReloaded: boolean }).notReloaded = true));
    await expect.poll(() => page.getByTestId('campaign-status').textContent(), { timeout: 30_000 }).toBe('sent');
    await expect.poll(() => page.getByTestId('stat-sent').textContent()).toBe('1');
    expect(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true);

    // The recipient's page lists both sends, each linked to its campaign.
    await page.goto(`${herald.url}/app/projects/${launch.id}/subscribers/${recipient.id}`);
    const sends = page.getByRole('table', { name: 'Recent sends' });
    await expect.poll(() => sends.getByRole('link', { name: 'Spring sale' }).count()).toBe(2);
    expect(await sends.getByRole('link', { name: 'Flash sale' }).count()).toBe(1);
    expect(await sends.textContent()).toMatch(/push\s*sent/);
    await expectAccessible(page, 'subscriber with recent sends');
    await screenshot(page, 'subscriber-recent-sends');
    await context.close();
  });

  it('campaign builder: a draft built with a live reach and preview, a 422 beside its field, edited, scheduled, cancelled', async () => {
    const login = await api<Login>(herald, 'POST', '/auth/login', ADMIN);
    const auth = { authorization: `Bearer ${login.access_token}`, 'x-org-id': orgId };
    const { count: vips } = await api<{ count: number }>(herald, 'POST', '/segments/reach', { projectId, channel: 'push', filters: { tags: { any: ['vip'] } } }, auth);
    const { context, page } = await newPage();
    await logIn(page, ADMIN);
    await page.goto(`${herald.url}/app/projects/${projectId}/campaigns`);
    await page.getByRole('link', { name: 'New campaign' }).click();
    await page.getByRole('heading', { name: 'New campaign' }).waitFor();

    await page.getByLabel('Campaign name').fill('Builder sale');
    await page.getByLabel('Title').fill('Winter sale');
    await page.getByLabel('Body').fill('Everything half price');
    await page.getByLabel('Click URL').fill('https://shop.example.com/sale');
    await page.getByLabel('Button 1 label').fill('Buy');
    await page.getByLabel('Button 1 URL').fill('not a url');
    await expect.poll(() => page.getByRole('figure', { name: 'Notification preview' }).textContent()).toMatch(/Winter sale.*shop\.example\.com.*Everything half price.*Buy/);
    await addCondition(page, 'Tags');
    await page.getByLabel('Tags: any of').fill('vip');
    await expect.poll(() => page.getByTestId('campaign-reach').textContent(), { timeout: 10_000 }).toBe(String(vips));
    await expectAccessible(page, 'campaign builder');
    await screenshot(page, 'campaign-builder');

    // Draft is the default mode; the API's 422 shows beside the button's URL.
    await page.getByRole('button', { name: 'Save draft' }).click();
    const buttonUrl = page.getByLabel('Button 1 URL');
    await expect.poll(() => buttonUrl.getAttribute('aria-invalid')).toBe('true');
    await buttonUrl.fill('https://shop.example.com/buy');
    await page.getByLabel('utm_source').fill('herald');
    await page.getByRole('button', { name: 'Save draft' }).click();
    await page.getByRole('heading', { name: 'Builder sale' }).waitFor();
    expect(await page.getByTestId('campaign-status').textContent()).toBe('draft');

    // Edited: scheduled for tomorrow, saved, and still a draft until its page schedules it.
    await page.getByRole('link', { name: 'Edit' }).click();
    await page.getByRole('heading', { name: 'Edit “Builder sale”' }).waitFor();
    expect(await page.getByLabel('Tags: any of').inputValue()).toBe('vip');
    expect(await page.getByLabel('utm_source').inputValue()).toBe('herald');
    await page.getByLabel('Title').fill('Winter sale, last day');
    await page.getByRole('radio', { name: 'Schedule' }).check();
    const tomorrow = new Date(Date.now() + 36 * 3600_000).toISOString().slice(0, 16);
    await page.getByLabel('Send at').fill(tomorrow);
    await page.getByLabel('Time zone').fill('UTC');
    await page.getByRole('button', { name: 'Save draft' }).click();
    await page.getByRole('heading', { name: 'Builder sale' }).waitFor();
    expect(await page.getByTestId('campaign-status').textContent()).toBe('draft');
    expect(await page.getByRole('figure', { name: 'Notification preview' }).textContent()).toMatch(/Winter sale, last day/);

    await page.getByRole('button', { name: 'Schedule' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Schedule campaign' }).click();
    await expect.poll(() => page.getByTestId('campaign-status').textContent()).toBe('scheduled');
    await page.getByRole('button', { name: 'Cancel campaign' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Cancel campaign' }).click();
    await expect.poll(() => page.getByTestId('campaign-status').textContent()).toBe('cancelled');

    const campaigns = await api<{ data: { name: string; content: { actions: { action: string }[] }; utm: unknown }[] }>(
      herald,
      'GET',
      `/campaigns/project/${projectId}?q=Builder`,
      undefined,
      auth,
    );
    expect(campaigns.data[0]).toMatchObject({ name: 'Builder sale', content: { actions: [{ action: 'https://shop.example.com/buy' }] }, utm: { source: 'herald' } });
    await context.close();
  });

  it('transactional sends: the log with its reasons, filtered', async () => {
    const { context, page } = await newPage();
    await logIn(page, ADMIN);
    await page.goto(`${herald.url}/app/projects/${projectId}/transactional`);
    const row = page.getByRole('row', { name: /external id nobody/ });
    await row.waitFor();
    expect(await row.textContent()).toContain('subscriber_not_found');
    await expectAccessible(page, 'transactional sends');
    await screenshot(page, 'transactional');
    await page.getByLabel('Reason').selectOption('quiet_hours');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/reason=quiet_hours/);
    await page.getByText('No transactional sends match.').waitFor();
    await context.close();
  });

  it('members: an admin sees roles and the last owner cannot be removed', async () => {
    const { context, page } = await newPage();
    await logIn(page, ADMIN);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Members' }).click();
    await page.getByRole('cell', { name: VIEWER.email, exact: true }).waitFor();
    await expectAccessible(page, 'members');
    expect(await page.getByRole('button', { name: `Remove ${ADMIN.email}` }).isDisabled()).toBe(true);
    expect(await page.getByLabel(`Role of ${ADMIN.email}`).isDisabled()).toBe(true);
    expect(await page.getByRole('button', { name: `Remove ${VIEWER.email}` }).isEnabled()).toBe(true);
    await context.close();
  });

  /** Invites through the members page; the link of the shown-once dialog. */
  async function invite(page: Page, email: string, role: string): Promise<string> {
    const form = page.getByRole('form', { name: 'Invite a member' });
    await form.getByLabel('Email').fill(email);
    await form.getByLabel('Role').selectOption(role);
    await form.getByRole('button', { name: 'Invite' }).click();
    const dialog = page.getByRole('dialog');
    const link = new URL((await dialog.getByTestId('invitation-link').textContent())!.trim());
    expect(link.pathname + link.hash).toMatch(/^\/app\/join#token=hrd_inv_\w+$/);
    await expectAccessible(page, 'invitation link');
    await dialog.getByRole('button', { name: 'I have stored it' }).click();
    // PUBLIC_URL names localhost; this Herald listens on 127.0.0.1.
    return `${herald.url}${link.pathname}${link.hash}`;
  }

  it('members: a new address joins by the link with its own account; an existing one logs in first; a revoked link says so', async () => {
    const { context, page } = await newPage();
    await logIn(page, ADMIN);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Members' }).click();
    const newcomer = await invite(page, 'nina@example.com', 'MEMBER');
    await page.getByRole('cell', { name: 'nina@example.com', exact: true }).waitFor();
    await expectAccessible(page, 'members with an open invitation');
    await screenshot(page, 'members');

    // The invitee, in a browser of their own: creates the account, joins, and lands signed in.
    const invitee = await newPage();
    await invitee.page.goto(newcomer);
    await invitee.page.getByRole('form', { name: 'Create your account' }).waitFor();
    expect(invitee.page.url()).not.toContain('token='); // the secret leaves the address bar
    await expectAccessible(invitee.page, 'join');
    await screenshot(invitee.page, 'join');
    await invitee.page.getByLabel('Your name').fill('Nina Newcomer');
    await invitee.page.getByLabel('Password').fill('nina-password-e2e');
    await invitee.page.getByRole('button', { name: 'Create account and join' }).click();
    await expect.poll(() => invitee.page.getByRole('status').textContent()).toMatch(/You joined .+ as MEMBER/);
    await invitee.page.getByRole('button', { name: 'Go to its projects' }).click();
    await invitee.page.getByRole('link', { name: 'Demo' }).waitFor();
    await invitee.context.close();

    await page.reload();
    await page.getByRole('cell', { name: 'Nina Newcomer', exact: true }).waitFor();
    await page.getByRole('cell', { name: 'nina@example.com', exact: true }).waitFor();

    // An address with an account: the link asks for a login, which leads back to the invitation.
    await admin(herald, 'create-user', '--email', 'omar@example.com', '--password', 'omar-password-e2e', '--name', 'Omar Existing');
    const existing = await invite(page, 'omar@example.com', 'VIEWER');
    const omar = await newPage();
    await omar.page.goto(existing);
    await omar.page.getByLabel('Your name').fill('Someone Else');
    await omar.page.getByLabel('Password').fill('another-password');
    await omar.page.getByRole('button', { name: 'Create account and join' }).click();
    await omar.page.getByRole('link', { name: 'Log in' }).first().waitFor();
    await expect.poll(() => omar.page.getByRole('alert').textContent()).toMatch(/account already exists/);
    await omar.page.getByRole('link', { name: 'Log in' }).first().click();
    await omar.page.getByLabel('Email').fill('omar@example.com');
    await omar.page.getByLabel('Password').fill('omar-password-e2e');
    await omar.page.getByRole('button', { name: 'Log in' }).click();
    await omar.page.waitForURL('**/app/join');
    await omar.page.getByRole('button', { name: 'Accept the invitation' }).click();
    await expect.poll(() => omar.page.getByRole('status').textContent()).toMatch(/You joined .+ as VIEWER/);
    await omar.context.close();

    // Revoked: the link says it can no longer be used.
    const revoked = await invite(page, 'rita@example.com', 'MEMBER');
    await page.getByRole('button', { name: 'Revoke the invitation of rita@example.com' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Revoke invitation' }).click();
    await expect.poll(() => page.getByRole('cell', { name: 'rita@example.com', exact: true }).count()).toBe(0);
    const rita = await newPage();
    await rita.page.goto(revoked);
    await rita.page.getByLabel('Your name').fill('Rita');
    await rita.page.getByLabel('Password').fill('rita-password-e2e');
    await rita.page.getByRole('button', { name: 'Create account and join' }).click();
    await expect.poll(() => rita.page.getByRole('alert').textContent()).toMatch(/can no longer be used/);
    await rita.context.close();
    await context.close();
  });

  it('a VIEWER sees everything read-only, and is offered no page only an admin or member can use', async () => {
    const { context, page } = await newPage();
    await logIn(page, VIEWER);
    await page.getByRole('link', { name: 'Demo' }).waitFor();
    expect(await page.getByRole('button', { name: 'Create project' }).count()).toBe(0);
    await expectAccessible(page, 'projects as a viewer');

    await page.goto(`${herald.url}/app/projects/${projectId}/settings`);
    await page.getByLabel('Name').waitFor();
    expect(await page.getByLabel('Name').isDisabled()).toBe(true);
    expect(await page.getByRole('button', { name: 'Save settings' }).count()).toBe(0);

    // API keys are an ADMIN's business: no link to them, and their address says so without asking the server.
    expect(await page.getByRole('navigation', { name: 'Project' }).getByRole('link', { name: 'API keys' }).count()).toBe(0);
    await page.goto(`${herald.url}/app/projects/${projectId}/keys`);
    await page.getByText('API keys is for owners and admins of the organization; your role is viewer.').waitFor();
    expect(await page.getByRole('button', { name: 'Create key' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Try again' }).count()).toBe(0);
    await expectAccessible(page, 'API keys refused');

    await page.goto(`${herald.url}/app/projects/${projectId}/subscribers`);
    await page.getByRole('link', { name: 'user-1' }).click();
    await page.getByRole('heading', { name: 'user-1' }).waitFor();
    expect(await page.getByRole('button', { name: 'Delete subscriber' }).count()).toBe(0);
    expect(await page.getByRole('form', { name: 'Add tags' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: /^Remove tag/ }).count()).toBe(0);

    await page.goto(`${herald.url}/app/projects/${projectId}/segments`);
    await page.locator('table, .empty').first().waitFor();
    expect(await page.getByRole('link', { name: 'New segment' }).count()).toBe(0);

    await page.goto(`${herald.url}/app/projects/${projectId}/campaigns`);
    await page.getByRole('link', { name: 'Builder sale' }).waitFor();
    expect(await page.getByRole('link', { name: 'New campaign' }).count()).toBe(0);
    await page.goto(`${herald.url}/app/projects/${projectId}/campaigns/new`);
    await page.getByText('A viewer cannot create or edit campaigns.').waitFor();
    expect(await page.getByRole('button', { name: /Save draft|Send now|Schedule/ }).count()).toBe(0);

    await page.goto(`${herald.url}/app/projects/${projectId}/import`);
    await page.getByText('Import contacts is for members, admins and owners of the organization; your role is viewer.').waitFor();
    expect(await page.getByRole('button', { name: 'Import' }).count()).toBe(0);

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Members' }).click();
    await page.getByRole('cell', { name: ADMIN.email, exact: true }).waitFor();
    expect(await page.getByRole('button', { name: /^Remove/ }).count()).toBe(0);
    expect(await page.getByRole('combobox', { name: /^Role of/ }).count()).toBe(0);
    await context.close();
  });

  it('a 401 (expired token) returns to the login page with a message; a reload keeps a valid session', async () => {
    const { context, page } = await newPage();
    await logIn(page, ADMIN);
    await page.reload();
    await page.getByRole('link', { name: 'Demo' }).waitFor();
    expect(page.url()).toMatch(/\/app\/projects$/);

    await page.evaluate(() => localStorage.setItem('herald.token', 'expired.token.value'));
    await page.goto(`${herald.url}/app/members`);
    await page.waitForURL('**/app/login');
    await expect.poll(() => page.getByRole('status').textContent()).toMatch(/session has expired/i);

    await logIn(page, ADMIN);
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.waitForURL('**/app/login');
    expect(await page.evaluate(() => localStorage.getItem('herald.token'))).toBeNull();
    await context.close();
  });

  it('no page broke its Content-Security-Policy', () => {
    expect(cspViolations).toEqual([]);
  });
});
