// GET /subscribers/:id/timeline through HTTP: a person sent a push (to a local push service) and an email (to a real
// SMTP peer), who opened and clicked it, about whom the application sent an event that enrolled them in an automation
// which pushed to them — one list, newest first, paged by cursor, and seen only by those who may see the person.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmailWorld, type EmailWorld } from '../../../test/email-world.js';
import { CHROME_UA, type Tenant } from '../../../test/fixtures.js';
import type { TestApp } from '../../../test/harness.js';
import { createFakeBrowser, startPushService, type PushService } from '../../../test/push-service.js';

const DOMAIN = 'news.example.com';
const PUBLIC_URL = 'https://herald.example.com';
const BROWSER = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15';

let world: EmailWorld;
let t: TestApp;
let push: PushService;
let tenant: Tenant;
let other: Tenant;

type Headers = Record<string, string>;
const request = (method: 'GET' | 'POST', url: string, headers: Headers, payload?: Record<string, unknown>) =>
  t.app.inject({ method, url, headers, ...(payload !== undefined && { payload }) });

beforeAll(async () => {
  push = await startPushService();
  world = await startEmailWorld({ domain: DOMAIN, tenants: 2, env: { PUBLIC_URL, ALLOW_INSECURE_PUSH_ENDPOINTS: 'true' }, dkim: false });
  t = world.t;
  [tenant, other] = world.tenants as [Tenant, Tenant];
});
afterAll(async () => {
  await world?.close();
  await push?.close();
});

interface Item {
  at: string;
  kind: string;
  channel: string | null;
  title: string;
  detail: string | null;
  status: string | null;
  source: string | null;
  messageTitle: string | null;
  campaign: { id: string; name: string | null } | null;
  automation: { id: string; name: string | null } | null;
  url: string | null;
  eventName: string | null;
}
interface Page {
  data: Item[];
  nextCursor: string | null;
}

async function timeline(id: string, search = '', headers: Headers = tenant.jwt): Promise<Page> {
  const res = await request('GET', `/subscribers/${id}/timeline${search}`, headers);
  expect(res.statusCode, res.body).toBe(200);
  return res.json<Page>();
}

/** Waits a little, so each step has an instant of its own and "newest first" has one answer. */
const tick = () => new Promise((resolve) => setTimeout(resolve, 20));

describe('GET /subscribers/:id/timeline', () => {
  it("lists a person's push and email, their opens and clicks, an event and its automation run, newest first, paged by cursor", async () => {
    const browser = createFakeBrowser();
    const registered = await request('POST', '/subscribers', tenant.live, {
      projectId: tenant.projectId,
      endpoint: push.endpointFor(browser),
      p256dh: browser.p256dh,
      auth: browser.auth,
      userAgent: CHROME_UA,
    });
    expect(registered.statusCode, registered.body).toBe(201);
    const person = registered.json<{ id: string; token: string }>();
    const address = `ada-${Date.now()}@example.org`;
    expect((await request('POST', '/subscribers/update', tenant.live, { token: person.token, email: address })).statusCode).toBe(200);
    expect(await timeline(person.id)).toEqual({ data: [], nextCursor: null });

    const pushed = await request('POST', '/transactional/send', tenant.live, { token: person.token, title: 'Your order', body: 'Shipped' });
    expect(pushed.json()).toMatchObject({ delivered: true });
    await tick();

    const mailed = await request('POST', '/transactional/email', tenant.live, {
      to: address,
      subject: 'Your receipt',
      htmlContent: '<p>See <a href="https://shop.example.com/orders/42">your order</a>.</p>',
      senderEmail: `orders@${DOMAIN}`,
    });
    expect(mailed.json()).toMatchObject({ status: 'sent' });
    const html = world.peer.received(address).at(-1)!.parsed.html as string;
    const links = [...html.matchAll(/(?:href|src)="([^"]+)"/g)].map((m) => m[1]!.replace(/&amp;/g, '&').slice(PUBLIC_URL.length));
    await tick();
    expect((await t.app.inject({ method: 'GET', url: links.find((u) => u.startsWith('/e/open/'))!, headers: { 'user-agent': BROWSER } })).statusCode).toBe(200);
    await tick();
    expect((await t.app.inject({ method: 'GET', url: links.find((u) => u.startsWith('/e/click/'))!, headers: { 'user-agent': BROWSER } })).statusCode).toBe(302);
    await tick();

    const created = await request('POST', '/automations', tenant.jwt, {
      projectId: tenant.projectId,
      name: 'Welcome flow',
      trigger: { type: 'event', eventName: 'signed_up' },
      steps: [{ id: 'hello', type: 'send_push', content: { title: 'Welcome aboard', body: 'Glad you are here' }, next: null }],
    });
    expect(created.statusCode, created.body).toBe(201);
    const automation = created.json<{ id: string }>();
    expect((await request('POST', `/automations/${automation.id}/activate`, tenant.jwt)).statusCode).toBe(200);
    const event = await request('POST', '/events', tenant.live, { name: 'signed_up', subscriberId: person.id, properties: { plan: 'pro', seats: 3 } });
    expect(event.json()).toMatchObject({ data: [{ enrolled: 1 }] });
    // The automation executor's passes, as its worker would run them.
    for (let i = 0; i < 10 && (await t.services.automationExecutor.runOnce()).claimed > 0; i++);
    await expect.poll(async () => (await timeline(person.id)).data.some((item) => item.kind === 'enrollment_completed'), { timeout: 15_000 }).toBe(true);
    await expect.poll(async () => (await timeline(person.id)).data.find((item) => item.source === 'automation')?.status, { timeout: 15_000 }).toBe('sent');
    expect(push.requestsFor(browser.id)).toHaveLength(2);

    const all = await timeline(person.id);
    expect(all.nextCursor).toBeNull();
    expect(all.data).toHaveLength(9);
    // The event, the enrollment it made and the automation's run and push come within the same moments: their order
    // among themselves is the executor's.
    expect(all.data.slice(0, 4)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ kind: 'enrollment_completed', title: 'Completed automation Welcome flow', automation: { id: automation.id, name: 'Welcome flow' } }),
        expect.objectContaining({ kind: 'message', channel: 'push', source: 'automation', messageTitle: 'Welcome aboard', automation: { id: automation.id, name: 'Welcome flow' }, title: 'Push sent', status: 'sent' }),
        expect.objectContaining({ kind: 'enrolled', title: 'Entered automation Welcome flow', automation: { id: automation.id, name: 'Welcome flow' } }),
        expect.objectContaining({ kind: 'event', title: 'Event signed_up', detail: 'plan: pro, seats: 3', eventName: 'signed_up', channel: null }),
      ]),
    );
    expect(all.data.slice(4)).toEqual([
      expect.objectContaining({ kind: 'clicked', channel: 'email', title: 'Email clicked', url: 'https://shop.example.com/orders/42', source: 'transactional' }),
      expect.objectContaining({ kind: 'opened', channel: 'email', title: 'Email opened', messageTitle: 'Your receipt' }),
      expect.objectContaining({ kind: 'delivered', channel: 'email', title: 'Email delivered' }),
      expect.objectContaining({ kind: 'message', channel: 'email', title: 'Email sent', source: 'transactional', messageTitle: 'Your receipt', status: 'clicked', campaign: null }),
      expect.objectContaining({ kind: 'message', channel: 'push', title: 'Push sent', source: 'transactional', messageTitle: 'Your order', status: 'sent' }),
    ]);
    expect(all.data.map((item) => item.at)).toEqual([...all.data.map((item) => item.at)].sort().reverse());

    // Pages of 3: the same items, in the same order, none twice, whatever arrives meanwhile at the top.
    const first = await timeline(person.id, '?limit=3');
    expect(first.data).toEqual(all.data.slice(0, 3));
    expect(first.nextCursor).toEqual(expect.any(String));
    await request('POST', '/events', tenant.live, { name: 'visited', subscriberId: person.id });
    const second = await timeline(person.id, `?limit=3&cursor=${first.nextCursor}`);
    expect(second.data).toEqual(all.data.slice(3, 6));
    const third = await timeline(person.id, `?limit=3&cursor=${second.nextCursor}`);
    expect(third).toEqual({ data: all.data.slice(6), nextCursor: null });
    expect((await timeline(person.id)).data[0]).toMatchObject({ kind: 'event', eventName: 'visited', detail: null });

    // A live key reads it as the dashboard does; a cursor the timeline did not give is a 422 naming it.
    expect((await timeline(person.id, '?limit=1', tenant.live)).data).toHaveLength(1);
    const forged = await request('GET', `/subscribers/${person.id}/timeline?cursor=not-a-cursor`, tenant.jwt);
    expect(forged.statusCode).toBe(422);
    expect(forged.json()).toMatchObject({ details: [{ field: 'cursor' }] });
  });

  it("is a 404 for another project's person, and for a live person asked with a test key", async () => {
    const contact = await request('POST', '/contacts', tenant.live, { projectId: tenant.projectId, email: `private-${Date.now()}@example.org` });
    expect(contact.statusCode, contact.body).toBe(201);
    const { id } = contact.json<{ id: string }>();
    await request('POST', '/events', tenant.live, { name: 'secret_event', subscriberId: id, properties: { card: '4242' } });
    for (const headers of [other.jwt, other.live, other.test, tenant.test]) {
      const res = await request('GET', `/subscribers/${id}/timeline`, headers);
      expect(res.statusCode, res.body).toBe(404);
      expect(res.json()).toMatchObject({ statusCode: 404, message: 'Subscriber not found' });
    }
    expect((await timeline(id)).data).toEqual([expect.objectContaining({ kind: 'event', eventName: 'secret_event' })]);
  });
});
