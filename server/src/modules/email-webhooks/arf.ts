// Complaint reports in the Abuse Reporting Format (RFC 5965) read into email feedback: the spam button of a mailbox
// provider's feedback loop, on plain SMTP what SES's Complaint event is.
import type { ParsedMail } from 'mailparser';
import type { EmailFeedback } from './email-feedback.js';
import { headerFields, reportParts } from './mime-report.js';

/**
 * Feedback types that are a recipient's complaint. `auth-failure` (a DMARC failure report, RFC 6591), `not-spam` and
 * `virus` say nothing of what the recipient wants, and record nothing.
 */
const COMPLAINTS = new Set(['abuse', 'fraud', 'other']);

export interface ArfReport {
  feedback: EmailFeedback;
  /** The quoted original message's Message-ID and Return-Path, when the report carries its headers. */
  original: { messageId: string | undefined; returnPath: string | undefined };
}

/**
 * The complaint an ARF report makes: a `multipart/report` with a `message/feedback-report` part whose `Feedback-Type`
 * is a complaint, and the original message (`message/rfc822`) or its headers (`text/rfc822-headers`) as its third
 * part. Undefined when the message is no ARF report; null when it is one that is no complaint. The complaint names no
 * recipient: feedback loops often redact the address (`Original-Rcpt-To`), and the delivery names it.
 */
export function arfReport(mail: ParsedMail, raw: Buffer, receivedAt: Date): ArfReport | null | undefined {
  const parts = reportParts(mail, raw);
  const report = parts?.find((part) => part.type === 'message/feedback-report');
  if (!parts || !report) return undefined;
  const fields = headerFields(report.body);
  const feedbackType = (fields.get('feedback-type') ?? '').toLowerCase();
  if (!COMPLAINTS.has(feedbackType)) return null;
  const quoted = parts.find((part) => part.type === 'message/rfc822' || part.type === 'text/rfc822-headers');
  // The quoted message's header section: up to its first empty line.
  const headers = quoted ? headerFields(quoted.body.split(/\r?\n\r?\n/, 1)[0]!) : new Map<string, string>();
  return {
    feedback: {
      type: 'complained',
      occurredAt: receivedAt,
      recipients: [],
      detail: { provider: 'arf', feedbackType, userAgent: fields.get('user-agent') },
    },
    original: { messageId: headers.get('message-id'), returnPath: headers.get('return-path') },
  };
}
