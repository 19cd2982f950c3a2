// Account mail sent now through a project's live email provider: no message or delivery row (so no campaign or
// transactional count), no retry, no draw on the monthly email cap.
import type { AccountEmail } from './channels/email/account-email.js';
import type { EmailAdapter } from './channels/email/email-adapter.js';
import type { DeliveryReason } from './delivery-reason.js';
import type { SendingProject } from './delivery.repository.js';

export type AccountMailOutcome = { sent: true } | { sent: false; reason: DeliveryReason; detail: string | null };

export interface AccountMailer {
  send(projectId: string, email: AccountEmail): Promise<AccountMailOutcome>;
}

/** The provider's words, one line, at most 200 characters. */
const shortened = (message: string) => {
  const line = message.replace(/\s+/g, ' ').trim();
  return line === '' ? null : line.length > 200 ? `${line.slice(0, 199)}…` : line;
};

/** `sendingProject`: the project's sending settings, credentials opened (`DeliveryEngine.sendingProjects`). */
export function createAccountMailer(email: EmailAdapter, sendingProject: (projectId: string) => Promise<SendingProject | undefined>): AccountMailer {
  return {
    async send(projectId, mail) {
      const project = await sendingProject(projectId);
      if (!project) return { sent: false, reason: 'provider_not_configured', detail: null };
      const addressed = email.accountItem(project, mail);
      if ('refusal' in addressed) return { sent: false, reason: addressed.refusal, detail: null };
      const [outcome] = await email.provider(false).send([addressed.item]);
      if (outcome?.ok) return { sent: true };
      return { sent: false, reason: outcome?.error.reason ?? 'provider_error', detail: outcome ? shortened(outcome.error.message) : null };
    },
  };
}
