// What a send to one address came to, in the words the email, SMS and WhatsApp routes answer with.
import type { DeliveryReason, DeliveryResult } from '../../delivery/index.js';

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
