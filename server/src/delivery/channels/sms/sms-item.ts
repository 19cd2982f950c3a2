// One SMS as the SMS adapter hands it to Twilio: its number, text and sender, and the project's account to send it through.

/** A project's Twilio account (its SMS configuration, credentials opened): who logs in, and whose token signs callbacks. */
export interface TwilioAccount {
  accountSid: string;
  /** The account SID, or an API key SID when the project gave one. */
  username: string;
  /** The auth token, or the API key's secret. */
  password: string;
}

export interface SmsItem {
  deliveryId: number;
  /** E.164. */
  to: string;
  body: string;
  from: string | undefined;
  messagingServiceSid: string | undefined;
  /** Where Twilio posts this message's status changes (`POST /sms/twilio/status/:projectId`). */
  statusCallback: string;
  ratePerSecond: number;
  /** Undefined for sandbox messages, which no provider receives. */
  account: TwilioAccount | undefined;
}
