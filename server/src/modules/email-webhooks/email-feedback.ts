// What a provider reports about sent email — a bounce, a complaint, a delivery, an open, a click — recorded on its
// deliveries, with the suppression list fed by hard bounces, complaints and repeated soft bounces; shared by the SES
// webhook and DSNs.
import type { DeliveryEvent } from '../../db/schema.js';
import { suppressionStatus, type AddressState, type DeliveryRecords, type NamedDelivery } from '../../delivery/index.js';

/** This many soft bounces to one address within the window make it a hard bounce: a mailbox that keeps failing. */
export const SOFT_BOUNCE_LIMIT = 3;
export const SOFT_BOUNCE_WINDOW_DAYS = 7;

export interface EmailFeedback {
  type: DeliveryEvent;
  occurredAt: Date;
  /** Recipients a bounce or complaint names (lower-cased); empty when the report names none. */
  recipients: string[];
  detail: Record<string, unknown>;
  /** The provider's id of the report (an SNS message id): a report delivered twice is recorded once. */
  sourceEventId?: string | undefined;
}

/**
 * Records `feedback` on the deliveries it concerns — every open and click logged, each other event once, replays
 * changing nothing (`DeliveryRecords.recordEvents`) — then the address states it implies: a hard bounce suppresses the address
 * as `bounced`, a complaint as `complained`, and the SOFT_BOUNCE_LIMIT-th soft bounce within the window as `bounced`.
 * A report naming other recipients than a delivery's address says nothing of that address.
 */
export async function recordEmailFeedback(records: DeliveryRecords, named: readonly NamedDelivery[], feedback: EmailFeedback, now: Date): Promise<void> {
  await records.recordEvents(
    named.map((d) => ({
      deliveryId: d.id,
      type: feedback.type,
      occurredAt: feedback.occurredAt,
      detail: feedback.detail,
      logRepeat: true,
      sourceEventId: feedback.sourceEventId,
    })),
  );
  const states: AddressState[] = [];
  for (const d of named) {
    if (d.destination === null || (feedback.recipients.length > 0 && !feedback.recipients.includes(d.destination))) continue;
    const key = { projectId: d.projectId, sandbox: d.sandbox, channel: 'email' as const, address: d.destination };
    if (feedback.type === 'soft_bounced') {
      const since = new Date(now.getTime() - SOFT_BOUNCE_WINDOW_DAYS * 86_400_000);
      if ((await records.softBounces(key, since)) < SOFT_BOUNCE_LIMIT) continue;
    } else if (feedback.type !== 'bounced' && feedback.type !== 'complained') continue;
    const reason = feedback.type === 'complained' ? 'complained' : 'bounced';
    states.push({ ...key, status: suppressionStatus(reason), reason, source: 'provider' });
  }
  await records.recordAddressStates(states);
}
