// SES notifications through SNS, as the email adapter's `ses` webhook read them: recorded on their deliveries (email-feedback.ts).
import type { ChannelWebhook, DeliveryRecords, ProviderEvent, WebhookRequest } from '../../delivery/index.js';
import { AppError } from '../../shared/errors.js';
import { recordEmailFeedback } from './email-feedback.js';

export type WebhookOutcome =
  | { status: 'confirmed' | 'ignored' }
  | { status: 'recorded'; applied: number; unknown: number };

export class SesWebhookService {
  constructor(
    private readonly records: DeliveryRecords,
    private readonly webhook: ChannelWebhook,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  async receive(request: WebhookRequest): Promise<WebhookOutcome> {
    // SNS's topics are the instance's: no project's credentials take part.
    const parsed = await this.webhook.verifyAndParse(request, {});
    if ('refused' in parsed) throw new AppError(403, parsed.code ?? 'bad_signature', 'The notification could not be verified as coming from the configured SNS topic');
    if (parsed.confirmed) return { status: 'confirmed' };
    if (parsed.events.length === 0) return { status: 'ignored' };
    const outcome = { status: 'recorded' as const, applied: 0, unknown: 0 };
    for (const event of parsed.events) {
      const applied = await this.record(event);
      outcome.applied += applied;
      if (applied === 0) outcome.unknown++;
    }
    return outcome;
  }

  /** SES's message ids are SES's own, so the delivery is found across projects; answers how many it landed on. */
  private async record(event: ProviderEvent): Promise<number> {
    const named = await this.records.deliveriesByProviderIds('email', [event.providerMessageId]);
    const feedback = { type: event.type, occurredAt: event.occurredAt, recipients: event.recipients ?? [], detail: event.detail ?? {}, sourceEventId: event.eventId };
    await recordEmailFeedback(this.records, named, feedback, this.clock());
    return named.length;
  }
}
