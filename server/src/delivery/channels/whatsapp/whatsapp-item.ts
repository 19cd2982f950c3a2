// One WhatsApp message as the WhatsApp adapter hands it to a provider, with the project's account: Meta's Cloud API or Twilio.
import type { WhatsAppContent } from '../../../db/schema.js';
import type { TwilioAccount } from '../sms/sms-item.js';

/** A project's WhatsApp Business phone number on Meta's Cloud API (its channel configuration, credentials opened). */
export interface CloudApiAccount {
  phoneNumberId: string;
  accessToken: string;
}

/** A project's WhatsApp sender on Twilio: its account, and the sender's number or the Messaging Service holding it. */
export interface TwilioWhatsAppAccount {
  twilio: TwilioAccount;
  /** E.164, sent as `From=whatsapp:<number>`. */
  from: string | undefined;
  messagingServiceSid: string | undefined;
}

export type WhatsAppAccount = ({ provider: 'meta' } & CloudApiAccount) | ({ provider: 'twilio' } & TwilioWhatsAppAccount);

export interface WhatsAppItem {
  deliveryId: number;
  /** E.164. */
  to: string;
  content: WhatsAppContent;
  /** Undefined for sandbox messages, which no provider receives. */
  account: WhatsAppAccount | undefined;
  /** Through Twilio: where it posts this message's status changes (`POST /whatsapp/twilio/status/:projectId?delivery=…`). */
  statusCallback: string;
}
