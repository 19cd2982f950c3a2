// Email tests' common setup through the API: a sending domain verified against the local DNS server, the DKIM record
// a receiving peer checks, and the project's SMTP provider pointed at a local peer.
import { expect } from 'vitest';
import type { EmailDomain } from '../src/modules/email-domains/email-domain.service.js';
import type { DnsServer } from './dns-server.js';
import type { Tenant } from './fixtures.js';
import type { TestApp } from './harness.js';
import type { DkimRecord, SmtpPeer } from './smtp-peer.js';

/** Adds `domain` to the tenant's project, publishes the records it asks for on `dns`, and verifies it. */
export async function verifiedDomain(t: TestApp, dns: DnsServer, who: Tenant, domain: string): Promise<EmailDomain> {
  const added = await t.app.inject({ method: 'POST', url: `/projects/${who.projectId}/email-domains`, headers: who.jwt, payload: { domain } });
  expect(added.statusCode, added.body).toBe(201);
  const created = added.json<EmailDomain>();
  for (const record of created.records) if (record.checked) dns.setTxt(record.name, record.value);
  const verified = await t.app.inject({ method: 'POST', url: `/projects/${who.projectId}/email-domains/${created.id}/verify`, headers: who.jwt });
  expect(verified.json<EmailDomain>().status).toBe('verified');
  return created;
}

/** The RSA DKIM record a verified domain published, as a receiving peer looks it up. */
export function dkimRecordOf(domain: EmailDomain): DkimRecord {
  const record = domain.records.find((r) => r.purpose === 'dkim')!;
  return { domain: domain.domain, selector: record.name.split('._domainkey.')[0]!, publicKey: /p=([^;\s]+)/.exec(record.value)![1]! };
}

/** Makes `peer` the tenant's SMTP server (`settings` added to its host and port). */
export async function useSmtpPeer(t: TestApp, who: Tenant, peer: SmtpPeer, settings: Record<string, unknown> = {}, credentials?: { user: string; pass: string }): Promise<void> {
  const res = await t.app.inject({
    method: 'PUT',
    url: `/projects/${who.projectId}/channels/email`,
    headers: who.jwt,
    payload: { provider: 'smtp', settings: { host: peer.host, port: peer.port, secure: false, ...settings }, ...(credentials && { credentials }) },
  });
  expect(res.statusCode, res.body).toBe(200);
}
