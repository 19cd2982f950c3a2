// One email as the email adapter hands it to a provider: rendered for its recipient, with the project's account to send it through.
import type { EmailMailbox } from '../../../db/schema.js';

/** What an account may send, held across every worker. */
export interface AccountLimits {
  /** The account's documented sends per second. */
  ratePerSecond: number | undefined;
  /** The account is in its provider's sandbox: at most 200 messages per 24 hours and 1 per second (spec 8). */
  sandbox: boolean;
  /** The sandbox account's own 24-hour quota, when its provider reports one lower than 200. */
  per24Hours: number | undefined;
}

/**
 * How an SMTP connection is encrypted: `implicit`, TLS from the first byte (port 465); `required`, STARTTLS or no
 * message; `opportunistic`, STARTTLS when the server offers it, else in the clear.
 */
export const SMTP_TLS_MODES = ['required', 'opportunistic', 'implicit'] as const;
export type SmtpTls = (typeof SMTP_TLS_MODES)[number];

/** A project's SMTP server and account (its email configuration, credentials opened). */
export interface SmtpAccount {
  provider: 'smtp';
  host: string;
  port: number;
  /**
   * Unset in settings saved before the choice existed (`secure: true` reads as `implicit`): then `required`, or
   * `opportunistic` on a host the operator allowed (OUTBOUND_ALLOWED_HOSTS), decided when sending.
   */
  tls: SmtpTls | undefined;
  auth: { user: string; pass: string } | undefined;
  limits: AccountLimits;
}

/** A project's Amazon SES account (API v2), in one region. */
export interface SesAccount {
  provider: 'ses';
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Where SES publishes the account's events (bounces, complaints, deliveries) for Herald's SNS webhook. */
  configurationSet: string | undefined;
  limits: AccountLimits;
}

export type EmailAccount = SmtpAccount | SesAccount;

/** What one recipient receives, byte for byte the same on every attempt (the provider adds Date and DKIM-Signature). */
export interface RenderedEmail {
  /** `<sealed delivery id@from domain>` (EmailLinks.messageIdToken): one per delivery, so a retry is recognisably the same message. */
  messageId: string;
  from: EmailMailbox;
  replyTo: EmailMailbox | undefined;
  to: string;
  subject: string;
  html: string | undefined;
  text: string;
  /** List-Unsubscribe, List-Unsubscribe-Post, Feedback-ID, and List-Id on bulk mail. */
  headers: Record<string, string>;
  /** The envelope sender, `bounce+<token>@EMAIL_BOUNCE_DOMAIN` (VERP): bounces come back naming the delivery. */
  returnPath: string;
  /** The MIME boundaries' shared part, derived from the Message-ID instead of drawn at random. */
  baseBoundary: string;
}

export interface EmailItem {
  deliveryId: number;
  projectId: string;
  email: RenderedEmail;
  /** Undefined for sandbox messages, which no provider receives. */
  account: EmailAccount | undefined;
}
