// Email opens and clicks: a signed link names the message or campaign and the subscriber; every hit is logged, and a
// delivery's first open and first click move it.
import type { DeliveryRecords, EmailLinks, LinkSubject } from '../../delivery/index.js';
import { BURST_LINKS, BURST_WINDOW_MS, machineSignals, type TrackingRequest } from './machine-signals.js';

/** Agents are free text from anyone: kept short. */
const MAX_AGENT_LENGTH = 256;

export class EmailTrackingService {
  constructor(
    private readonly records: DeliveryRecords,
    private readonly links: EmailLinks,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  /** Records an open of the pixel's delivery. False, and nothing recorded, when its signature does not hold. */
  async open(linked: LinkSubject, signature: string | undefined, request: TrackingRequest): Promise<boolean> {
    if (!signature || !this.links.verifyOpen(linked, signature)) return false;
    await this.record(linked, 'opened', request);
    return true;
  }

  /**
   * Records a click and answers where to send the recipient: the target signed into the link. Undefined, and nothing
   * recorded, when the signature does not cover exactly this target, campaign and subscriber — never a redirect to a
   * URL Herald did not sign.
   */
  async click(linked: LinkSubject, target: string | undefined, signature: string | undefined, request: TrackingRequest): Promise<string | undefined> {
    if (!target || !signature || !this.links.verifyClick(linked, target, signature)) return undefined;
    await this.record(linked, 'clicked', request, { url: target });
    return target;
  }

  /**
   * Every hit is logged with what made it — a mail opened again, a second link followed, a person after a scanner —
   * and a delivery's first open and first click move its status and counters (`DeliveryRecords.recordEvents`). A click that
   * makes a burst flags the burst's clicks. A link whose delivery is gone (its subscriber deleted) still works and
   * records nothing.
   */
  private async record(linked: LinkSubject, type: 'opened' | 'clicked', request: TrackingRequest, detail: Record<string, unknown> = {}): Promise<void> {
    const delivery = await this.records.linkedDelivery(linked);
    if (!delivery) return;
    const now = this.clock();
    const machine = machineSignals(type, request);
    const userAgent = request.userAgent?.slice(0, MAX_AGENT_LENGTH);
    await this.records.recordEvents([
      {
        deliveryId: delivery.id,
        type,
        occurredAt: now,
        detail: { ...detail, ...(userAgent && { userAgent }), ...(machine.length > 0 && { machine }) },
        logRepeat: true,
      },
    ]);
    if (type === 'clicked') {
      const window = { since: new Date(now.getTime() - BURST_WINDOW_MS), until: now, links: BURST_LINKS, signal: 'link_burst' };
      await this.records.flagClickBurst(delivery.projectId, delivery.id, window);
    }
  }
}
