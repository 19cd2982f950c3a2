// The one small interface every channel provider implements, and the one error type providers report failures with.
import type { PushContent, PushOptions } from '../db/schema.js';

/** Why a delivery did not go (spec 7.4 codes, shared by every channel). */
export type DeliveryReason =
  | 'subscriber_not_found'
  | 'subscriber_unsubscribed'
  | 'subscriber_inactive'
  | 'frequency_capped'
  | 'quiet_hours'
  | 'provider_error'
  | 'payload_too_large'
  /** Its message was withdrawn before it went out (a cancelled campaign). */
  | 'campaign_cancelled';

export type DeadRecipient = 'gone' | 'refused';

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

/** The outcome of one item of a batch, in the batch's order. */
export type SendOutcome = { ok: true; providerCode: string } | { ok: false; error: ProviderError };

/** A channel provider: sends a batch, reports each item's outcome; never rejects for a single item's failure. */
export interface ChannelProvider<Item> {
  readonly name: string;
  send(items: readonly Item[]): Promise<SendOutcome[]>;
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
  /** The JSON document the service worker renders (see `push-payload.ts`). */
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
