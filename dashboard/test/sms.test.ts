// The SMS tab in Chromium against `herald serve` and a local Twilio: the account, senders per country, the opt-out list (skipped without a Chromium).
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newTwilioAccount, startTwilioPeer, type TwilioPeer } from '../../server/test/twilio-peer.js';
import { ADMIN, api, expectAccessible, findChromium, screenshot, startSession, VIEWER, type Herald, type Session } from './browser.js';

const chromiumPath = findChromium();
const account = newTwilioAccount(true);
const US_LONG_CODE = '+14155550100';
const STOPPED = '+14155551234';
// Twilio calls back over HTTPS only: the URLs shown and signed are under this PUBLIC_URL, posted to Herald's port.
const PUBLIC_URL = 'https://herald.example.test';

interface Channels {
  data: { channel: string; provider: string; settings: Record<string, unknown>; credentials: string[] }[];
}

describe.skipIf(!chromiumPath)('the SMS tab in Chromium', { timeout: 60_000 }, () => {
  let session: Session;
  let herald: Herald;
  let auth: Record<string, string>;
  let projectId: string;
  let peer: TwilioPeer;

  beforeAll(async () => {
    peer = await startTwilioPeer([account]);
    session = await startSession(chromiumPath!, { TWILIO_BASE_URL: peer.url, PUBLIC_URL });
    ({ herald, auth, projectId } = session);
  }, 120_000);

  afterAll(async () => {
    await session?.stop();
    await peer?.close();
  }, 60_000);

  async function signIn(who: { email: string; password: string }): Promise<{ context: BrowserContext; page: Page }> {
    const opened = await session.newPage({ permissions: ['clipboard-read', 'clipboard-write'] });
    await session.openDemo(opened.page, who);
    await opened.page.getByRole('navigation', { name: 'Project' }).getByRole('link', { name: 'SMS', exact: true }).click();
    await opened.page.waitForURL(`**/app/projects/${projectId}/sms`);
    await opened.page.getByRole('heading', { name: 'SMS', level: 2 }).waitFor();
    return opened;
  }

  const smsConfig = async () => (await api<Channels>(herald, 'GET', `/projects/${projectId}/channels`, undefined, auth)).data.find((c) => c.channel === 'sms');
  const current = (page: Page) => page.getByRole('region', { name: 'Current configuration' });
  const form = (page: Page) => page.getByRole('form', { name: 'Twilio account' });
  const senders = (page: Page) => page.getByRole('region', { name: 'Senders per country' });
  const addForm = (page: Page) => page.getByRole('form', { name: 'Add a sender' });
  const optOuts = (page: Page) => page.getByRole('region', { name: 'Opted-out numbers' });
  const inboundUrl = () => `${PUBLIC_URL}/sms/twilio/inbound/${projectId}`;

  it('an admin saves the Twilio account (a 422 beside the account SID first): the webhook URLs shown, the secrets never', async () => {
    const { context, page } = await signIn(ADMIN);
    await current(page).getByText('No SMS provider yet').waitFor();
    await expectAccessible(page, 'the SMS tab, unconfigured');

    await form(page).getByLabel('Account SID').fill('nope');
    await form(page).getByLabel('Auth token').fill(account.authToken);
    await form(page).getByRole('button', { name: 'Save SMS provider' }).click();
    const sid = form(page).getByLabel('Account SID');
    await expect.poll(() => sid.getAttribute('aria-invalid')).toBe('true');
    const sidError = form(page).getByRole('alert').filter({ hasText: 'must be a Twilio account SID' });
    expect(await sid.getAttribute('aria-describedby')).toContain(await sidError.getAttribute('id'));
    await expectAccessible(page, 'the Twilio form with a 422');
    expect(await smsConfig()).toBeUndefined();

    await sid.fill(account.accountSid);
    // The form keeps what was typed after a refusal; every secret is entered again at each save anyway.
    await form(page).getByLabel('Auth token').fill(account.authToken);
    await form(page).getByLabel('API key SID (optional)').fill(account.apiKey!.sid);
    await form(page).getByLabel('API key secret (optional)').fill(account.apiKey!.secret);
    await form(page).getByLabel('HELP reply (optional)').fill('Acme alerts. Reply STOP to stop.');
    await form(page).getByRole('button', { name: 'Save SMS provider' }).click();
    await page.getByRole('status').filter({ hasText: 'SMS provider saved.' }).waitFor();

    expect(await smsConfig()).toMatchObject({
      provider: 'twilio',
      settings: { accountSid: account.accountSid, helpReply: 'Acme alerts. Reply STOP to stop.', inboundUrl: inboundUrl() },
      credentials: ['authToken', 'apiKeySid', 'apiKeySecret'],
    });
    await current(page).getByText(account.accountSid).waitFor();
    await current(page).getByText(inboundUrl()).waitFor();
    await current(page).getByText(`${PUBLIC_URL}/sms/twilio/status/${projectId}`).waitFor();
    await current(page).getByRole('button', { name: 'Copy incoming message webhook URL' }).click();
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(inboundUrl());
    expect(await current(page).getByRole('definition').filter({ hasText: /^(set|not set)$/ }).allTextContents()).toEqual(['set', 'set', 'set']);
    expect(await form(page).getByLabel('Account SID').inputValue()).toBe(account.accountSid);
    expect(await form(page).getByLabel('Auth token').inputValue()).toBe('');
    await page.reload();
    await current(page).getByText(inboundUrl()).waitFor();
    const content = await page.content();
    expect(content).not.toContain(account.authToken);
    expect(content).not.toContain(account.apiKey!.secret);
    await expectAccessible(page, 'the SMS tab, configured');
    await context.close();
  });

  it('an admin adds senders per country (an alphanumeric one refused for the US) and deletes one, confirmed', async () => {
    const { context, page } = await signIn(ADMIN);
    await senders(page).getByText('No senders yet.').waitFor();

    const add = async (country: string, kind: string, sender: string, rate = '') => {
      await addForm(page).getByLabel('Country', { exact: true }).selectOption(country);
      await addForm(page).getByLabel('Kind', { exact: true }).selectOption(kind);
      await addForm(page).getByLabel('Sender', { exact: true }).fill(sender);
      await addForm(page).getByLabel('Sends per second (optional)').fill(rate);
      await addForm(page).getByRole('button', { name: 'Add sender' }).click();
    };
    await add('US', 'alphanumeric', 'Acme');
    const kind = addForm(page).getByLabel('Kind', { exact: true });
    await expect.poll(() => kind.getAttribute('aria-invalid')).toBe('true');
    await addForm(page).getByRole('alert').filter({ hasText: 'carriers in US do not deliver from alphanumeric sender ids' }).waitFor();
    await expectAccessible(page, 'the sender form with a 422');

    await add('US', 'long_code', US_LONG_CODE);
    await page.getByRole('status').filter({ hasText: `${US_LONG_CODE} added for United States.` }).waitFor();
    await add('GB', 'alphanumeric', 'Acme', '5');
    await page.getByRole('status').filter({ hasText: 'Acme added for United Kingdom.' }).waitFor();
    const rows = senders(page).getByRole('row');
    await expect.poll(() => rows.count()).toBe(3);
    expect(await rows.nth(1).getByRole('cell').allTextContents()).toEqual(['United Kingdom (GB)', 'Alphanumeric sender id (one-way)', 'Acme', '5', 'Delete']);
    expect(await rows.nth(2).getByRole('cell').allTextContents()).toEqual(['United States (US)', 'Long code (a phone number)', US_LONG_CODE, '1', 'Delete']);
    await screenshot(page, 'sms');

    await senders(page).getByRole('button', { name: 'Delete sender Acme for GB' }).click();
    const dialog = page.getByRole('alertdialog', { name: 'Delete Acme for United Kingdom?' });
    await dialog.waitFor();
    await expectAccessible(page, 'the delete sender dialog');
    await dialog.getByRole('button', { name: 'Delete sender' }).click();
    await expect.poll(() => rows.count()).toBe(2);
    const listed = await api<{ data: { sender: string }[] }>(herald, 'GET', `/projects/${projectId}/channels/sms/senders`, undefined, auth);
    expect(listed.data.map((s) => s.sender)).toEqual([US_LONG_CODE]);
    await context.close();
  });

  it('a number that sent STOP is in the opt-out list, and the send log shows an SMS with its segments', async () => {
    const stop = peer.inbound(inboundUrl(), account, STOPPED, US_LONG_CODE, 'STOP');
    const answer = await fetch(`${herald.url}${stop.url.slice(PUBLIC_URL.length)}`, { method: 'POST', headers: stop.headers, body: stop.payload });
    expect(answer.status).toBe(200);
    const key = await api<{ key: string }>(herald, 'POST', `/projects/${projectId}/api-keys`, { name: 'sms', mode: 'live' }, auth);
    const sms = (to: string) => api<{ status: string; reason: string | null }>(herald, 'POST', '/transactional/sms', { to, message: 'Your code is 123456' }, { 'x-api-key': key.key });
    expect(await sms(STOPPED)).toMatchObject({ status: 'refused', reason: 'recipient_opted_out' });
    expect(await sms('+14155559876')).toMatchObject({ status: 'sent' });

    const { context, page } = await signIn(ADMIN);
    const row = optOuts(page).getByRole('row').filter({ hasText: STOPPED });
    await row.waitFor();
    expect((await row.getByRole('cell').allTextContents()).slice(0, 3)).toEqual([STOPPED, 'sent STOP (or a synonym)', 'recipient']);
    await expectAccessible(page, 'the SMS tab with an opted-out number');

    await page.getByRole('navigation', { name: 'Project' }).getByRole('link', { name: 'Transactional log' }).click();
    const sent = page.getByRole('row').filter({ hasText: '+14155559876' });
    expect(await sent.getByRole('cell').nth(2).textContent()).toBe('sent · 1 segment (GSM-7)');
    const refused = page.getByRole('row').filter({ hasText: STOPPED });
    expect(await refused.getByRole('cell').nth(3).textContent()).toBe('The number opted out (STOP) or blocked the business (recipient_opted_out)');
    await expectAccessible(page, 'the send log with SMS');
    await context.close();
  });

  it('a VIEWER sees the account, senders and opt-outs, and cannot change them', async () => {
    const { context, page } = await signIn(VIEWER);
    await current(page).getByText(account.accountSid).waitFor();
    await page.getByText('Only an owner or admin can change the SMS provider.').waitFor();
    expect(await form(page).getByLabel('Account SID').isDisabled()).toBe(true);
    expect(await form(page).getByLabel('Auth token').isDisabled()).toBe(true);
    expect(await form(page).getByRole('button', { name: 'Save SMS provider' }).count()).toBe(0);
    await senders(page).getByText(US_LONG_CODE).waitFor();
    expect(await addForm(page).count()).toBe(0);
    expect(await senders(page).getByRole('button', { name: /^Delete/ }).count()).toBe(0);
    await optOuts(page).getByText(STOPPED).waitFor();
    await expectAccessible(page, 'the SMS tab as a viewer');
    await context.close();
  });

  it('no page broke its Content-Security-Policy', () => {
    expect(session.cspViolations).toEqual([]);
  });
});
