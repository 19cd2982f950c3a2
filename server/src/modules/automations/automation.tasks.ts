// The automations' recurring job: every minute, schedule and inactivity triggers enroll whoever they now select.
import type { CronItem, TaskList } from 'graphile-worker';
import type { AutomationService } from './automation.service.js';

const EVALUATE_TASK = 'automations.evaluate-triggers';

export function automationTasks(automations: AutomationService): TaskList {
  return {
    [EVALUATE_TASK]: async () => {
      await automations.evaluateTriggers();
    },
  };
}

export const automationCron: CronItem[] = [{ task: EVALUATE_TASK, match: '* * * * *', identifier: EVALUATE_TASK }];
