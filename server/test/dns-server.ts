// A local DNS server for tests (dns2, UDP and TCP on one loopback port): answers the TXT records a test publishes.
import { createRequire } from 'node:module';
import type { AddressInfo, Server } from 'node:net';

interface Question {
  name: string;
  type: number;
}
interface DnsPacket {
  header: { rcode: number; aa: number };
  questions: Question[];
  answers: unknown[];
}
type Handler = (request: DnsPacket, send: (response: DnsPacket) => void) => void;

interface UdpServer {
  on(event: 'request', handler: Handler): void;
  once(event: 'error', listener: (error: Error) => void): void;
  off(event: 'error', listener: (error: Error) => void): void;
  listen(port: number, address: string): Promise<void>;
  address(): AddressInfo;
  close(done: () => void): void;
}

// dns2 ships no types (CommonJS); this is the part of it the server uses.
const dns2 = createRequire(import.meta.url)('dns2') as {
  Packet: { TYPE: { TXT: number }; CLASS: { IN: number }; createResponseFromRequest(request: DnsPacket): DnsPacket };
  createUDPServer(options: { type: 'udp4' }): UdpServer;
  createTCPServer(): Server & { on(event: 'request', handler: Handler): void };
};

const NXDOMAIN = 3;
const SERVFAIL = 2;

export interface DnsServer {
  /** `127.0.0.1:<port>`: the DNS_SERVERS value that asks this server. */
  address: string;
  /**
   * Publishes TXT records at `name`, replacing those there. A value longer than 255 bytes is split into several
   * character-strings, as DNS providers publish DKIM keys.
   */
  setTxt(name: string, ...values: string[]): void;
  /** Removes every record at `name`: it no longer exists (NXDOMAIN). */
  remove(name: string): void;
  /** While on, every question is answered SERVFAIL (a resolver that cannot answer). */
  failing(on: boolean): void;
  close(): Promise<void>;
}

const split = (value: string) => Buffer.from(value).toString('latin1').match(/[\s\S]{1,255}/g) ?? [''];

export async function startDnsServer(): Promise<DnsServer> {
  const zone = new Map<string, string[][]>();
  let serverFailure = false;
  const handle: Handler = (request, send) => {
    const response = dns2.Packet.createResponseFromRequest(request);
    const [question] = request.questions;
    const records = question && zone.get(question.name.toLowerCase());
    if (serverFailure) response.header.rcode = SERVFAIL;
    else if (!records) response.header.rcode = NXDOMAIN;
    else if (question.type === dns2.Packet.TYPE.TXT) {
      response.header.aa = 1;
      for (const strings of records) {
        response.answers.push({
          name: question.name,
          type: dns2.Packet.TYPE.TXT,
          class: dns2.Packet.CLASS.IN,
          ttl: 0,
          data: strings.map((chunk) => Buffer.from(chunk, 'latin1')),
        });
      }
    }
    send(response);
  };

  // Answers too long for UDP are asked again over TCP, on the same port. TCP takes a free port first; that port's UDP
  // twin can be someone's ephemeral socket, so a clash is retried on another port.
  const { udp, tcp, port } = await bindBoth(handle);

  return {
    address: `127.0.0.1:${port}`,
    setTxt: (name, ...values) => zone.set(name.toLowerCase(), values.map(split)),
    remove: (name) => zone.delete(name.toLowerCase()),
    failing: (on) => {
      serverFailure = on;
    },
    close: async () => {
      await Promise.all([new Promise<void>((resolve) => udp.close(resolve)), new Promise<void>((resolve) => tcp.close(() => resolve()))]);
    },
  };
}

async function bindBoth(handle: Handler, attempts = 20): Promise<{ udp: UdpServer; tcp: Server; port: number }> {
  const tcp = dns2.createTCPServer();
  tcp.on('request', handle);
  await new Promise<void>((resolve, reject) => tcp.once('error', reject).listen(0, '127.0.0.1', resolve));
  const { port } = tcp.address() as AddressInfo;
  const udp = dns2.createUDPServer({ type: 'udp4' });
  udp.on('request', handle);
  try {
    await new Promise<void>((resolve, reject) => {
      udp.once('error', reject);
      void udp.listen(port, '127.0.0.1').then(() => {
        udp.off('error', reject);
        resolve();
      });
    });
    return { udp, tcp, port };
  } catch (error) {
    await new Promise<void>((resolve) => tcp.close(() => resolve()));
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempts <= 1) throw error;
    return bindBoth(handle, attempts - 1);
  }
}
