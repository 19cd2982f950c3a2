// The providers' terms (authToken, apiKeySid, phone number id, SES keys, VAPID subject …) as a person reads them: a
// label, what the thing is and where the provider's console shows it. One place, for the forms and the stored settings.

export interface Term {
  label: string;
  help: string;
}

/** By the field's name in the API (`settings.<name>` or `credentials.<name>`). */
export const TERMS: Record<string, Term> = {
  // Twilio (SMS and WhatsApp).
  accountSid: { label: 'Account SID', help: 'Your Twilio account’s id, starting AC — on the Twilio Console’s home page, under Account Info.' },
  authToken: {
    label: 'Auth token',
    help: 'The account’s secret password for the API — in the Twilio Console, Account Info (or Account › API keys & tokens). Twilio signs its callbacks with it.',
  },
  apiKeySid: {
    label: 'API key SID',
    help: 'Optional: a revocable key, starting SK, for sending instead of the auth token — created in the Twilio Console, Account › API keys & tokens.',
  },
  apiKeySecret: { label: 'API key secret', help: 'The secret shown once when that API key was created in the Twilio Console.' },
  messagingServiceSid: {
    label: 'Messaging Service SID',
    help: 'A Twilio Messaging Service (a pool of senders), starting MG — in the Twilio Console, Messaging › Services.',
  },
  messagingServiceRatePerSecond: { label: 'Messaging Service sends per second', help: 'How many messages a second the service may send. Default 1 (one long code).' },
  helpReply: { label: 'HELP reply', help: 'What Herald answers when someone texts HELP; empty: no answer.' },
  from: { label: 'Sender number', help: 'The WhatsApp-enabled number in international format — in the Twilio Console, Messaging › Senders › WhatsApp senders.' },
  // Meta's WhatsApp Cloud API.
  phoneNumberId: {
    label: 'Phone number id',
    help: 'The business number’s id (not the number itself) — in Meta’s App Dashboard, WhatsApp › API Setup, or WhatsApp Manager › Phone numbers.',
  },
  wabaId: {
    label: 'WhatsApp Business Account id',
    help: 'The account whose message templates Herald synchronises — in Meta’s App Dashboard, WhatsApp › API Setup, beside the phone number id.',
  },
  accessToken: {
    label: 'Access token',
    help: 'A system user’s permanent token with the whatsapp_business_messaging and whatsapp_business_management permissions — Meta Business Settings › Users › System users › Generate token.',
  },
  appSecret: { label: 'App secret', help: 'The Meta app’s secret — App Dashboard › App settings › Basic. Herald checks every callback’s signature with it.' },
  verifyToken: { label: 'Verify token', help: 'Any secret of your choosing, at least 8 characters: type the same one in the app’s WhatsApp › Configuration › Webhook.' },
  // SMTP.
  host: { label: 'Host', help: 'The SMTP server’s name, from your email provider’s SMTP settings page.' },
  port: { label: 'Port', help: 'Usually 587 (STARTTLS) or 465 (TLS).' },
  tls: { label: 'Encryption', help: 'How the connection to the server is encrypted.' },
  secure: { label: 'Encrypted from the first byte', help: 'Set from the encryption chosen: TLS from the connection’s start (usually port 465).' },
  user: { label: 'User', help: 'The SMTP login, from the provider’s SMTP settings (often an email address or an API key name).' },
  pass: { label: 'Password', help: 'The SMTP password or API key given with that login.' },
  sandbox: { label: 'Sandbox account', help: 'The account is in its provider’s sandbox: at most 200 messages per 24 hours and 1 per second.' },
  ratePerSecond: { label: 'Sends per second', help: 'The account’s documented rate, if it has one; sends over it wait in the queue.' },
  // Amazon SES.
  region: { label: 'Region', help: 'The AWS region your SES account sends from, such as eu-west-1 — at the top right of the SES console.' },
  accessKeyId: { label: 'Access key id', help: 'An IAM user’s access key (starting AKIA) allowed to send with SES — AWS console › IAM › Users › Security credentials.' },
  secretAccessKey: { label: 'Secret access key', help: 'The secret shown once when that access key was created in IAM.' },
  configurationSet: {
    label: 'Configuration set',
    help: 'An SES configuration set whose SNS event destination posts to /email/ses-webhook, so bounces, complaints and deliveries come back to Herald — SES console › Configuration sets.',
  },
  // Web push and the browser SDK.
  vapidSubject: {
    label: 'VAPID subject',
    help: 'How push services (Google, Mozilla, Apple) can reach you about this project’s pushes: a mailto: address or an https: URL. Default: the instance’s VAPID_SUBJECT.',
  },
  vapidPublicKey: { label: 'VAPID public key', help: 'The key browsers subscribe with; the SDK reads it for you.' },
  identitySecret: {
    label: 'Identity secret (HMAC key)',
    help: 'A key your servers keep: they sign each signed-in user’s external id with it — externalIdHash = hex(HMAC-SHA256(secret, externalId)) — so no one else can claim that id.',
  },
};

/** A field's label, or its name spaced when no term is known. */
export function termLabel(name: string): string {
  return TERMS[name]?.label ?? name.replace(/([a-z])([A-Z])/g, '$1 $2').replace(/^./, (first) => first.toUpperCase());
}

/** A field's help text ('' when none). */
export const termHelp = (name: string): string => TERMS[name]?.help ?? '';
