// SES notifications through SNS: verified, then recorded on their deliveries, each SNS message once (email-feedback.ts).
import type { DeliveryRecords } from '../../delivery/index.js';
import { AppError } from '../../shared/errors.js';
import { recordEmailFeedback } from './email-feedback.js';
import { sesEvent, type SesEvent } from './ses-event.js';
import { SnsRefusal, type SnsVerifier } from './sns-message.js';

export type WebhookOutcome =
  | { status: 'confirmed' | 'ignored' }
  | { status: 'recorded'; applied: number; unknown: number };

export class SesWebhookService {
  constructor(
    private readonly records: DeliveryRecords,
    private readonly sns: SnsVerifier,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  async receive(payload: Record<string, unknown>): Promise<WebhookOutcome> {
    let message;
    try {
      message = await this.sns.verify(payload);
      if (message.Type === 'SubscriptionConfirmation') {
        await this.sns.confirm(message);
        return { status: 'confirmed' };
      }
    } catch (error) {
      if (error instanceof SnsRefusal) throw new AppError(403, error.reason, 'The notification could not be verified as coming from the configured SNS topic');
      throw error;
    }
    const event = message.Type === 'Notification' ? sesEvent(message.Message) : undefined;
    if (!event) return { status: 'ignored' };
    return this.record(event, message.MessageId);
  }

  private async record(event: SesEvent, snsMessageId: string): Promise<WebhookOutcome> {
    const named = await this.records.deliveriesByProviderIds('email', [event.messageId]);
    await recordEmailFeedback(this.records, named, { ...event, sourceEventId: snsMessageId }, this.clock());
    return { status: 'recorded', applied: named.length, unknown: named.length === 0 ? 1 : 0 };
  }
}
