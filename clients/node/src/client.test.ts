// @herald/client against a real Herald listening on a port: typed calls, Idempotency-Key on sends, errors as HeraldError.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROME_UA, createTenant, pushSubscription, type Tenant } from '../../../server/test/fixtures.js';
import { startTestApp, type TestApp } from '../../../server/test/harness.js';
import { Herald, HeraldError } from './index.js';

let t: TestApp;
let owner: Tenant;
let baseUrl: string;
let live: Herald;
let sandbox: Herald;
/** Idempotency-Key of every transactional send the sandbox client made, as sent on the wire. */
const sentKeys: (string | null)[] = [];

beforeAll(async () => {
  t = await startTestApp();
  owner = await createTenant(t);
  baseUrl = await t.app.listen({ host: '127.0.0.1', port: 0 });
  live = new Herald({ baseUrl, apiKey: owner.liveKey });
  sandbox = new Herald({
    baseUrl: `${baseUrl}/`,
    apiKey: owner.testKey,
    fetch: (request) => {
      if (new URL(request.url).pathname === '/transactional/send') sentKeys.push(request.headers.get('idempotency-key'));
      return fetch(request);
    },
  });
});
afterAll(() => t.close());

const registration = () => ({ projectId: owner.projectId, ...pushSubscription(), userAgent: CHROME_UA });

describe('subscribers', () => {
  it('registers, identifies, tags, updates, reads and deletes a subscriber', async () => {
    const registered = await live.subscribers.register(registration());
    expect(registered).toMatchObject({ projectId: owner.projectId, status: 'active' });
    await live.subscribers.identify({ token: registered.token, externalId: 'user-1' });
    expect(await live.subscribers.tag({ token: registered.token, tags: ['vip', 'beta'] })).toMatchObject({ tags: ['vip', 'beta'] });
    expect(await live.subscribers.untag({ token: registered.token, tags: ['beta'] })).toMatchObject({ tags: ['vip'] });
    await live.subscribers.seen(registered.token);
    await live.subscribers.update(registered.id, { email: 'one@example.com', attributes: { plan: 'pro' } });
    const read = await live.subscribers.get(registered.id);
    expect(read).toMatchObject({ id: registered.id, externalId: 'user-1', tags: ['vip'], email: 'one@example.com', attributes: { plan: 'pro' } });
    expect((await live.subscribers.getByToken(registered.token)).id).toBe(registered.id);
    expect((await live.subscribers.byExternalId(owner.projectId, 'user-1')).data.map((s) => s.id)).toEqual([registered.id]);
    const page = await live.subscribers.list(owner.projectId, { tag: 'vip', pageSize: 10 });
    expect(page).toMatchObject({ total: 1, page: 1, pageSize: 10 });
    await live.subscribers.remove(registered.id);
    await expect(live.subscribers.get(registered.id)).rejects.toMatchObject({ statusCode: 404, code: 'not_found' });
  });

  it('a duplicate endpoint throws a HeraldError whose body carries the existing subscriber', async () => {
    const body = registration();
    const first = await live.subscribers.register(body);
    const error = await live.subscribers.register(body).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HeraldError);
    expect(error).toMatchObject({ statusCode: 409, code: 'subscriber_exists', body: { subscriber: { id: first.id } } });
  });
});

describe('segments and campaigns', () => {
  it('saves a segment, counts its reach, and runs a draft campaign to it through edit and delete', async () => {
    await live.subscribers.register(registration());
    const segment = await live.segments.create({ projectId: owner.projectId, name: 'Everyone', filters: {} });
    expect((await live.segments.list(owner.projectId)).data.map((s) => s.id)).toContain(segment.id);
    expect(await live.segments.reach({ projectId: owner.projectId, segmentId: segment.id })).toMatchObject({ count: 2 });
    await live.segments.update(segment.id, { name: 'All of them' });
    expect((await live.segments.get(segment.id)).name).toBe('All of them');

    const draft = await live.campaigns.create({
      name: 'Spring sale',
      projectId: owner.projectId,
      content: { title: 'Spring sale', body: '20% off' },
      segment: { savedSegmentId: segment.id },
      schedule: { mode: 'draft' },
    });
    expect(draft.status).toBe('draft');
    await live.campaigns.update(draft.id, { name: 'Spring sale (final)' });
    expect((await live.campaigns.get(draft.id)).name).toBe('Spring sale (final)');
    expect((await live.campaigns.list(owner.projectId)).data.map((c) => c.id)).toContain(draft.id);
    await live.campaigns.remove(draft.id);
    await live.segments.remove(segment.id);
    await expect(live.campaigns.get(draft.id)).rejects.toMatchObject({ statusCode: 404 });
  });
});

describe('transactional sends', () => {
  it('sends with a generated Idempotency-Key, different for each send', async () => {
    const { token } = await sandbox.subscribers.register(registration());
    const first = await sandbox.transactional.send({ token, title: 'Hello', body: 'World' });
    const second = await sandbox.transactional.send({ token, title: 'Hello', body: 'World' });
    expect(first).toMatchObject({ success: true, subscriberFound: true });
    expect(sentKeys.slice(-2)).toEqual([expect.stringMatching(/^[0-9a-f-]{36}$/), expect.stringMatching(/^[0-9a-f-]{36}$/)]);
    expect(sentKeys.at(-1)).not.toBe(sentKeys.at(-2));
    expect(second).toMatchObject({ success: true });
  });

  it('a repeat with the same key is answered once, without a second send', async () => {
    const { token } = await sandbox.subscribers.register(registration());
    const body = { token, title: 'Once', body: 'Only once' };
    const first = await sandbox.transactional.send(body, { idempotencyKey: 'order-42' });
    const again = await sandbox.transactional.send(body, { idempotencyKey: 'order-42' });
    expect(again).toEqual(first);
    expect(sentKeys.slice(-2)).toEqual(['order-42', 'order-42']);
    const log = await sandbox.transactional.list(owner.projectId, { pageSize: 100 });
    expect(log.data.filter((row) => row.idempotencyKey === 'order-42')).toHaveLength(1);
    // The generated keys were recorded with their sends.
    expect(log.data.map((row) => row.idempotencyKey)).toEqual(expect.arrayContaining(sentKeys.slice(0, 2)));
  });
});

describe('errors', () => {
  it('a 422 carries the envelope with its details', async () => {
    const error = await live.segments.create({ projectId: owner.projectId, name: '', filters: {} }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HeraldError);
    expect(error).toMatchObject({
      name: 'HeraldError',
      statusCode: 422,
      code: 'validation_failed',
      message: 'Validation failed',
      requestId: expect.any(String),
      details: [{ field: 'name', error: expect.any(String) }],
    });
  });

  it('a bad key is a 401 HeraldError with the request id Herald logged', async () => {
    const stranger = new Herald({ baseUrl, apiKey: 'hrd_live_00000000000000000000000000000000' });
    const error = (await stranger.subscribers.list(owner.projectId).catch((e: unknown) => e)) as HeraldError;
    expect(error).toMatchObject({ statusCode: 401, code: 'unauthorized', message: 'Invalid API key' });
    expect(error.requestId).toMatch(/\S/);
  });

  it('a publishable key used with the server client is refused with its own code', async () => {
    const created = await t.app.inject({
      method: 'POST',
      url: `/projects/${owner.projectId}/api-keys`,
      headers: owner.jwt,
      payload: { name: 'browser', mode: 'live', scope: 'publishable' },
    });
    const browserKey = new Herald({ baseUrl, apiKey: created.json<{ key: string }>().key });
    await expect(browserKey.campaigns.list(owner.projectId)).rejects.toMatchObject({ statusCode: 403, code: 'publishable_key_forbidden' });
  });
});
