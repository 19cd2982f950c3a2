// What happens after a send and what each address says, as modules record and read them: tracking hits, provider
// reports, and the address states (suppressions, opt-outs, consent, a person's last message) every send checks.
import type { Db } from '../db/database.js';
import type { Channel } from '../db/schema.js';
import * as addresses from './address-states.repository.js';
import type { AddressKey, AddressState, ConsentChange, SuppressionReason } from './address-states.repository.js';
import type { ProviderEvent } from './channel.js';
import * as events from './delivery-events.repository.js';
import type { NamedDelivery, ReportedEvent } from './delivery-events.repository.js';

/**
 * The one way in for these records: each verb takes the caller's transaction (`tx`) where the record must commit
 * with the caller's own writes, and uses its own connection otherwise.
 */
export class DeliveryRecords {
  constructor(private readonly db: Db) {}

  /** Events on deliveries Herald named (a tracking hit, an unsubscribe): the first of each type moves its delivery and counters. Answers the deliveries found. */
  recordEvents(reported: readonly ReportedEvent[], tx: Db = this.db): Promise<Set<number>> {
    return events.recordDeliveryEvents(tx, reported);
  }

  /** A verified provider callback's events, on the deliveries of the project and channel it came for (`applyProviderEvents`). */
  applyProviderEvents(scope: { projectId: string; channel: Channel }, reported: readonly ProviderEvent[]) {
    return events.applyProviderEvents(this.db, scope, reported);
  }

  /** The deliveries of `channel` these provider message ids name, in any project (callbacks verified at the instance). */
  deliveriesByProviderIds(channel: Channel, providerMessageIds: readonly string[]): Promise<NamedDelivery[]> {
    return events.findDeliveriesByProviderIds(this.db, channel, providerMessageIds);
  }

  /** The delivery a signed token names (a DSN's VERP address). */
  namedDelivery(deliveryId: number): Promise<NamedDelivery | undefined> {
    return events.findNamedDelivery(this.db, deliveryId);
  }

  /** The email delivery a signed tracking link names (its message or campaign, and its subscriber). */
  linkedDelivery(linked: { id: string; subscriberId: string }): Promise<{ id: number; projectId: string } | undefined> {
    return events.findLinkedDelivery(this.db, linked);
  }

  /** Flags a burst of clicks no person makes (`flagClickBurst`). */
  flagClickBurst(projectId: string, deliveryId: number, window: { since: Date; until: Date; links: number; signal: string }): Promise<void> {
    return events.flagClickBurst(this.db, projectId, deliveryId, window);
  }

  /** Soft bounces logged for deliveries to the address since `since`. */
  softBounces(key: AddressKey, since: Date): Promise<number> {
    return events.countSoftBounces(this.db, key, since);
  }

  /** Suppresses or opts out addresses (the strongest word wins); answers how many changed. */
  recordAddressStates(states: readonly AddressState[], tx: Db = this.db): Promise<number> {
    return addresses.recordAddressStates(tx, states);
  }

  /** Lifts an address's state (only `onlyReason`'s, when given): true lifted, false kept, undefined none. */
  liftAddressState(key: AddressKey, onlyReason?: SuppressionReason): Promise<boolean | undefined> {
    return addresses.liftAddressState(this.db, key, onlyReason);
  }

  /** Sets the marketing consent of addresses, in the caller's transaction (the contact's writes). */
  recordConsents(tx: Db, changes: readonly ConsentChange[], options?: { unlessSaid?: boolean }): Promise<void> {
    return addresses.recordConsents(tx, changes, options);
  }

  /** Notes that the address's person wrote at `at` (WhatsApp's service window). */
  recordInbound(key: AddressKey, at: Date): Promise<void> {
    return addresses.recordInbound(this.db, key, at);
  }
}
