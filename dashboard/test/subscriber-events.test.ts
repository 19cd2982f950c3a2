// A subscriber's email events in Chromium against `herald serve`: an email campaign and a transactional email sent to a
// real SMTP peer, their tracking links opened and clicked over HTTP, then the subscriber's page read — labels, the
// campaign, the URL clicked, the machine and repeat badges, the pages, the empty state (skipped without a Chromium).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type DnsServer } from '../../server/test/dns-server.js';
import { startSmtpPeer, type SmtpPeer } from '../../server/test/smtp-peer.js';
import { api, expectAccessible, emailThroughPeer, findChromium, screenshot, startSession, VIEWER, type Herald, type Session } from './browser.js';

const chromiumPath = findChromium();
const DOMAIN = 'news.example.com';
const BROWSER = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15';
// Apple Mail Privacy Protection's proxy fetches images with this bare agent (machine signal `apple_mpp`).
const APPLE_PROXY = 'Mozilla/5.0';

describe.skipIf(!chromiumPath)("a subscriber's email events in Chromium", { timeout: 90_000 }, () => {
  let session: Session;
  let herald: Herald;
  let auth: Record<string, string>;
  let projectId: string;
  let dns: DnsServer;
  let peer: SmtpPeer;

  beforeAll(async () => {
    dns = await startDnsServer();
    peer = await startSmtpPeer();
    session = await startSession(chromiumPath!, { DNS_SERVERS: dns.address });
    ({ herald, auth, projectId } = session);
    await emailThroughPeer(session, dns, peer, DOMAIN);
  }, 120_000);

  afterAll(async () => {
    await session?.stop();
    await peer?.close();
    await dns?.close();
  }, 60_000);

  /** The open pixel and the first click link of the last mail an address received, as paths on Herald. */
  async function trackingLinks(address: string, count: number) {
    await expect.poll(() => peer.received(address).length, { timeout: 20_000 }).toBe(count);
    const html = peer.received(address).at(-1)!.parsed.html as string;
    const urls = [...html.matchAll(/(?:href|src)="([^"]+)"/g)].map((m) => m[1]!.replace(/&amp;/g, '&'));
    return { open: urls.find((u) => u.includes('/e/open/'))!, click: urls.find((u) => u.includes('/e/click/'))! };
  }

  async function hit(url: string, userAgent: string) {
    const res = await fetch(url, { headers: { 'user-agent': userAgent }, redirect: 'manual' });
    expect(res.status).toBeLessThan(400);
    // Each hit its own instant, so the page's order has one answer.
    await new Promise((resolve) => setTimeout(resolve, 10));
  }

  it('lists what happened to the email sent, newest first, with labels, the campaign, the URL clicked and the badges; paged', async () => {
    const address = `reader-${Date.now()}@example.org`;
    const contact = await api<{ id: string }>(herald, 'POST', '/contacts', { projectId, email: address, tags: ['events'] }, auth);
    await api(
      herald,
      'POST',
      '/email-campaigns',
      {
        name: 'Spring letter',
        projectId,
        content: { subject: 'Spring', html: '<p>See <a href="https://shop.example.com/sale">the sale</a>.</p>', from: { email: `hello@${DOMAIN}` } },
        segment: { filters: { tags: { any: ['events'] } } },
        schedule: { mode: 'immediate' },
      },
      auth,
    );
    const letter = await trackingLinks(address, 1);
    const { key } = await api<{ key: string }>(herald, 'POST', `/projects/${projectId}/api-keys`, { name: 'server', mode: 'live' }, auth);
    const receipt = await api<{ status: string }>(
      herald,
      'POST',
      '/transactional/email',
      { to: address, subject: 'Your receipt', htmlContent: '<p>See <a href="https://shop.example.com/orders/42">your order</a>.</p>', senderEmail: `orders@${DOMAIN}` },
      { 'x-api-key': key },
    );
    expect(receipt.status).toBe('sent');
    const receiptLinks = await trackingLinks(address, 2);

    await hit(letter.open, APPLE_PROXY);
    await hit(letter.open, BROWSER);
    await hit(letter.click, BROWSER);
    await hit(receiptLinks.click, BROWSER);
    for (let i = 0; i < 5; i++) await hit(receiptLinks.open, BROWSER);

    const { context, page } = await session.newPage();
    await session.openDemo(page, VIEWER);
    await page.goto(`${herald.url}/app/projects/${projectId}/subscribers/${contact.id}`);
    const events = page.getByRole('region', { name: 'Email events' });
    const table = events.getByRole('table', { name: 'Email events' });
    await table.waitFor();
    const rows = () =>
      table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => Array.from((tr as HTMLTableRowElement).cells, (cell) => cell.textContent!.trim()).slice(1)));
    const receiptOpen = ['Opened', 'Transactional', '—'];
    expect((await rows()).slice(0, 5)).toEqual([
      [...receiptOpen, 'Repeat'],
      [...receiptOpen, 'Repeat'],
      [...receiptOpen, 'Repeat'],
      [...receiptOpen, 'Repeat'],
      [...receiptOpen, '—'],
    ]);
    // A click seconds after its send may be flagged as a scanner's: the flags of clicks are not read here.
    expect((await rows()).slice(5).map((cells) => cells.slice(0, 3))).toEqual([
      ['Clicked', 'Transactional', 'https://shop.example.com/orders/42'],
      ['Delivered', 'Transactional', '—'],
      ['Clicked', 'Spring letter', 'https://shop.example.com/sale'],
      ['Opened', 'Spring letter', '—'],
      ['Opened', 'Spring letter', '—'],
    ]);
    expect((await rows()).slice(8).map((cells) => cells[3])).toEqual(['Repeat', 'Machine']);
    await events.getByText('Machine: likely a privacy proxy').waitFor();
    await events.getByText('Page 1 of 2 (11 in all)').waitFor();
    await expectAccessible(page, "a subscriber's email events");
    await screenshot(page, 'subscriber-email-events');

    await events.getByRole('navigation', { name: 'Email events pages' }).getByRole('button', { name: 'Next' }).click();
    await events.getByText('Page 2 of 2 (11 in all)').waitFor();
    expect(await rows()).toEqual([['Delivered', 'Spring letter', '—', '—']]);

    const quiet = await api<{ id: string }>(herald, 'POST', '/contacts', { projectId, email: `quiet-${Date.now()}@example.org` }, auth);
    // An address not on the suppression list is a state to show, not a failed request in the console.
    const failures: string[] = [];
    page.on('response', (response) => {
      if (response.status() >= 400) failures.push(`${response.status()} ${response.url()}`);
    });
    page.on('console', (message) => {
      if (message.type() === 'error') failures.push(message.text());
    });
    await page.goto(`${herald.url}/app/projects/${projectId}/subscribers/${quiet.id}`);
    await page.getByRole('region', { name: 'Email events' }).getByText('Nothing yet: deliveries, opens, clicks, bounces and complaints will show here.').waitFor();
    await page.getByText('Not suppressed.').waitFor();
    expect(failures).toEqual([]);
    await expectAccessible(page, "a subscriber's page without email events");
    await context.close();
  });

  it("shows each channel's marketing consent in plain words on the person's page and in the list, and filters segments on it", async () => {
    const address = `customer-${Date.now()}@example.org`;
    const { key } = await api<{ key: string }>(herald, 'POST', `/projects/${projectId}/api-keys`, { name: 'receipts', mode: 'live' }, auth);
    const receipt = await api<{ status: string }>(
      herald,
      'POST',
      '/transactional/email',
      { to: address, subject: 'Reset your password', htmlContent: '<p>Reset it here.</p>', senderEmail: `accounts@${DOMAIN}` },
      { 'x-api-key': key },
    );
    expect(receipt.status).toBe('sent');
    const { data } = await api<{ data: { id: string }[] }>(herald, 'GET', `/subscribers/project/${projectId}?email=${encodeURIComponent(address)}`, undefined, auth);
    const customer = data[0]!;

    const { context, page } = await session.newPage();
    await session.openDemo(page, VIEWER);
    await page.goto(`${herald.url}/app/projects/${projectId}/subscribers/${customer.id}`);
    const marketing = page.locator('dt', { hasText: /^Marketing$/ }).locator('xpath=following-sibling::dd');
    await marketing.waitFor();
    expect(await marketing.textContent()).toBe('Email: Transactional only');

    await api(herald, 'PATCH', `/subscribers/${customer.id}`, { phone: '+14155550199', marketingConsent: { email: 'subscribed', sms: 'unsubscribed' } }, auth);
    await page.goto(`${herald.url}/app/projects/${projectId}/subscribers`);
    const row = page.getByRole('row').filter({ hasText: address });
    await row.waitFor();
    await row.getByText('Email: Subscribed; SMS: Unsubscribed; WhatsApp: Subscribed').waitFor();

    // A segment on consent, saved through the API, shows its consent conditions to the viewer as checked choices.
    const segment = await api<{ id: string }>(herald, 'POST', '/segments', { projectId, name: 'Consent', filters: { emailConsent: ['transactional'], smsConsent: ['unsubscribed'] } }, auth);
    await page.goto(`${herald.url}/app/projects/${projectId}/segments/${segment.id}`);
    const emailMarketing = page.getByRole('group', { name: 'Email marketing', exact: true });
    await emailMarketing.getByRole('checkbox', { name: 'Transactional only' }).waitFor();
    expect(await emailMarketing.getByRole('checkbox', { name: 'Transactional only' }).isChecked()).toBe(true);
    expect(await page.getByRole('group', { name: 'SMS marketing', exact: true }).getByRole('checkbox', { name: 'Unsubscribed' }).isChecked()).toBe(true);
    await expectAccessible(page, 'the segment builder with its consent filters');
    await context.close();
  });

  it('no page broke its Content-Security-Policy', () => {
    expect(session.cspViolations).toEqual([]);
  });
});
