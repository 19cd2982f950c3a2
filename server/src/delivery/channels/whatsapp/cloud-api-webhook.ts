// The Cloud API's webhook: X-Hub-Signature-256 checked over the raw bytes, then its statuses and inbound messages read.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { InboundMessage, ProviderEvent, WebhookRequest } from '../../channel.js';
import { metaProviderCode, metaRefusal } from './cloud-api.js';

export type CloudApiWebhook =
  | {
      /** Status callbacks as delivery events: delivered, read (`opened`), failed (`failed`, with Meta's error as reason, code and words). */
      events: ProviderEvent[];
      inbound: InboundMessage[];
      /** Numbers whose failed status says the person stopped the business's messages (131050), with Meta's code (`meta_131050`). */
      optedOut: { address: string; providerCode: string }[];
    }
  | { refused: string };

const header = (headers: WebhookRequest['headers'], name: string) => {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
};

/** `sha256=<hex HMAC-SHA256 of the raw body under the app secret>`, compared in constant time. */
export function signatureHolds(rawBody: Buffer, signature: string | undefined, appSecret: string): boolean {
  const match = /^sha256=([0-9a-f]{64})$/i.exec(signature?.trim() ?? '');
  if (!match) return false;
  const expected = createHmac('sha256', appSecret).update(rawBody).digest();
  return timingSafeEqual(expected, Buffer.from(match[1]!, 'hex'));
}

/** WhatsApp ids are digits without the `+`. */
const e164 = (waId: unknown) => (typeof waId === 'string' && /^\+?\d{6,15}$/.test(waId) ? `+${waId.replace(/^\+/, '')}` : undefined);
const instant = (seconds: unknown) => {
  const n = Number(seconds);
  return Number.isFinite(n) && n > 0 ? new Date(n * 1000) : undefined;
};

type Json = Record<string, unknown>;
const objects = (value: unknown): Json[] => (Array.isArray(value) ? value.filter((v): v is Json => typeof v === 'object' && v !== null) : []);

const STATUS_EVENTS = { delivered: 'delivered', read: 'opened', failed: 'failed' } as const;

const nonEmpty = (value: unknown) => (typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined);

/** One of a failed status's errors as Meta documents them: `{code, title, message, error_data: {details}, href}`. */
interface StatusError {
  code: number | undefined;
  title: string | undefined;
  message: string | undefined;
  details: string | undefined;
}

const statusErrors = (value: unknown): StatusError[] =>
  objects(value).map((e) => {
    const code = Number(e.code);
    return {
      code: Number.isInteger(code) ? code : undefined,
      title: nonEmpty(e.title),
      message: nonEmpty(e.message),
      details: nonEmpty((e.error_data as Json | undefined)?.details),
    };
  });

/**
 * A failed status's detail, read as the delivery keeps it: the first error's code by metaRefusal — the reason a send
 * refused with it would get — as `meta_<code>`, and Meta's words (title, message when it says more, details) with the
 * code, as a refused send's are. Without an error, `meta_failed` and `provider_error`.
 */
function failure(errors: StatusError[]) {
  const [first] = errors;
  const code = first?.code;
  const said = [...new Set([first?.title, first?.message, first?.details].filter((w): w is string => w !== undefined))];
  return {
    status: 'failed',
    errorCode: code ?? null,
    reason: metaRefusal(code).reason,
    providerCode: metaProviderCode(code ?? 'failed'),
    ...(said.length > 0 ? { message: `${said.join(': ')}${code === undefined ? '' : ` (${code})`}` } : {}),
    errors,
  };
}

/** Verifies a callback with the project's app secret, then reads it; `now` stands in for a missing timestamp. */
export function parseCloudApiWebhook(request: Pick<WebhookRequest, 'headers' | 'rawBody'>, appSecret: string, now: Date): CloudApiWebhook {
  // Without an app secret any HMAC would be computable: nothing is believed.
  if (appSecret === '') return { refused: 'no app secret configured' };
  if (!signatureHolds(request.rawBody, header(request.headers, 'x-hub-signature-256'), appSecret)) return { refused: 'signature does not hold' };
  let body: Json;
  try {
    body = JSON.parse(request.rawBody.toString('utf8')) as Json;
  } catch {
    return { refused: 'body is not JSON' };
  }
  const result = { events: [] as ProviderEvent[], inbound: [] as InboundMessage[], optedOut: [] as { address: string; providerCode: string }[] };
  for (const entry of objects(body.entry)) {
    for (const change of objects(entry.changes)) {
      const value = (change.value ?? {}) as Json;
      for (const message of objects(value.messages)) {
        const from = e164(message.from);
        if (!from || typeof message.id !== 'string') continue;
        const text = (message.text as Json | undefined)?.body ?? (message.button as Json | undefined)?.text;
        result.inbound.push({ from, id: message.id, at: instant(message.timestamp) ?? now, text: typeof text === 'string' ? text : undefined });
      }
      for (const status of objects(value.statuses)) {
        const type = STATUS_EVENTS[status.status as keyof typeof STATUS_EVENTS];
        if (!type || typeof status.id !== 'string') continue;
        const errors = type === 'failed' ? statusErrors(status.errors) : [];
        result.events.push({
          providerMessageId: status.id,
          type,
          occurredAt: instant(status.timestamp) ?? now,
          detail: type === 'failed' ? failure(errors) : { status: status.status },
          eventId: `${status.id}:${String(status.status)}`,
        });
        const recipient = e164(status.recipient_id);
        const stop = errors.find((e) => metaRefusal(e.code).deadRecipient === 'opted_out');
        if (recipient && stop?.code !== undefined) result.optedOut.push({ address: recipient, providerCode: metaProviderCode(stop.code) });
      }
    }
  }
  return result;
}
