// Twilio's status callbacks, of SMS and of WhatsApp senders alike: signed, read into delivery events, each naming the
// delivery Herald put in its StatusCallback URL.
import type { ChannelWebhook, ProviderEvent } from '../../channel.js';
import type { DeliveryReason } from '../../delivery-reason.js';
import type { TwilioRefusal } from './twilio-errors.js';
import { verifyTwilioRequest } from './twilio-signature.js';

/** The query parameter of a StatusCallback URL naming its delivery. */
const DELIVERY_PARAMETER = 'delivery';

/** A message's StatusCallback: the project's status URL naming the delivery, so its events land before Twilio's answer is recorded. */
export const statusCallbackUrl = (statusUrl: string, deliveryId: number) => `${statusUrl}?${DELIVERY_PARAMETER}=${deliveryId}`;

export interface TwilioStatusRules {
  /** What an ErrorCode means on this channel. */
  refusal: (code: number | undefined) => TwilioRefusal;
  /** What a message that did not arrive is when its code says nothing more: SMS `carrier_rejected`, WhatsApp `provider_error`. */
  otherwise: DeliveryReason;
}

const EVENTS = { delivered: 'delivered', read: 'opened', failed: 'failed', undelivered: 'failed' } as const;

/**
 * Twilio's final statuses and WhatsApp's `read`; the others (queued, sending, sent, accepted) change nothing Herald
 * records. A failure's detail keeps Twilio's ErrorCode and, when it sends one, the channel's words (ChannelStatusMessage).
 */
function statusEvent(url: string, params: URLSearchParams, rules: TwilioStatusRules): ProviderEvent | undefined {
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

/** Checks a status callback's X-Twilio-Signature with the project's auth token, then reads its event. */
export function twilioStatusWebhook(rules: TwilioStatusRules): ChannelWebhook {
  return {
    async verifyAndParse(request, credentials) {
      if (!credentials.authToken) return { refused: 'the project has no Twilio auth token to check signatures with' };
      const params = verifyTwilioRequest(request, credentials.authToken);
      if (!params) return { refused: 'X-Twilio-Signature does not match' };
      const event = statusEvent(request.url, params, rules);
      return { events: event ? [event] : [] };
    },
  };
}
