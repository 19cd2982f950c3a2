// The email provider tab and a subscriber's email section in Chromium against `herald serve` (skipped without a Chromium).
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSesPeer, type SesPeer } from '../../server/test/ses-peer.js';
import { ADMIN, api, expectAccessible, findChromium, startSession, VIEWER, type Herald, type Session } from './browser.js';

const chromiumPath = findChromium();
const PASSWORD = 'smtp-password-never-shown';
const SES_KEYS = { accessKeyId: 'AKIADASHBOARDTEST001', secretAccessKey: 'ses-secret-never-shown-0001' };

interface Channels {
  data: { channel: string; provider: string; settings: Record<string, unknown>; credentials: string[] }[];
}

describe.skipIf(!chromiumPath)('email settings in Chromium', { timeout: 60_000 }, () => {
  let session: Session;
  let herald: Herald;
  let auth: Record<string, string>;
  let projectId: string;
  let ses: SesPeer;

  beforeAll(async () => {
    ses = await startSesPeer({ credentials: SES_KEYS, account: { productionAccess: false, maxSendRate: 1, max24HourSend: 200 } });
    session = await startSession(chromiumPath!, { SES_ENDPOINT: ses.url });
    ({ herald, auth, projectId } = session);
  }, 120_000);

  afterAll(async () => {
    await session?.stop();
    await ses?.close();
  }, 60_000);

  async function signIn(who: { email: string; password: string }): Promise<{ context: BrowserContext; page: Page }> {
    const opened = await session.newPage();
    await session.openDemo(opened.page, who);
    return opened;
  }

  async function openEmailProvider(page: Page) {
    await page.getByRole('navigation', { name: 'Project' }).getByRole('link', { name: 'Email provider' }).click();
    await page.waitForURL(`**/app/projects/${projectId}/email-provider`);
    await page.getByRole('heading', { name: 'Email provider', level: 2 }).waitFor();
  }

  const emailConfig = async () => (await api<Channels>(herald, 'GET', `/projects/${projectId}/channels`, undefined, auth)).data.find((c) => c.channel === 'email');
  const current = (page: Page) => page.getByRole('region', { name: 'Current configuration' });
  const form = (page: Page) => page.getByRole('form', { name: 'SMTP server' });

  it('an admin saves SMTP settings (a 422 beside the port first); the password is never shown back, only its name', async () => {
    const { context, page } = await signIn(ADMIN);
    await openEmailProvider(page);
    await current(page).getByText('No email provider yet').waitFor();
    await expectAccessible(page, 'the email provider tab, unconfigured');

    await form(page).getByLabel('Host', { exact: true }).fill('smtp.example.com');
    await form(page).getByLabel('Port', { exact: true }).fill('70000');
    await form(page).getByRole('button', { name: 'Save email provider' }).click();
    const port = form(page).getByLabel('Port', { exact: true });
    await expect.poll(() => port.getAttribute('aria-invalid')).toBe('true');
    const portError = form(page).getByRole('alert').filter({ hasText: 'must be at most 65,535' });
    expect(await port.getAttribute('aria-describedby')).toContain(await portError.getAttribute('id'));
    await expectAccessible(page, 'the SMTP form with a 422');
    expect((await emailConfig())?.provider ?? 'none').toBe('none');

    await port.fill('465');
    expect(await form(page).getByLabel('Encryption', { exact: true }).inputValue()).toBe('required');
    await form(page).getByLabel('Encryption', { exact: true }).selectOption({ label: 'Encrypted from the first byte (TLS, usually port 465)' });
    await form(page).getByLabel('Sends per second (optional)').fill('14');
    await form(page).getByLabel('User', { exact: true }).fill('mailer');
    await form(page).getByLabel('Password', { exact: true }).fill(PASSWORD);
    await form(page).getByRole('button', { name: 'Save email provider' }).click();
    await page.getByRole('status').filter({ hasText: 'Email provider saved.' }).waitFor();

    const stored = await emailConfig();
    expect(stored).toMatchObject({ provider: 'smtp', settings: { host: 'smtp.example.com', port: 465, tls: 'implicit', secure: true, ratePerSecond: 14 } });
    expect([...stored!.credentials].sort()).toEqual(['pass', 'user']);
    await current(page).getByText('smtp', { exact: true }).waitFor();
    // Stored settings and credential names by their labels, not the API's names.
    const labels: Record<string, string> = { user: 'User', pass: 'Password' };
    expect(await current(page).getByRole('definition').filter({ hasText: 'Password' }).textContent()).toBe(stored!.credentials.map((name) => labels[name]).join(', '));
    await current(page).getByRole('term').filter({ hasText: 'Encryption' }).waitFor();
    // The form starts again from what is stored: the settings, never the password.
    expect(await form(page).getByLabel('Host', { exact: true }).inputValue()).toBe('smtp.example.com');
    expect(await form(page).getByLabel('Port', { exact: true }).inputValue()).toBe('465');
    expect(await form(page).getByLabel('Encryption', { exact: true }).inputValue()).toBe('implicit');
    expect(await form(page).getByLabel('Password', { exact: true }).inputValue()).toBe('');
    expect(await page.content()).not.toContain(PASSWORD);
    await page.reload();
    await current(page).getByText('smtp', { exact: true }).waitFor();
    expect(await page.content()).not.toContain(PASSWORD);
    await expectAccessible(page, 'the email provider tab, configured');
    await context.close();
  });

  it('a VIEWER sees the configuration and a read-only form', async () => {
    const { context, page } = await signIn(VIEWER);
    await openEmailProvider(page);
    await current(page).getByText('smtp.example.com').waitFor();
    await page.getByText('Only an owner or admin can change the email provider.').waitFor();
    expect(await form(page).getByLabel('Host', { exact: true }).isDisabled()).toBe(true);
    expect(await form(page).getByLabel('Password', { exact: true }).isDisabled()).toBe(true);
    expect(await form(page).getByRole('button', { name: 'Save email provider' }).count()).toBe(0);
    await expectAccessible(page, 'the email provider tab as a viewer');
    await context.close();
  });

  it("a subscriber's page shows its address, emailStatus and the suppression's reason", async () => {
    const suppressed = await api<{ id: string }>(herald, 'POST', '/contacts', { projectId, email: 'zoe@example.com' }, auth);
    const clear = await api<{ id: string }>(herald, 'POST', '/contacts', { projectId, email: 'yan@example.com' }, auth);
    await api(herald, 'POST', `/projects/${projectId}/suppressions`, { email: 'Zoe@Example.com', reason: 'bounced' }, auth);

    const { context, page } = await signIn(VIEWER);
    await page.goto(`${herald.url}/app/projects/${projectId}/subscribers/${suppressed.id}`);
    const email = page.getByRole('region', { name: 'Email', exact: true });
    await email.getByText('Suppressed: bounced (the mailbox does not exist), api,').waitFor();
    expect(await email.getByRole('definition').allTextContents()).toEqual(['zoe@example.com', 'bounced', expect.stringContaining('Suppressed: bounced')]);
    await expectAccessible(page, "a suppressed subscriber's page");
    await email.getByRole('link', { name: 'See it in the list' }).click();
    await page.waitForURL(/\/suppressions\?q=zoe%40example\.com/);
    await page.getByRole('table', { name: 'Suppressed addresses' }).getByText('zoe@example.com').waitFor();

    await page.goto(`${herald.url}/app/projects/${projectId}/subscribers/${clear.id}`);
    await email.getByText('Not suppressed.').waitFor();
    expect(await email.getByRole('definition').first().textContent()).toBe('yan@example.com');
    await context.close();
  });

  it('an admin switches to Amazon SES: a key SES refuses is shown in its words, then the sandbox account is saved and flagged', async () => {
    const { context, page } = await signIn(ADMIN);
    await openEmailProvider(page);
    await form(page).getByLabel('Amazon SES').check();
    const sesForm = page.getByRole('form', { name: 'Amazon SES' });
    await sesForm.getByLabel('Region', { exact: true }).fill('eu-west-1');
    await sesForm.getByLabel('Access key id').fill(SES_KEYS.accessKeyId);
    await sesForm.getByLabel('Secret access key').fill('not-the-secret-at-all-0000');
    await sesForm.getByRole('button', { name: 'Save email provider' }).click();
    await sesForm.getByRole('alert').filter({ hasText: 'SignatureDoesNotMatch' }).waitFor();
    expect((await emailConfig())?.provider).toBe('smtp');
    await expectAccessible(page, 'the SES form with SES refusing the key');

    await sesForm.getByLabel('Secret access key').fill(SES_KEYS.secretAccessKey);
    await sesForm.getByLabel('Configuration set (optional)').fill('herald-events');
    await sesForm.getByRole('button', { name: 'Save email provider' }).click();
    await page.getByRole('status').filter({ hasText: 'Email provider saved.' }).waitFor();
    expect(await emailConfig()).toMatchObject({
      provider: 'ses',
      settings: { region: 'eu-west-1', configurationSet: 'herald-events', sandbox: true, ratePerSecond: 1, per24Hours: 200 },
      credentials: ['accessKeyId', 'secretAccessKey'],
    });
    await current(page).getByText("The account is in its provider's sandbox: Herald sends at most 200 messages per 24 hours").waitFor();
    // The form opens on the saved provider, without the secret.
    expect(await page.getByRole('form', { name: 'Amazon SES' }).getByLabel('Region', { exact: true }).inputValue()).toBe('eu-west-1');
    expect(await page.getByRole('form', { name: 'Amazon SES' }).getByLabel('Secret access key').inputValue()).toBe('');
    expect(await page.content()).not.toContain(SES_KEYS.secretAccessKey);
    await expectAccessible(page, 'the email provider tab with an SES sandbox account');
    await context.close();
  });

  it('no page broke its Content-Security-Policy', () => {
    expect(session.cspViolations).toEqual([]);
  });
});
