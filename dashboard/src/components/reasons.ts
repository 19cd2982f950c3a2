// Every code the API answers with (error envelopes, delivery and send reasons, enrollment and step outcomes, suppression
// and opt-out reasons) in words, and a 422 detail's field and message said as a person would. No DOM: Node-tested.

/** Where a person fixes what a code names: "verify it in Sending domains", linked. */
export interface ReasonAction {
  before: string;
  text: string;
  to: '/projects/$projectId/domains' | '/projects/$projectId/email-provider' | '/projects/$projectId/sms' | '/projects/$projectId/whatsapp' | '/projects/$projectId/whatsapp-templates' | '/projects/$projectId/email-templates' | '/projects/$projectId/settings';
}

const DOMAINS: ReasonAction = { before: 'verify it in', text: 'Sending domains', to: '/projects/$projectId/domains' };
const EMAIL_PROVIDER: ReasonAction = { before: 'set one in', text: 'Email provider', to: '/projects/$projectId/email-provider' };
const SMS_SETTINGS: ReasonAction = { before: 'add one in', text: 'SMS', to: '/projects/$projectId/sms' };
const WHATSAPP_TEMPLATES: ReasonAction = { before: 'see', text: 'WhatsApp templates', to: '/projects/$projectId/whatsapp-templates' };
const EMAIL_TEMPLATES: ReasonAction = { before: 'see', text: 'Email templates', to: '/projects/$projectId/email-templates' };
const SETTINGS: ReasonAction = { before: 'see the project’s', text: 'Settings', to: '/projects/$projectId/settings' };

interface Reason {
  /** The words; given the value the code is about (an address), when there is one. */
  words: string | ((value: string | undefined) => string);
  action?: ReasonAction;
  /** The envelope's message says less than these words (a bare "Validation failed"): show the words instead. */
  generic?: true;
}

const domainOf = (address: string | undefined) => (address?.includes('@') ? address.slice(address.lastIndexOf('@') + 1) : undefined);

/**
 * The one map from code to words. A code the API starts to answer with goes here (docs/DASHBOARD.md, "Plain language");
 * one missing still shows, as its code with spaces for underscores.
 */
export const REASONS: Record<string, Reason> = {
  // Error envelopes (spec 7): most messages are already words; these say more than theirs.
  validation_failed: { words: 'Some values need changing', generic: true },
  bad_request: { words: 'The request was not understood', generic: true },
  body_required: { words: 'The request had no body', generic: true },
  invalid_json: { words: 'The request was not valid JSON', generic: true },
  unsupported_content_type: { words: 'The request was not sent as JSON', generic: true },
  body_too_large: { words: 'What was sent is too large', generic: true },
  uri_too_long: { words: 'The address of the request is too long', generic: true },
  bad_url: { words: 'The address of the request is not valid', generic: true },
  headers_too_large: { words: 'The request’s headers are too large', generic: true },
  request_timeout: { words: 'The request took too long to arrive: try again', generic: true },
  rate_limited: { words: 'Too many requests: wait a moment and try again', generic: true },
  internal_error: { words: 'Herald failed on its side: try again, and if it keeps failing quote the request id to your administrator', generic: true },
  database_unavailable: { words: 'Herald’s database cannot be reached right now: try again in a moment', generic: true },
  migrations_pending: { words: 'Herald is being upgraded (its database is not up to date yet): try again in a moment', generic: true },
  invalid_stored_segment: { words: 'A saved segment can no longer be read: open it and save it again', generic: true },
  invalid_stored_template: { words: 'A saved template can no longer be read: open it and save it again', generic: true },
  http_error: { words: 'Herald answered with an error', generic: true },
  unauthorized: { words: 'Your session has expired: sign in again' },
  invalid_credentials: { words: 'The email or password is wrong' },
  forbidden: { words: 'You do not have permission for this' },
  not_a_member: { words: 'You are not a member of this organization' },
  missing_org_id: { words: 'Choose an organization first' },
  cross_project: { words: 'This belongs to another project' },
  test_key_forbidden: { words: 'A test key cannot do this: use a live key or the dashboard' },
  publishable_key_forbidden: { words: 'A publishable key cannot do this: use a server key' },
  webhook_refused: { words: 'The provider’s callback was refused' },
  invalid_signature: { words: 'The provider’s callback did not carry a valid signature' },
  invalid_identity_hash: { words: 'The identity hash does not match the project’s identity secret' },
  not_found: { words: 'Not found' },
  route_not_found: { words: 'Not found' },
  conflict: { words: 'This conflicts with what is already there' },
  invalid_state_transition: { words: 'This cannot be done in the current state' },
  idempotency_key_in_use: { words: 'A request with the same idempotency key is still running' },
  last_owner: { words: 'The organization needs at least one owner' },
  template_exists: { words: 'A template of that name already exists' },
  segment_in_use: { words: 'A draft or scheduled campaign, or another segment’s condition, uses this segment' },
  segment_cycle: { words: 'the segment would include itself, directly or through the segments its conditions name' },
  sms_sender_exists: { words: 'That sender is already set for the country' },
  email_domain_exists: { words: 'The project already has this domain' },
  already_member: { words: 'Already a member of the organization' },
  invitation_expired: { words: 'The invitation has expired: ask for a new one' },
  invitation_revoked: { words: 'The invitation was withdrawn' },
  invitation_used: { words: 'The invitation has already been used' },
  invitation_email_mismatch: { words: 'The invitation is for another address' },
  sign_in_required: { words: 'The invited address has an account: sign in, then accept' },
  campaign_not_resendable: { words: 'The campaign is no longer a draft' },
  campaign_not_cancellable: { words: 'Only a scheduled, sending or paused campaign can be cancelled' },
  campaign_not_pausable: { words: 'Only a sending campaign can be paused' },
  campaign_not_resumable: { words: 'Only a paused campaign can be resumed' },
  campaign_not_archivable: { words: 'Only a sent campaign can be archived' },
  complaint_permanent: { words: 'A complaint is permanent: the recipient marked mail as spam and is never mailed again' },
  invalid_csv: { words: 'The file is not a CSV Herald can read' },
  invalid_form: { words: 'The form sent is not valid' },

  // Why a message did not go (spec 7.4 and Herald's own).
  subscriber_not_found: { words: 'no subscriber matched the external id or token' },
  subscriber_unsubscribed: { words: 'the person unsubscribed' },
  subscriber_inactive: { words: 'the person is inactive (or a test key was used for a live subscriber)' },
  frequency_capped: { words: 'the project’s frequency cap held it back', action: SETTINGS },
  quiet_hours: { words: 'it was quiet hours in the person’s time zone', action: SETTINGS },
  provider_error: { words: 'the provider refused it or could not be reached' },
  payload_too_large: { words: 'the push is over 4 KB' },
  recipient_bounced: { words: 'the address bounced before and is suppressed' },
  recipient_complained: { words: 'the recipient marked mail as spam (suppressed for good)' },
  recipient_unsubscribed: { words: 'the person turned this channel off' },
  recipient_suppressed: { words: 'the address is on the suppression list' },
  recipient_opted_out: { words: 'the number opted out (STOP) or blocked the business' },
  sender_domain_not_verified: {
    words: (address) => {
      const domain = domainOf(address);
      return domain ? `the sender’s domain ${domain} is not verified` : 'the sender’s domain is not verified';
    },
    action: DOMAINS,
  },
  template_not_found: { words: 'the template does not exist', action: EMAIL_TEMPLATES },
  template_variables_missing: { words: 'the template needs values the send did not give' },
  template_render_failed: { words: 'the template could not be filled in' },
  template_not_approved: { words: 'Meta has not approved the template yet', action: WHATSAPP_TEMPLATES },
  outside_service_window: { words: 'free text can only go within 24 hours of the person’s last message: use an approved template' },
  provider_not_configured: { words: 'the project has no provider for this channel', action: EMAIL_PROVIDER },
  monthly_cap_reached: { words: 'the monthly email cap is reached' },
  sandbox_limit_reached: { words: 'the provider’s sandbox allows 200 messages a day, and they are used' },
  campaign_cancelled: { words: 'the campaign was cancelled before it went out' },
  invalid_phone: { words: 'the phone number is not a valid international number' },
  carrier_rejected: { words: 'the carrier refused the message' },
  unverified_sender_id: { words: 'no sender is set for the destination country', action: SMS_SETTINGS },
  sandbox: { words: 'sent with a test key, so never delivered' },

  // An automation's enrollments and steps.
  exit_step: { words: 'reached an exit step' },
  automation_archived: { words: 'the automation was archived' },
  too_many_steps: { words: 'went through too many steps at once (a loop?)' },
  step_not_found: { words: 'its step no longer exists' },
  no_email: { words: 'the person has no email address' },
  no_phone: { words: 'the person has no valid phone number' },
  no_push_subscription: { words: 'the person has no browser subscribed to push' },
  channel_off: { words: 'the person turned this channel off' },
  no_marketing_consent: { words: 'the person has not agreed to marketing on this channel' },

  // Suppressions (email) and opt-outs (SMS).
  manual: { words: 'added by the project' },
  unsubscribed: { words: 'the recipient asked for no more email' },
  bounced: { words: 'the mailbox does not exist (bounced)' },
  complained: { words: 'marked as spam (permanent)' },
  sms_stop: { words: 'sent STOP (or a synonym)' },
  twilio_21610: { words: 'Twilio refused a send: opted out with Twilio' },
};

/** A code in words; `skipped:no_email`, `failed:…` and `step_not_found:welcome` too; an unknown one with spaces. */
export function reasonWords(code: string | null | undefined, value?: string): string {
  if (!code) return '';
  const [head, rest] = splitCode(code);
  if (head === 'skipped' || head === 'failed') return `${head}: ${reasonWords(rest, value)}`;
  const reason = REASONS[head];
  if (!reason) return code.replaceAll('_', ' ');
  const words = typeof reason.words === 'function' ? reason.words(value) : reason.words;
  return head === 'step_not_found' && rest ? `${words} (${rest})` : words;
}

/** `skipped:no_email` → skipped, no_email; `step_not_found:welcome` → step_not_found, welcome. */
function splitCode(code: string): [string, string | undefined] {
  const colon = code.indexOf(':');
  return colon >= 0 ? [code.slice(0, colon), code.slice(colon + 1)] : [code, undefined];
}

/** Where to fix what the code names, if Herald has a page for it. */
export function reasonAction(code: string | null | undefined): ReasonAction | undefined {
  return code ? REASONS[splitCode(code)[0]]?.action : undefined;
}

/** An envelope's message, or the map's words where the message says less. */
export function envelopeWords(code: string, message: string): string {
  const reason = REASONS[code];
  return reason?.generic && typeof reason.words === 'string' ? reason.words : message;
}

/**
 * The code a detail's message ends with in brackets ("… (sender_domain_not_verified)"), if any: codes have an
 * underscore, so a bracketed word such as a step's id ("names no step (gone)") is not taken for one.
 */
export function codeIn(message: string): string | undefined {
  return /\(([a-z][a-z0-9]*_[a-z0-9_]+)\)\s*$/.exec(message)?.[1];
}

/**
 * A 422 detail's message in words: the service's "step welcome: " prefix (the field says the step) dropped, and a
 * message naming a code replaced by the code's words, said about `value` (the field's content).
 */
export function detailWords(message: string, value?: string): string {
  const plain = message.replace(/^step [^\s:]+: /, '');
  const code = codeIn(plain);
  return code && REASONS[code] ? reasonWords(code, value) : plain;
}

/** The names fields have in a person's words; anything else is its last part, spaced. */
const FIELD_LABELS: Record<string, string> = {
  'content.from.email': 'sender address',
  'content.from.name': 'sender name',
  'content.replyTo.email': 'reply-to address',
  'content.templateId': 'email template',
  'content.clickUrl': 'click URL',
  'content.templateName': 'template name',
  'content.html': 'HTML',
  'criteria.segmentId': 'saved segment',
  next: 'next step',
  trueBranch: 'step if true',
  falseBranch: 'step if false',
  id: 'step id',
};

const spaced = (name: string) => name.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();

/** `steps[4].content.from.email` → "sender address"; `filters.tags.all.0` → "tags all". The step itself is said apart. */
export function fieldWords(field: string): string {
  const path = field.replace(/^steps(?:\[\d+\]|\.\d+)\.?/, '').replace(/^(body|query|params)\./, '');
  if (FIELD_LABELS[path]) return FIELD_LABELS[path];
  const parts = path.split(/[.[\]]+/).filter((part) => part !== '' && !/^\d+$/.test(part) && part !== 'content' && part !== 'settings');
  return parts.map(spaced).join(' ');
}

/** The step a detail names (`steps[4]…` or `steps.4…`), zero-based. */
export function stepIndexOf(field: string): number | undefined {
  const match = /^steps(?:\[(\d+)\]|\.(\d+))/.exec(field);
  return match ? Number(match[1] ?? match[2]) : undefined;
}
