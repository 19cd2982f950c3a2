// A local WhatsApp Cloud API (Meta Graph) for tests: checks the Bearer token and each message's JSON shape, answers
// as Meta does (wamids, error JSON), serves the phone number and message_templates, and calls Herald back with signed
// (or forged) webhooks — status callbacks, failed ones with Meta's errors, as its webhook reference shows them.
import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the peer answers a number's next send: accept, or Meta's error (code, HTTP status). */
export type CloudAnswer = 'ok' | { status: number; code: number; message?: string; subcode?: number };

export interface CloudMessage {
  id: string;
  phoneNumberId: string;
  to: string;
  type: 'text' | 'template';
  body: Record<string, unknown>;
}

export interface PeerTemplate {
  id?: string;
  name: string;
  language: string;
  category: string;
  status: string;
  components?: Record<string, unknown>[];
}

export interface WhatsAppPeer {
  /** WHATSAPP_GRAPH_URL. */
  url: string;
  readonly version: string;
  /** Accepted messages, in order. */
  readonly messages: CloudMessage[];
  /** Every request that reached the peer (method and path), accepted or not. */
  readonly requests: { method: string; path: string }[];
  /** Requests refused: a wrong token, or a body not shaped as the Cloud API takes it. */
  readonly refused: { reason: string }[];
  /** The templates `GET /{waba-id}/message_templates` lists, per business account (served two per page). */
  templates: Map<string, PeerTemplate[]>;
  respond(to: string, ...answers: CloudAnswer[]): void;
  attempts(to: string): number;
  /** Signs a webhook body as Meta does: `sha256=<hex HMAC-SHA256(app secret, raw body)>`. */
  sign(rawBody: string, appSecret: string): string;
  /**
   * Posts a webhook to Herald over HTTP as Meta does, signed with `appSecret` (a wrong secret forges it; `signature`
   * replaces the header). Resolves with Herald's status and JSON answer.
   */
  callBack(url: string, body: Record<string, unknown>, appSecret: string, signature?: string): Promise<{ status: number; body: Record<string, unknown> }>;
  close(): Promise<void>;
}

export interface WhatsAppPeerOptions {
  accessToken: string;
  phoneNumberId: string;
  wabaId: string;
  version?: string;
}

/** One error of a failed status, as Meta's messages webhook reference documents it. */
export interface StatusError {
  code: number;
  title: string;
  /** Meta's message; it often repeats the title. */
  message?: string;
  /** `error_data.details`: what went wrong in more words. */
  details?: string;
}

/** How the peer shows its phone number (`GET /{phone-number-id}`). */
export const PEER_PHONE_NUMBER = { display_phone_number: '+1 555-010-0000', verified_name: 'Herald Test' };

/** A Cloud API webhook body, as Meta nests it. */
export function webhookBody(value: Record<string, unknown>, phoneNumberId: string): Record<string, unknown> {
  return {
    object: 'whatsapp_business_account',
    entry: [{ id: 'waba', changes: [{ field: 'messages', value: { messaging_product: 'whatsapp', metadata: { phone_number_id: phoneNumberId }, ...value } }] }],
  };
}

/**
 * A status callback of one message as Meta posts it (`statuses[]` of the messages field): its wamid, the status, when,
 * the recipient's WhatsApp id, and with `failed` the `errors[{code, title, message, error_data: {details}, href}]`.
 */
export function statusWebhook(wamid: string, to: string, status: 'sent' | 'delivered' | 'read' | 'failed', phoneNumberId: string, errors: StatusError[] = []): Record<string, unknown> {
  const reported = errors.map((e) => ({
    code: e.code,
    title: e.title,
    message: e.message ?? e.title,
    ...(e.details === undefined ? {} : { error_data: { details: e.details } }),
    href: 'https://developers.facebook.com/docs/whatsapp/cloud-api/support/error-codes/',
  }));
  return webhookBody(
    { statuses: [{ id: wamid, status, timestamp: String(Math.floor(Date.now() / 1000)), recipient_id: to.replace('+', ''), ...(status === 'failed' ? { errors: reported } : {}) }] },
    phoneNumberId,
  );
}

const readBody = (request: IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });

const json = (response: ServerResponse, status: number, body: unknown) => {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
};

const metaError = (response: ServerResponse, status: number, code: number, message: string, subcode?: number) =>
  json(response, status, { error: { message, type: 'OAuthException', code, ...(subcode === undefined ? {} : { error_subcode: subcode }), fbtrace_id: 'A1' } });

/** Why a message body is not one the Cloud API takes, or undefined. */
function shapeProblem(body: Record<string, unknown>): string | undefined {
  if (body.messaging_product !== 'whatsapp') return 'messaging_product must be whatsapp';
  if (typeof body.to !== 'string' || !/^\+?\d{6,15}$/.test(body.to)) return 'to must be a phone number';
  if (body.type === 'text') {
    const text = body.text as { body?: unknown } | undefined;
    return typeof text?.body === 'string' && text.body.length > 0 && text.body.length <= 4096 ? undefined : 'text.body must be 1 to 4096 characters';
  }
  if (body.type === 'template') {
    const template = body.template as { name?: unknown; language?: { code?: unknown }; components?: unknown } | undefined;
    if (typeof template?.name !== 'string') return 'template.name is required';
    if (typeof template.language?.code !== 'string') return 'template.language.code is required';
    if (template.components !== undefined && !Array.isArray(template.components)) return 'template.components must be an array';
    for (const component of (template.components as { type?: unknown; parameters?: unknown }[] | undefined) ?? []) {
      if (!['header', 'body', 'button'].includes(String(component.type))) return 'component.type must be header, body or button';
      if (component.parameters !== undefined && !Array.isArray(component.parameters)) return 'component.parameters must be an array';
    }
    return undefined;
  }
  return 'type must be text or template';
}

export async function startWhatsAppPeer(options: WhatsAppPeerOptions): Promise<WhatsAppPeer> {
  const version = options.version ?? 'v21.0';
  const messages: CloudMessage[] = [];
  const requests: { method: string; path: string }[] = [];
  const refused: { reason: string }[] = [];
  const answers = new Map<string, CloudAnswer[]>();
  const attempts = new Map<string, number>();
  const templates = new Map<string, PeerTemplate[]>();

  const server = createServer((request, response) => {
    void (async () => {
      const url = new URL(request.url ?? '/', 'http://peer');
      requests.push({ method: request.method ?? '', path: url.pathname });
      const raw = await readBody(request);
      if (request.headers.authorization !== `Bearer ${options.accessToken}`) {
        refused.push({ reason: 'token' });
        return metaError(response, 401, 190, 'Invalid OAuth access token');
      }
      const send = new RegExp(`^/${version.replace('.', '\\.')}/(\\d+)/messages$`).exec(url.pathname);
      if (send && request.method === 'POST') {
        if (send[1] !== options.phoneNumberId) return metaError(response, 400, 100, 'Unsupported post request: unknown phone number id');
        let body: Record<string, unknown>;
        try {
          body = JSON.parse(raw) as Record<string, unknown>;
        } catch {
          refused.push({ reason: 'json' });
          return metaError(response, 400, 100, 'Invalid JSON');
        }
        const problem = shapeProblem(body);
        if (problem) {
          refused.push({ reason: problem });
          return metaError(response, 400, 100, `Invalid parameter: ${problem}`);
        }
        const to = String(body.to);
        attempts.set(to, (attempts.get(to) ?? 0) + 1);
        const answer = answers.get(to)?.shift() ?? 'ok';
        if (answer !== 'ok') return metaError(response, answer.status, answer.code, answer.message ?? `Error ${answer.code}`, answer.subcode);
        const id = `wamid.${randomBytes(12).toString('base64url')}`;
        messages.push({ id, phoneNumberId: send[1]!, to, type: body.type as 'text' | 'template', body });
        return json(response, 200, { messaging_product: 'whatsapp', contacts: [{ input: to, wa_id: to.replace('+', '') }], messages: [{ id, message_status: 'accepted' }] });
      }
      const number = new RegExp(`^/${version.replace('.', '\\.')}/(\\d+)$`).exec(url.pathname);
      if (number && request.method === 'GET') {
        if (number[1] !== options.phoneNumberId) {
          return metaError(response, 400, 100, `Unsupported get request. Object with ID '${number[1]}' does not exist, cannot be loaded due to missing permissions, or does not support this operation`, 33);
        }
        return json(response, 200, { ...PEER_PHONE_NUMBER, id: number[1] });
      }
      const list = new RegExp(`^/${version.replace('.', '\\.')}/(\\d+)/message_templates$`).exec(url.pathname);
      if (list && request.method === 'GET') {
        if (list[1] !== options.wabaId) return metaError(response, 400, 100, 'Unknown business account');
        const all = templates.get(list[1]!) ?? [];
        const from = Number(url.searchParams.get('after') ?? 0);
        const page = all.slice(from, from + 2).map((t, i) => ({ id: t.id ?? `tpl${from + i}`, components: [], ...t }));
        const next = from + 2 < all.length ? `${peer.url}${url.pathname}?after=${from + 2}` : undefined;
        return json(response, 200, { data: page, paging: next ? { cursors: { after: String(from + 2) }, next } : { cursors: {} } });
      }
      return metaError(response, 404, 100, 'Unknown path');
    })().catch((error: unknown) => {
      response.writeHead(500);
      response.end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const peer: WhatsAppPeer = {
    url: `http://127.0.0.1:${port}`,
    version,
    messages,
    requests,
    refused,
    templates,
    respond: (to, ...given) => answers.set(to, [...(answers.get(to) ?? []), ...given]),
    attempts: (to) => attempts.get(to) ?? 0,
    sign: (rawBody, appSecret) => `sha256=${createHmac('sha256', appSecret).update(rawBody).digest('hex')}`,
    callBack: async (target, body, appSecret, signature) => {
      const raw = JSON.stringify(body);
      const response = await fetch(target, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-hub-signature-256': signature ?? peer.sign(raw, appSecret) },
        body: raw,
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  return peer;
}
