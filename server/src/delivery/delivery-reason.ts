// Why a delivery did not go, and what makes a recipient dead: the words the engine, its repositories and every channel share.

/** Why a delivery did not go (spec 7.4 codes, shared by every channel). */
export type DeliveryReason =
  | 'subscriber_not_found'
  | 'subscriber_unsubscribed'
  | 'subscriber_inactive'
  | 'frequency_capped'
  | 'quiet_hours'
  | 'provider_error'
  | 'payload_too_large'
  /** Email: the address hard-bounced (now, or before: it is `unreachable`). */
  | 'recipient_bounced'
  | 'recipient_complained'
  | 'sender_domain_not_verified'
  | 'template_not_found'
  | 'template_variables_missing'
  /** Herald's: a personalized email's merge tags do not parse, or a render limit (or a failing filter) stopped them. */
  | 'template_render_failed'
  /** Herald's: the project has chosen no provider for the channel (e.g. no `PUT /projects/:id/channels/email`). */
  | 'provider_not_configured'
  /** Herald's: the organization's monthly email cap is reached (email held until the next month, UTC). */
  | 'monthly_cap_reached'
  /** Herald's: the provider account is in its sandbox and has sent its 200 messages of the last 24 hours (spec 8). */
  | 'sandbox_limit_reached'
  /** Its message was withdrawn before it went out (a cancelled campaign). */
  | 'campaign_cancelled'
  /** WhatsApp: the named template is not APPROVED by Meta (spec 7.4). */
  | 'template_not_approved'
  /** WhatsApp: free-form text more than 24 hours after the person last wrote (Cloud API 131047; spec 7.4). */
  | 'outside_service_window'
  /** SMS: the number is not a valid E.164 number (Herald's check, or the provider's 21211). */
  | 'invalid_phone'
  /** SMS: the carrier or the provider refused the message for this number (unreachable, blocked, filtered, a landline). */
  | 'carrier_rejected'
  /** SMS: the sender id is not provisioned for the destination country. */
  | 'unverified_sender_id'
  /** SMS or WhatsApp: the number opted out (STOP, Twilio's 21610), or the person blocked the business number (spec 7.4). */
  | 'recipient_opted_out';

/**
 * What a dead recipient is: a push device `gone` (404/410) or `refused` (the endpoint guard); an address the provider
 * says is unreachable (`gone`), or whose person opted out with the provider (`opted_out`: SMS STOP, Twilio's 21610).
 */
export type DeadRecipient = 'gone' | 'refused' | 'opted_out';
