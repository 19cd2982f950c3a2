// A 422's field errors in plain words, through the real routes: what to change, never the validator's own text.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWithTenant, type Tenant } from '../../test/fixtures.js';
import type { TestApp } from '../../test/harness.js';

let t: TestApp;
let tenant: Tenant;

beforeAll(async () => {
  ({ t, tenant } = await startWithTenant());
});
afterAll(() => t.close());

const details = async (method: 'POST' | 'PUT' | 'PATCH', url: string, payload: Record<string, unknown>) => {
  const res = await t.app.inject({ method, url, headers: tenant.jwt, payload });
  expect(res.statusCode, res.body).toBe(422);
  return res.json<{ details: { field: string; error: string }[] }>().details;
};

describe('validation errors in plain words', () => {
  it('says what to change for an empty, a too long, a missing and a wrongly typed field', async () => {
    expect(await details('POST', '/projects', { name: '' })).toEqual([{ field: 'name', error: 'must not be empty' }]);
    expect(await details('POST', '/projects', { name: 'x'.repeat(5000) })).toEqual([{ field: 'name', error: 'must be at most 200 characters' }]);
    expect(await details('POST', '/projects', {})).toEqual([{ field: 'name', error: 'is required' }]);
    expect(await details('POST', '/projects', { name: 42 })).toEqual([{ field: 'name', error: 'must be text' }]);
  });

  it('says a number’s bound with its digits grouped, an email and a choice in words', async () => {
    const smtp = { provider: 'smtp', settings: { host: 'smtp.example.com', port: 70000 }, credentials: { username: 'u', password: 'p' } };
    expect(await details('PUT', `/projects/${tenant.projectId}/channels/email`, smtp)).toContainEqual({ field: 'settings.port', error: 'must be at most 65,535' });
    const invite = await t.app.inject({ method: 'POST', url: '/invitations', headers: tenant.jwt, payload: { email: 'not an address', role: 'CAPTAIN' } });
    expect(invite.json<{ details: unknown[] }>().details).toEqual(
      expect.arrayContaining([
        { field: 'email', error: 'must be an email address' },
        { field: 'role', error: 'must be one of "OWNER", "ADMIN", "MEMBER", "VIEWER"' },
      ]),
    );
  });
});
