// Herald's own mail to people (invitations, password resets), sent through a project of their organization that can
// send email: its provider, from its sending domain, never tracked, never counted as a campaign or transactional send.
import type { Logger } from 'pino';
import type { Db } from '../../db/database.js';
import type { AccountMailer } from '../../delivery/index.js';
import * as repo from './account-mail.repository.js';

/** The local part account mail goes from, on the sending project's domain. */
export const ACCOUNT_MAIL_LOCAL_PART = 'no-reply';

/** What Herald's words say the email holds: plain text, and the same as HTML (written by the caller, escaped). */
export interface AccountMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
}

/** Emailed from an address, or why not, in words a person reads. */
export type AccountMailResult = { emailed: true; from: string } | { emailed: false; problem: string };

export const NO_SENDING_PROJECT =
  'No project of this organization can send email yet: a project needs an email provider and a verified sending domain.';

export class AccountMailService {
  constructor(
    private readonly db: Db,
    private readonly mailer: AccountMailer,
    private readonly logger?: Logger,
  ) {}

  /**
   * Sends through the first of `organizationIds` (in order) that has a project able to send email: its oldest such
   * project, from `no-reply@` its sending domain (the chosen one while verified, else the first verified by name).
   * Never throws for a refused or failed send: it answers why.
   */
  async send(organizationIds: readonly string[], message: AccountMessage): Promise<AccountMailResult> {
    for (const organizationId of organizationIds) {
      const project = await repo.findSendingProject(this.db, organizationId);
      if (!project) continue;
      const domain =
        project.chosenDomain !== null && project.verifiedDomains.includes(project.chosenDomain) ? project.chosenDomain : project.verifiedDomains[0]!;
      const from = `${ACCOUNT_MAIL_LOCAL_PART}@${domain}`;
      try {
        const outcome = await this.mailer.send(project.projectId, { from: { email: from, name: 'Herald' }, ...message });
        if (outcome.sent) return { emailed: true, from };
        return { emailed: false, problem: `The email provider of the sending project did not take it (${outcome.reason})${outcome.detail ? `: ${outcome.detail}` : ''}.` };
      } catch (error) {
        this.logger?.error({ err: error, projectId: project.projectId }, 'account mail failed');
        return { emailed: false, problem: 'Sending failed unexpectedly; the server log says why.' };
      }
    }
    return { emailed: false, problem: NO_SENDING_PROJECT };
  }
}
