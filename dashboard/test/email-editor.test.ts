// The visual email editor in a real Chromium against a real `herald serve`: a starter picked, a button and columns
// added, a merge tag inserted, saved and reopened with its blocks; the saved HTML (tables, inline styles, the link, the
// merge tag) sent as a transactional email to a local SMTP peer; the switch to HTML confirmed; the campaign builder's.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type DnsServer } from '../../server/test/dns-server.js';
import { startSmtpPeer, type SmtpPeer } from '../../server/test/smtp-peer.js';
import { ADMIN, api, expectAccessible, emailThroughPeer, findChromium, screenshot, startSession, type Herald, type Session } from './browser.js';

const chromiumPath = findChromium();
if (!chromiumPath) {
  const message = '\n!!! Email editor browser tests SKIPPED: no Chromium found (CHROME_PATH, or chromium on PATH): apt-get install -y chromium\n';
  if (process.env.CI === 'true') throw new Error(message);
  console.error(message);
}

const DOMAIN = 'mail.example.com';
const TAG = '{{ first_name | default: "" }}';

interface Template {
  id: string;
  html: string;
  design: { blocks: { type: string; columns?: { type: string; text?: string }[][] }[] } | null;
}

describe.skipIf(!chromiumPath)('the visual email editor in Chromium', { timeout: 90_000 }, () => {
  let session: Session;
  let herald: Herald;
  let auth: Record<string, string>;
  let projectId: string;
  let dns: DnsServer;
  let peer: SmtpPeer;
  let templateId: string;

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

  const frame = (page: Page) => page.locator('iframe[title="Email HTML preview"]');
  const outline = (page: Page) => page.getByRole('region', { name: 'Blocks' });

  it('builds a template from a starter with a button, columns and a merge tag, saves it, and reopens its blocks', async () => {
    const { context, page } = await session.newPage();
    const violations: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error' && /securitypolicy|Content Security Policy/i.test(message.text())) violations.push(message.text());
    });
    await session.openDemo(page, ADMIN);
    await page.getByRole('link', { name: 'Email templates' }).click();
    await page.getByRole('link', { name: 'New template' }).click();
    await page.getByRole('heading', { name: 'Start from a design' }).waitFor();
    expect(await page.getByRole('radio', { name: 'Visual' }).isChecked()).toBe(true);
    await expectAccessible(page, 'email editor, starters');

    await page.getByLabel('Template name').fill('Shipping');
    await page.getByLabel('Subject').fill('Your parcel is on its way');
    await page.getByRole('button', { name: 'Use Announcement' }).click();
    await outline(page).getByRole('button', { name: 'Text: Something new is here', exact: true }).waitFor();

    // A button, with its text and link.
    await page.getByRole('group', { name: 'Add a block' }).getByRole('button', { name: 'Button' }).click();
    await page.getByLabel('Button text').fill('Track your parcel');
    await page.getByLabel('Link', { exact: true }).fill('https://shop.example.com/track');
    await outline(page).getByRole('button', { name: 'Button: Track your parcel', exact: true }).waitFor();

    // Columns, whose first text greets the reader by a merge tag inserted at the cursor.
    await page.getByRole('group', { name: 'Add a block' }).getByRole('button', { name: 'Columns' }).click();
    await outline(page).getByRole('button', { name: 'Text: Write something here.', exact: true }).first().click();
    const text = page.getByLabel('Text', { exact: true });
    await text.fill('Hello , thanks!');
    await text.evaluate((element: HTMLTextAreaElement) => element.setSelectionRange(6, 6));
    await page.getByLabel('Merge tag').fill('first_name');
    await page.getByRole('button', { name: 'Insert merge tag' }).click();
    await expect.poll(() => text.inputValue()).toBe(`Hello ${TAG}, thanks!`);

    // The live preview renders the design through the server, the merge tag empty.
    await expect.poll(() => frame(page).getAttribute('srcdoc'), { timeout: 10_000 }).toContain('Track your parcel');
    expect(await frame(page).getAttribute('srcdoc')).toContain('Hello , thanks!');
    // Shown in the sandboxed frame under the dashboard's CSP, not only handed to it.
    const shown = page.frameLocator('iframe[title="Email HTML preview"]');
    await shown.getByRole('link', { name: 'Track your parcel' }).waitFor();
    expect(await shown.getByText('Hello , thanks!').isVisible()).toBe(true);
    await expectAccessible(page, 'email editor with a block chosen');
    // A full-page capture resizes the viewport and catches the sandboxed frame unpainted: the page is shown whole instead.
    if (process.env.DASHBOARD_SCREENSHOTS === '1') {
      await page.setViewportSize({ width: 1280, height: await page.evaluate(() => document.documentElement.scrollHeight) });
      await page.waitForTimeout(500);
      await screenshot(page, 'email-editor');
      await page.setViewportSize({ width: 1280, height: 900 });
    }

    // A link the API refuses: its 422 beside the button's field, and listed above the blocks.
    await outline(page).getByRole('button', { name: 'Button: Track your parcel', exact: true }).click();
    const link = page.getByLabel('Link', { exact: true });
    await link.fill('shop.example.com/track');
    await page.getByRole('button', { name: 'Save template' }).click();
    await page.getByRole('alert').filter({ hasText: 'The design has problems' }).filter({ hasText: 'must start with https://' }).waitFor();
    expect(await link.getAttribute('aria-invalid')).toBe('true');
    await link.fill('https://shop.example.com/track');

    await page.getByRole('button', { name: 'Save template' }).click();
    await page.getByRole('link', { name: 'Shipping' }).click();
    await page.waitForURL('**/email-templates/etp_*');
    templateId = page.url().split('/').at(-1)!;

    // Reopened (then reloaded): the visual editor with the blocks as they were saved.
    for (const reload of [false, true]) {
      if (reload) await page.reload();
      await outline(page).getByRole('button', { name: 'Button: Track your parcel', exact: true }).waitFor();
      expect(await page.getByRole('radio', { name: 'Visual' }).isChecked()).toBe(true);
      expect(await outline(page).getByRole('button', { name: 'Columns: 2 columns', exact: true }).count()).toBe(1);
      expect(await outline(page).getByRole('button', { name: /^Text: Hello \{\{ first_name/ }).count()).toBe(1);
    }

    const saved = await api<Template>(herald, 'GET', `/email-templates/${templateId}`, undefined, auth);
    expect(saved.design?.blocks.map((block) => block.type)).toEqual(['spacer', 'text', 'text', 'button', 'spacer', 'footer', 'button', 'columns']);
    expect(saved.design?.blocks.at(-1)?.columns?.[0]?.[0]?.text).toBe(`Hello ${TAG}, thanks!`);
    // Email HTML: layout tables, inline styles, the button's link, the merge tag as liquid reads it (not escaped).
    expect(saved.html).toMatch(/<table[^>]*role="presentation"/);
    expect(saved.html).toMatch(/<a[^>]*href="https:\/\/shop\.example\.com\/track"[^>]*style="[^"]*background-color:#2563eb/);
    expect(saved.html).toContain(`Hello ${TAG}, thanks!`);
    expect(saved.html).toContain('class="herald-column"');
    expect(saved.html).not.toMatch(/<script|<link|@import|url\(/);

    // Sent as a transactional email: what reaches the SMTP peer is the design, rendered for the recipient.
    const { key } = await api<{ key: string }>(herald, 'POST', `/projects/${projectId}/api-keys`, { name: 'server', mode: 'live' }, auth);
    const sent = await api<{ status: string }>(
      herald,
      'POST',
      '/transactional/email',
      { to: 'ada@example.org', templateId, variables: { first_name: 'Ada' }, senderEmail: `orders@${DOMAIN}` },
      { 'x-api-key': key },
    );
    expect(sent.status).toBe('sent');
    await expect.poll(() => peer.received('ada@example.org').length, { timeout: 20_000 }).toBe(1);
    const mail = peer.received('ada@example.org')[0]!.parsed;
    expect(mail.subject).toBe('Your parcel is on its way');
    const html = mail.html as string;
    expect(html).toContain('Hello Ada, thanks!');
    expect(html).toContain('Track your parcel');
    expect(html).toMatch(/<table[^>]*role="presentation"/);
    expect(mail.text).toContain('Hello Ada, thanks!');

    // Leaving the visual editor for HTML is confirmed; saved so, the design is gone and the HTML stays.
    await page.getByRole('radio', { name: 'HTML' }).click();
    await page.getByRole('alertdialog', { name: 'Edit as HTML?' }).waitFor();
    await expectAccessible(page, 'leave the visual editor dialog');
    await page.getByRole('button', { name: 'Edit as HTML' }).click();
    expect(await page.getByLabel('HTML body').inputValue()).toBe(saved.html);
    await page.getByRole('button', { name: 'Save template' }).click();
    await page.getByRole('link', { name: 'Shipping' }).waitFor();
    const handWritten = await api<Template>(herald, 'GET', `/email-templates/${templateId}`, undefined, auth);
    expect(handWritten).toMatchObject({ design: null, html: saved.html });

    expect(violations).toEqual([]);
    await context.close();
  });

  it("offers the visual editor in the email campaign builder, saving the design with the campaign's HTML", async () => {
    const { context, page } = await session.newPage();
    await session.openDemo(page, ADMIN);
    await page.goto(`${herald.url}/app/projects/${projectId}/email-campaigns/new`);
    await page.getByLabel('Campaign name').fill('Note');
    await page.getByLabel('Subject').fill('A note');
    await page.getByRole('button', { name: 'Use Plain' }).click();
    await outline(page).getByRole('button', { name: /^Text: Hi \{\{ first_name/ }).click();
    await page.getByLabel('Text', { exact: true }).fill('A short note for our readers.');
    await expect.poll(() => frame(page).getAttribute('srcdoc'), { timeout: 10_000 }).toContain('A short note for our readers.');
    await expectAccessible(page, 'email campaign builder, visual editor');
    await page.getByLabel('From address').fill('news');
    await page.getByRole('button', { name: 'Save draft' }).click();
    await page.waitForURL(/email-campaigns\/cmp_/);
    const campaignId = page.url().split('/').at(-1)!;
    const campaign = await api<{ content: { html: string; design?: { blocks: { type: string; text?: string }[] } } }>(herald, 'GET', `/email-campaigns/${campaignId}`, undefined, auth);
    expect(campaign.content.design?.blocks).toEqual([expect.objectContaining({ type: 'text', text: 'A short note for our readers.' })]);
    expect(campaign.content.html).toContain('A short note for our readers.');
    await context.close();
  });

  it('no page broke its Content-Security-Policy', () => {
    expect(session.cspViolations).toEqual([]);
  });
});
