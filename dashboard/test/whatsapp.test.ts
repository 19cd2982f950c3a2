// The WhatsApp tabs and WhatsApp sends in the log, in Chromium against `herald serve`, a local Cloud API and a local
// Twilio (skipped without a Chromium).
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newTwilioAccount, startTwilioPeer, type TwilioPeer } from '../../server/test/twilio-peer.js';
import { PEER_PHONE_NUMBER, startWhatsAppPeer, type WhatsAppPeer } from '../../server/test/whatsapp-peer.js';
import { ADMIN, api, expectAccessible, findChromium, screenshot, startSession, VIEWER, type Herald, type Session } from './browser.js';

const chromiumPath = findChromium();
const ACCOUNT = { phoneNumberId: '1098765432101', wabaId: '2098765432102' };
const SECRETS = { accessToken: 'EAAG-dashboard-access-token', appSecret: 'app-secret-never-shown-0123456789', verifyToken: 'verify-token-never-shown' };
const twilioAccount = newTwilioAccount();
const TWILIO_SENDER = '+14155238886';
const CONTENT_SID = `HX${'0c'.repeat(16)}`;
// Twilio calls back over HTTPS only: the URLs shown and signed are under this PUBLIC_URL.
const PUBLIC_URL = 'https://herald.example.test';

interface Channels {
  data: { channel: string; provider: string; settings: Record<string, unknown>; credentials: string[] }[];
}

describe.skipIf(!chromiumPath)('WhatsApp in Chromium', { timeout: 60_000 }, () => {
  let session: Session;
  let herald: Herald;
  let auth: Record<string, string>;
  let projectId: string;
  let peer: WhatsAppPeer;
  let twilio: TwilioPeer;

  beforeAll(async () => {
    peer = await startWhatsAppPeer({ accessToken: SECRETS.accessToken, ...ACCOUNT });
    twilio = await startTwilioPeer([twilioAccount]);
    peer.templates.set(ACCOUNT.wabaId, [
      { name: 'order_update', language: 'en_US', category: 'UTILITY', status: 'APPROVED' },
      { name: 'order_update', language: 'fr', category: 'UTILITY', status: 'PENDING' },
      { name: 'spring_sale', language: 'en_US', category: 'MARKETING', status: 'REJECTED' },
      { name: 'login_code', language: 'en', category: 'AUTHENTICATION', status: 'PAUSED' },
      { name: 'old_notice', language: 'en', category: 'UTILITY', status: 'DISABLED' },
    ]);
    session = await startSession(chromiumPath!, { WHATSAPP_GRAPH_URL: peer.url, WHATSAPP_GRAPH_VERSION: peer.version, TWILIO_BASE_URL: twilio.url, PUBLIC_URL });
    ({ herald, auth, projectId } = session);
  }, 120_000);

  afterAll(async () => {
    await session?.stop();
    await peer?.close();
    await twilio?.close();
  }, 60_000);

  async function signIn(who: { email: string; password: string }): Promise<{ context: BrowserContext; page: Page }> {
    const opened = await session.newPage({ permissions: ['clipboard-read', 'clipboard-write'] });
    await session.openDemo(opened.page, who);
    return opened;
  }

  async function openTab(page: Page, tab: 'WhatsApp' | 'WhatsApp templates', path: string) {
    await page.getByRole('navigation', { name: 'Project' }).getByRole('link', { name: tab, exact: true }).click();
    await page.waitForURL(`**/app/projects/${projectId}/${path}`);
    await page.getByRole('heading', { name: tab, level: 2 }).waitFor();
  }

  const whatsappConfig = async () => (await api<Channels>(herald, 'GET', `/projects/${projectId}/channels`, undefined, auth)).data.find((c) => c.channel === 'whatsapp');
  const current = (page: Page) => page.getByRole('region', { name: 'Current configuration' });
  const webhook = (page: Page) => page.getByRole('region', { name: "Webhook in Meta's console" });
  const twilioWebhook = (page: Page) => page.getByRole('region', { name: "Webhook in Twilio's console" });
  const form = (page: Page) => page.getByRole('form', { name: 'Meta Cloud API' });
  const templateRows = async (page: Page) =>
    (await page.getByRole('table', { name: 'WhatsApp templates' }).getByRole('row').allInnerTexts()).slice(1).map((row) => row.split('\t').slice(0, 5).join(' | '));

  it('an admin saves the Meta settings (a 422 beside the phone number id, then Meta refusing the token, first): the webhook URL is shown and copied, the secrets only as set', async () => {
    const { context, page } = await signIn(ADMIN);
    await openTab(page, 'WhatsApp', 'whatsapp');
    await current(page).getByText('No WhatsApp provider yet').waitFor();
    expect(await current(page).getByRole('definition').allTextContents()).toEqual(['none']);
    await webhook(page).getByText('the URL to paste into its console appears here').waitFor();
    await expectAccessible(page, 'the WhatsApp tab, unconfigured');

    await form(page).getByLabel('Phone number id').fill('+1 202 555 0100');
    await form(page).getByLabel('WhatsApp Business Account id').fill(ACCOUNT.wabaId);
    await form(page).getByLabel('Access token').fill(SECRETS.accessToken);
    await form(page).getByLabel('App secret').fill(SECRETS.appSecret);
    await form(page).getByLabel('Verify token').fill(SECRETS.verifyToken);
    await form(page).getByRole('button', { name: 'Save WhatsApp settings' }).click();
    const phone = form(page).getByLabel('Phone number id');
    await expect.poll(() => phone.getAttribute('aria-invalid')).toBe('true');
    const phoneError = form(page).getByRole('alert').filter({ hasText: 'must be the digits of a Cloud API phone number id' });
    expect(await phone.getAttribute('aria-describedby')).toContain(await phoneError.getAttribute('id'));
    expect(await whatsappConfig()).toBeUndefined();
    await expectAccessible(page, 'the WhatsApp form with a 422');

    // Meta is asked before saving: a token it refuses is shown beside the field, and nothing is saved.
    await phone.fill(ACCOUNT.phoneNumberId);
    await form(page).getByLabel('Access token').fill('EAAG-a-revoked-token');
    await form(page).getByRole('button', { name: 'Save WhatsApp settings' }).click();
    await form(page).getByRole('alert').filter({ hasText: 'Meta refused the access token: Invalid OAuth access token' }).waitFor();
    expect(await form(page).getByLabel('Access token').getAttribute('aria-invalid')).toBe('true');
    expect(await whatsappConfig()).toBeUndefined();

    await form(page).getByLabel('Access token').fill(SECRETS.accessToken);
    await form(page).getByRole('button', { name: 'Save WhatsApp settings' }).click();
    await page.getByRole('status').filter({ hasText: 'WhatsApp settings saved.' }).waitFor();
    const webhookUrl = `${PUBLIC_URL}/whatsapp/webhook/${projectId}`;
    expect(await whatsappConfig()).toMatchObject({
      provider: 'meta',
      settings: { ...ACCOUNT, webhookUrl },
      credentials: ['accessToken', 'appSecret', 'verifyToken'],
    });
    await webhook(page).getByText(webhookUrl, { exact: true }).waitFor();
    await webhook(page).getByRole('button', { name: 'Copy callback URL' }).click();
    await webhook(page).getByRole('button', { name: 'Copied callback URL' }).waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(webhookUrl);
    expect(await current(page).getByRole('definition').allTextContents()).toEqual([
      "Meta's WhatsApp Cloud API",
      ACCOUNT.phoneNumberId,
      `${PEER_PHONE_NUMBER.display_phone_number} (${PEER_PHONE_NUMBER.verified_name})`,
      ACCOUNT.wabaId,
      'set',
      'set',
      'set',
      expect.any(String),
    ]);
    // The form starts again from what is stored: the ids, never the secrets.
    expect(await form(page).getByLabel('Phone number id').inputValue()).toBe(ACCOUNT.phoneNumberId);
    expect(await form(page).getByLabel('Access token').inputValue()).toBe('');
    await page.reload();
    await webhook(page).getByText(webhookUrl, { exact: true }).waitFor();
    const html = await page.content();
    for (const secret of Object.values(SECRETS)) expect(html).not.toContain(secret);
    await expectAccessible(page, 'the WhatsApp tab, configured');
    await screenshot(page, 'whatsapp-settings');
    await context.close();
  });

  it('templates synchronised from Meta are listed with readable statuses; a second sync shows what changed; a refusal is shown in Meta’s words', async () => {
    const { context, page } = await signIn(ADMIN);
    await openTab(page, 'WhatsApp templates', 'whatsapp-templates');
    await page.getByText('No WhatsApp templates yet').waitFor();
    await expectAccessible(page, 'the WhatsApp templates tab, empty');

    await page.getByRole('button', { name: 'Sync from Meta' }).click();
    const report = page.getByRole('status').filter({ hasText: 'Synchronised from Meta' });
    await report.getByText('5 templates read, 0 removed.').waitFor();
    expect(await report.getByRole('listitem').allTextContents()).toEqual(
      expect.arrayContaining(['order_update (en_US): new, Approved', 'order_update (fr): new, Pending review', 'spring_sale (en_US): new, Rejected']),
    );
    await expect.poll(() => templateRows(page)).toEqual([
      'login_code | en | Authentication | Paused | From Meta',
      'old_notice | en | Utility | Disabled | From Meta',
      'order_update | en_US | Utility | Approved | From Meta',
      'order_update | fr | Utility | Pending review | From Meta',
      'spring_sale | en_US | Marketing | Rejected | From Meta',
    ]);
    await expectAccessible(page, 'the WhatsApp templates tab after a sync');
    await screenshot(page, 'whatsapp-templates');

    // Meta approves the French one and drops the disabled one.
    peer.templates.set(ACCOUNT.wabaId, [
      { name: 'order_update', language: 'en_US', category: 'UTILITY', status: 'APPROVED' },
      { name: 'order_update', language: 'fr', category: 'UTILITY', status: 'APPROVED' },
      { name: 'spring_sale', language: 'en_US', category: 'MARKETING', status: 'REJECTED' },
      { name: 'login_code', language: 'en', category: 'AUTHENTICATION', status: 'PAUSED' },
    ]);
    await page.getByRole('button', { name: 'Sync from Meta' }).click();
    await report.getByText('4 templates read, 1 removed.').waitFor();
    expect((await report.getByRole('listitem').allTextContents()).sort()).toEqual([
      'old_notice (en): removed (Meta no longer lists it)',
      'order_update (fr): Pending review → Approved',
    ]);
    await expect.poll(async () => (await templateRows(page)).length).toBe(4);

    // A business account Meta does not know: the sync fails with Meta's message and the list stays.
    await api(herald, 'PUT', `/projects/${projectId}/channels/whatsapp`, { provider: 'meta', settings: { ...ACCOUNT, wabaId: '99999999' }, credentials: SECRETS }, auth);
    await page.getByRole('button', { name: 'Sync from Meta' }).click();
    await page.getByRole('alert').filter({ hasText: 'Meta refused the sync:' }).getByText(/Unknown business account/).waitFor();
    expect(await templateRows(page)).toHaveLength(4);
    await expectAccessible(page, 'the WhatsApp templates tab with Meta refusing');
    await api(herald, 'PUT', `/projects/${projectId}/channels/whatsapp`, { provider: 'meta', settings: ACCOUNT, credentials: SECRETS }, auth);
    await context.close();
  });

  it('a template written by hand (a 422 beside its name first) is listed, edited and deleted with confirmation', async () => {
    const { context, page } = await signIn(ADMIN);
    await openTab(page, 'WhatsApp templates', 'whatsapp-templates');
    await page.getByRole('link', { name: 'New template' }).click();
    const editor = page.getByRole('form', { name: 'WhatsApp template' });
    await editor.getByLabel('Name', { exact: true }).fill('Shipping Notice');
    await editor.getByLabel('Language', { exact: true }).fill('en_GB');
    await editor.getByLabel('Category').selectOption('UTILITY');
    await editor.getByLabel('Components (JSON, optional)').fill('{"type": "BODY"}');
    await editor.getByRole('button', { name: 'Save template' }).click();
    await editor.getByRole('alert').filter({ hasText: 'must be a JSON list of objects' }).waitFor();
    await editor.getByLabel('Components (JSON, optional)').fill('[{"type": "BODY", "text": "Your order {{1}} has shipped"}]');
    await editor.getByRole('button', { name: 'Save template' }).click();
    const name = editor.getByLabel('Name', { exact: true });
    await expect.poll(() => name.getAttribute('aria-invalid')).toBe('true');
    await editor.getByRole('alert').filter({ hasText: 'lower-case letters, digits and underscores' }).waitFor();
    await expectAccessible(page, 'the WhatsApp template editor with a 422');
    await name.fill('shipping_notice');
    await editor.getByRole('button', { name: 'Save template' }).click();
    await page.waitForURL(`**/app/projects/${projectId}/whatsapp-templates`);
    await expect.poll(() => templateRows(page)).toContain('shipping_notice | en_GB | Utility | Approved | By hand');

    await page.getByRole('link', { name: 'shipping_notice' }).click();
    await page.getByRole('heading', { name: 'shipping_notice (en_GB)' }).waitFor();
    expect(await editor.getByLabel('Components (JSON, optional)').inputValue()).toContain('Your order {{1}} has shipped');
    await expectAccessible(page, 'the WhatsApp template editor');
    await editor.getByLabel('Status').selectOption('PAUSED');
    await editor.getByRole('button', { name: 'Save template' }).click();
    await expect.poll(() => templateRows(page)).toContain('shipping_notice | en_GB | Utility | Paused | By hand');

    await page.getByRole('button', { name: 'Delete template shipping_notice (en_GB)' }).click();
    const dialog = page.getByRole('alertdialog');
    await expectAccessible(page, 'the delete confirmation');
    await dialog.getByRole('button', { name: 'Delete template' }).click();
    await expect.poll(async () => (await templateRows(page)).some((row) => row.startsWith('shipping_notice'))).toBe(false);
    await context.close();
  });

  it('WhatsApp sends are in the log with their outcome and reason in words', async () => {
    const key = await api<{ key: string }>(herald, 'POST', `/projects/${projectId}/api-keys`, { name: 'whatsapp', mode: 'live' }, auth);
    const send = (body: Record<string, unknown>) => api<{ status: string; reason: string | null }>(herald, 'POST', '/transactional/whatsapp', body, { 'x-api-key': key.key });
    expect(await send({ to: '+12025551001', templateName: 'order_update', templateLanguage: 'en_US' })).toMatchObject({ status: 'sent' });
    expect(await send({ to: '+12025551002', templateName: 'spring_sale' })).toMatchObject({ status: 'refused', reason: 'template_not_approved' });
    expect(await send({ to: '+12025551003', message: 'Hello there' })).toMatchObject({ status: 'refused', reason: 'outside_service_window' });
    peer.respond('+12025551004', { status: 400, code: 131009, message: 'Parameter value is not valid' });
    expect(await send({ to: '+12025551004', templateName: 'order_update', templateLanguage: 'en_US' })).toMatchObject({ status: 'failed', reason: 'provider_error' });

    const { context, page } = await signIn(VIEWER);
    await page.goto(`${herald.url}/app/projects/${projectId}/transactional?channel=whatsapp`);
    const row = (to: string) => page.getByRole('row', { name: new RegExp(`^[^+]*\\${to}`) });
    await row('+12025551001').waitFor();
    const cells = async (to: string) => (await row(to).getByRole('cell').allInnerTexts()).slice(1);
    expect(await cells('+12025551001')).toEqual(['+12025551001', 'sent (template)', '—', 'whatsapp', 'meta_accepted']);
    expect(await cells('+12025551002')).toEqual(['+12025551002', 'refused (template)', 'Meta has not approved the template yet (template_not_approved)', 'whatsapp', '—']);
    expect(await cells('+12025551003')).toEqual([
      '+12025551003',
      'refused (text)',
      'Free text can only go within 24 hours of the person’s last message: use an approved template (outside_service_window)',
      'whatsapp',
      '—',
    ]);
    // Meta's code and words, kept on the delivery.
    expect(await cells('+12025551004')).toEqual([
      '+12025551004',
      'failed (template)',
      'The provider refused it or could not be reached (provider_error)',
      'whatsapp',
      'meta_131009: Parameter value is not valid (131009)',
    ]);
    await expectAccessible(page, 'the transactional log of WhatsApp sends');
    await screenshot(page, 'transactional-whatsapp');
    await context.close();
  });

  it('a VIEWER sees the settings and templates read-only', async () => {
    const { context, page } = await signIn(VIEWER);
    await openTab(page, 'WhatsApp', 'whatsapp');
    await webhook(page).getByText(`${PUBLIC_URL}/whatsapp/webhook/${projectId}`, { exact: true }).waitFor();
    await page.getByText('Only an owner or admin can change the WhatsApp settings.').waitFor();
    expect(await form(page).getByLabel('Phone number id').isDisabled()).toBe(true);
    expect(await form(page).getByLabel('Access token').isDisabled()).toBe(true);
    expect(await form(page).getByRole('button', { name: 'Save WhatsApp settings' }).count()).toBe(0);
    await expectAccessible(page, 'the WhatsApp tab as a viewer');

    await openTab(page, 'WhatsApp templates', 'whatsapp-templates');
    await expect.poll(() => templateRows(page)).toContain('order_update | fr | Utility | Approved | From Meta');
    expect(await page.getByRole('button', { name: 'Sync from Meta' }).count()).toBe(0);
    expect(await page.getByRole('link', { name: 'New template' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: /^Delete template/ }).count()).toBe(0);
    await page.getByRole('link', { name: 'spring_sale' }).click();
    const editor = page.getByRole('form', { name: 'WhatsApp template' });
    await page.getByText('Read from Meta by a sync').waitFor();
    expect(await editor.getByLabel('Status').isDisabled()).toBe(true);
    expect(await editor.getByRole('button', { name: 'Save template' }).count()).toBe(0);
    await expectAccessible(page, 'a WhatsApp template as a viewer');
    await context.close();
  });

  it('an admin switches to a Twilio WhatsApp sender (Twilio refusing the token first); templates then carry their Content SID and sends show Twilio in the log', async () => {
    const { context, page } = await signIn(ADMIN);
    await openTab(page, 'WhatsApp', 'whatsapp');
    await page.getByRole('radio', { name: 'Twilio WhatsApp sender' }).check();
    const twilioForm = page.getByRole('form', { name: 'Twilio WhatsApp sender' });
    await twilioForm.getByLabel('Account SID').fill(twilioAccount.accountSid);
    await twilioForm.getByLabel('Auth token').fill('0'.repeat(32));
    await twilioForm.getByLabel('Sender number').fill(TWILIO_SENDER);
    await twilioForm.getByRole('button', { name: 'Save WhatsApp settings' }).click();
    await twilioForm.getByRole('alert').filter({ hasText: `Twilio refused to read account ${twilioAccount.accountSid} with these credentials` }).waitFor();
    expect(await twilioForm.getByLabel('Auth token').getAttribute('aria-invalid')).toBe('true');
    expect(await whatsappConfig()).toMatchObject({ provider: 'meta' });
    await expectAccessible(page, 'the Twilio WhatsApp form with Twilio refusing');

    await twilioForm.getByLabel('Auth token').fill(twilioAccount.authToken);
    await twilioForm.getByRole('button', { name: 'Save WhatsApp settings' }).click();
    await page.getByRole('status').filter({ hasText: 'WhatsApp settings saved.' }).waitFor();
    const inboundUrl = `${PUBLIC_URL}/whatsapp/twilio/inbound/${projectId}`;
    expect(await whatsappConfig()).toMatchObject({
      provider: 'twilio',
      settings: { accountSid: twilioAccount.accountSid, from: TWILIO_SENDER, inboundUrl },
      credentials: ['authToken'],
    });
    expect(await current(page).getByRole('definition').allTextContents()).toEqual([
      'Twilio WhatsApp sender',
      twilioAccount.accountSid,
      TWILIO_SENDER,
      'set',
      'not set',
      'not set',
      expect.any(String),
    ]);
    await twilioWebhook(page).getByText(inboundUrl, { exact: true }).waitFor();
    await twilioWebhook(page).getByRole('button', { name: 'Copy incoming message URL' }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(inboundUrl);
    expect(await page.content()).not.toContain(twilioAccount.authToken);
    await expectAccessible(page, 'the WhatsApp tab with a Twilio sender');
    await screenshot(page, 'whatsapp-twilio-settings');

    // No sync through Twilio: a template is written by hand with its Content SID.
    await openTab(page, 'WhatsApp templates', 'whatsapp-templates');
    await page.getByText('WhatsApp goes through Twilio: there is no sync.').waitFor();
    expect(await page.getByRole('button', { name: 'Sync from Meta' }).count()).toBe(0);
    await page.getByRole('link', { name: 'New template' }).click();
    const editor = page.getByRole('form', { name: 'WhatsApp template' });
    await editor.getByLabel('Name', { exact: true }).fill('twilio_notice');
    await editor.getByLabel('Language', { exact: true }).fill('en');
    await editor.getByLabel('Twilio Content SID (optional)').fill('HX-not-one');
    await editor.getByRole('button', { name: 'Save template' }).click();
    await editor.getByRole('alert').filter({ hasText: 'must be a Twilio Content SID' }).waitFor();
    await editor.getByLabel('Twilio Content SID (optional)').fill(CONTENT_SID);
    await editor.getByRole('button', { name: 'Save template' }).click();
    await page.waitForURL(`**/app/projects/${projectId}/whatsapp-templates`);
    await expect.poll(() => templateRows(page)).toContain('twilio_notice | en | Utility | Approved | By hand');

    const key = await api<{ key: string }>(herald, 'POST', `/projects/${projectId}/api-keys`, { name: 'whatsapp-twilio', mode: 'live' }, auth);
    const send = (body: Record<string, unknown>) => api<{ status: string; reason: string | null }>(herald, 'POST', '/transactional/whatsapp', body, { 'x-api-key': key.key });
    expect(await send({ to: '+12025551005', templateName: 'twilio_notice', templateVariables: { 1: 'Ada' } })).toMatchObject({ status: 'sent' });
    expect(twilio.messages.find((m) => m.to === 'whatsapp:+12025551005')).toMatchObject({ from: `whatsapp:${TWILIO_SENDER}`, contentSid: CONTENT_SID, contentVariables: { 1: 'Ada' } });
    twilio.answer('whatsapp:+12025551006', { status: 400, code: 63014, message: 'This message was blocked by the end user' });
    expect(await send({ to: '+12025551006', templateName: 'twilio_notice' })).toMatchObject({ status: 'failed', reason: 'recipient_opted_out' });

    await page.goto(`${herald.url}/app/projects/${projectId}/transactional?channel=whatsapp`);
    const cells = async (to: string) => (await page.getByRole('row', { name: new RegExp(`^[^+]*\\${to}`) }).getByRole('cell').allInnerTexts()).slice(1);
    await expect.poll(() => cells('+12025551005')).toEqual(['+12025551005', 'sent (template)', '—', 'whatsapp', 'twilio_queued']);
    expect(await cells('+12025551006')).toEqual([
      '+12025551006',
      'failed (template)',
      'The number opted out (STOP) or blocked the business (recipient_opted_out)',
      'whatsapp',
      'twilio_63014: Twilio 400 63014: This message was blocked by the end user',
    ]);
    await expectAccessible(page, 'the transactional log of WhatsApp sends through Twilio');
    await context.close();
  });

  it('no page broke its Content-Security-Policy', () => {
    expect(session.cspViolations).toEqual([]);
  });
});
