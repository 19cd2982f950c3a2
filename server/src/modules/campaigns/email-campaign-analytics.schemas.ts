// Zod schemas of an email campaign's analytics (spec 2.3): the chart's series per time bucket and the clicked links.
import { z } from 'zod';
import { instant, timestamp } from '../../http/schemas.js';

/** Bucket sizes, smallest first, in seconds. */
export const BUCKET_SECONDS = { '1m': 60, '5m': 300, '15m': 900, '1h': 3_600, '6h': 21_600, '1d': 86_400, '1w': 604_800 } as const;
export type BucketSize = keyof typeof BUCKET_SECONDS;
const BUCKET_SIZES = Object.keys(BUCKET_SECONDS) as [BucketSize, ...BucketSize[]];

/** The automatic size: the smallest giving at most this many buckets over the window. */
export const AUTO_BUCKETS = 120;
/** A window may be cut into no more than this many buckets, whatever size is asked for. */
export const MAX_BUCKETS = 1_000;

export const analyticsQuery = z.strictObject({
  from: instant
    .optional()
    .describe("Start of the window (a date is its UTC midnight); default: when the campaign started sending (its creation if it has not)"),
  to: instant.optional().describe('End of the window, exclusive (a date is its UTC midnight); default: now'),
  bucket: z
    .enum(BUCKET_SIZES)
    .optional()
    .describe(
      `The bucket size: 1m, 5m, 15m, 1h, 6h, 1d or 1w. Default: the smallest that cuts the window into at most ${AUTO_BUCKETS} ` +
        `buckets. A size that would make more than ${MAX_BUCKETS} → 422.`,
    ),
});

const count = (what: string) => z.number().int().describe(what);

const repeatable = (event: 'open' | 'click', counter: 'opened' | 'clicked') =>
  z.object({
    all: count(`Every ${event} logged: first ones, repeats and those flagged as machine ${event}s`),
    unique: count(`Deliveries whose first ${event} is in the bucket: what the campaign's \`${counter}\` counter counts`),
    human: count(
      `Deliveries whose first ${event} without machine signals (detail.machine) is in the bucket, repeat or not: a person's ` +
        `${event} after a proxy's or a scanner's counts at the person's. Summed over the buckets: the distinct human ${event}ers`,
    ),
  });

const tallies = {
  sent: count("Deliveries the provider accepted (their sent_at; the events log has no send event)"),
  delivered: count('Deliveries reported delivered, or implied by an open or a click (once per delivery)'),
  opened: repeatable('open', 'opened').describe('Opens of the open pixel (Herald\'s, or SES\'s with its open tracking)'),
  clicked: repeatable('click', 'clicked').describe('Clicks of tracked links'),
  bounced: count('Hard bounces reported after the provider accepted the email (once per delivery)'),
  softBounced: count('Soft bounces (once per delivery): the address is suppressed at its third in 7 days'),
  complained: count('Spam complaints (once per delivery)'),
  unsubscribed: count('Unsubscribes through the email: footer link, preference center, List-Unsubscribe (once per delivery)'),
};

export const emailCampaignAnalytics = z
  .object({
    campaignId: z.string(),
    bucket: z.enum(BUCKET_SIZES).describe('The bucket size used'),
    bucketSeconds: z.number().int().describe('The bucket size in seconds'),
    from: timestamp.describe("The window's start: the asked start moved back to its bucket's start"),
    to: timestamp.describe("The window's end, exclusive: the asked end moved forward to its bucket's end"),
    buckets: z
      .array(z.object({ start: timestamp.describe("The bucket's first instant; it lasts bucketSeconds"), ...tallies }))
      .describe('Every bucket of the window, oldest first, empty ones included (zeros)'),
    totals: z.object(tallies).describe("The buckets summed: the window's figures"),
  })
  .meta({
    id: 'EmailCampaignAnalytics',
    description:
      "An email campaign's events per type and time bucket, from its deliveries (sent) and its events log (every other " +
      'type). Buckets are UTC and aligned: on whole minutes, hours and days, and weeks start on Monday. Opens and clicks come ' +
      'three ways: all (every logged event), unique (per delivery, its first: sums to the counters) and human (per delivery, ' +
      'its first without machine signals). Over the default window, totals.opened.human / stats.sent of GET ' +
      '/email-campaigns/{id} is the human open rate, as openRate is opened / sent.',
  });

export const linksQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(100).default(20).describe('How many links (default 20, at most 100)'),
});

export const emailCampaignLinks = z
  .object({
    campaignId: z.string(),
    data: z.array(
      z.object({
        url: z.string().describe("The link's target as signed into the email (with the campaign's UTM parameters)"),
        clicks: count('Every click logged on it: repeats and machine-flagged ones included'),
        uniqueClickers: count('Deliveries (recipients) that clicked it at least once'),
        humanClickers: count('Deliveries that clicked it at least once without machine signals'),
      }),
    ),
  })
  .meta({
    id: 'EmailCampaignLinks',
    description: "An email campaign's clicked links, most unique clickers first (then most clicks, then by URL), over the campaign's whole life.",
  });
