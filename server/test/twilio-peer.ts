// A local Twilio Messages API for tests: checks Basic auth and the form fields — SMS, and WhatsApp with its whatsapp:
// addresses and Content API templates —, answers as Twilio does (SM… sids, error JSON, the account read), and builds
// signed status callbacks and inbound messages — and forged ones — for Herald.
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
  /** As Herald sent it: `+…` for SMS, `whatsapp:+…` for WhatsApp. */
  to: string;
  from: string | undefined;
  messagingServiceSid: string | undefined;
  /** Free-form text; empty for a template. */
  body: string;
  /** A WhatsApp template: its Content SID (HX…) and ContentVariables, parsed. */
  contentSid: string | undefined;
  contentVariables: Record<string, string> | undefined;
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
  /** Programs the answer to every send to `to` as Herald names it (undefined: accept again). */
  answer(to: string, error: TwilioError | undefined): void;
  /**
   * Runs `hook` with the next message made for `to` before answering Herald's POST (e.g. to post its status callback
   * first, as Twilio may); the answer waits for the hook.
   */
  beforeAnswer(to: string, hook: (message: TwilioMessage) => Promise<void>): void;
  /** A status callback for a message, signed with its account's token (or `forgeWith` another); `extra` adds parameters. */
  statusCallback(message: TwilioMessage, status: string, errorCode?: number, forgeWith?: string, extra?: Record<string, string>): SignedRequest;
  /** An inbound message from `from` to one of a project's numbers, posted to `url`. */
  inbound(url: string, account: TwilioTestAccount, from: string, to: string, body: string): SignedRequest;
  close(): Promise<void>;
}

const E164 = /^\+[1-9]\d{6,14}$/;
const WHATSAPP = /^whatsapp:\+[1-9]\d{6,14}$/;
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
  const hooks = new Map<string, (message: TwilioMessage) => Promise<void>>();

  const reply = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const refuse = (res: ServerResponse, status: number, code: number, message: string) => {
    refusals.push(`${code}: ${message}`);
    reply(res, status, { code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status });
  };

  /** The account a request logs in to: its SID and auth token, or one of its API keys. */
  const authorized = (req: IncomingMessage, accountSid: string) => {
    const account = accounts.find((a) => a.accountSid === accountSid);
    const [user, pass] = Buffer.from((req.headers.authorization ?? '').replace(/^Basic /, ''), 'base64').toString().split(':');
    const ok = account && ((user === account.accountSid && pass === account.authToken) || (account.apiKey && user === account.apiKey.sid && pass === account.apiKey.secret));
    return ok ? account : undefined;
  };

  /** Why a form is not a message Twilio takes, as its error code and words; undefined when it is one. */
  function formProblem(form: URLSearchParams): [number, string] | undefined {
    const to = form.get('To') ?? '';
    const from = form.get('From');
    const body = form.get('Body');
    const contentSid = form.get('ContentSid');
    const variables = form.get('ContentVariables');
    if ((from === null) === (form.get('MessagingServiceSid') === null)) return [21603, 'A From or MessagingServiceSid is required, not both'];
    if (!(form.get('StatusCallback') ?? '').startsWith('https://')) return [21609, 'Invalid StatusCallback'];
    const whatsapp = to.startsWith('whatsapp:');
    // A WhatsApp message goes from a whatsapp: sender to a whatsapp: address, never from or to a plain number.
    if (whatsapp !== (from ?? (whatsapp ? 'whatsapp:' : '')).startsWith('whatsapp:')) return [21910, 'Invalid From and To pair. From and To should be of the same channel'];
    if (whatsapp && (!WHATSAPP.test(to) || (from !== null && !WHATSAPP.test(from)))) return [21211, `The 'To' number ${to} is not a valid phone number.`];
    if (variables !== null && contentSid === null) return [21654, 'ContentSid Required'];
    if (contentSid !== null) {
      if (!whatsapp) return [21619, 'A text message body or media urls must be specified'];
      if (body !== null) return [21619, 'Body and ContentSid are not sent together'];
      if (!/^HX[0-9a-f]{32}$/.test(contentSid)) return [21655, 'The ContentSid is Invalid'];
      try {
        const parsed = JSON.parse(variables ?? '{}') as unknown;
        if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) || Object.values(parsed).some((v) => typeof v !== 'string')) throw new Error();
      } catch {
        return [21656, 'The ContentVariables Parameter is invalid'];
      }
      return undefined;
    }
    if ((body ?? '') === '') return [21602, 'Message body is required'];
    return undefined;
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    // Stamped as the request arrives, before its body is read: Twilio's clock, as near as this process can keep it.
    const arrivedAt = Date.now();
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const read = /^\/2010-04-01\/Accounts\/(AC[0-9a-f]{32})\.json$/.exec(req.url ?? '');
    if (req.method === 'GET' && read) {
      const account = authorized(req, read[1]!);
      if (!account) return refuse(res, 401, 20003, 'Authenticate');
      return reply(res, 200, { sid: account.accountSid, friendly_name: 'Test account', status: 'active', type: 'Full' });
    }
    const match = /^\/2010-04-01\/Accounts\/(AC[0-9a-f]{32})\/Messages\.json$/.exec(req.url ?? '');
    if (req.method !== 'POST' || !match) return refuse(res, 404, 20404, 'The requested resource was not found');
    const account = authorized(req, match[1]!);
    if (!account) return refuse(res, 401, 20003, 'Authenticate');
    if (req.headers['content-type'] !== 'application/x-www-form-urlencoded') return refuse(res, 400, 20001, 'not a form');
    const form = new URLSearchParams(Buffer.concat(chunks).toString());
    const problem = formProblem(form);
    if (problem) return refuse(res, 400, problem[0], problem[1]);
    const to = form.get('To')!;
    const programmed = answers.get(to);
    if (programmed) return refuse(res, programmed.status, programmed.code, programmed.message);
    if (!E164.test(to.replace(/^whatsapp:/, ''))) return refuse(res, 400, 21211, `The 'To' number ${to} is not a valid phone number.`);
    const contentSid = form.get('ContentSid') ?? undefined;
    const message: TwilioMessage = {
      sid: sid('SM'),
      accountSid: account.accountSid,
      to,
      from: form.get('From') ?? undefined,
      messagingServiceSid: form.get('MessagingServiceSid') ?? undefined,
      body: form.get('Body') ?? '',
      contentSid,
      contentVariables: contentSid === undefined ? undefined : (JSON.parse(form.get('ContentVariables') ?? '{}') as Record<string, string>),
      statusCallback: form.get('StatusCallback')!,
      at: arrivedAt,
    };
    messages.push(message);
    const hook = hooks.get(to);
    if (hook) {
      hooks.delete(to);
      await hook(message);
    }
    reply(res, 201, { sid: message.sid, account_sid: message.accountSid, to, from: message.from ?? null, messaging_service_sid: message.messagingServiceSid ?? null, body: message.body, status: 'queued', num_segments: '1' });
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
    beforeAnswer: (to, hook) => hooks.set(to, hook),
    statusCallback(message, status, errorCode, forgeWith, extra = {}) {
      const account = accounts.find((a) => a.accountSid === message.accountSid)!;
      const params: Record<string, string> = { AccountSid: account.accountSid, MessageSid: message.sid, SmsSid: message.sid, MessageStatus: status, SmsStatus: status, To: message.to, ...extra };
      if (message.from !== undefined) params.From = message.from;
      if (errorCode !== undefined) params.ErrorCode = String(errorCode);
      return signed(message.statusCallback, forgeWith ?? account.authToken, params);
    },
    inbound: (url, account, from, to, body) =>
      signed(url, account.authToken, { AccountSid: account.accountSid, MessageSid: sid('SM'), SmsSid: sid('SM'), From: from, To: to, Body: body, NumSegments: '1' }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
