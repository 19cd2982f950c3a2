// Twilio's error codes as spec 7.4 reasons: what the number, the carrier or the account refused.
import type { DeadRecipient, DeliveryReason } from '../../delivery-reason.js';

export interface TwilioRefusal {
  reason: DeliveryReason;
  /** What the refusal says of the number itself, recorded in channel_addresses. */
  deadRecipient?: DeadRecipient | undefined;
}

/**
 * 21211 (invalid To) → `invalid_phone`, the number unreachable; 21610 (the recipient replied STOP) →
 * `recipient_opted_out`, the number opted out; 21612 (cannot route), 21614 (not a mobile number, the number
 * unreachable) and the carrier's 30003–30008 (unreachable handset, blocked, unknown handset, landline, filtered,
 * unknown) → `carrier_rejected`; anything else (the account's own refusals: 20003 authentication, 21408 region not
 * enabled, 21606 not a sender of the account, 30001 queue overflow …) → `provider_error`.
 */
export function twilioRefusal(code: number | undefined): TwilioRefusal {
  if (code === 21211) return { reason: 'invalid_phone', deadRecipient: 'gone' };
  if (code === 21610) return { reason: 'recipient_opted_out', deadRecipient: 'opted_out' };
  if (code === 21614) return { reason: 'carrier_rejected', deadRecipient: 'gone' };
  if (code === 21612 || (code !== undefined && code >= 30003 && code <= 30008)) return { reason: 'carrier_rejected' };
  return { reason: 'provider_error' };
}

/**
 * A WhatsApp sender's refusals, Twilio's codes for Meta's: 63016 (free-form text outside the 24-hour window, Meta's
 * 470) → `outside_service_window`; 63014 (the person blocked the business) and 21610 → `recipient_opted_out`, the
 * number opted out; 63027 (no approved template of that Content SID in that language, Meta's 2001) →
 * `template_not_approved`; anything else — 63018 (the sender's or account's rate), 63032 (Meta holds the number in an
 * experiment, its 472), 63003 (not a WhatsApp number), the account's own refusals — → `provider_error`.
 */
export function twilioWhatsAppRefusal(code: number | undefined): TwilioRefusal {
  if (code === 63016) return { reason: 'outside_service_window' };
  if (code === 63014 || code === 21610) return { reason: 'recipient_opted_out', deadRecipient: 'opted_out' };
  if (code === 63027) return { reason: 'template_not_approved' };
  return { reason: 'provider_error' };
}
