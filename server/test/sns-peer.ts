// A stand-in for Amazon SNS on 127.0.0.1: its certificate host and subscription confirmations over TLS under a test CA
// that only the agent given to Herald trusts, and messages signed as SNS signs them (SignatureVersion 1 and 2).
import { execFileSync } from 'node:child_process';
import { createSign, randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, createServer, type RequestOptions } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type ConnectionOptions } from 'node:tls';

export interface SnsPeer {
  /** Trusts only this peer's CA, and reaches every host through the peer: Herald's real verification runs over it. */
  agent: Agent;
  region: string;
  /** The signing certificate's URL, on the host Herald pins. */
  certUrl: string;
  /** Subscription tokens confirmed through the SubscribeURL. */
  confirmed: string[];
  /** A signed SNS message of `type` with these fields; `version` 1 (RSA-SHA1) or 2 (RSA-SHA256). */
  sign(fields: Record<string, string>, version?: 1 | 2): Record<string, string>;
  close(): Promise<void>;
}

// The fields SNS signs, in order, for each message type.
const SIGNED = {
  Notification: ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type'],
  SubscriptionConfirmation: ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'],
  UnsubscribeConfirmation: ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'],
} as const;

export async function startSnsPeer(region = 'us-east-1'): Promise<SnsPeer> {
  const dir = mkdtempSync(join(tmpdir(), 'herald-sns-'));
  const host = `sns.${region}.amazonaws.com`;
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '1', '-subj', '/CN=Herald test CA');
  openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'tls.key', '-out', 'tls.csr', '-subj', `/CN=${host}`);
  writeFileSync(join(dir, 'san.cnf'), `subjectAltName=DNS:${host}\n`);
  openssl('x509', '-req', '-in', 'tls.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'tls.pem', '-days', '1', '-extfile', 'san.cnf');
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'signing.key', '-out', 'signing.pem', '-days', '1', '-subj', `/CN=${host}`);
  const read = (name: string) => readFileSync(join(dir, name), 'utf8');
  const [ca, signingKey, signingCert] = [read('ca.pem'), read('signing.key'), read('signing.pem')];
  const certPath = `/SimpleNotificationService-${randomBytes(16).toString('hex')}.pem`;
  const confirmed: string[] = [];

  const server = createServer({ key: read('tls.key'), cert: read('tls.pem') }, (request, response) => {
    const url = new URL(request.url ?? '/', `https://${host}`);
    if (url.pathname === certPath) return response.end(signingCert);
    if (url.searchParams.get('Action') === 'ConfirmSubscription') {
      confirmed.push(url.searchParams.get('Token') ?? '');
      return response.end('<ConfirmSubscriptionResponse/>');
    }
    response.statusCode = 404;
    response.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  class PeerAgent extends Agent {
    override createConnection(options: RequestOptions & ConnectionOptions): Duplex {
      // The name asked for stays the TLS server name, so the certificate is checked against it; only the route changes.
      return connect({ ...options, host: '127.0.0.1', port, servername: options.servername ?? options.host ?? undefined, ca });
    }
  }
  const agent = new PeerAgent({ keepAlive: false });
  const certUrl = `https://${host}${certPath}`;

  return {
    agent,
    region,
    certUrl,
    confirmed,
    sign(fields, version = 1) {
      const message: Record<string, string> = { MessageId: randomUUID(), Timestamp: new Date().toISOString(), ...fields };
      const signer = createSign(version === 1 ? 'RSA-SHA1' : 'RSA-SHA256');
      for (const key of SIGNED[message.Type as keyof typeof SIGNED]) {
        if (key in message) signer.update(`${key}\n${message[key]}\n`);
      }
      return { ...message, SignatureVersion: String(version), Signature: signer.sign(signingKey, 'base64'), SigningCertURL: certUrl };
    },
    async close() {
      agent.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
