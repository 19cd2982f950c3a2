// Invitations emailed through the organization's sending project, a real SMTP peer receiving: the words, the link that
// works, nothing tracked or counted; and the invitation still made, its link to copy, when no project can send or the
// provider refuses.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmailWorld, type EmailWorld } from '../../../test/email-world.js';
import type { Tenant } from '../../../test/fixtures.js';
import type { TestApp } from '../../../test/harness.js';
import type { SmtpPeer } from '../../../test/smtp-peer.js';
import { randomToken } from '../../shared/secrets.js';

const DOMAIN = 'mail.example.com';
let world: EmailWorld;
let t: TestApp;
let peer: SmtpPeer;
let sender: Tenant;
let silent: Tenant;

interface Issued {
  token: string;
  acceptUrl: string;
  expiresAt: string;
  emailed: boolean;
  emailedFrom: string | null;
  emailProblem: string | null;
}

beforeAll(async () => {
  world = await startEmailWorld({ domain: DOMAIN, tenants: 2 });
  ({ t, peer } = world);
  [sender, silent] = world.tenants as [Tenant, Tenant];
  // Names a merge tag engine or an HTML reader would act on: they must arrive as written.
  await t.database.pool.query('UPDATE organizations SET name = $1 WHERE id = $2', ['Acme <b>{{ email }}</b> & Co', sender.orgId]);
  await t.database.pool.query('UPDATE users SET name = $1 WHERE id = $2', ['Ada {{ first_name }}', sender.userId]);
});
afterAll(() => world?.close());

const newEmail = () => `invitee-${randomToken(8)}@example.org`;
const count = async (table: string) => (await t.database.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)).rows[0]!.n;

async function invite(who: Tenant, email: string): Promise<Issued> {
  const res = await t.app.inject({ method: 'POST', url: '/invitations', headers: who.jwt, payload: { email, role: 'ADMIN' } });
  expect(res.statusCode, res.body).toBe(202);
  return res.json<Issued>();
}

describe('an invitation of an organization with a project that can send email', () => {
  it('is emailed to the invitee from no-reply@ the sending domain, untracked, uncounted, names as written, and its link joins', async () => {
    const email = newEmail();
    const [messages, transactional] = [await count('messages'), await count('transactional_sends')];
    const issued = await invite(sender, email);
    expect(issued).toMatchObject({ emailed: true, emailedFrom: `no-reply@${DOMAIN}`, emailProblem: null });

    const [mail] = peer.received(email);
    expect(mail, 'the invitation reached the SMTP peer').toBeDefined();
    const { parsed } = mail!;
    expect(parsed.subject).toBe('Ada {{ first_name }} invited you to Acme <b>{{ email }}</b> & Co on Herald');
    expect(parsed.from?.value[0]?.address).toBe(`no-reply@${DOMAIN}`);
    expect(mail!.dkim.result).toBe('pass');
    expect(parsed.text).toContain(issued.acceptUrl);
    expect(parsed.text).toContain('on Herald as an admin.');
    expect(parsed.text).toContain('Acme <b>{{ email }}</b> & Co');
    expect(parsed.text).toMatch(/expires on \d+ \w+ \d{4}/);
    const html = String(parsed.html);
    expect(html).toContain('Acme &lt;b&gt;{{ email }}&lt;/b&gt; &amp; Co');
    expect(html).toContain(`href="${issued.acceptUrl}"`);
    // Account mail: no tracked link, no open pixel, no unsubscribe footer or header.
    expect(mail!.raw.toString()).not.toMatch(/\/e\/(open|click)\//);
    expect(html).not.toContain('<img');
    expect(mail!.raw.toString()).not.toMatch(/unsubscribe/i);
    expect(parsed.headers.get('auto-submitted')).toBe('auto-generated');
    expect([await count('messages'), await count('transactional_sends')]).toEqual([messages, transactional]);

    const token = /#token=([^\s"<]+)/.exec(parsed.text ?? '')![1]!;
    const accepted = await t.app.inject({ method: 'POST', url: '/invitations/accept', payload: { token, name: 'Invitee', password: 'a long enough password' } });
    expect(accepted.statusCode, accepted.body).toBe(200);
  });

  it('is still made, with its link, when the provider refuses the mail: the answer says why', async () => {
    const email = newEmail();
    peer.respond(email, { code: 550 });
    const issued = await invite(sender, email);
    expect(issued).toMatchObject({ emailed: false, emailedFrom: null });
    expect(issued.emailProblem).toMatch(/email provider .* did not take it \(recipient_bounced\)/);
    expect(peer.received(email)).toHaveLength(0);
    const accepted = await t.app.inject({ method: 'POST', url: '/invitations/accept', payload: { token: issued.token, name: 'Invitee', password: 'a long enough password' } });
    expect(accepted.statusCode, accepted.body).toBe(200);
  });
});

describe('an invitation of an organization with no project that can send email', () => {
  it('is not emailed, and the answer says why and carries the link to copy', async () => {
    const email = newEmail();
    const issued = await invite(silent, email);
    expect(issued).toMatchObject({ emailed: false, emailedFrom: null, acceptUrl: expect.stringContaining('/app/join#token=') });
    expect(issued.emailProblem).toBe(
      'No project of this organization can send email yet: a project needs an email provider and a verified sending domain.',
    );
    expect(peer.transmitted(email)).toHaveLength(0);
  });
});
