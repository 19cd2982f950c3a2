// Twilio's callbacks, of SMS and of WhatsApp senders alike, signed: status callbacks read into delivery events, each
// naming the delivery Herald put in its StatusCallback URL, and the messages people send.
import type { ChannelWebhook, InboundMessage, ProviderEvent } from '../../channel.js';
import type { DeliveryReason } from '../../delivery-reason.js';
import type { TwilioRefusal } from './twilio-errors.js';
import { verifyTwilioRequest } from './twilio-signature.js';

/** The query parameter of a StatusCallback URL naming its delivery. */
const DELIVERY_PARAMETER = 'delivery';

/** A message's StatusCallback: the project's status URL naming the delivery, so its events land before Twilio's answer is recorded. */
export const statusCallbackUrl = (statusUrl: string, deliveryId: number) => `${statusUrl}?${DELIVERY_PARAMETER}=${deliveryId}`;

export interface TwilioWebhookRules {
  /** What an ErrorCode means on this channel. */
  refusal: (code: number | undefined) => TwilioRefusal;
  /** What a message that did not arrive is when its code says nothing more: SMS `carrier_rejected`, WhatsApp `provider_error`. */
  otherwise: DeliveryReason;
  /** The person's number in a message's `From` as the channel writes it (SMS `+…`, WhatsApp `whatsapp:+…`); undefined for anything else. */
  sender: (from: string) => string | undefined;
  /** What the person wrote. */
  text: (params: URLSearchParams) => string | undefined;
  /** When a message arrived: Twilio does not say. */
  clock: () => Date;
}

const EVENTS = { delivered: 'delivered', read: 'opened', failed: 'failed', undelivered: 'failed' } as const;

/**
 * Twilio's final statuses and WhatsApp's `read`; the others (queued, sending, sent, accepted) change nothing Herald
 * records. A failure's detail keeps Twilio's ErrorCode and, when it sends one, the channel's words (ChannelStatusMessage).
 */
function statusEvent(url: string, params: URLSearchParams, rules: TwilioWebhookRules): ProviderEvent | undefined {
  const sid = params.get('MessageSid') ?? params.get('SmsSid');
  const status = params.get('MessageStatus') ?? params.get('SmsStatus') ?? '';
  const type = EVENTS[status as keyof typeof EVENTS];
  if (!sid || !type) return undefined;
  const named = new URL(url).searchParams.get(DELIVERY_PARAMETER);
  const deliveryId = named !== null && /^\d{1,15}$/.test(named) ? Number(named) : undefined;
  // Twilio names no event id: a message reaches each final status once, so its sid and status identify the report.
  const event = { providerMessageId: sid, deliveryId, type, occurredAt: new Date(), eventId: `${sid}:${status}` };
  if (type !== 'failed') return event;
  const raw = params.get('ErrorCode');
  const code = raw === null || raw === '' ? undefined : Number(raw);
  const providerCode = code === undefined ? `twilio_${status}` : `twilio_${code}`;
  const refused = rules.refusal(code).reason;
  const words = params.get('ChannelStatusMessage') ?? params.get('ErrorMessage');
  const detail = {
    status,
    errorCode: code ?? null,
    reason: refused === 'provider_error' ? rules.otherwise : refused,
    providerCode,
    ...(words ? { message: words } : {}),
  };
  return { ...event, detail };
}

/** A message a person sent (Twilio's incoming-message webhook: no status, or `received`), from a number the channel reads. */
function inboundMessage(params: URLSearchParams, rules: TwilioWebhookRules): InboundMessage | undefined {
  const status = params.get('MessageStatus') ?? params.get('SmsStatus');
  if (status !== null && status !== 'received') return undefined;
  const from = rules.sender(params.get('From') ?? '');
  return from === undefined ? undefined : { from, id: params.get('MessageSid') ?? '', at: rules.clock(), text: rules.text(params) };
}

/** Checks a callback's X-Twilio-Signature with the project's auth token, then reads its status event or its message. */
export function twilioWebhook(rules: TwilioWebhookRules): ChannelWebhook {
  return {
    async verifyAndParse(request, credentials) {
      if (!credentials.authToken) return { refused: 'the project has no Twilio auth token to check signatures with' };
      const params = verifyTwilioRequest(request, credentials.authToken);
      if (!params) return { refused: 'X-Twilio-Signature does not match' };
      const event = statusEvent(request.url, params, rules);
      const message = inboundMessage(params, rules);
      return { events: event ? [event] : [], inbound: message ? [message] : [] };
    },
  };
}
