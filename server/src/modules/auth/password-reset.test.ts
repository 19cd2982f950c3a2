// Password reset by email through HTTP, a real SMTP peer receiving: no account enumeration, the link mailed through a
// project of the user's organization, single use, one hour, replaced by a newer request, and the old password refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmailWorld, type EmailWorld } from '../../../test/email-world.js';
import type { Tenant } from '../../../test/fixtures.js';
import type { TestApp } from '../../../test/harness.js';
import type { SmtpPeer } from '../../../test/smtp-peer.js';

const DOMAIN = 'mail.example.com';
let world: EmailWorld;
let t: TestApp;
let peer: SmtpPeer;
let owner: Tenant;
let silent: Tenant;
/** Added to the clock the services read: a test moves time forward. */
let offsetMs = 0;

beforeAll(async () => {
  world = await startEmailWorld({ domain: DOMAIN, tenants: 2, app: { clock: () => new Date(Date.now() + offsetMs) } });
  ({ t, peer } = world);
  [owner, silent] = world.tenants as [Tenant, Tenant];
});
afterAll(() => world?.close());

const post = (url: string, payload: Record<string, unknown>) => t.app.inject({ method: 'POST', url, payload });
const resets = async (userId: string) =>
  (await t.database.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM password_resets WHERE user_id = $1', [userId])).rows[0]!.n;

/** Asks for a reset, waits until it is handled, and answers the link's token from the newest mail (or undefined). */
async function requestReset(email: string): Promise<string | undefined> {
  const before = peer.received(email).length;
  const res = await post('/auth/password-reset', { email });
  expect(res.statusCode, res.body).toBe(202);
  await t.services.passwordResets.settled();
  const mails = peer.received(email);
  if (mails.length === before) return undefined;
  const text = mails.at(-1)!.parsed.text ?? '';
  return decodeURIComponent(/https:\/\/herald\.example\.com\/app\/reset\?token=([^\s"<]+)/.exec(text)![1]!);
}

const confirm = (token: string, password: string) => post('/auth/password-reset/confirm', { token, password });
const login = (email: string, password: string) => post('/auth/login', { email, password });

function expectInvalid(res: Awaited<ReturnType<typeof post>>) {
  expect(res.statusCode, res.body).toBe(400);
  expect(res.json()).toMatchObject({ code: 'reset_token_invalid' });
}

describe('POST /auth/password-reset', () => {
  it('answers 202 for an unknown address and sends nothing', async () => {
    const before = peer.messages.length;
    expect(await requestReset('nobody-here@example.com')).toBeUndefined();
    expect(peer.messages.length).toBe(before);
    expect((await t.database.pool.query('SELECT 1 FROM password_resets')).rowCount).toBe(0);
  });

  it('emails a single-use link through the organization’s sending project; the new password logs in, the old one no longer', async () => {
    const token = await requestReset(owner.email.toUpperCase());
    expect(token, 'the reset mail reached the SMTP peer').toMatch(/^hrd_rst_/);
    const mail = peer.received(owner.email).at(-1)!;
    expect(mail.parsed.subject).toBe('Reset your Herald password');
    expect(mail.parsed.from?.value[0]?.address).toBe(`no-reply@${DOMAIN}`);
    expect(mail.dkim.result).toBe('pass');
    expect(mail.raw.toString()).not.toMatch(/\/e\/(open|click)\/|unsubscribe/i);

    const weak = await confirm(token!, 'short');
    expect(weak.statusCode).toBe(422);
    expect(weak.json()).toMatchObject({ details: [{ field: 'password' }] });

    expect((await confirm(token!, 'a brand new password')).statusCode).toBe(204);
    expect((await login(owner.email, owner.password)).statusCode).toBe(401);
    expect((await login(owner.email, 'a brand new password')).statusCode).toBe(200);
    expectInvalid(await confirm(token!, 'yet another password'));
    expect((await login(owner.email, 'yet another password')).statusCode).toBe(401);
    owner.password = 'a brand new password';
  });

  it('sends nothing for a second request within a minute; a later one replaces the first link', async () => {
    offsetMs += 61_000;
    const first = await requestReset(owner.email);
    expect(first).toBeDefined();
    expect(await requestReset(owner.email)).toBeUndefined();
    offsetMs += 61_000;
    const second = await requestReset(owner.email);
    expect(second).toBeDefined();
    expectInvalid(await confirm(first!, 'replaced link password'));
    expect((await confirm(second!, 'the second link password')).statusCode).toBe(204);
    owner.password = 'the second link password';
  });

  it('refuses an expired link and an unknown one', async () => {
    offsetMs += 61_000;
    const token = await requestReset(owner.email);
    offsetMs += 60 * 60_000;
    expectInvalid(await confirm(token!, 'too late a password'));
    expectInvalid(await confirm('hrd_rst_unknown', 'any good password'));
    expect((await login(owner.email, owner.password)).statusCode).toBe(200);
  });

  it('sends nothing, still 202, when no organization of the user can send email', async () => {
    const before = peer.messages.length;
    expect(await requestReset(silent.email)).toBeUndefined();
    expect(peer.messages.length).toBe(before);
    expect(await resets(silent.userId)).toBe(1);
  });
});
