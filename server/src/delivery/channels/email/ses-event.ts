// SES event notifications (a configuration set's event destination, or an identity's notifications) read into what
// Herald records: delivery events by SES message id, and the addresses a bounce or complaint names.
import type { DeliveryEvent } from '../../../db/schema.js';

export interface SesEvent {
  /** The SES message id Herald stored as the delivery's provider message id. */
  messageId: string;
  type: DeliveryEvent;
  occurredAt: Date;
  /** Recipients a hard bounce or a complaint names (lower-cased), for the suppression list. */
  recipients: string[];
  detail: Record<string, unknown>;
}

interface SesNotification {
  eventType?: string;
  notificationType?: string;
  mail?: { messageId?: string; timestamp?: string };
  bounce?: { bounceType?: string; bounceSubType?: string; timestamp?: string; bouncedRecipients?: { emailAddress?: string; diagnosticCode?: string }[] };
  complaint?: { timestamp?: string; complaintFeedbackType?: string; complainedRecipients?: { emailAddress?: string }[] };
  delivery?: { timestamp?: string };
  open?: { timestamp?: string; userAgent?: string; ipAddress?: string };
  click?: { timestamp?: string; link?: string; userAgent?: string; ipAddress?: string };
}

/** Why an open or click was likely a machine's, by Herald's rules for its own links (modules/tracking): none for a person. */
export type MachineSignals = (kind: 'opened' | 'clicked', request: { method: undefined; userAgent: string | undefined; ip: string }) => string[];

const instant = (value: string | undefined) => {
  const date = new Date(value ?? Number.NaN);
  return Number.isNaN(date.getTime()) ? null : date;
};
const at = (value: string | undefined, fallback: string | undefined) => instant(value) ?? instant(fallback) ?? new Date();
const addresses = (list: { emailAddress?: string }[] | undefined) =>
  (list ?? []).flatMap((r) => (typeof r.emailAddress === 'string' ? [r.emailAddress.trim().toLowerCase()] : []));

/** SES's pixel and links see the same proxies and scanners as Herald's: flagged by the same rules. */
function engagement(
  kind: 'opened' | 'clicked',
  seen: { timestamp?: string; userAgent?: string; ipAddress?: string },
  sent: string | undefined,
  machineSignals: MachineSignals,
) {
  const occurredAt = at(seen.timestamp, sent);
  const userAgent = typeof seen.userAgent === 'string' ? seen.userAgent : undefined;
  const machine = machineSignals(kind, { method: undefined, userAgent, ip: String(seen.ipAddress ?? '') });
  return { occurredAt, detail: { provider: 'ses', userAgent, ...(machine.length > 0 && { machine }) } };
}

/**
 * Reads one SES notification (the SNS message's `Message`). Both shapes are read: `eventType` (configuration-set
 * events) and `notificationType` (identity notifications). A permanent bounce is `bounced`; a transient or undetermined
 * one is `soft_bounced`. Send, Reject, DeliveryDelay, RenderingFailure, Subscription and anything unknown give no event.
 */
export function sesEvent(text: string, machineSignals: MachineSignals): SesEvent | undefined {
  let notification: SesNotification;
  try {
    notification = JSON.parse(text) as SesNotification;
  } catch {
    return undefined;
  }
  const kind = notification.eventType ?? notification.notificationType;
  const messageId = notification.mail?.messageId;
  if (typeof messageId !== 'string' || typeof kind !== 'string') return undefined;
  const sent = notification.mail?.timestamp;
  switch (kind) {
    case 'Bounce': {
      const bounce = notification.bounce ?? {};
      const hard = bounce.bounceType === 'Permanent';
      return {
        messageId,
        type: hard ? 'bounced' : 'soft_bounced',
        occurredAt: at(bounce.timestamp, sent),
        recipients: addresses(bounce.bouncedRecipients),
        detail: { provider: 'ses', bounceType: bounce.bounceType, bounceSubType: bounce.bounceSubType, diagnosticCode: bounce.bouncedRecipients?.[0]?.diagnosticCode },
      };
    }
    case 'Complaint': {
      const complaint = notification.complaint ?? {};
      return {
        messageId,
        type: 'complained',
        occurredAt: at(complaint.timestamp, sent),
        recipients: addresses(complaint.complainedRecipients),
        detail: { provider: 'ses', feedbackType: complaint.complaintFeedbackType },
      };
    }
    case 'Delivery':
      return { messageId, type: 'delivered', occurredAt: at(notification.delivery?.timestamp, sent), recipients: [], detail: { provider: 'ses' } };
    case 'Open':
      return { messageId, type: 'opened', recipients: [], ...engagement('opened', notification.open ?? {}, sent, machineSignals) };
    case 'Click': {
      const { occurredAt, detail } = engagement('clicked', notification.click ?? {}, sent, machineSignals);
      return { messageId, type: 'clicked', occurredAt, recipients: [], detail: { ...detail, link: notification.click?.link } };
    }
    default:
      return undefined;
  }
}
