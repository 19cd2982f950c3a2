// Every background task Herald runs: each module declares its own tasks and recurring jobs, gathered here.
import type { CronItem, TaskList } from 'graphile-worker';
import { automationCron, automationTasks } from '../modules/automations/index.js';
import { campaignCron, campaignTasks } from '../modules/campaigns/index.js';
import { emailDomainCron, emailDomainTasks } from '../modules/email-domains/index.js';
import { idempotencyCron, idempotencyTasks } from '../modules/idempotency/index.js';
import type { Services } from '../services.js';

export function createTaskList(services: Services): TaskList {
  return {
    ...idempotencyTasks(services.idempotency),
    ...campaignTasks(services.campaigns),
    ...emailDomainTasks(services.emailDomains),
    ...automationTasks(services.automations),
  };
}

/** Recurring jobs: each tick runs once across every worker process. */
export const cronItems: CronItem[] = [...idempotencyCron, ...campaignCron, ...emailDomainCron, ...automationCron];
