// The SDK's own subscription calls by token: a new push subscription for a known subscriber, and unsubscribe.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROME_UA, createTenant, publishableKey, pushSubscription, type Tenant } from '../../../test/fixtures.js';
import { startTestApp, type TestApp } from '../../../test/harness.js';

const FIREFOX_UA = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14.1; rv:121.0) Gecko/20100101 Firefox/121.0';

let t: TestApp;
let owner: Tenant;
let publishable: Record<string, string>;

beforeAll(async () => {
  t = await startTestApp();
  owner = await createTenant(t);
  publishable = await publishableKey(t, owner);
});
afterAll(() => t.close());

async function register(headers = publishable) {
  const subscription = pushSubscription();
  const res = await t.app.inject({
    method: 'POST',
    url: '/subscribers',
    headers,
    payload: { projectId: owner.projectId, ...subscription, userAgent: CHROME_UA },
  });
  expect(res.statusCode, res.body).toBe(201);
  return { ...res.json<{ id: string; token: string }>(), subscription };
}

const post = (url: string, payload: Record<string, unknown>, headers = publishable) => t.app.inject({ method: 'POST', url, headers, payload });

const row = async (id: string) =>
  (
    await t.database.pool.query<{ endpoint: string; p256dh: string; auth: string; status: string; status_reason: string | null; browser: string }>(
      'SELECT endpoint, p256dh, auth, status, status_reason, browser FROM subscribers WHERE id = $1',
      [id],
    )
  ).rows[0]!;

describe('POST /subscribers/push-subscription', () => {
  it('replaces the endpoint, keys and user agent, keeping the subscriber, its externalId and tags', async () => {
    const { id, token } = await register();
    await post('/subscribers/identify', { token, externalId: 'user-1' });
    await post('/subscribers/tag', { token, tags: ['vip'] });
    const next = pushSubscription();

    const res = await post('/subscribers/push-subscription', { token, ...next, userAgent: FIREFOX_UA });

    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ id, token, externalId: 'user-1', tags: ['vip'], endpoint: next.endpoint, browser: 'Firefox', status: 'active' });
    expect(res.json()).not.toHaveProperty('p256dh');
    expect(await row(id)).toMatchObject({ endpoint: next.endpoint, p256dh: next.p256dh, auth: next.auth, browser: 'Firefox' });
  });

  it('makes an unsubscribed subscriber active again, and leaves an inactive one inactive', async () => {
    const unsubscribed = await register();
    await post('/subscribers/unsubscribe', { token: unsubscribed.token });
    const revived = await post('/subscribers/push-subscription', { token: unsubscribed.token, ...pushSubscription(), userAgent: CHROME_UA });
    expect(revived.json()).toMatchObject({ status: 'active' });
    expect(await row(unsubscribed.id)).toMatchObject({ status: 'active', status_reason: null });

    const inactive = await register();
    await t.database.pool.query(`UPDATE subscribers SET status = 'inactive', status_reason = 'operator' WHERE id = $1`, [inactive.id]);
    const kept = await post('/subscribers/push-subscription', { token: inactive.token, ...pushSubscription(), userAgent: CHROME_UA });
    expect(kept.statusCode).toBe(200);
    expect(await row(inactive.id)).toMatchObject({ status: 'inactive', status_reason: 'operator' });
  });

  it("answers 409 with the subscriber that holds the endpoint, changing neither", async () => {
    const first = await register();
    const second = await register();
    const res = await post('/subscribers/push-subscription', { token: second.token, ...first.subscription, userAgent: CHROME_UA });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ code: 'subscriber_exists', subscriber: { id: first.id, token: first.token } });
    expect((await row(second.id)).endpoint).toBe(second.subscription.endpoint);
  });

  it('validates the subscription as registration does, and 404s an unknown token', async () => {
    const { token } = await register();
    const bad = await post('/subscribers/push-subscription', { token, ...pushSubscription(), endpoint: 'https://10.0.0.1/push', userAgent: CHROME_UA });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().details).toEqual(expect.arrayContaining([expect.objectContaining({ field: 'endpoint' })]));
    const unknown = await post('/subscribers/push-subscription', { token: 'st_nobody', ...pushSubscription(), userAgent: CHROME_UA });
    expect(unknown.statusCode).toBe(404);
  });

  it("does not reach another project's subscriber, nor a live one from a test key", async () => {
    const other = await createTenant(t);
    const { id, token, subscription } = await register();
    expect((await post('/subscribers/push-subscription', { token, ...pushSubscription(), userAgent: CHROME_UA }, other.live)).statusCode).toBe(404);
    expect((await post('/subscribers/push-subscription', { token, ...pushSubscription(), userAgent: CHROME_UA }, owner.test)).statusCode).toBe(404);
    expect((await row(id)).endpoint).toBe(subscription.endpoint);
  });
});

describe('POST /subscribers/unsubscribe', () => {
  it('takes the subscriber out of push, idempotently, and transactional sends say so', async () => {
    const { id, token } = await register();
    const first = await post('/subscribers/unsubscribe', { token });
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json()).toMatchObject({ id, status: 'unsubscribed' });
    expect(await row(id)).toMatchObject({ status: 'unsubscribed', status_reason: 'unsubscribed_by_subscriber' });
    expect((await post('/subscribers/unsubscribe', { token })).json()).toMatchObject({ id, status: 'unsubscribed' });

    const send = await post('/transactional/send', { token, title: 'Hi', body: 'there' }, owner.live);
    expect(send.json()).toMatchObject({ subscriberFound: true, delivered: false, reason: 'subscriber_unsubscribed' });
  });

  it('keeps an inactive status, and 404s a token of another project', async () => {
    const { id, token } = await register();
    await t.database.pool.query(`UPDATE subscribers SET status = 'inactive' WHERE id = $1`, [id]);
    expect((await post('/subscribers/unsubscribe', { token })).json()).toMatchObject({ status: 'inactive' });
    const other = await createTenant(t);
    expect((await post('/subscribers/unsubscribe', { token }, other.live)).statusCode).toBe(404);
  });
});
