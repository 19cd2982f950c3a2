// The delivery module as the rest of Herald uses it: the engine's verbs (send now, queue, pause, resume, withdraw,
// test sends), DeliveryRecords (what happened after a send, what each address says), the channels' adapters and
// providers the composition root plugs in, and their types. No repository function: modules call verbs.
export {
  DEFAULT_PUSH_TTL_SECONDS,
  type ChannelWebhook,
  type InboundMessage,
  type ContentProblem,
  type ProviderEvent,
  type WebhookRequest,
  type ChannelProvider,
  type PushItem,
} from './channel.js';
export type { DeliveryReason } from './delivery-reason.js';
export { personalizeEmail, recipientVariables, rewriteLinks } from './channels/email/email-render.js';
export { createOutboundGuard, type OutboundGuard } from './outbound-guard.js';
export { SMTP_TLS_MODES, type SmtpTls } from './channels/email/email-item.js';
export { ALPHANUMERIC_SENDER, allowsAlphanumericSender, senderCountries } from './channels/sms/sms-countries.js';
export { countSegments, MAX_SMS_SEGMENTS, type SmsSegments } from './channels/sms/sms-segments.js';
export type { NamedDelivery, ReportedEvent } from './delivery-events.repository.js';
export { DeliveryRecords } from './delivery-records.js';
export { DeliveryEngine, type DeliveryResult, type SendResult, type TestOutcome, type TestRecipient } from './delivery-engine.js';
export type { Hold, SendRefusal, SendTarget, SendUnit } from './send-now.js';
export {
  type ClaimedDelivery,
  type DeliveryTarget,
  type LocalDue,
  type MessageRecord,
  type ProviderConfig,
  type SendingProject,
  type SnapshotAudience,
} from './delivery.repository.js';
export { SIGNATURE_PARAMETER, type EmailLinks, type LinkSubject, createEmailLinks } from './email-links.js';
export { TRACKING_TOKEN_LENGTH, trackingUrl, type TrackingTokens, createTrackingTokens } from './tracking-token.js';
export {
  SUPPRESSION_REASONS,
  suppressionStatus,
  type AddressKey,
  type AddressState,
  type ConsentChange,
  type SuppressionReason,
} from './address-states.repository.js';
export { createEmailAdapter, type EmailAdapter } from './channels/email/email-adapter.js';
export type { AccountEmail } from './channels/email/account-email.js';
export { createAccountMailer, type AccountMailer, type AccountMailOutcome } from './account-mail.js';
export type { DkimKeys } from './channels/email/mail-composition.js';
export { createSesProvider, readSesAccount } from './channels/email/ses-provider.js';
export { createSmtpProvider } from './channels/email/smtp-provider.js';
export { createPushAdapter } from './channels/push/push-adapter.js';
export { createWebPushProvider } from './channels/push/web-push-provider.js';
export { createSandboxProvider } from './channels/sandbox.js';
export { createSmsAdapter } from './channels/sms/sms-adapter.js';
export { createTwilioProvider, readTwilioAccount, twilioAccount } from './channels/sms/twilio-provider.js';
export { createCloudApiProvider, listMessageTemplates, readPhoneNumber } from './channels/whatsapp/cloud-api.js';
export { createTwilioWhatsAppProvider } from './channels/whatsapp/twilio-whatsapp.js';
export { createWhatsAppAdapter } from './channels/whatsapp/whatsapp-adapter.js';
export { redisSendRate } from './send-rate.js';
