// Plain language in Chromium against `herald serve`: a segment and a campaign say who they reach in a sentence (no JSON),
// an activation refused for an unverified sender names the step and field with the link to Sending domains, and the
// enrollments and events name people (by name, or their device), never by subscriber id. Skipped without a Chromium.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROME_UA } from '../../server/test/fixtures.js';
import { createFakeBrowser, startPushService, type PushService } from '../../server/test/push-service.js';
import { ADMIN, api, expectAccessible, findChromium, startSession, type Herald, type Session } from './browser.js';

const chromiumPath = findChromium();
if (!chromiumPath) {
  const message = '\n!!! Plain-language browser tests SKIPPED: no Chromium found (CHROME_PATH, or chromium on PATH): apt-get install -y chromium\n';
  if (process.env.CI === 'true') throw new Error(message);
  console.error(message);
}

const FILTERS = { platform: ['desktop'], browser: ['Chrome'], country: ['DE', 'FR'], tags: { none: ['trial'] } };
const SENTENCE = 'Desktop · Chrome · Germany or France · not tagged trial';

describe.skipIf(!chromiumPath)('plain language in Chromium', { timeout: 90_000 }, () => {
  let session: Session;
  let herald: Herald;
  let auth: Record<string, string>;
  let projectId: string;
  let push: PushService;
  let liveKey: Record<string, string>;
  let adaId: string;
  let deviceId: string;

  beforeAll(async () => {
    push = await startPushService();
    session = await startSession(chromiumPath!, { ALLOW_INSECURE_PUSH_ENDPOINTS: 'true', AUTOMATION_POLL_INTERVAL_MS: '200' });
    ({ herald, auth, projectId } = session);
    liveKey = { 'x-api-key': (await api<{ key: string }>(herald, 'POST', `/projects/${projectId}/api-keys`, { name: 'app', mode: 'live' }, auth)).key };
    adaId = (await api<{ id: string }>(herald, 'POST', '/contacts', { projectId, email: 'ada@example.com', externalId: 'ada-1', attributes: { first_name: 'Ada', last_name: 'Lovelace' } }, auth)).id;
    const device = createFakeBrowser();
    const registered = await api<{ id: string; token: string }>(
      herald,
      'POST',
      '/subscribers',
      { projectId, endpoint: push.endpointFor(device), p256dh: device.p256dh, auth: device.auth, userAgent: CHROME_UA },
      liveKey,
    );
    deviceId = registered.id;
    // A flow that only waits: an event enrolls its person, who stays in it.
    const waiting = await api<{ id: string }>(
      herald,
      'POST',
      '/automations',
      { projectId, name: 'Welcome wait', trigger: { type: 'event', eventName: 'signed.up' }, steps: [{ id: 'wait', type: 'delay', duration: '1d', next: null }] },
      auth,
    );
    await api(herald, 'POST', `/automations/${waiting.id}/activate`, undefined, auth);
    await api(herald, 'POST', '/events', { name: 'signed.up', externalId: 'ada-1', properties: { plan: 'pro', seats: 3 } }, liveKey);
    await api(herald, 'POST', '/events', { name: 'signed.up', token: registered.token, properties: {} }, liveKey);
  }, 120_000);

  afterAll(async () => {
    await session?.stop();
    await push?.close();
  }, 60_000);

  async function signIn() {
    const opened = await session.newPage();
    await session.openDemo(opened.page, ADMIN);
    return opened;
  }

  const pageText = (page: Page) => page.locator('main').innerText();

  it('a segment and a campaign say who they reach in words, with no JSON on the page', async () => {
    const segment = await api<{ id: string }>(herald, 'POST', '/segments', { projectId, name: 'Desktop Europe', filters: FILTERS }, auth);
    const campaign = await api<{ id: string }>(
      herald,
      'POST',
      '/campaigns',
      { projectId, name: 'Spring push', content: { title: 'Spring', body: 'Sale' }, segment: { filters: FILTERS }, schedule: { mode: 'draft' } },
      auth,
    );
    const saved = await api<{ id: string }>(
      herald,
      'POST',
      '/campaigns',
      { projectId, name: 'Saved-segment push', content: { title: 'Hi', body: 'There' }, segment: { savedSegmentId: segment.id }, schedule: { mode: 'draft' } },
      auth,
    );
    const { context, page } = await signIn();

    await page.goto(`${herald.url}/app/projects/${projectId}/segments`);
    const row = page.getByRole('row', { name: /Desktop Europe/ });
    await row.waitFor();
    expect(await row.getByRole('cell').nth(1).innerText()).toBe(SENTENCE);
    expect(await pageText(page)).not.toContain('{"');
    await expectAccessible(page, 'the segments with their sentences');

    await page.goto(`${herald.url}/app/projects/${projectId}/segments/${segment.id}`);
    await expect.poll(() => page.getByTestId('audience-sentence').innerText()).toBe(`Who: ${SENTENCE}`);
    // The sentence follows the form.
    await page.getByLabel('Tags: none of').fill('trial, test');
    await expect.poll(() => page.getByTestId('audience-sentence').innerText()).toBe('Who: Desktop · Chrome · Germany or France · not tagged trial or test');

    await page.goto(`${herald.url}/app/projects/${projectId}/campaigns/${campaign.id}`);
    await expect.poll(() => page.getByTestId('audience-sentence').innerText()).toBe(SENTENCE);
    expect(await pageText(page)).not.toContain('{"');
    await expectAccessible(page, 'a campaign with its audience in words');

    await page.goto(`${herald.url}/app/projects/${projectId}/campaigns/${saved.id}`);
    await expect.poll(() => page.getByTestId('audience-sentence').innerText()).toBe(`Saved segment “Desktop Europe”: ${SENTENCE}`);
    expect(await page.getByRole('link', { name: 'Saved segment “Desktop Europe”' }).getAttribute('href')).toBe(`/app/projects/${projectId}/segments/${segment.id}`);
    expect(await pageText(page)).not.toContain('{"');
    await context.close();
  });

  it('an activation refused for an unverified sender names the step and field, with the link to Sending domains', async () => {
    const flow = await api<{ id: string }>(
      herald,
      'POST',
      '/automations',
      {
        projectId,
        name: 'Welcome letter',
        trigger: { type: 'event', eventName: 'letter.wanted' },
        steps: [
          { id: 'pause', type: 'delay', duration: '1h', next: 'letter' },
          { id: 'letter', type: 'send_email', content: { subject: 'Welcome', html: '<p>Hello</p>', from: { email: 'news@unverified.example', name: 'News' } }, next: null },
        ],
      },
      auth,
    );
    const { context, page } = await signIn();
    await page.goto(`${herald.url}/app/projects/${projectId}/automations/${flow.id}`);
    await page.getByRole('button', { name: 'Activate Welcome letter' }).click();
    const dialog = page.getByRole('alertdialog');
    await dialog.getByRole('button', { name: 'Activate automation' }).click();
    const problem = dialog.getByRole('alert');
    await expect
      .poll(async () => (await problem.innerText()).replace(/\n+/g, '\n'))
      .toBe('Not activated:\nStep 2 (Send email), sender address: the sender’s domain unverified.example is not verified — verify it in Sending domains');
    expect(await problem.getByRole('link', { name: 'Sending domains' }).getAttribute('href')).toBe(`/app/projects/${projectId}/domains`);
    await expectAccessible(page, 'the activation refused in words');
    await dialog.getByRole('button', { name: 'Cancel' }).click();

    // The editor marks the field of the step it names, with the same words and link.
    const step = page.getByRole('form', { name: 'Automation' }).getByRole('group', { name: /— letter$/ });
    const from = step.getByLabel('From address');
    expect(await from.getAttribute('aria-invalid')).toBe('true');
    const error = step.locator('.field-error');
    expect(await error.innerText()).toBe('the sender’s domain unverified.example is not verified — verify it in Sending domains');
    await error.getByRole('link', { name: 'Sending domains' }).waitFor();
    await page.getByText('Not activated: the problems are shown on the steps and fields they concern.').waitFor();
    await expectAccessible(page, 'the step marked with the refused activation');

    // The link goes where the domain is verified.
    await error.getByRole('link', { name: 'Sending domains' }).click();
    await page.waitForURL(`**/app/projects/${projectId}/domains`);
    await context.close();
  });

  it('enrollments and events name people, never by subscriber id', async () => {
    const { context, page } = await signIn();
    const flows = await api<{ data: { id: string; name: string }[] }>(herald, 'GET', `/automations/project/${projectId}`, undefined, auth);
    const waiting = flows.data.find((flow) => flow.name === 'Welcome wait')!;

    await page.goto(`${herald.url}/app/projects/${projectId}/automations/${waiting.id}/enrollments`);
    const table = page.getByRole('table', { name: 'Enrollments' });
    await table.getByRole('link', { name: 'Ada Lovelace' }).waitFor();
    await table.getByRole('link', { name: 'Anonymous device (Chrome on Windows)' }).waitFor();
    expect(await table.getByRole('link', { name: 'Ada Lovelace' }).getAttribute('href')).toBe(`/app/projects/${projectId}/subscribers/${adaId}`);
    const enrollments = await table.innerText();
    expect(enrollments).not.toContain(adaId);
    expect(enrollments).not.toContain(deviceId);
    await page.getByRole('button', { name: 'History of Ada Lovelace' }).click();
    await page.getByRole('table', { name: 'Step history of Ada Lovelace' }).waitFor();
    await expectAccessible(page, 'enrollments by name');

    await page.goto(`${herald.url}/app/projects/${projectId}/events`);
    const events = page.getByRole('table', { name: 'Recent events' });
    await events.getByRole('link', { name: 'Ada Lovelace' }).waitFor();
    await events.getByRole('link', { name: 'Anonymous device (Chrome on Windows)' }).waitFor();
    const listed = await events.innerText();
    expect(listed).not.toContain(adaId);
    expect(listed).not.toContain(deviceId);
    expect(listed).toContain('plan: pro · seats: 3');
    expect(await pageText(page)).not.toContain('{"');
    await expectAccessible(page, 'events by name');
    await context.close();
    expect(session.cspViolations).toEqual([]);
  });
});
