// A local Amazon SES (API v2) for tests: checks each request's SigV4 signature, answers GetAccount and SendEmail as
// programmed, rewrites Message-ID and Date as SES does, then parses and DKIM-verifies what it would deliver.
import { createHash, createHmac, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignatureV4 } from '@smithy/signature-v4';
import { simpleParser, type ParsedMail } from 'mailparser';
import { dkimVerdict, type DkimRecord, type ReceivedMail } from './smtp-peer.js';

/** What SES answers a recipient's next send: accept, or an error (`TooManyRequestsException`, `MessageRejected` …). */
export type SesAnswer = 'ok' | { status: number; error: string };

export interface SesMail {
  /** The id SES answered with. */
  messageId: string;
  from: string;
  to: string[];
  configurationSet: string | undefined;
  /** The message as SES would deliver it: its Message-ID and Date replaced. */
  raw: Buffer;
  parsed: ParsedMail;
  dkim: ReceivedMail['dkim'];
  /** When SES took it (ms since the epoch). */
  at: number;
}

/** What GetAccount reports. */
export interface SesAccountState {
  productionAccess: boolean;
  maxSendRate: number;
  max24HourSend: number;
  sendingEnabled: boolean;
}

export interface SesPeer {
  /** SES_ENDPOINT. */
  url: string;
  account: SesAccountState;
  /** The DKIM record receivers find in DNS (settable once the sending domain has its key). */
  dkim: DkimRecord | undefined;
  /** Accepted sends, in order. */
  readonly messages: SesMail[];
  /** Every request signed with the right key, by operation, with the region it was signed for. */
  readonly requests: { operation: string; region: string }[];
  /** Requests refused for their signature. */
  forged: number;
  respond(address: string, ...answers: SesAnswer[]): void;
  /** Send attempts to an address, accepted or not. */
  attempts(address: string): number;
  close(): Promise<void>;
}

const bytes = (data: string | ArrayBuffer | ArrayBufferView) =>
  typeof data === 'string' ? data : ArrayBuffer.isView(data) ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength) : new Uint8Array(data);

/** node:crypto behind the hash interface the signer takes. */
class NodeSha256 {
  private readonly hash;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(secret));
  }
  update(data: string | ArrayBuffer | ArrayBufferView) {
    this.hash.update(bytes(data));
  }
  async digest() {
    return new Uint8Array(this.hash.digest());
  }
}

/** The request's SigV4 signature recomputed with the peer's secret; the region it names, when it holds. */
async function verifiedRegion(request: IncomingMessage, body: Buffer, credentials: { accessKeyId: string; secretAccessKey: string }): Promise<string | undefined> {
  const match = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/\d{8}\/([^/]+)\/ses\/aws4_request, SignedHeaders=([^,]+), Signature=[0-9a-f]{64}$/.exec(request.headers.authorization ?? '');
  const stamp = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(String(request.headers['x-amz-date'] ?? ''));
  if (!match || !stamp || match[1] !== credentials.accessKeyId) return undefined;
  const region = match[2]!;
  const headers = Object.fromEntries(match[3]!.split(';').map((name) => [name, String(request.headers[name] ?? '')]));
  const url = new URL(request.url!, `http://${request.headers.host}`);
  const signer = new SignatureV4({ credentials, region, service: 'ses', sha256: NodeSha256 });
  const signed = await signer.sign(
    { method: request.method!, protocol: 'http:', hostname: url.hostname, port: Number(url.port), path: url.pathname, query: Object.fromEntries(url.searchParams), headers, body },
    { signingDate: new Date(Date.UTC(+stamp[1]!, +stamp[2]! - 1, +stamp[3]!, +stamp[4]!, +stamp[5]!, +stamp[6]!)) },
  );
  return signed.headers.authorization === request.headers.authorization ? region : undefined;
}

/** SES sets its own Message-ID and Date on every message it takes. */
function asSesDelivers(raw: Buffer, messageId: string): Buffer {
  const text = raw.toString('latin1');
  const end = text.indexOf('\r\n\r\n');
  const head = text
    .slice(0, end)
    .replace(/^(Message-ID|Date):.*(\r\n[ \t].*)*\r\n?/gim, '')
    .replace(/\r\n$/, '');
  return Buffer.from(`${head}\r\nMessage-ID: <${messageId}@eu-west-1.amazonses.com>\r\nDate: ${new Date().toUTCString()}${text.slice(end)}`, 'latin1');
}

export async function startSesPeer(options: { credentials: { accessKeyId: string; secretAccessKey: string }; dkim?: DkimRecord; account?: Partial<SesAccountState> }): Promise<SesPeer> {
  const answers = new Map<string, SesAnswer[]>();
  const attempts = new Map<string, number>();
  const peer = {
    account: { productionAccess: true, maxSendRate: 14, max24HourSend: 50_000, sendingEnabled: true, ...options.account },
    dkim: options.dkim,
    messages: [] as SesMail[],
    requests: [] as { operation: string; region: string }[],
    forged: 0,
  };
  const reply = (response: ServerResponse, status: number, body: unknown, error?: string) => {
    response.writeHead(status, { 'content-type': 'application/json', ...(error ? { 'x-amzn-errortype': error } : {}) });
    response.end(JSON.stringify(body));
  };

  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const region = await verifiedRegion(request, body, options.credentials);
    if (!region) {
      peer.forged++;
      return reply(response, 403, { message: 'The request signature we calculated does not match the signature you provided.' }, 'SignatureDoesNotMatchException');
    }
    if (request.method === 'GET' && request.url === '/v2/email/account') {
      peer.requests.push({ operation: 'GetAccount', region });
      const { productionAccess, maxSendRate, max24HourSend, sendingEnabled } = peer.account;
      return reply(response, 200, {
        ProductionAccessEnabled: productionAccess,
        SendingEnabled: sendingEnabled,
        SendQuota: { Max24HourSend: max24HourSend, MaxSendRate: maxSendRate, SentLast24Hours: peer.messages.length },
      });
    }
    if (request.method === 'POST' && request.url === '/v2/email/outbound-emails') {
      peer.requests.push({ operation: 'SendEmail', region });
      const input = JSON.parse(body.toString('utf8')) as {
        FromEmailAddress: string;
        Destination: { ToAddresses: string[] };
        Content: { Raw?: { Data: string } };
        ConfigurationSetName?: string;
      };
      const to = input.Destination.ToAddresses.map((address) => address.toLowerCase());
      for (const address of to) attempts.set(address, (attempts.get(address) ?? 0) + 1);
      const answer = answers.get(to[0]!)?.shift() ?? 'ok';
      if (answer !== 'ok') return reply(response, answer.status, { message: `${answer.error} for ${to[0]}` }, answer.error);
      if (!input.Content.Raw) return reply(response, 400, { message: 'only raw content is expected' }, 'BadRequestException');
      const at = Date.now();
      const messageId = `0100019${randomUUID().replace(/-/g, '')}-000000`;
      const raw = asSesDelivers(Buffer.from(input.Content.Raw.Data, 'base64'), messageId);
      const [parsed, dkim] = await Promise.all([simpleParser(raw), dkimVerdict(raw, peer.dkim)]);
      peer.messages.push({ messageId, from: input.FromEmailAddress, to, configurationSet: input.ConfigurationSetName, raw, parsed, dkim, at });
      return reply(response, 200, { MessageId: messageId });
    }
    reply(response, 404, { message: `${request.method} ${request.url} is not an SES operation this peer knows` }, 'NotFoundException');
  };

  const server = createServer((request, response) => {
    handle(request, response).catch((error: Error) => reply(response, 500, { message: error.message }, 'InternalServiceErrorException'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(peer, {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    respond: (address: string, ...next: SesAnswer[]) => answers.set(address.toLowerCase(), [...(answers.get(address.toLowerCase()) ?? []), ...next]),
    attempts: (address: string) => attempts.get(address.toLowerCase()) ?? 0,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}
