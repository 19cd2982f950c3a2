// Delivery tracking from the service worker: a signed token names the delivery, the event moves it forward.
import type { Db } from '../../db/database.js';
import { recordDeliveryEvents, type TrackingTokens } from '../../delivery/index.js';
import { notFound } from '../../shared/errors.js';

/** What a service worker reports on a push it received. */
export const TRACKING_EVENTS = ['delivered', 'clicked', 'dismissed'] as const;
export type TrackingEvent = (typeof TRACKING_EVENTS)[number];

export class TrackingService {
  constructor(
    private readonly db: Db,
    private readonly tokens: TrackingTokens,
  ) {}

  /**
   * Records a delivered, clicked or dismissed report; repeats are harmless. A token this instance did not sign,
   * or whose delivery is gone, is not found.
   */
  async record(token: string, event: TrackingEvent): Promise<void> {
    const deliveryId = this.tokens.verify(token);
    const found = deliveryId !== undefined && (await recordDeliveryEvents(this.db, [{ deliveryId, type: event, occurredAt: new Date() }])).has(deliveryId);
    if (!found) throw notFound('Tracking link');
  }
}
