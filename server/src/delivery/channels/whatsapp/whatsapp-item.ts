// One WhatsApp message as the WhatsApp adapter hands it to a provider, with the project's Cloud API account.
import type { WhatsAppContent } from '../../../db/schema.js';

/** A project's WhatsApp Business phone number on Meta's Cloud API (its channel configuration, credentials opened). */
export interface CloudApiAccount {
  phoneNumberId: string;
  accessToken: string;
}

export interface WhatsAppItem {
  deliveryId: number;
  /** E.164. */
  to: string;
  content: WhatsAppContent;
  /** Undefined for sandbox messages, which no provider receives. */
  account: CloudApiAccount | undefined;
}
