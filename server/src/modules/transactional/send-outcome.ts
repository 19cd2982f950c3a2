// What a send came to, in the words the transactional routes answer with: an engine reason, an address's outcome.
import type { DeliveryReason, DeliveryResult } from '../../delivery/index.js';

/** The answer's common part for a send to one address; each route adds its own fields. */
export interface AddressEnvelope<S, R> {
  success: true;
  status: S;
  messageId: string | null;
  reason: R | null;
}

export interface AddressOutcome<R> {
  status: 'sent' | 'sandbox' | 'queued' | 'failed';
  reason: R | 'sandbox' | null;
}

/**
 * A test key's accepted send is `sandbox`; a queued one names its last failure (none when it only waits for its
 * provider's rate); a failed one its reason, each in the route's words (`reasonOf`).
 */
export function addressOutcome<R>(result: DeliveryResult, sandbox: boolean, reasonOf: (reason: DeliveryReason | null) => R): AddressOutcome<R> {
  switch (result.status) {
    case 'sent':
      return sandbox ? { status: 'sandbox', reason: 'sandbox' } : { status: 'sent', reason: null };
    case 'queued':
      return { status: 'queued', reason: result.reason && reasonOf(result.reason) };
    default:
      return { status: 'failed', reason: reasonOf(result.reason) };
  }
}

/**
 * An engine reason (a refusal, a failure) in a route's words: one the route knows (`kept`) as it is, one it names
 * otherwise as `renamed` says, any other (one only a campaign gives) as a provider-side failure.
 */
export function routeReason<R extends string>(kept: readonly R[], renamed: Partial<Record<DeliveryReason, R>> = {}) {
  return (reason: DeliveryReason | null): R | 'provider_error' =>
    kept.find((known) => known === reason) ?? (reason === null ? undefined : renamed[reason]) ?? 'provider_error';
}
