// The sending domains' background job: every hour, domains verified once are looked up again.
import type { CronItem, TaskList } from 'graphile-worker';
import { RECHECK_TASK, type EmailDomainService } from './email-domain.service.js';

export function emailDomainTasks(emailDomains: EmailDomainService): TaskList {
  return {
    [RECHECK_TASK]: async (_payload, helpers) => {
      for (const lost of await emailDomains.recheck()) {
        helpers.logger.warn(`sending domain ${lost.domain} of project ${lost.projectId} lost its DNS records: it is failing until they are back`, {
          problems: lost.problems,
        });
      }
    },
  };
}

// Records are usually changed by hand, and a record that vanishes stops the domain's mail: an hour bounds the surprise.
export const emailDomainCron: CronItem[] = [{ task: RECHECK_TASK, match: '0 * * * *', identifier: RECHECK_TASK }];
