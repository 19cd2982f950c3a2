// Every background task Herald runs, keyed by job name; delivery, campaigns and automations register theirs here.
import type { CronItem, TaskList } from 'graphile-worker';
import { z } from 'zod';
import { DISPATCH_TASK, SWEEP_TASK } from '../modules/campaigns/campaign.service.js';
import type { Services } from '../services.js';

const dispatchPayload = z.object({ projectId: z.string(), campaignId: z.string() });

export function createTaskList(services: Services): TaskList {
  return {
    expire_idempotency_keys: async (_payload, helpers) => {
      const deleted = await services.idempotency.expire();
      if (deleted > 0) helpers.logger.info(`deleted ${deleted} expired idempotency keys`);
    },
    [DISPATCH_TASK]: async (payload) => {
      const { projectId, campaignId } = dispatchPayload.parse(payload);
      await services.campaigns.dispatch(projectId, campaignId);
    },
    [SWEEP_TASK]: () => services.campaigns.sweep(),
  };
}

/** Recurring jobs: each tick runs once across every worker process. */
export const cronItems: CronItem[] = [
  { task: 'expire_idempotency_keys', match: '0 * * * *', identifier: 'expire_idempotency_keys' },
  // The campaigns' backstop: a finished campaign whose worker died before marking it, a dispatch lost with its worker.
  { task: SWEEP_TASK, match: '* * * * *', identifier: SWEEP_TASK },
];
