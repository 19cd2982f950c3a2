// Push campaigns' kind: the 4 KB check, the push a dispatch writes, and the campaign of spec 2.2 with its stats.
import type { z } from 'zod';
import type { CampaignContent, CampaignSegment, PushContent } from '../../db/schema.js';
import * as delivery from '../../delivery/index.js';
import { rate, scheduleView, sharedView, type CampaignKind } from './campaign-kind.js';
import type { CampaignWithCounters } from './campaign.repository.js';
import type { campaignStats, pushCampaignSchemas } from './campaign.schemas.js';
import { applyUtm } from './utm.js';

type CampaignStats = z.output<typeof campaignStats>;
/** A push campaign as answered; its stored segment keeps the filters as written. */
export type Campaign = Omit<z.output<typeof pushCampaignSchemas.campaign>, 'segment'> & { segment: CampaignSegment };

export function pushStats(row: Pick<CampaignWithCounters, 'audienceSize' | 'counters'>): CampaignStats {
  const { sent, delivered, clicked, dismissed, failed, suppressed } = row.counters;
  return {
    queued: row.audienceSize,
    sent,
    delivered,
    clicked,
    dismissed,
    failed,
    suppressed,
    ctr: rate(clicked, sent),
    deliveryRate: rate(delivered, sent),
  };
}

const toPushContent = (content: CampaignContent): PushContent => ({
  title: content.title,
  body: content.body,
  url: content.clickUrl,
  iconUrl: content.iconUrl,
  imageUrl: content.imageUrl,
  actions: content.actions,
});

export function pushCampaignKind(validate: (content: PushContent) => delivery.ContentProblem[] | undefined): CampaignKind<CampaignContent, CampaignContent, Campaign> {
  return {
    channel: 'push',
    prepare: async (_scope, content) => content,
    check: async (_scope, content, utm) =>
      (validate(toPushContent(applyUtm(content, utm))) ?? []).map((problem) => ({
        field: problem.field ? `content.${problem.field}` : 'content',
        error: problem.error,
      })),
    message: (content, utm) => ({
      channel: 'push',
      content: toPushContent(applyUtm(content, utm)),
      options: { ttlSeconds: delivery.DEFAULT_PUSH_TTL_SECONDS, urgency: 'normal' },
    }),
    stats: pushStats,
    view: (row) => ({
      ...sharedView(row),
      // A push campaign is never paused.
      status: row.status as Campaign['status'],
      content: row.content as CampaignContent,
      schedule: scheduleView(row),
      stats: pushStats(row),
    }),
  };
}
