// The world an email test sends in: a local DNS server, the app, tenants, a verified sending domain, a real SMTP peer
// as the first tenant's provider, and the background (worker and delivery lanes).
import type { Env } from '../src/config.js';
import { startBackground, type Background } from './background.js';
import { startDnsServer, type DnsServer } from './dns-server.js';
import { dkimRecordOf, useSmtpPeer, verifiedDomain } from './email-setup.js';
import { createTenant, type Tenant } from './fixtures.js';
import { startTestApp, type TestApp, type TestAppOptions } from './harness.js';
import { startSmtpPeer, type SmtpPeer } from './smtp-peer.js';

export interface EmailWorld {
  t: TestApp;
  dns: DnsServer;
  peer: SmtpPeer;
  /** `tenants[0]` owns the verified domain and sends through `peer`. */
  tenants: Tenant[];
  close(): Promise<void>;
}

export interface EmailWorldOptions {
  /** The first tenant's sending domain, verified against `dns`. */
  domain: string;
  tenants?: number;
  /** Whether the peer checks each message's DKIM signature against the domain's record (default: true). */
  dkim?: boolean;
  env?: Env;
  app?: TestAppOptions;
}

export async function startEmailWorld(options: EmailWorldOptions): Promise<EmailWorld> {
  const dns = await startDnsServer();
  const t = await startTestApp({ DNS_SERVERS: dns.address, PUBLIC_URL: 'https://herald.example.com', DELIVERY_POLL_INTERVAL_MS: '50', ...options.env }, options.app);
  const tenants = await Promise.all(Array.from({ length: options.tenants ?? 1 }, () => createTenant(t)));
  const domain = await verifiedDomain(t, dns, tenants[0]!, options.domain);
  const peer = await startSmtpPeer(options.dkim === false ? {} : { dkim: dkimRecordOf(domain) });
  await useSmtpPeer(t, tenants[0]!, peer);
  const background: Background = await startBackground(t);
  return {
    t,
    dns,
    peer,
    tenants,
    async close() {
      await background.stop();
      await t.close();
      await peer.close();
      await dns.close();
    },
  };
}
