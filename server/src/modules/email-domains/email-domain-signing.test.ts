// Mail signs with the project's own verified sending domain, as the services wire it (no key injected): unsigned until
// the domain is verified, then DKIM-signed as the domain for a sender on it or on a subdomain, checked by a real verifier.
import { inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type DnsServer } from '../../../test/dns-server.js';
import { createTenant, type Tenant } from '../../../test/fixtures.js';
import { startTestApp, type TestApp } from '../../../test/harness.js';
import { startSmtpPeer, type ReceivedMail, type SmtpPeer } from '../../../test/smtp-peer.js';
import { subscribers } from '../../db/schema.js';
import { newId } from '../../shared/ids.js';
import { channelAudience } from '../segments/index.js';

interface DomainRecord {
  purpose: string;
  name: string;
  value: string;
  checked: boolean;
}

let dns: DnsServer;
let peer: SmtpPeer;
let t: TestApp;
let tenant: Tenant;
let domain: { id: string; records: DomainRecord[] };
/** A domain with the optional Ed25519 key too. */
let both: { id: string; records: DomainRecord[] };

/** The DKIM record of `purpose` as a receiver finds it in DNS. */
const published = (of: { records: DomainRecord[] }, purpose: 'dkim' | 'dkim_ed25519', domainName: string) => {
  const record = of.records.find((r) => r.purpose === purpose)!;
  return { domain: domainName, selector: record.name.split('.')[0]!, publicKey: /p=([^;\s]+)/.exec(record.value)![1]!, keyType: purpose === 'dkim' ? 'rsa' : 'ed25519' } as const;
};

beforeAll(async () => {
  dns = await startDnsServer();
  t = await startTestApp({ DNS_SERVERS: dns.address, PUBLIC_URL: 'https://herald.example.com', DELIVERY_POLL_INTERVAL_MS: '50' });
  tenant = await createTenant(t);
  const added = await t.app.inject({ method: 'POST', url: `/projects/${tenant.projectId}/email-domains`, headers: tenant.jwt, payload: { domain: 'shop.example' } });
  expect(added.statusCode, added.body).toBe(201);
  domain = added.json();
  const withEd25519 = await t.app.inject({ method: 'POST', url: `/projects/${tenant.projectId}/email-domains`, headers: tenant.jwt, payload: { domain: 'post.example', ed25519: true } });
  both = withEd25519.json();
  peer = await startSmtpPeer({ dkim: [published(domain, 'dkim', 'shop.example'), published(both, 'dkim', 'post.example'), published(both, 'dkim_ed25519', 'post.example')] });
  const configured = await t.app.inject({
    method: 'PUT',
    url: `/projects/${tenant.projectId}/channels/email`,
    headers: tenant.jwt,
    payload: { provider: 'smtp', settings: { host: peer.host, port: peer.port, secure: false } },
  });
  expect(configured.statusCode, configured.body).toBe(200);
  t.services.delivery.start();
});
afterAll(async () => {
  await t.services.delivery.stop();
  await t.services.close();
  await t.close();
  await peer.close();
  await dns.close();
});

let sent = 0;
/** An email from `from` to a new contact, through the engine; resolves with what the SMTP peer received. */
async function mailFrom(from: string): Promise<ReceivedMail> {
  const email = `reader${++sent}@example.org`;
  const contact = await t.app.inject({ method: 'POST', url: '/contacts', headers: tenant.live, payload: { projectId: tenant.projectId, email } });
  const messageId = newId('msg');
  const content = { subject: 'Hello', html: '<p>Hello</p>', from: { email: from } };
  await t.database.db.transaction(async (tx) => {
    const audience = channelAudience({ organizationId: tenant.orgId, projectId: tenant.projectId, sandbox: false }, 'email', inArray(subscribers.id, [contact.json<{ id: string }>().id]));
    await t.services.delivery.queueAudience(tx, { id: messageId, projectId: tenant.projectId, channel: 'email', source: 'campaign', campaignId: null, sandbox: false, content, options: {} }, audience);
  });
  await t.services.delivery.announce();
  const deadline = Date.now() + 10_000;
  while (peer.received(email).length === 0) {
    if (Date.now() > deadline) throw new Error(`no mail reached ${email}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return peer.received(email)[0]!;
}

describe("signing with the project's verified sending domain", () => {
  it('sends unsigned while the domain is not verified', async () => {
    expect((await mailFrom('news@shop.example')).dkim).toMatchObject({ result: 'none' });
  });

  it('signs as the domain once verified, for a sender on it or on a subdomain', async () => {
    for (const r of domain.records) if (r.checked) dns.setTxt(r.name, r.value);
    const verified = await t.app.inject({ method: 'POST', url: `/projects/${tenant.projectId}/email-domains/${domain.id}/verify`, headers: tenant.jwt });
    expect(verified.json()).toMatchObject({ status: 'verified' });
    for (const sender of ['news@shop.example', 'alerts@mail.shop.example']) {
      const mail = await mailFrom(sender);
      expect(mail.dkim).toMatchObject({ result: 'pass', signingDomain: 'shop.example' });
      expect(mail.dkim.signedHeaders).toEqual(expect.arrayContaining(['from', 'list-unsubscribe', 'list-unsubscribe-post']));
    }
    // A look-alike domain is not covered: its mail goes unsigned.
    expect((await mailFrom('news@badshop.example')).dkim).toMatchObject({ result: 'none' });
  });

  it('adds the Ed25519 signature (RFC 8463) over the same headers for a domain that has the key, both verifying', async () => {
    for (const r of both.records) if (r.checked) dns.setTxt(r.name, r.value);
    const verified = await t.app.inject({ method: 'POST', url: `/projects/${tenant.projectId}/email-domains/${both.id}/verify`, headers: tenant.jwt });
    expect(verified.json()).toMatchObject({ status: 'verified' });
    const mail = await mailFrom('news@post.example');
    expect(mail.dkim.signatures).toEqual([
      { algorithm: 'ed25519-sha256', result: 'pass' },
      { algorithm: 'rsa-sha256', result: 'pass' },
    ]);
    const heads = mail.raw.toString('latin1').split('\r\n\r\n')[0]!.replace(/\r\n[ \t]+/g, ' ');
    const signedLists = [...heads.matchAll(/^DKIM-Signature:.*?\bh=([^;]+)/gim)].map((m) => m[1]!.replace(/\s/g, '').toLowerCase());
    expect(signedLists).toHaveLength(2);
    for (const list of signedLists) expect(list.split(':')).toEqual(expect.arrayContaining(['from', 'subject', 'list-unsubscribe', 'list-unsubscribe-post']));
  });
});
