// Account pages in a real Chromium against `herald serve`, a local DNS server and a real SMTP peer as the Demo
// project's provider: a forgotten password reset by the emailed link, invitations emailed (or why not), and a project
// deleted after its name is typed; axe-core on each new page and dialog. Skipped without a Chromium.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type DnsServer } from '../../server/test/dns-server.js';
import { startSmtpPeer, type SmtpPeer } from '../../server/test/smtp-peer.js';
import { ADMIN, api, expectAccessible, emailThroughPeer, findChromium, screenshot, startSession, VIEWER, type Herald, type Session } from './browser.js';

const chromiumPath = findChromium();
const DOMAIN = 'mail.example.com';

describe.skipIf(!chromiumPath)('account pages in Chromium', { timeout: 60_000 }, () => {
  let session: Session;
  let herald: Herald;
  let auth: Record<string, string>;
  let dns: DnsServer;
  let peer: SmtpPeer;
  /** The VIEWER, whose password the reset test changes. */
  const viewer = { ...VIEWER };

  beforeAll(async () => {
    dns = await startDnsServer();
    peer = await startSmtpPeer();
    session = await startSession(chromiumPath!, { DNS_SERVERS: dns.address });
    ({ herald, auth } = session);
    await emailThroughPeer(session, dns, peer, DOMAIN);
  }, 120_000);

  afterAll(async () => {
    expect(session?.cspViolations ?? []).toEqual([]);
    await session?.stop();
    await peer?.close();
    await dns?.close();
  }, 60_000);

  /** The newest mail the peer accepted for `address`, waited for. */
  async function mailTo(address: string, count = 1) {
    await expect.poll(() => peer.received(address).length, { timeout: 15_000 }).toBeGreaterThanOrEqual(count);
    return peer.received(address).at(-1)!.parsed;
  }

  async function logIn(page: Page, who: { email: string; password: string }) {
    await page.goto(`${herald.url}/app/login`);
    await page.getByLabel('Email').fill(who.email);
    await page.getByLabel('Password').fill(who.password);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL('**/app/projects');
  }

  it('a forgotten password: the emailed link leads to a new password, which logs in; the old one and the used link no longer work', async () => {
    const { context, page } = await session.newPage();
    await page.goto(`${herald.url}/app/login`);
    await page.getByRole('link', { name: 'Forgot your password?' }).click();
    await page.waitForURL('**/app/forgot');
    await expectAccessible(page, 'forgot password');
    await screenshot(page, 'forgot-password');

    // An unknown address reads exactly as a known one.
    await page.getByLabel('Email').fill('nobody@example.com');
    await page.getByRole('button', { name: 'Email me a reset link' }).click();
    const unknown = (await page.getByRole('status').textContent())!.replace('nobody@example.com', '<address>');
    await page.goto(`${herald.url}/app/forgot`);
    await page.getByLabel('Email').fill(VIEWER.email);
    await page.getByRole('button', { name: 'Email me a reset link' }).click();
    await page.getByRole('status').filter({ hasText: 'a link to choose a new password is on its way' }).waitFor();
    expect((await page.getByRole('status').textContent())!.replace(VIEWER.email, '<address>')).toBe(unknown);
    await expectAccessible(page, 'forgot password, sent');

    const mail = await mailTo(VIEWER.email);
    expect(mail.subject).toBe('Reset your Herald password');
    const link = new URL(/http:\/\/127\.0\.0\.1:\d+\/app\/reset\?token=\S+/.exec(mail.text ?? '')![0]);
    expect(peer.received('nobody@example.com')).toHaveLength(0);

    await page.goto(link.href);
    await page.getByRole('heading', { name: 'Choose a new password' }).waitFor();
    await expectAccessible(page, 'reset password');
    await screenshot(page, 'reset-password');
    await page.getByLabel('New password', { exact: true }).fill('viewer-new-password');
    await page.getByLabel('New password again').fill('viewer-other-password');
    await page.getByRole('button', { name: 'Set new password' }).click();
    await page.getByRole('alert').filter({ hasText: 'does not match the new password' }).waitFor();
    expect(await page.getByLabel('New password again').getAttribute('aria-invalid')).toBe('true');
    await expectAccessible(page, 'reset password, passwords differ');
    await page.getByLabel('New password again').fill('viewer-new-password');
    await page.getByRole('button', { name: 'Set new password' }).click();
    await page.getByRole('status').filter({ hasText: 'Your password is changed.' }).waitFor();
    await expectAccessible(page, 'reset password, done');

    await page.getByRole('link', { name: 'Log in' }).click();
    await page.getByLabel('Email').fill(VIEWER.email);
    await page.getByLabel('Password').fill(VIEWER.password);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('alert').filter({ hasText: 'Invalid email or password' }).waitFor();
    await page.getByLabel('Password').fill('viewer-new-password');
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL('**/app/projects');
    await page.getByRole('link', { name: 'Demo' }).waitFor();
    viewer.password = 'viewer-new-password';

    // The link works once.
    const again = await session.newPage();
    await again.page.goto(link.href);
    await again.page.getByLabel('New password', { exact: true }).fill('a third password');
    await again.page.getByLabel('New password again').fill('a third password');
    await again.page.getByRole('button', { name: 'Set new password' }).click();
    await again.page.getByRole('alert').filter({ hasText: 'This reset link is no longer valid' }).waitFor();
    await expectAccessible(again.page, 'reset password, used link');
    await again.context.close();
    await context.close();
  });

  it('an invitation says it was emailed, and from where; one the provider refuses says why, with the link to copy', async () => {
    const { context, page } = await session.newPage();
    await logIn(page, ADMIN);
    await page.getByRole('link', { name: 'Members' }).click();
    const form = page.getByRole('form', { name: 'Invite a member' });
    await form.getByLabel('Email').fill('ines@example.org');
    await form.getByLabel('Role').selectOption('MEMBER');
    await form.getByRole('button', { name: 'Invite' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByText(`Invitation emailed to ines@example.org from no-reply@${DOMAIN}.`).waitFor();
    const link = (await dialog.getByTestId('invitation-link').textContent())!.trim();
    await expectAccessible(page, 'invitation emailed');
    await screenshot(page, 'invitation-emailed');
    const mail = await mailTo('ines@example.org');
    expect(mail.subject).toBe('Admin invited you to Default organization on Herald');
    expect(mail.text).toContain(link);
    await dialog.getByRole('button', { name: 'I have stored it' }).click();

    peer.respond('refused@example.org', { code: 550 });
    await form.getByLabel('Email').fill('refused@example.org');
    await form.getByRole('button', { name: 'Invite' }).click();
    await dialog.getByText(/Not emailed: The email provider of the sending project did not take it \(recipient_bounced\)/).waitFor();
    await dialog.getByText('Copy the link above and send it to refused@example.org yourself.', { exact: false }).waitFor();
    expect((await dialog.getByTestId('invitation-link').textContent())!.trim()).toMatch(/\/app\/join#token=hrd_inv_\w+$/);
    await expectAccessible(page, 'invitation not emailed');
    await dialog.getByRole('button', { name: 'I have stored it' }).click();
    await context.close();
  });

  it('an admin deletes a project once its name is typed, and lands on the projects list; a VIEWER is not offered it', async () => {
    const doomed = await api<{ id: string }>(herald, 'POST', '/projects', { name: 'Doomed shop' }, auth);
    const asViewer = await session.newPage();
    await logIn(asViewer.page, viewer);
    await asViewer.page.goto(`${herald.url}/app/projects/${doomed.id}/settings`);
    await asViewer.page.getByText('Only an owner or admin can change these settings.').waitFor();
    expect(await asViewer.page.getByRole('button', { name: 'Delete project' }).count()).toBe(0);
    await asViewer.context.close();

    const { context, page } = await session.newPage();
    await logIn(page, ADMIN);
    await page.getByRole('link', { name: 'Doomed shop' }).click();
    await page.getByRole('navigation', { name: 'Project' }).getByRole('link', { name: 'Project', exact: true }).click();
    await page.getByRole('heading', { name: 'Delete this project' }).waitFor();
    await page.getByRole('button', { name: 'Delete project' }).click();
    const dialog = page.getByRole('alertdialog');
    const confirm = dialog.getByRole('button', { name: 'Delete project' });
    expect(await confirm.isDisabled()).toBe(true);
    await expectAccessible(page, 'delete project dialog');
    await screenshot(page, 'delete-project');
    await dialog.getByLabel('Type Doomed shop to confirm').fill('Doomed');
    expect(await confirm.isDisabled()).toBe(true);
    await dialog.getByLabel('Type Doomed shop to confirm').fill('Doomed shop');
    await confirm.click();
    await page.waitForURL('**/app/projects');
    await page.getByRole('link', { name: 'Demo' }).waitFor();
    expect(await page.getByRole('link', { name: 'Doomed shop' }).count()).toBe(0);
    const projects = await api<{ data: { id: string }[] }>(herald, 'GET', '/projects', undefined, auth);
    expect(projects.data.map((p) => p.id)).not.toContain(doomed.id);
    await context.close();
  });
});
