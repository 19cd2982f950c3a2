// The browser SDK and its service worker in a real Chromium, on a customer's site of another origin, against a real
// `herald serve` and the local push service: subscribe, queued calls, pushes shown and reported, renewal, adoption,
// unsubscribe, permission, retries, identity verification and allowed origins. Skipped (loudly) without a Chromium.
import { createECDH, createHmac } from 'node:crypto';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import type { Browser, BrowserContext, Page, Worker } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, api, findChromium, launch, startHerald, type Herald } from '../../dashboard/test/browser.js';
import { freePort } from '../../server/src/db/embedded-postgres.js';
import { createFakeBrowser, startPushService, type FakeBrowser, type PushService } from '../../server/test/push-service.js';
import { fakePushManager, holdSubscription, startSite, type Site } from './site.js';

const chromiumPath = findChromium();
if (!chromiumPath) {
  const message = '\n!!! SDK browser tests SKIPPED: no Chromium found (CHROME_PATH, or chromium on PATH): apt-get install -y chromium\n';
  if (process.env.CI === 'true') throw new Error(message);
  console.error(message);
}
if (!existsSync(new URL('../dist/herald.js', import.meta.url))) throw new Error('sdk/dist is missing: run `npm run build` first (npm test does)');

interface Row {
  id: string;
  token: string;
  endpoint: string;
  p256dh: string;
  status: string;
  tags: string[];
  external_id: string | null;
  email: string | null;
  last_seen_at: Date;
}

describe.skipIf(!chromiumPath)('browser SDK in Chromium', { timeout: 60_000 }, () => {
  let herald: Herald;
  let push: PushService;
  let site: Site;
  let browser: Browser;
  let db: pg.Pool;
  let projectId: string;
  let auth: Record<string, string>;
  let serverKey: Record<string, string>;
  let publishableKey: string;
  /** Anything the SDK let escape into a page: there must be nothing. */
  const pageErrors: string[] = [];

  beforeAll(async () => {
    push = await startPushService();
    herald = await startHerald({ ALLOW_INSECURE_PUSH_ENDPOINTS: 'true' });
    site = await startSite(herald.url);
    db = new pg.Pool({ connectionString: herald.database.url, max: 2 });
    const login = await api<{ access_token: string; user: { organizations: { id: string }[] } }>(herald, 'POST', '/auth/login', ADMIN);
    auth = { authorization: `Bearer ${login.access_token}`, 'x-org-id': login.user.organizations[0]!.id };
    projectId = (await api<{ id: string }>(herald, 'POST', '/projects', { name: 'Shop' }, auth)).id;
    serverKey = { 'x-api-key': (await api<{ key: string }>(herald, 'POST', `/projects/${projectId}/api-keys`, { name: 'server', mode: 'live' }, auth)).key };
    publishableKey = (
      await api<{ key: string }>(herald, 'POST', `/projects/${projectId}/api-keys`, { name: 'site', mode: 'live', scope: 'publishable' }, auth)
    ).key;
    browser = await launch(chromiumPath!);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await db?.end();
    await site?.close();
    await herald?.stop();
    await push?.close();
    expect(pageErrors).toEqual([]);
  }, 60_000);

  const subscriberRows = async () => (await db.query<Row>('SELECT * FROM subscribers WHERE project_id = $1 ORDER BY created_at', [projectId])).rows;
  const rowOf = async (id: string) => (await db.query<Row>('SELECT * FROM subscribers WHERE id = $1', [id])).rows[0]!;
  const deliveryOf = async (subscriberId: string) =>
    (
      await db.query<{ delivered_at: Date | null; clicked_at: Date | null; dismissed_at: Date | null }>(
        'SELECT delivered_at, clicked_at, dismissed_at FROM deliveries WHERE subscriber_id = $1 ORDER BY id DESC LIMIT 1',
        [subscriberId],
      )
    ).rows[0];
  const setSettings = (settings: Record<string, unknown>) => api(herald, 'PATCH', `/projects/${projectId}`, { settings }, auth);

  /** A browser: notifications allowed (or not), the fake push manager holding `device`'s subscription once a page opens. */
  async function newVisitor(options: { permission?: boolean } = {}): Promise<BrowserContext> {
    const context = await browser.newContext();
    if (options.permission !== false) await context.grantPermissions(['notifications'], { origin: site.origin });
    await context.addInitScript(fakePushManager);
    return context;
  }

  /** A page of the site in `context`, its browser holding `device`'s subscription, Herald initialised. */
  async function open(context: BrowserContext, device?: FakeBrowser): Promise<Page> {
    const page = await context.newPage();
    page.setDefaultTimeout(15_000);
    page.on('pageerror', (error) => pageErrors.push(`${page.url()}: ${error.message}`));
    await page.goto(`${site.origin}/`);
    if (device) await page.evaluate(holdSubscription({ endpoint: push.endpointFor(device), p256dh: device.p256dh, auth: device.auth }));
    return page;
  }

  const init = (page: Page) =>
    page.evaluate(
      ({ baseUrl, projectId, key }) => window.Herald.init({ baseUrl, projectId, key, serviceWorkerPath: '/sw.js' }),
      { baseUrl: herald.url, projectId, key: publishableKey },
    );

  /** Clicks the site's button, whose handler calls Herald.subscribe() (a user gesture). */
  async function clickSubscribe(page: Page) {
    await page.click('#subscribe');
    return page.evaluate(async () => {
      const result = await (window as unknown as { subscribing: ReturnType<typeof window.Herald.subscribe> }).subscribing;
      return { data: result.data, error: result.error && { code: result.error.code, message: result.error.message } };
    });
  }

  const serviceWorkerOf = async (context: BrowserContext): Promise<Worker> =>
    context.serviceWorkers().find((worker) => worker.url() === `${site.origin}/sw.js`) ?? context.waitForEvent('serviceworker');

  /** `data` delivered into the site's service worker as a push service would (DevTools protocol). */
  async function deliverPush(page: Page, data: unknown) {
    // A push delivered to a worker still installing is dropped: wait for the active one, as a push service's delivery would.
    await page.evaluate(async () => void (await navigator.serviceWorker.ready));
    const cdp = await page.context().newCDPSession(page);
    const registrations: { registrationId: string; scopeURL: string; isDeleted: boolean }[] = [];
    cdp.on('ServiceWorker.workerRegistrationUpdated', (event) => registrations.push(...event.registrations));
    await cdp.send('ServiceWorker.enable');
    const ours = () => registrations.find((r) => r.scopeURL === `${site.origin}/` && !r.isDeleted);
    await expect.poll(ours).toBeTruthy();
    await cdp.send('ServiceWorker.deliverPushMessage', { origin: site.origin, registrationId: ours()!.registrationId, data: JSON.stringify(data) });
    await cdp.detach();
  }

  /** Waits for the push service to decrypt a push titled `title` for `device`, and delivers that payload. */
  async function deliverReceived(page: Page, device: FakeBrowser, title: string) {
    const received = () => push.requestsFor(device.id).find((r) => (r.payload as { title?: string } | undefined)?.title === title);
    await expect.poll(received, { timeout: 15_000 }).toBeTruthy();
    await deliverPush(page, received()!.payload);
  }

  const notifications = (page: Page) =>
    page.evaluate(async () =>
      (await (await navigator.serviceWorker.getRegistration('/'))!.getNotifications()).map((n) => ({
        title: n.title,
        body: n.body,
        icon: n.icon,
        actions: (n as unknown as { actions: { title: string }[] }).actions.map((a) => a.title),
      })),
    );

  /** A notification event on the shown notification titled `title`, as the browser fires it on a click or a close. */
  const notificationEvent = (worker: Worker, type: 'notificationclick' | 'notificationclose', title: string, action = '') =>
    worker.evaluate(
      async ({ type, title, action }) => {
        const scope = self as unknown as ServiceWorkerGlobalScope;
        const notification = (await scope.registration.getNotifications()).find((n) => n.title === title)!;
        // A dismissal has closed the notification before the event, as the browser does.
        if (type === 'notificationclose') notification.close();
        scope.dispatchEvent(new NotificationEvent(type, { notification, action }));
      },
      { type, title, action },
    );

  const send = (title: string, extra: Record<string, unknown> = {}) =>
    api<{ delivered: boolean }>(herald, 'POST', '/transactional/send', { token: subscriber.token, title, body: 'text', ...extra }, serverKey);

  /** The returning visitor of most tests: one browser profile, so IndexedDB and the service worker persist. */
  let visitor: BrowserContext;
  let device: FakeBrowser;
  let subscriber: { id: string; token: string };

  it('subscribes on a click, registering the subscription and applying the calls made before it', async () => {
    visitor = await newVisitor();
    device = createFakeBrowser();
    const page = await open(visitor, device);
    await init(page);
    await page.evaluate(() => {
      const w = window as unknown as Record<string, unknown>;
      w.events = [];
      window.Herald.on('subscribed', (detail) => (w.events as unknown[]).push(detail));
      // Made before subscribe(): queued until this browser has a subscriber.
      w.early = Promise.all([window.Herald.tag(['early']), window.Herald.identify('user-42'), window.Herald.setEmail('ada@example.com')]);
    });

    const result = await clickSubscribe(page);

    expect(result.error).toBeNull();
    subscriber = result.data!;
    const early = await page.evaluate(async () => (await (window as unknown as { early: Promise<{ error: unknown }[]> }).early).map((r) => r.error));
    expect(early).toEqual([null, null, null]);
    expect(await rowOf(subscriber.id)).toMatchObject({
      token: subscriber.token,
      endpoint: push.endpointFor(device),
      p256dh: device.p256dh,
      status: 'active',
      tags: ['early'],
      external_id: 'user-42',
      email: 'ada@example.com',
    });
    expect(await page.evaluate(() => (window as unknown as { events: unknown[] }).events)).toEqual([subscriber]);
    await page.close();
  });

  it("shows Herald's push, and reports it delivered, clicked (opening the button's URL) and dismissed", async () => {
    const page = await open(visitor);
    await init(page);
    await page.evaluate(() => {
      const w = window as unknown as Record<string, unknown>;
      w.clicks = [];
      window.Herald.on('click', (detail) => (w.clicks as unknown[]).push(detail));
    });
    const sent = await send('Your order shipped', {
      body: 'It arrives Friday',
      url: `${site.origin}/orders/1`,
      iconUrl: 'https://cdn.example.com/icon.png',
      actions: [{ action: `${site.origin}/track`, title: 'Track it' }],
    });
    expect(sent.delivered).toBe(true);

    await deliverReceived(page, device, 'Your order shipped');

    await expect.poll(() => notifications(page)).toEqual([
      { title: 'Your order shipped', body: 'It arrives Friday', icon: 'https://cdn.example.com/icon.png', actions: ['Track it'] },
    ]);
    await expect.poll(async () => (await deliveryOf(subscriber.id))?.delivered_at).toBeInstanceOf(Date);

    const worker = await serviceWorkerOf(visitor);
    await notificationEvent(worker, 'notificationclick', 'Your order shipped', '0');
    await expect.poll(async () => (await deliveryOf(subscriber.id))?.clicked_at).toBeInstanceOf(Date);
    await expect.poll(() => page.evaluate(() => (window as unknown as { clicks: unknown[] }).clicks)).toEqual([{ url: `${site.origin}/track`, action: '0' }]);
    expect(await notifications(page)).toEqual([]);

    await send('Back in stock');
    await deliverReceived(page, device, 'Back in stock');
    await expect.poll(async () => (await notifications(page)).map((n) => n.title)).toEqual(['Back in stock']);
    await notificationEvent(await serviceWorkerOf(visitor), 'notificationclose', 'Back in stock');
    await expect.poll(async () => (await deliveryOf(subscriber.id))?.dismissed_at).toBeInstanceOf(Date);
    expect((await deliveryOf(subscriber.id))?.clicked_at).toBeNull();
    await page.close();
  });

  it("leaves a push that is not Herald's to the site's own handlers", async () => {
    const page = await open(visitor);
    await init(page);
    await deliverPush(page, { notification: 'from another sender' });
    await page.waitForTimeout(500);
    expect(await notifications(page)).toEqual([]);
    await page.close();
  });

  it('keeps the subscriber across visits, and sends new keys only when the browser has new ones', async () => {
    const seenBefore = (await rowOf(subscriber.id)).last_seen_at;
    const page = await open(visitor);
    expect(await init(page)).toMatchObject({ data: { subscribed: true }, error: null });
    expect(await page.evaluate(async () => (await window.Herald.getSubscriber()).data?.id)).toBe(subscriber.id);
    expect((await subscriberRows()).length).toBe(1);
    await expect.poll(async () => (await rowOf(subscriber.id)).last_seen_at.getTime()).toBeGreaterThan(seenBefore.getTime());

    // The browser's subscription changed between visits (new keys): the next visit re-registers them.
    const renewed = createFakeBrowser();
    await page.evaluate(holdSubscription({ endpoint: push.endpointFor(renewed), p256dh: renewed.p256dh, auth: renewed.auth }));
    await page.reload();
    await init(page);
    expect(await rowOf(subscriber.id)).toMatchObject({ endpoint: push.endpointFor(renewed), p256dh: renewed.p256dh, status: 'active' });
    expect((await subscriberRows()).length).toBe(1);
    device = renewed;
    await page.close();
  });

  it("re-subscribes with the project's new VAPID key", async () => {
    // The project takes another key pair (PUT /projects/:id/channels/push, as when moving from another service).
    const ecdh = createECDH('prime256v1');
    ecdh.generateKeys();
    const vapidPublicKey = ecdh.getPublicKey('base64url');
    await api(herald, 'PUT', `/projects/${projectId}/channels/push`, { settings: { vapidPublicKey }, credentials: { vapidPrivateKey: ecdh.getPrivateKey('base64url') } }, auth);
    const page = await open(visitor);
    await init(page);
    const key = await page.evaluate(() => JSON.parse(localStorage.getItem('test.pushSubscription')!).applicationServerKey as number[]);
    expect(Buffer.from(key).toString('base64url')).toBe(vapidPublicKey);
    await page.close();
  });

  it('renews a subscription the browser changed (pushsubscriptionchange) for the same subscriber, and pushes reach it', async () => {
    const page = await open(visitor);
    await init(page);
    const rotated = createFakeBrowser();
    const endpoint = push.endpointFor(rotated);
    await (await serviceWorkerOf(visitor)).evaluate(
      ({ endpoint, p256dh, auth }) => {
        const event = new ExtendableEvent('pushsubscriptionchange');
        Object.defineProperty(event, 'newSubscription', { value: { endpoint, toJSON: () => ({ endpoint, keys: { p256dh, auth } }) } });
        self.dispatchEvent(event);
      },
      { endpoint, p256dh: rotated.p256dh, auth: rotated.auth },
    );
    await expect.poll(async () => (await rowOf(subscriber.id)).endpoint).toBe(endpoint);
    // The browser holds the new subscription from now on.
    await page.evaluate(holdSubscription({ endpoint, p256dh: rotated.p256dh, auth: rotated.auth }));
    await send('Still here');
    await expect.poll(() => push.requestsFor(rotated.id).map((r) => (r.payload as { title?: string } | undefined)?.title)).toEqual(['Still here']);
    device = rotated;
    await page.close();
  });

  it('retries per spec 7.3: waits Retry-After on a 429, backs off on a 503', async () => {
    const page = await open(visitor);
    await init(page);
    const seen: { status: number; at: number }[] = [];
    const answers = [
      { status: 429, headers: { 'retry-after': '1' } },
      { status: 503, headers: {} },
    ];
    await page.route(`${herald.url}/subscribers/tag`, async (route) => {
      if (route.request().method() !== 'POST') return route.continue();
      const answer = answers.shift();
      seen.push({ status: answer?.status ?? 200, at: Date.now() });
      if (!answer) return route.continue();
      await route.fulfill({
        status: answer.status,
        headers: { ...answer.headers, 'access-control-allow-origin': site.origin, 'access-control-expose-headers': 'retry-after, x-request-id' },
        contentType: 'application/json',
        body: JSON.stringify({ statusCode: answer.status, code: 'busy', message: 'busy', requestId: 'r' }),
      });
    });
    expect(await page.evaluate(async () => (await window.Herald.tag(['retried'])).error)).toBeNull();
    expect(seen.map((s) => s.status)).toEqual([429, 503, 200]);
    expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(950);
    expect(seen[2]!.at - seen[1]!.at).toBeGreaterThanOrEqual(450);
    expect((await rowOf(subscriber.id)).tags).toContain('retried');
    await page.close();
  });

  it('identifies with the HMAC when the project verifies identities, and refuses without it', async () => {
    await setSettings({ identityVerification: true });
    const { identitySecret } = await api<{ identitySecret: string }>(herald, 'GET', `/projects/${projectId}/identity-secret`, undefined, auth);
    const page = await open(visitor);
    await init(page);
    const missing = await page.evaluate(async () => {
      const { error } = await window.Herald.identify('user-7');
      return error && { statusCode: error.statusCode, code: error.code, fields: error.details?.map((d) => d.field) };
    });
    expect(missing).toEqual({ statusCode: 422, code: 'validation_failed', fields: ['externalIdHash'] });
    const hash = createHmac('sha256', identitySecret).update('user-7').digest('hex');
    expect(await page.evaluate(async (hash) => (await window.Herald.identify('user-7', { hash })).error, hash)).toBeNull();
    expect((await rowOf(subscriber.id)).external_id).toBe('user-7');
    await setSettings({ identityVerification: false });
    await page.close();
  });

  it("is refused by the browser from an origin outside the project's allowed origins", async () => {
    await setSettings({ allowedOrigins: ['https://shop.example'] });
    const page = await open(visitor);
    await init(page);
    expect(await page.evaluate(async () => (await window.Herald.tag(['from-elsewhere'])).error?.code)).toBe('network_error');
    expect((await rowOf(subscriber.id)).tags).not.toContain('from-elsewhere');
    await setSettings({ allowedOrigins: [site.origin] });
    expect(await page.evaluate(async () => (await window.Herald.tag(['from-here'])).error)).toBeNull();
    await setSettings({ allowedOrigins: [] });
    await page.close();
  });

  it('unsubscribes in the browser and in Herald, and a later subscribe brings the same subscriber back', async () => {
    const page = await open(visitor);
    await init(page);
    const result = await page.evaluate(async () => {
      const events: unknown[] = [];
      window.Herald.on('unsubscribed', (detail) => events.push(detail));
      const { data, error } = await window.Herald.unsubscribe();
      const browserSubscription = await (await navigator.serviceWorker.getRegistration('/'))!.pushManager.getSubscription();
      return { data, error, events, browserSubscription };
    });
    expect(result).toMatchObject({ data: { status: 'unsubscribed' }, error: null, events: [subscriber], browserSubscription: null });
    expect(await rowOf(subscriber.id)).toMatchObject({ status: 'unsubscribed' });

    expect((await clickSubscribe(page)).data).toEqual(subscriber);
    expect(await rowOf(subscriber.id)).toMatchObject({ status: 'active' });
    await page.close();
  });

  it('tells Herald when the visitor has since blocked notifications', async () => {
    const page = await open(visitor);
    // Playwright grants through CDP's Browser.grantPermissions: the listed permissions granted, every other one denied.
    await visitor.clearPermissions();
    await visitor.grantPermissions([], { origin: site.origin });
    await page.reload();
    expect(await init(page)).toMatchObject({ data: { subscribed: false } });
    expect(await rowOf(subscriber.id)).toMatchObject({ status: 'unsubscribed' });
    expect(await clickSubscribe(page)).toMatchObject({ data: null, error: { code: 'permission_denied' } });
    await visitor.close();
  });

  it('adopts the subscriber a 409 names when a browser without stored state registers a known endpoint, with its new keys', async () => {
    const context = await newVisitor();
    // The same endpoint, new keys (the browser re-subscribed after its site data was cleared).
    const rekeyed = Object.assign(createFakeBrowser(), { id: device.id });
    const page = await open(context, rekeyed);
    await init(page);
    expect((await clickSubscribe(page)).data).toEqual(subscriber);
    expect((await subscriberRows()).length).toBe(1);
    expect(await rowOf(subscriber.id)).toMatchObject({ endpoint: push.endpointFor(rekeyed), p256dh: rekeyed.p256dh });
    // The endpoint was unsubscribed (blocked above): registering it again revived it.
    expect(await rowOf(subscriber.id)).toMatchObject({ status: 'active' });
    await context.close();
  });

  it('answers without push support or permission with an error result, registering nobody', async () => {
    const before = (await subscriberRows()).length;
    const denied = await newVisitor({ permission: false });
    const deniedPage = await open(denied, createFakeBrowser());
    await init(deniedPage);
    expect((await clickSubscribe(deniedPage)).error?.code).toMatch(/^permission_(denied|default)$/);
    await denied.close();

    const unsupported = await newVisitor();
    await unsupported.addInitScript(() => delete (window as unknown as Record<string, unknown>).PushManager);
    const page = await open(unsupported);
    await init(page);
    expect(await page.evaluate(() => [window.Herald.isPushSupported(), window.Herald.permission()])).toEqual([false, 'unsupported']);
    expect((await clickSubscribe(page)).error?.code).toBe('push_unsupported');
    await unsupported.close();
    expect((await subscriberRows()).length).toBe(before);
  });

  it('examples/web-push serves a site that subscribes a browser and identifies it', async () => {
    const port = await freePort();
    const example = spawn(process.execPath, [fileURLToPath(new URL('../../examples/web-push/serve.mjs', import.meta.url))], {
      env: { PATH: process.env.PATH, HERALD_URL: herald.url, HERALD_PROJECT_ID: projectId, HERALD_KEY: publishableKey, PORT: String(port), HOST: '127.0.0.1' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = new Promise((resolve) => example.once('exit', resolve));
    try {
      await new Promise((resolve) => example.stdout!.once('data', resolve));
      const origin = `http://127.0.0.1:${port}`;
      const context = await browser.newContext();
      await context.grantPermissions(['notifications'], { origin });
      await context.addInitScript(fakePushManager);
      const page = await context.newPage();
      page.on('pageerror', (error) => pageErrors.push(`${page.url()}: ${error.message}`));
      await page.goto(`${origin}/`);
      const visitorDevice = createFakeBrowser();
      await page.evaluate(holdSubscription({ endpoint: push.endpointFor(visitorDevice), p256dh: visitorDevice.p256dh, auth: visitorDevice.auth }));
      await expect.poll(() => page.locator('#status').textContent()).toMatch(/^Not subscribed/);

      await page.getByRole('button', { name: 'Subscribe', exact: true }).click();
      await expect.poll(() => page.locator('#status').textContent()).toMatch(/^Subscribed as sub_/);
      await page.getByLabel('Your user id').fill('example-user');
      await page.getByRole('button', { name: 'Identify' }).click();
      await expect.poll(() => page.locator('#status').textContent()).toBe('Identified as example-user.');

      expect((await subscriberRows()).find((row) => row.endpoint === push.endpointFor(visitorDevice))).toMatchObject({ status: 'active', external_id: 'example-user' });
      await context.close();
    } finally {
      example.kill('SIGTERM');
      await exited;
    }
    expect(example.exitCode).toBe(0);
  });
});

declare global {
  interface Window {
    Herald: import('../src/herald.js').HeraldClient;
  }
}
