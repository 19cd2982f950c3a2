// The campaigns' background jobs: dispatch (snapshot the audience), resume after the monthly cap, and the sweep that
// backs them up every minute.
import type { CronItem, TaskList } from 'graphile-worker';
import { z } from 'zod';
import { DISPATCH_TASK, RESUME_TASK, SWEEP_TASK, type CampaignService } from './campaign.service.js';

const dispatchPayload = z.object({ projectId: z.string(), campaignId: z.string() });

export function campaignTasks(campaigns: CampaignService): TaskList {
  return {
    [DISPATCH_TASK]: async (payload) => {
      const { projectId, campaignId } = dispatchPayload.parse(payload);
      await campaigns.dispatch(projectId, campaignId);
    },
    [RESUME_TASK]: async (payload) => {
      const { projectId, campaignId } = dispatchPayload.parse(payload);
      await campaigns.resumeAfterCap(projectId, campaignId);
    },
    [SWEEP_TASK]: () => campaigns.sweep(),
  };
}

// The backstop: a finished campaign whose worker died before marking it, a dispatch lost with its worker.
export const campaignCron: CronItem[] = [{ task: SWEEP_TASK, match: '* * * * *', identifier: SWEEP_TASK }];
