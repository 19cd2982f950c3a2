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
   * or whose delivery is gone, is not found. Returns which timestamps the report set first (see `recordEvent`).
   */
  async record(token: string, event: repo.TrackingEvent): Promise<repo.Transition> {
    const deliveryId = this.tokens.verify(token);
    const transition = deliveryId === undefined ? undefined : await repo.recordEvent(this.db, deliveryId, event);
    if (!transition) throw notFound('Tracking link');
    return transition;
  }
}
