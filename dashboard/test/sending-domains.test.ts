// The sending domains page in a real Chromium against a real `herald serve` and a local DNS server: add (a 422 beside
// the field), the records to publish copied, verify with a problem named then passing, delete confirmed, a VIEWER's
// read-only view, axe-core on each. Skipped without a Chromium (dashboard.test.ts says so loudly).
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type DnsServer } from '../../server/test/dns-server.js';
import { ADMIN, api, expectAccessible, findChromium, screenshot, startSession, VIEWER, type Herald, type Session } from './browser.js';

const chromiumPath = findChromium();

interface EmailDomain {
  id: string;
  status: string;
  records: { name: string; value: string; purpose: string; checked: boolean }[];
}

describe.skipIf(!chromiumPath)('sending domains in Chromium', { timeout: 60_000 }, () => {
  let session: Session;
  let herald: Herald;
  let auth: Record<string, string>;
  let projectId: string;
  let dns: DnsServer;

  beforeAll(async () => {
    dns = await startDnsServer();
    session = await startSession(chromiumPath!, { DNS_SERVERS: dns.address, EMAIL_SPF_INCLUDE: '_spf.herald.example.net' });
    ({ herald, auth, projectId } = session);
  }, 120_000);

  afterAll(async () => {
    await session?.stop();
    await dns?.close();
  }, 60_000);

  const newPage = () => session.newPage({ permissions: ['clipboard-read', 'clipboard-write'] });

  async function openDomains(page: Page, who: { email: string; password: string }) {
    await session.openDemo(page, who);
    await page.getByRole('navigation', { name: 'Project' }).getByRole('link', { name: 'Sending domains' }).click();
    await page.waitForURL(`**/app/projects/${projectId}/domains`);
    await page.getByRole('heading', { name: 'Sending domains' }).waitFor();
  }

  const listed = () => api<{ data: EmailDomain[] }>(herald, 'GET', `/projects/${projectId}/email-domains`, undefined, auth);

  it('an admin adds a domain, copies its records, verifies it once they are published, and deletes it', async () => {
    const { context, page } = await newPage();
    await openDomains(page, ADMIN);
    await page.getByText('No sending domains yet.').waitFor();
    await expectAccessible(page, 'sending domains, empty');

    await page.getByRole('textbox', { name: 'Domain' }).fill('not a domain');
    await page.getByRole('button', { name: 'Add domain' }).click();
    await expect.poll(() => page.getByRole('alert').first().textContent()).toMatch(/must be a domain name/);
    expect(await page.getByRole('textbox', { name: 'Domain' }).getAttribute('aria-invalid')).toBe('true');

    await page.getByRole('textbox', { name: 'Domain' }).fill('Mail.Example.COM');
    await page.getByLabel(/Ed25519/).check();
    await page.getByRole('button', { name: 'Add domain' }).click();
    const card = page.getByRole('article', { name: /mail\.example\.com/ });
    await card.waitFor();
    expect(await card.getByRole('heading').textContent()).toBe('mail.example.com pending');
    const [domain] = (await listed()).data;
    expect(domain).toMatchObject({ status: 'pending' });
    // Every record is on the page, the SPF one with the configured include.
    expect(await card.getByRole('row').count()).toBe(1 + domain!.records.length);
    for (const record of domain!.records) expect(await card.textContent()).toContain(record.value);
    expect(await card.getByRole('row', { name: /^SPF / }).textContent()).toContain('v=spf1 include:_spf.herald.example.net ~all');
    expect(await card.getByRole('row', { name: /^DMARC / }).textContent()).toContain('recommended');

    // Copy buttons put the exact name and value on the clipboard.
    const dkim = domain!.records.find((record) => record.purpose === 'dkim')!;
    await card.getByRole('button', { name: 'Copy value of the DKIM (RSA) record' }).click();
    await card.getByRole('button', { name: 'Copied value of the DKIM (RSA) record' }).waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(dkim.value);
    await card.getByRole('button', { name: 'Copy name of the DKIM (RSA) record' }).click();
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(dkim.name);
    await expectAccessible(page, 'a pending domain');

    // Published without the ownership record: still pending, the missing record named.
    for (const record of domain!.records) if (record.checked && record.purpose !== 'ownership') dns.setTxt(record.name, record.value);
    await card.getByRole('button', { name: 'Verify mail.example.com' }).click();
    const problems = card.getByRole('list', { name: 'What the last check found on mail.example.com' });
    await expect.poll(() => problems.textContent()).toMatch(/Ownership record _herald\.mail\.example\.com: no TXT record found/);
    expect(await card.getByRole('heading').textContent()).toBe('mail.example.com pending');

    const ownership = domain!.records.find((record) => record.purpose === 'ownership')!;
    dns.setTxt(ownership.name, ownership.value);
    await card.getByRole('button', { name: 'Verify mail.example.com' }).click();
    await expect.poll(() => card.getByRole('heading').textContent()).toBe('mail.example.com verified');
    expect(await problems.count()).toBe(0);
    await expect.poll(() => card.textContent()).toMatch(/Verified /);
    expect((await listed()).data[0]).toMatchObject({ status: 'verified' });
    await expectAccessible(page, 'a verified domain');
    await screenshot(page, 'sending-domains');

    await card.getByRole('button', { name: 'Delete mail.example.com' }).click();
    const confirm = page.getByRole('alertdialog');
    await confirm.waitFor();
    await expectAccessible(page, 'the delete confirmation');
    await confirm.getByRole('button', { name: 'Delete domain' }).click();
    await page.getByText('No sending domains yet.').waitFor();
    expect((await listed()).data).toEqual([]);
    await context.close();
  });

  it('a VIEWER sees the domains and their records, with nothing to add, verify or delete', async () => {
    await api(herald, 'POST', `/projects/${projectId}/email-domains`, { domain: 'news.example.com' }, auth);
    const { context, page } = await newPage();
    await openDomains(page, VIEWER);
    const card = page.getByRole('article', { name: /news\.example\.com/ });
    await card.waitFor();
    expect(await card.getByRole('row').count()).toBeGreaterThan(4);
    expect(await page.getByRole('form', { name: 'New sending domain' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: /^(Verify|Delete) / }).count()).toBe(0);
    await expectAccessible(page, 'sending domains as a viewer');
    await context.close();
  });

  it('no page broke its Content-Security-Policy', () => {
    expect(session.cspViolations).toEqual([]);
  });
});
