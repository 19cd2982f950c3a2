// Delivery tracking from the service worker: a signed token names the delivery, the event moves it forward.
import type { Db } from '../../db/database.js';
import type { TrackingTokens } from '../../delivery/tracking-token.js';
import { notFound } from '../../shared/errors.js';
import * as repo from './tracking.repository.js';

export class TrackingService {
  constructor(
    private readonly db: Db,
    private readonly tokens: TrackingTokens,
  ) {}

  /**
   * Records a delivered, clicked or dismissed report; repeats are harmless. A token this instance did not sign,
   * or whose delivery is gone, is not found.
   */
  async record(token: string, event: repo.TrackingEvent): Promise<void> {
    const deliveryId = this.tokens.verify(token);
    const found = deliveryId !== undefined && (await repo.recordEvent(this.db, deliveryId, event));
    if (!found) throw notFound('Tracking link');
  }
}
