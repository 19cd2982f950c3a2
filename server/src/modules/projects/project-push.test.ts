// Project push settings through HTTP: deliveryPolicy and vapidSubject validation, and GET /projects/:id/push-config.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWithTwoTenants, type Tenant } from '../../../test/fixtures.js';
import type { TestApp } from '../../../test/harness.js';

let t: TestApp;
let tenant: Tenant;
let other: Tenant;

beforeAll(async () => {
  ({ t, tenant, other } = await startWithTwoTenants());
});
afterAll(() => t.close());

const patch = (settings: Record<string, unknown>, who: Tenant = tenant) =>
  t.app.inject({ method: 'PATCH', url: `/projects/${who.projectId}`, headers: who.jwt, payload: { settings } });

const storedSettings = async () =>
  (await t.database.pool.query('SELECT settings FROM projects WHERE id = $1', [tenant.projectId])).rows[0].settings;

describe('settings.deliveryPolicy and settings.vapidSubject', () => {
  it('stores a valid policy and subject, and shows them', async () => {
    const settings = {
      deliveryPolicy: { frequencyCap: { max: 3, windowSeconds: 86400 }, quietHours: { start: '22:00', end: '07:30' } },
      vapidSubject: 'mailto:push@shop.example',
    };
    const res = await patch(settings);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().settings).toMatchObject(settings);
    expect(await storedSettings()).toMatchObject(settings);
  });

  it('null turns a rule off; the policy is replaced as a whole', async () => {
    await patch({ deliveryPolicy: { frequencyCap: { max: 3, windowSeconds: 3600 }, quietHours: { start: '22:00', end: '07:00' } } });
    const res = await patch({ deliveryPolicy: { quietHours: null } });
    expect(res.statusCode, res.body).toBe(200);
    expect((await storedSettings()).deliveryPolicy).toEqual({ quietHours: null });
  });

  it('accepts an https: subject', async () => {
    expect((await patch({ vapidSubject: 'https://shop.example/contact' })).statusCode).toBe(200);
    expect((await storedSettings()).vapidSubject).toBe('https://shop.example/contact');
  });

  it.each([
    [{ deliveryPolicy: { quietHours: { start: '22:00', end: '22:00' } } }, 'settings.deliveryPolicy.quietHours.end'],
    [{ deliveryPolicy: { quietHours: { start: '24:00', end: '07:00' } } }, 'settings.deliveryPolicy.quietHours.start'],
    [{ deliveryPolicy: { quietHours: { start: '7:00', end: '08:00' } } }, 'settings.deliveryPolicy.quietHours.start'],
    [{ deliveryPolicy: { quietHours: { start: '22:00' } } }, 'settings.deliveryPolicy.quietHours.end'],
    [{ deliveryPolicy: { frequencyCap: { max: 0, windowSeconds: 3600 } } }, 'settings.deliveryPolicy.frequencyCap.max'],
    [{ deliveryPolicy: { frequencyCap: { max: 1.5, windowSeconds: 3600 } } }, 'settings.deliveryPolicy.frequencyCap.max'],
    [{ deliveryPolicy: { frequencyCap: { max: 1, windowSeconds: 59 } } }, 'settings.deliveryPolicy.frequencyCap.windowSeconds'],
    [{ deliveryPolicy: { frequencyCap: { max: 1, windowSeconds: 3600, per: 'user' } } }, 'settings.deliveryPolicy.frequencyCap.per'],
    [{ deliveryPolicy: { snooze: true } }, 'settings.deliveryPolicy.snooze'],
    [{ deliveryPolicy: { channels: { email: { frequencyCap: { max: 0, windowSeconds: 3600 } } } } }, 'settings.deliveryPolicy.channels.email.frequencyCap.max'],
    [{ deliveryPolicy: { channels: { sms: { quietHours: { start: '22:00', end: '22:00' } } } } }, 'settings.deliveryPolicy.channels.sms.quietHours.end'],
    [{ deliveryPolicy: { channels: { push: { frequencyCap: null } } } }, 'settings.deliveryPolicy.channels.push'],
    [{ deliveryPolicy: null }, 'settings.deliveryPolicy'],
    [{ vapidSubject: 'http://shop.example' }, 'settings.vapidSubject'],
    [{ vapidSubject: 'push@shop.example' }, 'settings.vapidSubject'],
    [{ vapidSubject: 'mailto:not-an-address' }, 'settings.vapidSubject'],
  ])('422 naming the field: %j', async (settings, field) => {
    const before = await storedSettings();
    const res = await patch(settings);
    expect(res.statusCode, res.body).toBe(422);
    expect(res.json().details.map((d: { field: string }) => d.field)).toEqual([field]);
    expect(await storedSettings()).toEqual(before);
  });

  it('POST /projects validates the same way', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/projects',
      headers: tenant.jwt,
      payload: { name: 'P', settings: { deliveryPolicy: { quietHours: { start: '01:00', end: '01:00' } } } },
    });
    expect(res.statusCode).toBe(422);
  });
});

describe('GET /projects/:id/push-config', () => {
  const get = (headers: Record<string, string>, projectId = tenant.projectId) =>
    t.app.inject({ method: 'GET', url: `/projects/${projectId}/push-config`, headers });

  it('answers the project id and VAPID public key to its live key, test key and members', async () => {
    const project = (await t.app.inject({ method: 'GET', url: `/projects/${tenant.projectId}`, headers: tenant.jwt })).json();
    for (const headers of [tenant.live, tenant.test, tenant.jwt]) {
      const res = await get(headers);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({ projectId: tenant.projectId, vapidPublicKey: project.vapidPublicKey });
    }
  });

  it('another project’s key → 403; another organization’s user or an unknown project → 404; no credentials → 401', async () => {
    expect((await get(other.live)).statusCode).toBe(403);
    expect((await get(other.live)).json()).toMatchObject({ message: 'Resource belongs to a different project' });
    expect((await get(other.jwt)).statusCode).toBe(404);
    expect((await get(other.jwt)).json()).toMatchObject({ message: 'Project not found' });
    expect((await get(tenant.jwt, 'prj_unknown')).statusCode).toBe(404);
    expect((await get({})).statusCode).toBe(401);
  });
});
