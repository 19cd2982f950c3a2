// Push on par with email, in Chromium against `herald serve` and a local push service that checks VAPID and decrypts:
// a test push from the builder to this browser, a push campaign's activity chart and "Delivered" explained, axe
// (skipped without a Chromium). Headless Chromium gets no push subscription from FCM, so an init script stands in for
// the browser vendor: PushManager.subscribe answers a subscription whose endpoint is the local push service and whose
// keys are a real P-256 pair that service holds — Herald's encryption, signing and sending are real.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROME_UA } from '../../server/test/fixtures.js';
import { createFakeBrowser, startPushService, type FakeBrowser, type PushService } from '../../server/test/push-service.js';
import { api, expectAccessible, findChromium, screenshot, startSession, ADMIN, type Session } from './browser.js';

const chromiumPath = findChromium();

/** PushManager's subscription, as the browser vendor's push service would give it: this one subscription, every time. */
async function fakeVendorPush(page: Page, push: PushService, browser: FakeBrowser) {
  await page.addInitScript(
    ({ endpoint, p256dh, auth }) => {
      let current: PushSubscription | null = null;
      PushManager.prototype.getSubscription = async () => current;
      PushManager.prototype.subscribe = async function (options?: PushSubscriptionOptionsInit) {
        const made = {
          endpoint,
          expirationTime: null,
          options: { userVisibleOnly: true, applicationServerKey: options?.applicationServerKey as ArrayBuffer },
          getKey: () => null,
          toJSON: () => ({ endpoint, expirationTime: null, keys: { p256dh, auth } }),
          unsubscribe: async () => {
            current = null;
            return true;
          },
        };
        current = made as unknown as PushSubscription;
        return current;
      };
    },
    { endpoint: push.endpointFor(browser), p256dh: browser.p256dh, auth: browser.auth },
  );
}

describe.skipIf(!chromiumPath)('push on par with email in Chromium', { timeout: 120_000 }, () => {
  let session: Session;
  let push: PushService;

  beforeAll(async () => {
    push = await startPushService();
    session = await startSession(chromiumPath!, { ALLOW_INSECURE_PUSH_ENDPOINTS: 'true' });
  }, 120_000);

  afterAll(async () => {
    await session?.stop();
    await push?.close();
  }, 60_000);

  const campaignCount = async () =>
    (await api<{ total: number }>(session.herald, 'GET', `/campaigns/project/${session.projectId}`, undefined, session.auth)).total;
  const subscriberCount = async () =>
    (await api<{ total: number }>(session.herald, 'GET', `/subscribers/project/${session.projectId}`, undefined, session.auth)).total;

  it('sends the notification as composed to this browser from the builder, with no campaign and no new subscriber', async () => {
    const { herald, projectId } = session;
    const browser = createFakeBrowser();
    const { context, page } = await session.newPage({ permissions: ['notifications'] });
    await fakeVendorPush(page, push, browser);
    await session.openDemo(page, ADMIN);
    const [campaignsBefore, subscribersBefore] = [await campaignCount(), await subscriberCount()];
    await page.goto(`${herald.url}/app/projects/${projectId}/campaigns/new`);
    const button = page.getByRole('button', { name: 'Send a test to this browser' });
    expect(await button.isDisabled()).toBe(true);
    await page.getByLabel('Title').fill('Winter sale');
    await page.getByLabel('Body').fill('Everything half price until Sunday');
    await page.getByLabel('Click URL').fill('https://shop.example.com/winter');
    await button.click();
    await page.getByRole('status').filter({ hasText: 'Sent to this browser' }).waitFor();

    const received = push.requestsFor(browser.id);
    expect(received).toHaveLength(1);
    expect(received[0]!.payload).toMatchObject({ title: 'Winter sale', body: 'Everything half price until Sunday', url: 'https://shop.example.com/winter' });
    expect(received[0]!.vapid).toMatchObject({ sub: `mailto:${ADMIN.email}` });
    // The SDK's service worker, registered under a scope of its own, is what would show it.
    expect(await page.evaluate(async () => (await navigator.serviceWorker.getRegistration('/sdk/dashboard-test/'))?.active?.scriptURL)).toBe(`${herald.url}/sdk/herald-sw.js`);
    expect([await campaignCount(), await subscriberCount()]).toEqual([campaignsBefore, subscribersBefore]);
    await expectAccessible(page, 'push builder after a test push');
    await context.close();
  });

  it('says in words when the browser refuses notifications, and sends nothing', async () => {
    const { herald, projectId } = session;
    const browser = createFakeBrowser();
    const { context, page } = await session.newPage();
    await fakeVendorPush(page, push, browser);
    await page.addInitScript(() => {
      Notification.requestPermission = async () => 'denied';
    });
    await session.openDemo(page, ADMIN);
    await page.goto(`${herald.url}/app/projects/${projectId}/campaigns/new`);
    await page.getByLabel('Title').fill('Hello');
    await page.getByLabel('Body').fill('World');
    await page.getByRole('button', { name: 'Send a test to this browser' }).click();
    await page.getByRole('alert').filter({ hasText: 'This browser blocks notifications from Herald' }).waitFor();
    expect(push.requestsFor(browser.id)).toEqual([]);
    await context.close();
  });

  it("charts a push campaign's activity and explains Delivered: no confirmation yet, then the device's", async () => {
    const { herald, projectId, auth } = session;
    const device = createFakeBrowser();
    await api(herald, 'POST', '/subscribers', { projectId, endpoint: push.endpointFor(device), p256dh: device.p256dh, auth: device.auth, userAgent: CHROME_UA }, auth);
    const campaign = await api<{ id: string }>(
      herald,
      'POST',
      '/campaigns',
      { projectId, name: 'Spring drop', content: { title: 'Spring drop', body: 'New arrivals', clickUrl: 'https://shop.example.com/spring' }, segment: { filters: {} }, schedule: { mode: 'immediate' } },
      auth,
    );
    await expect.poll(async () => (await api<{ status: string }>(herald, 'GET', `/campaigns/${campaign.id}`, undefined, auth)).status, { timeout: 30_000 }).toBe('sent');

    const { context, page } = await session.newPage();
    await session.openDemo(page, ADMIN);
    await page.goto(`${herald.url}/app/projects/${projectId}/campaigns/${campaign.id}`);
    await page.getByTestId('stat-sent').filter({ hasText: /^[1-9]/ }).waitFor();
    expect(await page.getByTestId('stat-deliveryRate').innerText()).toBe('No confirmation yet');
    await page.getByText("Delivered — confirmed by the device's service worker; browsers that are offline confirm when they come back").waitFor();
    const activity = page.getByRole('region', { name: 'Activity over time' });
    await activity.getByRole('img', { name: /Events per .*Sent [1-9]/ }).waitFor();

    // The device's service worker confirms, as the SDK's does, at the tracking URL the push carried.
    const payload = push.requestsFor(device.id)[0]!.payload as { track: string };
    expect((await fetch(`${payload.track}/delivered`, { method: 'POST' })).status).toBe(204);
    await page.reload();
    await page.getByTestId('stat-deliveryRate').filter({ hasText: '%' }).waitFor();
    expect(await page.getByTestId('stat-deliveryRate').innerText()).not.toBe('0.00 %');
    await activity.getByRole('img', { name: /Delivered 1/ }).waitFor();
    await expectAccessible(page, 'push campaign with its activity chart');
    await screenshot(page, 'push-campaign-activity');
    expect(session.cspViolations).toEqual([]);
    await context.close();
  });
});
