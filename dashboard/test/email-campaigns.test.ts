// The email campaign pages in a real Chromium against a real `herald serve`, a local DNS server (a verified sending
// domain) and a local SMTP peer (the project's provider): a campaign built from a template (a 422 beside its part,
// merge tags inserted, the preview rendered for a chosen subscriber at both widths, the email reach), a test send
// reaching the peer, scheduled at each recipient's local time with its counters moving live, paused, resumed,
// cancelled and duplicated; a sent one, its link clicked, with its chart's numbers and top links, archived and re-sent;
// the list's filters; a VIEWER's read-only page; one held up by an SMTP server that cannot be reached says why.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../server/src/db/embedded-postgres.js';
import { startDnsServer, type DnsServer } from '../../server/test/dns-server.js';
import { startSmtpPeer, type SmtpPeer } from '../../server/test/smtp-peer.js';
import { addCondition, ADMIN, api, expectAccessible, findChromium, screenshot, startSession, VIEWER, type Herald, type Session } from './browser.js';

const chromiumPath = findChromium();
const DOMAIN = 'news.example.com';

interface EmailDomain {
  id: string;
  records: { name: string; value: string; checked: boolean }[];
}

interface EmailCampaign {
  id: string;
  name: string;
  status: string;
  content: Record<string, unknown>;
  schedule: Record<string, unknown>;
  utm: Record<string, string> | null;
  stats: Record<string, number>;
}

describe.skipIf(!chromiumPath)('email campaigns in Chromium', { timeout: 90_000 }, () => {
  let session: Session;
  let herald: Herald;
  let auth: Record<string, string>;
  let projectId: string;
  let dns: DnsServer;
  let peer: SmtpPeer;
  const stamp = Date.now();
  // Two recipients whose local morning has come (UTC+14), one whose has not (UTC−10).
  const ada = `ada-${stamp}@example.org`;
  const bob = `bob-${stamp}@example.org`;
  const cy = `cy-${stamp}@example.org`;

  beforeAll(async () => {
    dns = await startDnsServer();
    peer = await startSmtpPeer();
    // Retries a second or two apart, never given up on within a test: a campaign held up waits for its provider.
    session = await startSession(chromiumPath!, { DNS_SERVERS: dns.address, DELIVERY_RETRY_MAX: '2', DELIVERY_MAX_ATTEMPTS: '100' });
    ({ herald, auth, projectId } = session);
    const domain = await api<EmailDomain>(herald, 'POST', `/projects/${projectId}/email-domains`, { domain: DOMAIN }, auth);
    for (const record of domain.records) if (record.checked) dns.setTxt(record.name, record.value);
    await api(herald, 'POST', `/projects/${projectId}/email-domains/${domain.id}/verify`, undefined, auth);
    // Added and never verified: not offered as a sender.
    await api(herald, 'POST', `/projects/${projectId}/email-domains`, { domain: 'pending.example.com' }, auth);
    await api(herald, 'PUT', `/projects/${projectId}/channels/email`, { provider: 'smtp', settings: { host: peer.host, port: peer.port, secure: false } }, auth);
    const contact = (email: string, timezone: string, attributes: Record<string, unknown>) =>
      api(herald, 'POST', '/contacts', { projectId, email, timezone, tags: ['spring'], attributes }, auth);
    await contact(ada, 'Pacific/Kiritimati', { first_name: 'Ada', plan: 'pro' });
    await contact(bob, 'Pacific/Kiritimati', { first_name: 'Bob' });
    await contact(cy, 'Pacific/Honolulu', {});
    await api(
      herald,
      'POST',
      '/email-templates',
      {
        projectId,
        name: 'Newsletter',
        subject: 'News for {{ first_name | default: "you" }}',
        preheader: 'This week',
        html: '<h1>News</h1><p>Hello </p><p><a href="https://shop.example.com/sale">The sale</a></p>',
      },
      auth,
    );
  }, 120_000);

  afterAll(async () => {
    await session?.stop();
    await peer?.close();
    await dns?.close();
  }, 60_000);

  const campaigns = () => api<{ data: EmailCampaign[] }>(herald, 'GET', `/email-campaigns/project/${projectId}`, undefined, auth);
  const frame = (page: Page) => page.locator('iframe[title="Email HTML preview"]');
  const subjectOf = (page: Page) => page.getByTestId('preview-subject');
  const status = (page: Page) => page.getByTestId('campaign-status');

  it('builds a draft from a template with a live preview for a chosen subscriber, a 422 beside its part, and the email reach', async () => {
    const { context, page } = await session.newPage();
    await session.openDemo(page, ADMIN);
    await page.getByRole('navigation', { name: 'Project' }).getByRole('link', { name: 'Email campaigns' }).click();
    await page.waitForURL(`**/app/projects/${projectId}/email-campaigns`);
    await page.getByText('No email campaigns match.').waitFor();
    await expectAccessible(page, 'email campaigns, empty');
    await page.getByRole('link', { name: 'New email campaign' }).click();
    await page.getByRole('heading', { name: 'New email campaign' }).waitFor();

    await page.getByLabel('Campaign name').fill('Spring news');
    await page.getByLabel('Start from a saved template').selectOption({ label: 'Newsletter' });
    await page.getByRole('button', { name: 'Use template' }).click();
    await expect.poll(() => page.getByLabel('Subject').inputValue()).toBe('News for {{ first_name | default: "you" }}');
    expect(await page.getByLabel('Preheader').inputValue()).toBe('This week');
    await expect.poll(() => subjectOf(page).textContent()).toBe('News for you');

    // A merge tag inserted where the cursor is, with an empty default.
    const html = page.getByLabel('HTML body');
    await html.evaluate((element: HTMLTextAreaElement) => {
      const at = element.value.indexOf('Hello ') + 'Hello '.length;
      element.focus();
      element.setSelectionRange(at, at);
    });
    await page.getByLabel('Merge tag').fill('first_name');
    await page.getByRole('button', { name: 'Insert merge tag' }).click();
    await expect.poll(() => html.inputValue()).toContain('<p>Hello {{ first_name | default: "" }}</p>');
    await expect.poll(async () => (await html.evaluate((element: HTMLTextAreaElement) => element.selectionStart)) === (await html.inputValue()).indexOf('</p>', 20)).toBe(true);

    // Rendered for a chosen subscriber: its attributes are the merge fields, as a send renders them.
    await expect.poll(() => frame(page).getAttribute('srcdoc')).toContain('<p>Hello </p>');
    await page.getByLabel("Preview for (a subscriber's email address)").fill(ada);
    await expect.poll(() => subjectOf(page).textContent()).toBe('News for Ada');
    await expect.poll(() => frame(page).getAttribute('srcdoc')).toContain('<p>Hello Ada</p>');
    expect(await frame(page).getAttribute('sandbox')).toBe('');
    await page.getByRole('radio', { name: 'Mobile (375 px)' }).check();
    await expect.poll(() => frame(page).evaluate((element) => element.getBoundingClientRect().width)).toBe(375);
    await page.getByRole('radio', { name: 'Desktop' }).check();
    await expect.poll(() => frame(page).evaluate((element) => element.getBoundingClientRect().width)).toBeGreaterThan(375);

    // The plain text: generated from the HTML unless written here.
    await page.getByRole('tab', { name: 'Plain text' }).click();
    await expect.poll(() => page.getByLabel('Generated plain text').textContent()).toMatch(/NEWS\s+Hello Ada/);
    await page.getByRole('radio', { name: 'Written here' }).check();
    await page.getByLabel('Plain-text version').fill('Hello {{ first_name | default: "there" }}, see the sale.');
    await page.getByRole('radio', { name: /Generated from each/ }).check();
    await page.getByRole('tab', { name: 'HTML' }).click();

    // Only the verified domain is offered as a sender.
    const domains = await page.getByLabel('From domain').locator('option').allTextContents();
    expect(domains).toEqual([`@${DOMAIN}`]);
    await page.getByLabel('From name').fill('Example Shop');
    await page.getByLabel('From address').fill('hello');
    await page.getByLabel('Reply-To address').fill('help');
    await page.getByLabel('utm_source').fill('herald');
    await page.getByLabel('utm_content').fill('hero');
    await addCondition(page, 'Tags');
    await page.getByLabel('Tags: any of').fill('spring');
    const expected = await api<{ count: number }>(herald, 'POST', '/segments/reach', { projectId, channel: 'email', filters: { tags: { any: ['spring'] } } }, auth);
    expect(expected.count).toBe(3);
    await expect.poll(() => page.getByTestId('campaign-reach').textContent()).toBe('3');

    // A merge tag liquid refuses: the live preview says so beside the subject, and so does the save's 422.
    const subject = page.getByLabel('Subject');
    await subject.fill('News for {{ first_name | shout }}');
    await expect.poll(() => subject.getAttribute('aria-invalid')).toBe('true');
    await page.getByRole('button', { name: 'Save draft' }).click();
    await page.getByText('Please correct the highlighted fields.').waitFor();
    const subjectError = page.getByRole('alert').filter({ hasText: 'undefined filter: shout' });
    expect(await subject.getAttribute('aria-describedby')).toContain(await subjectError.getAttribute('id'));
    expect((await campaigns()).data).toEqual([]);
    await expectAccessible(page, 'email campaign builder with a 422');
    await subject.fill('News for {{ first_name | default: "you" }}');
    await expect.poll(() => subject.getAttribute('aria-invalid')).toBeNull();
    expect(await page.getByText('Please correct the highlighted fields.').count()).toBe(0);
    await expectAccessible(page, 'email campaign builder');
    await screenshot(page, 'email-campaign-builder');

    await page.getByRole('button', { name: 'Save draft' }).click();
    await page.getByRole('heading', { name: 'Spring news' }).waitFor();
    expect(await status(page).textContent()).toBe('draft');
    const [stored] = (await campaigns()).data;
    expect(stored).toMatchObject({
      name: 'Spring news',
      content: {
        subject: 'News for {{ first_name | default: "you" }}',
        preheader: 'This week',
        html: '<h1>News</h1><p>Hello {{ first_name | default: "" }}</p><p><a href="https://shop.example.com/sale">The sale</a></p>',
        from: { email: `hello@${DOMAIN}`, name: 'Example Shop' },
        replyTo: { email: `help@${DOMAIN}` },
      },
      schedule: { mode: 'draft', localTime: false },
      utm: { source: 'herald', content: 'hero' },
    });
    expect(stored!.content.text).toBeUndefined();
    await context.close();
  });

  it('sends a test, schedules the draft at each recipient’s local time, and its counters move live; paused, resumed, cancelled, duplicated', async () => {
    const [draft] = (await campaigns()).data;
    const { context, page } = await session.newPage();
    await session.openDemo(page, ADMIN);
    await page.goto(`${herald.url}/app/projects/${projectId}/email-campaigns/${draft!.id}`);
    await page.getByRole('heading', { name: 'Spring news' }).waitFor();

    // A test: more than five addresses is the API's 422 beside the field; then two, each with its outcome.
    const addresses = page.getByLabel('Test addresses');
    await addresses.fill(Array.from({ length: 6 }, (_, i) => `t${i}@example.org`).join(', '));
    await page.getByRole('button', { name: 'Send test' }).click();
    await expect.poll(() => addresses.getAttribute('aria-invalid')).toBe('true');
    await addresses.fill(`${ada}, nobody-${stamp}@example.org`);
    await page.getByRole('button', { name: 'Send test' }).click();
    const results = page.getByRole('list', { name: 'Test send results' });
    await expect.poll(() => results.textContent()).toBe(`${ada}: sent` + `nobody-${stamp}@example.org: sent`);
    await expect.poll(() => peer.received(ada).length).toBe(1);
    expect(peer.received(ada)[0]!.parsed.subject).toBe('[Test] News for Ada');
    expect(peer.received(`nobody-${stamp}@example.org`)[0]!.parsed.subject).toBe('[Test] News for you');
    expect((await api<EmailCampaign>(herald, 'GET', `/email-campaigns/${draft!.id}`, undefined, auth)).stats.sent).toBe(0);
    await expectAccessible(page, 'email campaign draft with test results');

    // Edited: scheduled at each recipient's local time, two hours from now on UTC's clock.
    await page.getByRole('link', { name: 'Edit' }).click();
    await page.getByRole('heading', { name: 'Edit “Spring news”' }).waitFor();
    expect(await page.getByLabel('Tags: any of').inputValue()).toBe('spring');
    expect(await page.getByLabel('From address').inputValue()).toBe('hello');
    await page.getByRole('radio', { name: 'Schedule' }).check();
    const sendAt = new Date(Date.now() + 2 * 3600_000).toISOString().slice(0, 16);
    await page.getByLabel('Send at', { exact: true }).fill(sendAt);
    await page.getByLabel('Time zone').fill('UTC');
    await page.getByLabel("Send at each recipient's local time").check();
    expect(await page.getByText(/goes on for 26 hours/).count()).toBe(1);
    await expectAccessible(page, 'email campaign builder, editing a draft');
    await page.getByRole('button', { name: 'Save draft' }).click();
    await page.getByRole('heading', { name: 'Spring news' }).waitFor();
    expect(await status(page).textContent()).toBe('draft');
    expect(await page.getByTestId('local-window').textContent()).toMatch(/26 hours/);
    const stored = await api<EmailCampaign & { schedule: { localWindow: { from: string; to: string } } }>(herald, 'GET', `/email-campaigns/${draft!.id}`, undefined, auth);
    expect(stored.schedule).toMatchObject({ mode: 'scheduled', localTime: true, timezone: 'UTC' });
    expect(Date.parse(stored.schedule.localWindow.to) - Date.parse(stored.schedule.localWindow.from)).toBe(26 * 3600_000);

    // Scheduled from its page: the first zones' time has come, so it goes out at once to them; only the event stream
    // moves the page (it reads the campaign once and never polls), and never reloads.
    await page.evaluate(() => ((window as unknown as { notReloaded: boolean }).notReloaded = true));
    await page.getByRole('button', { name: 'Schedule' }).click();
    const dialog = page.getByRole('alertdialog');
    expect(await dialog.textContent()).toMatch(/in each recipient's time zone, over 26 hours/);
    await expectAccessible(page, 'schedule confirmation');
    await dialog.getByRole('button', { name: 'Schedule campaign' }).click();
    await expect.poll(() => peer.received(bob).length, { timeout: 20_000 }).toBe(1);
    await expect.poll(() => peer.received(ada).length).toBe(2);
    const reached = Date.now();
    await expect.poll(() => page.getByTestId('stat-sent').textContent(), { timeout: 2_000, interval: 50 }).toBe('2');
    expect(Date.now() - reached).toBeLessThan(2_000);
    await expect.poll(() => status(page).textContent()).toBe('sending');
    expect(await page.getByTestId('stat-totalTargeted').textContent()).toBe('3');
    expect(await page.getByTestId('stat-to-go').textContent()).toBe('1');
    expect(peer.received(bob)[0]!.parsed.subject).toBe('News for Bob');
    expect(peer.received(cy)).toEqual([]);
    expect(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true);
    await expectAccessible(page, 'email campaign sending');
    // A frame is painted once it has been on screen: the full-page picture then shows the email.
    await frame(page).scrollIntoViewIfNeeded();
    await screenshot(page, 'email-campaign');

    await page.getByRole('button', { name: 'Pause' }).click();
    await expect.poll(() => status(page).textContent()).toBe('paused');
    await page.getByRole('button', { name: 'Resume' }).click();
    await expect.poll(() => status(page).textContent()).toBe('sending');
    expect(peer.received(cy)).toEqual([]);

    await page.getByRole('button', { name: 'Cancel campaign' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Cancel campaign' }).click();
    await expect.poll(() => status(page).textContent()).toBe('cancelled');
    await expect.poll(() => page.getByTestId('stat-suppressed').textContent()).toBe('1');
    expect(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true);

    // Duplicated: a new draft, opened in the builder with the same content.
    await page.getByRole('button', { name: 'Duplicate' }).click();
    await page.getByRole('heading', { name: /^Edit “Spring news \(copy\)”$/ }).waitFor();
    expect(await page.getByLabel('HTML body').inputValue()).toContain('{{ first_name | default: "" }}');
    expect(await page.getByLabel('utm_source').inputValue()).toBe('herald');
    // A saved draft can be tested from the builder too.
    await page.getByLabel('Test addresses').fill(bob);
    await page.getByRole('button', { name: 'Send test' }).click();
    await expect.poll(() => page.getByRole('list', { name: 'Test send results' }).textContent()).toBe(`${bob}: sent`);
    expect((await campaigns()).data.map((c) => [c.name, c.status])).toEqual([
      ['Spring news (copy)', 'draft'],
      ['Spring news', 'cancelled'],
    ]);
    await context.close();
  });

  it('a sent campaign shows its events and top links, is archived and re-sent; the list filters by status and name', async () => {
    const sent = await api<EmailCampaign>(
      herald,
      'POST',
      '/email-campaigns',
      {
        projectId,
        name: 'Flash sale',
        content: {
          subject: 'Flash {{ first_name | default: "friend" }}',
          html: '<p>Now at <a href="https://shop.example.com/flash">the sale</a></p>',
          from: { email: `sales@${DOMAIN}` },
        },
        segment: { filters: { tags: { any: ['spring'] } } },
        schedule: { mode: 'immediate' },
      },
      auth,
    );
    await expect.poll(async () => (await api<EmailCampaign>(herald, 'GET', `/email-campaigns/${sent.id}`, undefined, auth)).status, { timeout: 20_000 }).toBe('sent');
    const flash = peer.received(ada).find((mail) => mail.parsed.subject === 'Flash Ada')!;
    const click = [...(flash.parsed.html as string).matchAll(/href="([^"]+\/e\/click\/[^"]+)"/g)].map((m) => m[1]!.replace(/&amp;/g, '&'))[0]!;
    expect((await fetch(click, { redirect: 'manual' })).headers.get('location')).toContain('https://shop.example.com/flash');

    const { context, page } = await session.newPage();
    await session.openDemo(page, ADMIN);
    await page.goto(`${herald.url}/app/projects/${projectId}/email-campaigns`);
    await page.getByRole('link', { name: 'Flash sale' }).waitFor();
    expect(await page.getByRole('row').count()).toBe(4);
    await expectAccessible(page, 'email campaigns');
    await screenshot(page, 'email-campaigns');
    await page.getByLabel('Status').selectOption('cancelled');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/status=cancelled/);
    await expect.poll(() => page.getByRole('row').count()).toBe(2);
    expect(await page.getByRole('link', { name: 'Spring news' }).count()).toBe(1);
    await page.getByRole('button', { name: 'Clear' }).click();
    await page.getByLabel('Name contains').fill('flash');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await expect.poll(() => page.getByRole('row').count()).toBe(2);

    await page.getByRole('link', { name: 'Flash sale' }).click();
    await page.getByRole('heading', { name: 'Flash sale' }).waitFor();
    expect(await status(page).textContent()).toBe('sent');
    await page.getByRole('img', { name: /^Events per .+, totals: Sent 3, Unique opens \d+, Human opens \d+, Unique clicks 1,/ }).waitFor();
    await page.getByText('Numbers').click();
    const total = page.getByRole('row', { name: /^Total/ });
    // Sent, unique opens, human opens, unique clicks, human clicks, bounces: whether the click was a person's, and an
    // open implied by it, are not this test's to say.
    expect(await total.getByRole('cell').allTextContents()).toEqual(['3', expect.any(String), expect.any(String), '1', expect.any(String), '0']);
    const links = page.getByRole('table', { name: 'Top links' });
    expect(await links.getByRole('row').nth(1).getByRole('cell').allTextContents()).toEqual([expect.stringContaining('https://shop.example.com/flash'), '1', '1', expect.any(String)]);
    await expectAccessible(page, 'sent email campaign');
    await page.getByRole('button', { name: 'Archive' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Archive campaign' }).click();
    await expect.poll(() => status(page).textContent()).toBe('archived');

    await page.getByRole('button', { name: 'Re-send' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Re-send now' }).click();
    await page.waitForURL((url) => url.pathname.includes('/email-campaigns/') && !url.pathname.endsWith(sent.id));
    await expect.poll(() => status(page).textContent(), { timeout: 20_000 }).toBe('sent');
    await page.getByRole('link', { name: 'the original campaign' }).waitFor();
    await context.close();
  });

  it('a VIEWER reads a campaign and previews it, with no actions and no test send', async () => {
    const [campaign] = (await campaigns()).data.filter((c) => c.name === 'Spring news');
    const { context, page } = await session.newPage();
    await session.openDemo(page, VIEWER);
    await page.goto(`${herald.url}/app/projects/${projectId}/email-campaigns/${campaign!.id}`);
    await page.getByRole('heading', { name: 'Spring news' }).waitFor();
    await expect.poll(() => subjectOf(page).textContent()).toBe('News for you');
    await page.getByLabel("Preview for (a subscriber's email address)").fill(bob);
    await expect.poll(() => subjectOf(page).textContent()).toBe('News for Bob');
    expect(await frame(page).getAttribute('srcdoc')).toContain('<p>Hello Bob</p>');
    expect(await page.getByRole('group', { name: 'Campaign actions' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Send test' }).count()).toBe(0);
    await page.goto(`${herald.url}/app/projects/${projectId}/email-campaigns`);
    await page.getByRole('link', { name: 'Spring news', exact: true }).waitFor();
    expect(await page.getByRole('link', { name: 'New email campaign' }).count()).toBe(0);
    await expectAccessible(page, 'email campaigns as a viewer');
    await context.close();
  });

  it('a campaign whose SMTP server cannot be reached says why on its page, until a send goes through', async () => {
    const held = `held-${stamp}@example.org`;
    await api(herald, 'POST', '/contacts', { projectId, email: held, tags: ['held'] }, auth);
    const provider = (port: number) => api(herald, 'PUT', `/projects/${projectId}/channels/email`, { provider: 'smtp', settings: { host: '127.0.0.1', port, secure: false } }, auth);
    // Nothing listens there: every connection is refused.
    await provider(await freePort());
    const campaign = await api<EmailCampaign>(
      herald,
      'POST',
      '/email-campaigns',
      {
        projectId,
        name: 'Held up',
        content: { subject: 'Held', html: '<p>Held</p>', from: { email: `sales@${DOMAIN}` } },
        segment: { filters: { tags: { any: ['held'] } } },
        schedule: { mode: 'immediate' },
      },
      auth,
    );
    const { context, page } = await session.newPage();
    await session.openDemo(page, ADMIN);
    await page.goto(`${herald.url}/app/projects/${projectId}/email-campaigns/${campaign.id}`);
    await page.getByRole('heading', { name: 'Held up' }).waitFor();
    const banner = page.getByRole('alert').filter({ hasText: 'Sending is held up' });
    await expect
      .poll(() => banner.textContent(), { timeout: 10_000 })
      .toMatch(/^Sending is held up: the email provider refused the connection \(ECONNREFUSED\) since \d.* — Herald keeps retrying\.$/);
    expect(await page.getByTestId('sending-issue').textContent()).toContain('connect ECONNREFUSED 127.0.0.1:');
    expect(await status(page).textContent()).toBe('sending');
    await expectAccessible(page, 'email campaign held up by its provider');

    // The provider back: the next retry goes through, and the banner goes with the stream's next event.
    await provider(peer.port);
    await expect.poll(() => status(page).textContent(), { timeout: 15_000 }).toBe('sent');
    expect(await page.getByTestId('sending-issue').count()).toBe(0);
    expect(peer.received(held)).toHaveLength(1);
    await context.close();
  });

  it('no page broke its Content-Security-Policy', () => {
    expect(session.cspViolations).toEqual([]);
  });
});
