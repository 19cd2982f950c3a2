// The contract every channel plugs into the engine with (adapter, provider, outcome) and the error providers report.
import type { Channel, DeliveryEvent, MessageContent, PushContent, PushOptions } from '../db/schema.js';
import type { ClaimedDelivery, MessageRecord, SendingProject } from './delivery.repository.js';
import type { DeadRecipient, DeliveryReason } from './delivery-reason.js';

/**
 * A provider's refusal. Only the engine decides what happens next: `retryable` failures are tried again (after
 * `retryAfterMs` when the provider said so), others are final. `deadRecipient` says the address itself is dead and
 * the subscriber is deactivated: `gone` (a push subscription answered 404/410: `unsubscribed` until its browser
 * registers again) or `refused` (an endpoint Herald will never contact, refused by the endpoint guard: `inactive`).
 */
export class ProviderError extends Error {
  readonly reason: DeliveryReason;
  readonly retryable: boolean;
  /** What the provider answered, e.g. `http_503`, `ECONNRESET`, `timeout`. */
  readonly providerCode: string;
  readonly retryAfterMs: number | undefined;
  readonly deadRecipient: DeadRecipient | undefined;

  constructor(
    message: string,
    options: { reason: DeliveryReason; retryable: boolean; providerCode: string; retryAfterMs?: number; deadRecipient?: DeadRecipient },
  ) {
    super(message);
    this.name = 'ProviderError';
    this.reason = options.reason;
    this.retryable = options.retryable;
    this.providerCode = options.providerCode;
    this.retryAfterMs = options.retryAfterMs;
    this.deadRecipient = options.deadRecipient;
  }
}

/** The outcome of one item of a batch, in the batch's order; `providerMessageId` when the provider names the message. */
export type SendOutcome = { ok: true; providerCode: string; providerMessageId?: string | undefined } | { ok: false; error: ProviderError };

/** A channel provider: sends a batch, reports each item's outcome; never rejects for a single item's failure. */
export interface ChannelProvider<Item> {
  readonly name: string;
  send(items: readonly Item[]): Promise<SendOutcome[]>;
  close(): Promise<void>;
}

/**
 * A provider's documented rate an item draws from, held across every worker (`send-rate.ts`): `key` names the
 * provider and the sender whose rate it is (`twilio:+15551234567`: an SMS long code, 1/s; `ses:<account>`: the
 * account's rate), `perSecond` is that rate.
 */
export interface ProviderRate {
  key: string;
  perSecond: number;
  /** A sandbox account's quota over any 24 hours (spec 8: 200), also held across every worker. */
  per24Hours?: number | undefined;
}

/** Why content cannot go on a channel: `field` is a path inside the content, absent when it is the whole of it. */
export interface ContentProblem {
  field?: string;
  error: string;
}

/** A provider's callback as it arrived: its signature is computed over these. */
export interface WebhookRequest {
  url: string;
  headers: Record<string, string | string[] | undefined>;
  rawBody: Buffer;
}

/** What a provider reports about a message it accepted, naming it by its id for it (`deliveries.provider_message_id`). */
export interface ProviderEvent {
  providerMessageId: string;
  /**
   * The delivery Herald named in the callback's URL (Twilio's per-message StatusCallback, signed with the rest): the
   * event lands on it even before Twilio's answer, and so its message id, was recorded.
   */
  deliveryId?: number | undefined;
  type: DeliveryEvent;
  occurredAt: Date;
  /**
   * What the provider said, summarised (a bounce code, a clicked URL …). A `failed` event's `reason`, `providerCode`
   * and `message` become the delivery's reason, provider code and provider error.
   */
  detail?: Record<string, unknown> | undefined;
  /**
   * The provider's own id of this event, when it names one: a replayed callback is logged once. Without it, the type
   * and time identify the event, so two opens the provider reports within the same instant are logged as one.
   */
  eventId?: string | undefined;
  /** The addresses a bounce or complaint names (lower-cased), when the report names them: only those are suppressed. */
  recipients?: string[] | undefined;
}

/** A message a person sent the business (on WhatsApp: it opens the number's customer-service window). */
export interface InboundMessage {
  /** E.164. */
  from: string;
  /** The provider's id of the message (Meta's wamid). */
  id: string;
  at: Date;
  /** The text a person typed (a text message, or a quick-reply button's), when there is one. */
  text: string | undefined;
}

/**
 * A callback verified and read, or refused: its signature does not hold, so nothing in it is believed (`code`, when
 * the webhook tells why in a word: SNS's `unexpected_topic` …). `confirmed`: a subscription the provider asked for
 * (SNS's SubscriptionConfirmation), confirmed by the webhook; it carries no events.
 */
export type WebhookParse =
  | {
      events: ProviderEvent[];
      /** Messages people sent, when the callback carries them (Meta's; Twilio's incoming-message webhook). */
      inbound?: InboundMessage[];
      /** Numbers whose failed status says the person stopped the business's messages (Meta's 131050), with the provider's code. */
      optedOut?: { address: string; providerCode: string }[];
      confirmed?: boolean;
    }
  | { refused: string; code?: string };

/** How a provider that calls back (delivered, bounced, complained …) has its callbacks read. */
export interface ChannelWebhook {
  /**
   * Checks the request's signature with the project's channel credentials (opened), then reads its events. A provider
   * whose callbacks are the instance's (SES through SNS) is given its configuration when the webhook is made, and reads
   * no credentials.
   */
  verifyAndParse(request: WebhookRequest, credentials: Record<string, string>): Promise<WebhookParse>;
}

/**
 * A channel's webhooks, one per provider that calls back, named as a project's channel configuration names its
 * provider (`twilio`, `meta` …): a channel whose projects choose among providers reads each one's callbacks its way.
 */
export type ChannelWebhooks<Provider extends string = string> = Readonly<Record<Provider, ChannelWebhook>>;

/** What an adapter makes of a claimed delivery: the item its provider sends, or why it must not go. */
export type Addressed<Item> = { item: Item } | { refusal: DeliveryReason };

/**
 * A channel as the engine sees it, chosen by `messages.channel`. The engine claims, applies the delivery policy,
 * decides retries and records outcomes; the adapter knows the channel: whether a claimed delivery can be addressed
 * (checked at send time: its subscriber may have changed since it was queued), how it is rendered for its recipient,
 * and which provider sends it. Retries stay in the engine: providers report `ProviderError`s.
 */
export interface ChannelAdapter<Item = unknown, C extends Channel = Channel> {
  readonly channel: C;
  /** What keeps `content` from going on this channel, checked before anything is queued; undefined when nothing does. */
  validate(content: MessageContent<C>): ContentProblem[] | undefined;
  address(delivery: ClaimedDelivery<C>, message: MessageRecord<C>, project: SendingProject): Addressed<Item>;
  /**
   * The rate an addressed item draws from, if its provider documents one. Push declares none: its per-origin rate
   * stays in its provider's process (`PUSH_RATE_PER_ORIGIN`).
   */
  rate?(item: Item): ProviderRate | undefined;
  /**
   * For a provider that takes bulk sends: items with the same key share one rendered body, and the engine gives them
   * to the provider in one call (which still answers one outcome per item, in order). Without it, one call takes
   * every item of the channel and environment in a batch.
   */
  bulkKey?(item: Item): string;
  /**
   * A send now that runs out of its inline retry budget is left to the workers (a retry after its backoff, a hold for
   * its provider's rate): email and text messages may arrive a little late. Without it, it fails (a late push is
   * pointless).
   */
  readonly mayArriveLate?: boolean;
  /** Live sends draw from the organization's monthly cap (plans count emails): held, not attempted, once it is reached. */
  readonly monthlyCap?: boolean;
  /**
   * The reason a dead address is recorded with in `channel_addresses` (default: the provider's code); email's is
   * `bounced`, the suppression list's own word.
   */
  deadAddressReason?(error: ProviderError): string;
  /** For a channel whose providers call back: the webhook of each that does, by provider. */
  readonly webhooks?: Partial<ChannelWebhooks>;
  /** The provider of live messages, or of the sandbox's (test keys: accepted and recorded, never sent). */
  provider(sandbox: boolean): ChannelProvider<Item>;
  close(): Promise<void>;
}

/** The VAPID identity a project signs its pushes with (RFC 8292). */
export interface VapidIdentity {
  publicKey: string;
  privateKey: string;
  subject: string;
}

/** One web push to one subscription, ready to encrypt and send. */
export interface PushItem {
  deliveryId: number;
  endpoint: string;
  p256dh: string;
  auth: string;
  /** The JSON document the service worker renders (`channels/push/push-payload.ts`). */
  payload: PushPayload;
  options: PushOptions;
  vapid: VapidIdentity;
}

/** A push's lifetime unless the sender sets one: dropped after a day for a device that stays offline, not shown weeks late. */
export const DEFAULT_PUSH_TTL_SECONDS = 24 * 60 * 60;

/** What the service worker receives, decrypted: content plus where to report delivered/clicked/dismissed. */
export interface PushPayload {
  title: string;
  body: string;
  icon?: string | undefined;
  image?: string | undefined;
  badge?: string | undefined;
  /** Opened on a click on the notification. */
  url?: string | undefined;
  /** Buttons: shown with `title`; a click on one (`event.action`) opens its `action`, a URL. */
  actions?: PushContent['actions'];
  /** Base URL of this delivery's tracking endpoints: POST `${track}/delivered|clicked|dismissed`. */
  track: string;
}
