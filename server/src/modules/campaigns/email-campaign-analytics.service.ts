// Campaign analytics (spec 2.3): the chart's series per time bucket (email's and push's), the top clicked links, and each recipient's
// outcome for the CSV export; found within the caller's reach like GET /email-campaigns/:id.
import type { z } from 'zod';
import type { Db } from '../../db/database.js';
import { notFound, validationFailed } from '../../shared/errors.js';
import type { Reach } from '../tenancy.js';
import * as repo from './email-campaign-analytics.repository.js';
import {
  AUTO_BUCKETS,
  BUCKET_SECONDS,
  MAX_BUCKETS,
  type BucketSize,
  type emailCampaignAnalytics,
  type emailCampaignLinks,
} from './email-campaign-analytics.schemas.js';

type Analytics = z.output<typeof emailCampaignAnalytics>;
type Tallies = Analytics['totals'];

const RECIPIENT_PAGE = 1_000;

/** A window moved out to whole buckets of one size. */
interface Window extends repo.BucketWindow {
  size: BucketSize;
}

const ORIGIN = repo.BUCKET_ORIGIN.getTime();
const floorTo = (ms: number, step: number) => ORIGIN + Math.floor((ms - ORIGIN) / step) * step;
const ceilTo = (ms: number, step: number) => ORIGIN + Math.ceil((ms - ORIGIN) / step) * step;

/**
 * Cuts [from, to) into buckets of `asked`, or of the smallest size giving at most AUTO_BUCKETS (a week's, if none
 * does): `from` moved back to its bucket's start and `to` forward to its bucket's end, so each bucket counts its whole
 * span. More than MAX_BUCKETS is a 422.
 */
export function bucketWindow(from: Date, to: Date, asked: BucketSize | undefined): Window {
  const sizes = Object.keys(BUCKET_SECONDS) as BucketSize[];
  const cut = (size: BucketSize) => {
    const step = BUCKET_SECONDS[size] * 1000;
    const start = floorTo(from.getTime(), step);
    const end = ceilTo(to.getTime(), step);
    return { size, seconds: BUCKET_SECONDS[size], from: new Date(start), to: new Date(end), count: (end - start) / step };
  };
  const window = asked ? cut(asked) : (sizes.map(cut).find((w) => w.count <= AUTO_BUCKETS) ?? cut('1w'));
  if (window.count > MAX_BUCKETS) {
    throw validationFailed([
      { field: asked ? 'query.bucket' : 'query.from', error: `the window would make ${window.count} buckets of ${window.size}: at most ${MAX_BUCKETS}` },
    ]);
  }
  return { size: window.size, seconds: window.seconds, from: window.from, to: window.to };
}

const zero = (): Tallies => ({
  sent: 0,
  delivered: 0,
  opened: { all: 0, unique: 0, human: 0 },
  clicked: { all: 0, unique: 0, human: 0 },
  bounced: 0,
  softBounced: 0,
  complained: 0,
  unsubscribed: 0,
});

/** The tally of each once-only event type of the log (push's `dismissed` has none here). */
const ONCE_ONLY = { delivered: 'delivered', bounced: 'bounced', soft_bounced: 'softBounced', complained: 'complained', unsubscribed: 'unsubscribed' } as const;

function add(into: Tallies, from: Tallies): void {
  for (const key of ['sent', 'delivered', 'bounced', 'softBounced', 'complained', 'unsubscribed'] as const) into[key] += from[key];
  for (const key of ['opened', 'clicked'] as const) {
    into[key].all += from[key].all;
    into[key].unique += from[key].unique;
    into[key].human += from[key].human;
  }
}

export class EmailCampaignAnalyticsService {
  constructor(
    private readonly db: Db,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  /**
   * The chart: every bucket of the window, empty ones included, and their sum. A push campaign's has the same series
   * (sent, delivered as its devices confirmed, clicked); the email-only ones stay at zero.
   */
  async analytics(
    reach: Reach,
    id: string,
    query: { from?: Date | undefined; to?: Date | undefined; bucket?: BucketSize | undefined },
    channel: 'email' | 'push' = 'email',
  ): Promise<Analytics> {
    const campaign = await this.find(reach, id, channel);
    const from = query.from ?? campaign.sentAt ?? campaign.createdAt;
    const to = query.to ?? this.clock();
    if (from.getTime() >= to.getTime()) throw validationFailed([{ field: query.from ? 'query.from' : 'query.to', error: 'the window must start before it ends' }]);
    const window = bucketWindow(from, to, query.bucket);

    const buckets = new Map<number, Tallies>();
    for (let start = window.from.getTime(); start < window.to.getTime(); start += window.seconds * 1000) buckets.set(start, zero());
    if (campaign.messageId !== null) {
      const message = { projectId: campaign.projectId, messageId: campaign.messageId };
      const [events, humans, sent] = await Promise.all([
        repo.eventBuckets(this.db, message, window),
        repo.humanBuckets(this.db, message, window),
        repo.sentBuckets(this.db, message, window),
      ]);
      for (const row of events) {
        const bucket = buckets.get(row.start)!;
        if (row.type === 'opened' || row.type === 'clicked') {
          bucket[row.type].all = row.all;
          bucket[row.type].unique = row.unique;
        } else if (row.type in ONCE_ONLY) {
          bucket[ONCE_ONLY[row.type as keyof typeof ONCE_ONLY]] = row.all;
        }
      }
      for (const row of humans) buckets.get(row.start)![row.type].human = row.human;
      for (const row of sent) buckets.get(row.start)!.sent = row.sent;
    }

    const totals = zero();
    for (const bucket of buckets.values()) add(totals, bucket);
    return {
      campaignId: campaign.id,
      bucket: window.size,
      bucketSeconds: window.seconds,
      from: window.from.toISOString(),
      to: window.to.toISOString(),
      buckets: [...buckets].map(([start, tallies]) => ({ start: new Date(start).toISOString(), ...tallies })),
      totals,
    };
  }

  /** The clicked links, most unique clickers first. */
  async links(reach: Reach, id: string, limit: number): Promise<z.output<typeof emailCampaignLinks>> {
    const campaign = await this.find(reach, id);
    const data = campaign.messageId === null ? [] : await repo.topLinks(this.db, { projectId: campaign.projectId, messageId: campaign.messageId }, limit);
    return { campaignId: campaign.id, data };
  }

  /** Checks the caller reaches the campaign now, then yields its recipients' outcomes page by page (constant memory). */
  async openRecipients(reach: Reach, id: string): Promise<AsyncGenerator<repo.RecipientOutcome>> {
    const campaign = await this.find(reach, id);
    const db = this.db;
    return (async function* () {
      if (campaign.messageId === null) return;
      const message = { projectId: campaign.projectId, messageId: campaign.messageId };
      let after: string | undefined;
      for (;;) {
        const page = await repo.recipientPage(db, message, after, RECIPIENT_PAGE);
        yield* page;
        if (page.length < RECIPIENT_PAGE) return;
        after = page[page.length - 1]!.subscriberId;
      }
    })();
  }

  private async find(reach: Reach, id: string, channel: 'email' | 'push' = 'email'): Promise<repo.AnalyticsCampaign> {
    const campaign = await repo.findCampaignOf(this.db, reach, channel, id);
    if (!campaign) throw notFound(channel === 'email' ? 'Email campaign' : 'Campaign');
    return campaign;
  }
}
