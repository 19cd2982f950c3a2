// A local Twilio Messages API for tests: checks Basic auth and the form fields, answers as Twilio does (SM… sids,
// error JSON), and builds signed status callbacks and inbound messages — and forged ones — for Herald.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { twilioSignature } from '../src/delivery/channels/sms/twilio-signature.js';

/** One account the peer knows: its SID and auth token, and optionally an API key that may send for it. */
export interface TwilioTestAccount {
  accountSid: string;
  authToken: string;
  apiKey?: { sid: string; secret: string } | undefined;
}

export interface TwilioMessage {
  sid: string;
  accountSid: string;
  to: string;
  from: string | undefined;
  messagingServiceSid: string | undefined;
  body: string;
  statusCallback: string;
  /** When the peer took it (ms since the epoch). */
  at: number;
}

/** What the peer answers a number's next sends: Twilio's error code with its HTTP status. */
export interface TwilioError {
  status: number;
  code: number;
  message: string;
}

/** A request Herald would receive from Twilio: the full URL it was given, the signature header, the form body. */
export interface SignedRequest {
  url: string;
  headers: Record<string, string>;
  payload: string;
}

export interface TwilioPeer {
  /** TWILIO_BASE_URL. */
  url: string;
  messages: TwilioMessage[];
  /** Requests refused before a message was made (bad auth, bad fields), with why. */
  refusals: string[];
  /** Programs the answer to every send to `to` (undefined: accept again). */
  answer(to: string, error: TwilioError | undefined): void;
  /** A status callback for a message, signed with its account's token (or `forgeWith` another). */
  statusCallback(message: TwilioMessage, status: string, errorCode?: number, forgeWith?: string): SignedRequest;
  /** An inbound message from `from` to one of a project's numbers, posted to `url`. */
  inbound(url: string, account: TwilioTestAccount, from: string, to: string, body: string): SignedRequest;
  close(): Promise<void>;
}

const E164 = /^\+[1-9]\d{6,14}$/;
const sid = (prefix: string) => prefix + randomBytes(16).toString('hex');

export const newTwilioAccount = (withApiKey = false): TwilioTestAccount => ({
  accountSid: sid('AC'),
  authToken: randomBytes(16).toString('hex'),
  apiKey: withApiKey ? { sid: sid('SK'), secret: randomBytes(16).toString('hex') } : undefined,
});

function signed(url: string, authToken: string, params: Record<string, string>): SignedRequest {
  const form = new URLSearchParams(params);
  return {
    url,
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': twilioSignature(authToken, url, form) },
    payload: form.toString(),
  };
}

export async function startTwilioPeer(accounts: TwilioTestAccount[]): Promise<TwilioPeer> {
  const messages: TwilioMessage[] = [];
  const refusals: string[] = [];
  const answers = new Map<string, TwilioError>();

  const reply = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const refuse = (res: ServerResponse, status: number, code: number, message: string) => {
    refusals.push(`${code}: ${message}`);
    reply(res, status, { code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status });
  };

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const match = /^\/2010-04-01\/Accounts\/(AC[0-9a-f]{32})\/Messages\.json$/.exec(req.url ?? '');
    if (req.method !== 'POST' || !match) return refuse(res, 404, 20404, 'The requested resource was not found');
    const account = accounts.find((a) => a.accountSid === match[1]);
    const [user, pass] = Buffer.from((req.headers.authorization ?? '').replace(/^Basic /, ''), 'base64').toString().split(':');
    const authorized = account && ((user === account.accountSid && pass === account.authToken) || (account.apiKey && user === account.apiKey.sid && pass === account.apiKey.secret));
    if (!authorized) return refuse(res, 401, 20003, 'Authenticate');
    if (req.headers['content-type'] !== 'application/x-www-form-urlencoded') return refuse(res, 400, 20001, 'not a form');
    const form = new URLSearchParams(Buffer.concat(chunks).toString());
    const to = form.get('To') ?? '';
    const from = form.get('From') ?? undefined;
    const service = form.get('MessagingServiceSid') ?? undefined;
    const body = form.get('Body') ?? '';
    const statusCallback = form.get('StatusCallback') ?? '';
    if ((from === undefined) === (service === undefined)) return refuse(res, 400, 21603, 'A From or MessagingServiceSid is required, not both');
    if (body === '') return refuse(res, 400, 21602, 'Message body is required');
    if (!statusCallback.startsWith('https://')) return refuse(res, 400, 21609, 'Invalid StatusCallback');
    const programmed = answers.get(to);
    if (programmed) return refuse(res, programmed.status, programmed.code, programmed.message);
    if (!E164.test(to)) return refuse(res, 400, 21211, `The 'To' number ${to} is not a valid phone number.`);
    const message: TwilioMessage = { sid: sid('SM'), accountSid: account.accountSid, to, from, messagingServiceSid: service, body, statusCallback, at: Date.now() };
    messages.push(message);
    reply(res, 201, { sid: message.sid, account_sid: message.accountSid, to, from: from ?? null, messaging_service_sid: service ?? null, body, status: 'queued', num_segments: '1' });
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => reply(res, 500, { code: 20500, message: String(error) }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    messages,
    refusals,
    answer: (to, error) => (error ? answers.set(to, error) : answers.delete(to)),
    statusCallback(message, status, errorCode, forgeWith) {
      const account = accounts.find((a) => a.accountSid === message.accountSid)!;
      const params: Record<string, string> = { AccountSid: account.accountSid, MessageSid: message.sid, SmsSid: message.sid, MessageStatus: status, SmsStatus: status, To: message.to };
      if (message.from !== undefined) params.From = message.from;
      if (errorCode !== undefined) params.ErrorCode = String(errorCode);
      return signed(message.statusCallback, forgeWith ?? account.authToken, params);
    },
    inbound: (url, account, from, to, body) =>
      signed(url, account.authToken, { AccountSid: account.accountSid, MessageSid: sid('SM'), SmsSid: sid('SM'), From: from, To: to, Body: body, NumSegments: '1' }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
