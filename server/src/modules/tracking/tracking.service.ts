// Delivery tracking from the service worker: a signed token names the delivery, the event moves it forward.
import type { DeliveryRecords, TrackingTokens } from '../../delivery/index.js';
import { notFound } from '../../shared/errors.js';

/** What a service worker reports on a push it received. */
export const TRACKING_EVENTS = ['delivered', 'clicked', 'dismissed'] as const;
export type TrackingEvent = (typeof TRACKING_EVENTS)[number];

export class TrackingService {
  constructor(
    private readonly records: DeliveryRecords,
    private readonly tokens: TrackingTokens,
  ) {}

  /**
   * Records a delivered, clicked or dismissed report; repeats are harmless. A token this instance did not sign,
   * or whose delivery is gone, is not found.
   */
  async record(token: string, event: TrackingEvent): Promise<void> {
    const deliveryId = this.tokens.verify(token);
    const found = deliveryId !== undefined && (await this.records.recordEvents([{ deliveryId, type: event, occurredAt: new Date() }])).has(deliveryId);
    if (!found) throw notFound('Tracking link');
  }
}
