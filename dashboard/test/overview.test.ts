// A project's overview in Chromium against `herald serve`, a local DNS server, SMTP peer and push service: the
// getting-started checklist as a project is set up, a health warning linking to its fix, who each channel reaches,
// sends per channel from real campaigns, rates in words, recent work, the window; 1280 and 390 px (skipped without a Chromium).
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type DnsServer } from '../../server/test/dns-server.js';
import { CHROME_UA } from '../../server/test/fixtures.js';
import { createFakeBrowser, startPushService, type PushService } from '../../server/test/push-service.js';
import { startSmtpPeer, type SmtpPeer } from '../../server/test/smtp-peer.js';
import { ADMIN, api, expectAccessible, findChromium, screenshot, sidewaysOverflow, startSession, type Herald, type Session } from './browser.js';

const chromiumPath = findChromium();
const DOMAIN = 'news.example.com';

interface EmailDomain {
  id: string;
  records: { name: string; value: string; checked: boolean }[];
}

describe.skipIf(!chromiumPath)('the project overview in Chromium', { timeout: 90_000 }, () => {
  let session: Session;
  let herald: Herald;
  let auth: Record<string, string>;
  let projectId: string;
  let dns: DnsServer;
  let peer: SmtpPeer;
  let push: PushService;
  let domain: EmailDomain;

  beforeAll(async () => {
    dns = await startDnsServer();
    peer = await startSmtpPeer();
    push = await startPushService();
    session = await startSession(chromiumPath!, { DNS_SERVERS: dns.address, ALLOW_INSECURE_PUSH_ENDPOINTS: 'true', DELIVERY_POLL_INTERVAL_MS: '100' });
    ({ herald, auth, projectId } = session);
  }, 120_000);

  afterAll(async () => {
    await session?.stop();
    await push?.close();
    await peer?.close();
    await dns?.close();
  }, 60_000);

  const checklist = (page: Page) => page.getByRole('region', { name: 'Getting started' });
  const step = (page: Page, title: string) => checklist(page).getByRole('listitem').filter({ hasText: title });
  const tile = (page: Page, label: string) => page.locator('.tile').filter({ has: page.getByText(label, { exact: true }) }).locator('dd');

  it('a new project: every step to do, linked to where it is done, and a health warning linking to its fix page', async () => {
    // A sending domain and no provider: email is in use and nothing can send it.
    domain = await api<EmailDomain>(herald, 'POST', `/projects/${projectId}/email-domains`, { domain: DOMAIN }, auth);
    const { context, page } = await session.newPage();
    await session.openDemo(page, ADMIN);
    await page.waitForURL(`**/app/projects/${projectId}/overview`);
    await checklist(page).getByText('0 of 5 steps done.').waitFor();
    for (const title of ['Install the SDK on your site', 'Verify a sending domain', 'Connect a provider', 'Import or collect people', 'Send a first campaign']) {
      expect(await step(page, title).locator('.badge').innerText()).toBe('To do');
    }
    // The SDK's lines are there to copy; each step links to its page.
    await step(page, 'Install the SDK').getByTestId('sdk-snippet').waitFor();
    expect(await step(page, 'Install the SDK').innerText()).toContain(`projectId: '${projectId}'`);
    expect(await step(page, 'Verify a sending domain').getByRole('link', { name: 'Sending domains' }).getAttribute('href')).toBe(`/app/projects/${projectId}/domains`);
    expect(await step(page, 'Import or collect people').getByRole('link', { name: 'Import contacts' }).getAttribute('href')).toBe(`/app/projects/${projectId}/import`);
    for (const tileName of ['People', 'By Push', 'By Email', 'By SMS', 'By WhatsApp']) expect(await tile(page, tileName).innerText()).toBe('0');
    await page.getByText('No emails sent in the last 30 days.').waitFor();
    await expectAccessible(page, 'the overview of a new project');

    const health = page.getByRole('region', { name: 'Health' });
    await health.getByText('The project uses email (a sending domain or an email campaign) but no email provider is connected.').waitFor();
    await health.getByRole('link', { name: 'Fix it in Email provider' }).click();
    await page.waitForURL(`**/app/projects/${projectId}/email-provider`);
    await page.getByRole('heading', { name: 'Email provider', level: 2 }).waitFor();
    expect(await page.getByRole('navigation', { name: 'Project' }).getByRole('link', { name: 'Email provider' }).getAttribute('aria-current')).toBe('page');
    await context.close();
  });

  it('as the project is set up the checklist moves on; with people and sends: tiles, charts, rates, recent work, the window; 1280 and 390 px', async () => {
    for (const record of domain.records) if (record.checked) dns.setTxt(record.name, record.value);
    await api(herald, 'POST', `/projects/${projectId}/email-domains/${domain.id}/verify`, undefined, auth);
    await api(herald, 'PUT', `/projects/${projectId}/channels/email`, { provider: 'smtp', settings: { host: peer.host, port: peer.port, secure: false } }, auth);
    for (const name of ['ada', 'bob', 'cy']) {
      await api(herald, 'POST', '/contacts', { projectId, email: `${name}@example.org`, tags: ['spring'], attributes: { first_name: name } }, auth);
    }
    const { context, page } = await session.newPage();
    await session.openDemo(page, ADMIN);
    await checklist(page).getByText('3 of 5 steps done.').waitFor();
    expect(await step(page, 'Verify a sending domain').locator('.badge').innerText()).toBe('Done');
    expect(await step(page, 'Connect a provider').locator('.badge').innerText()).toBe('Done');
    expect(await step(page, 'Import or collect people').locator('.badge').innerText()).toBe('Done');
    // A step done keeps its title only.
    expect(await step(page, 'Verify a sending domain').getByRole('link').count()).toBe(0);
    expect(await step(page, 'Send a first campaign').locator('.badge').innerText()).toBe('To do');
    // The provider connected, its warning is gone; push services still have no contact.
    const health = page.getByRole('region', { name: 'Health' });
    expect(await health.getByRole('listitem').allInnerTexts()).toEqual([
      'Warning Push services have no contact address for this project (the VAPID subject). Fix it in the project settings',
    ]);

    // A browser subscribes through the SDK's route; a push and an email campaign go out to the local peers.
    const liveKey = { 'x-api-key': (await api<{ key: string }>(herald, 'POST', `/projects/${projectId}/api-keys`, { name: 'site', mode: 'live' }, auth)).key };
    const browser = createFakeBrowser();
    await api(herald, 'POST', '/subscribers', { projectId, endpoint: push.endpointFor(browser), p256dh: browser.p256dh, auth: browser.auth, userAgent: CHROME_UA }, liveKey);
    const pushCampaign = await api<{ id: string }>(
      herald,
      'POST',
      '/campaigns',
      { projectId, name: 'Spring push', content: { title: 'Sale', body: 'Now on' }, segment: { filters: {} }, schedule: { mode: 'immediate' } },
      auth,
    );
    const emailCampaign = await api<{ id: string }>(
      herald,
      'POST',
      '/email-campaigns',
      {
        projectId,
        name: 'Spring letter',
        content: { subject: 'Spring', html: '<p>Hello</p>', from: { email: `news@${DOMAIN}` } },
        segment: { filters: { tags: { any: ['spring'] } } },
        schedule: { mode: 'immediate' },
      },
      auth,
    );
    await api(herald, 'POST', '/automations/from-starter', { projectId, starter: 'welcome-series', name: 'Welcome' }, auth);
    for (const url of [`/campaigns/${pushCampaign.id}`, `/email-campaigns/${emailCampaign.id}`]) {
      await expect.poll(async () => (await api<{ status: string }>(herald, 'GET', url, undefined, auth)).status, { timeout: 20_000 }).toBe('sent');
    }
    await expect.poll(() => peer.received('cy@example.org').length, { timeout: 20_000 }).toBe(1);

    await api(herald, 'PATCH', `/projects/${projectId}`, { settings: { vapidSubject: 'mailto:ops@example.org' } }, auth);
    await page.reload();
    await page.getByRole('heading', { name: 'Who you can reach now' }).waitFor();
    await health.getByText('All is well: nothing needs attention.').waitFor();
    // Every step done: the checklist has made way.
    expect(await checklist(page).count()).toBe(0);
    expect(await tile(page, 'People').innerText()).toBe('4');
    expect(await tile(page, 'By Push').innerText()).toBe('1');
    expect(await tile(page, 'By Email').innerText()).toBe('3');
    expect(await tile(page, 'By SMS').innerText()).toBe('0');

    // The charts carry their totals in their names and every number in a table.
    const sends = page.getByRole('figure').filter({ hasText: 'Messages sent per day and channel, last 30 days' });
    expect(await sends.getByRole('img').getAttribute('aria-label')).toBe('Messages sent per day and channel, last 30 days, totals: Push 1, Email 3, SMS 0, WhatsApp 0');
    await sends.getByText('Numbers').click();
    const total = sends.getByRole('row', { name: /^Total/ });
    expect((await total.getByRole('cell').allInnerTexts()).map((text) => text.trim())).toEqual(['1', '3', '0', '0']);
    const growth = page.getByRole('figure').filter({ hasText: 'New people per day, last 30 days' });
    expect(await growth.getByRole('img').getAttribute('aria-label')).toBe('New people per day, last 30 days, totals: New people 4');

    // The SMTP peer reports no deliveries: the sentence leaves them out rather than say 0 %.
    await page.getByText('Of 3 emails sent in the last 30 days, 0 opened (0 %) and 0 clicked (0 %); 0 bounced (0 %) and 0 were marked as spam (0 %).').waitFor();
    await page.getByText(/^Of 1 push sent, \d reached the device/).waitFor();

    const campaigns = page.getByRole('region', { name: 'Recent campaigns' });
    expect(await campaigns.getByRole('listitem').filter({ hasText: 'Spring letter' }).innerText()).toMatch(/Email · Sent/);
    expect(await campaigns.getByRole('listitem').filter({ hasText: 'Spring push' }).innerText()).toMatch(/Push · Sent/);
    const automations = page.getByRole('region', { name: 'Recent automations' });
    expect(await automations.getByRole('listitem').innerText()).toMatch(/Welcome\s+Draft/);
    await expectAccessible(page, 'the overview with data');
    await sends.getByText('Numbers').click();
    await page.evaluate(() => window.scrollTo(0, 0));
    await screenshot(page, 'overview');

    // The window: 7 days in the URL, the picker saying which is shown.
    const picker = page.getByRole('navigation', { name: 'Window' });
    await picker.getByRole('link', { name: '7 days' }).click();
    await page.waitForURL(/overview\?days=7$/);
    await page.getByRole('figure').filter({ hasText: 'Messages sent per day and channel, last 7 days' }).waitFor();
    expect(await picker.getByRole('link', { name: '7 days' }).getAttribute('aria-current')).toBe('page');
    expect(await picker.getByRole('link', { name: '30 days' }).getAttribute('aria-current')).toBeNull();

    await campaigns.getByRole('link', { name: 'Spring letter' }).click();
    await page.waitForURL(`**/app/projects/${projectId}/email-campaigns/${emailCampaign.id}`);
    await page.getByRole('heading', { name: 'Spring letter' }).waitFor();
    await page.goBack();
    await page.getByRole('heading', { name: 'Who you can reach now' }).waitFor();

    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${herald.url}/app/projects/${projectId}/overview`);
    await page.getByRole('heading', { name: 'Who you can reach now' }).waitFor();
    expect(await sidewaysOverflow(page)).toEqual([]);
    await expectAccessible(page, 'the overview at 390 px');
    await screenshot(page, 'overview-mobile');
    await context.close();
  });
});
