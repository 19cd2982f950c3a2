// Transactional email (spec 4.8): a verified sender, a template or the send's own HTML rendered with its variables and
// the recipient's address states, then the engine's send (policy, monthly cap, inline send); one envelope, one log row.
// The sends that arrive together are checked and written in one transaction (group commit), each sent on its own.
import type { Db } from '../../db/database.js';
import type { EmailContent } from '../../db/schema.js';
import {
  type DeliveryEngine,
  type Hold,
  type MessageRecord,
  type SendingProject,
  type SuppressionReason,
} from '../../delivery/index.js';
import { AppError } from '../../shared/errors.js';
import { GroupCommit } from '../../shared/group-commit.js';
import { newId } from '../../shared/ids.js';
import type { EmailDomainService } from '../email-domains/index.js';
import type { EmailTemplateService, TemplateRender } from '../email-templates/index.js';
import type { ContactService, EmailHolders } from '../subscribers/index.js';
import type { SuppressionService } from '../suppressions/index.js';
import type { ProjectTenant } from '../tenancy.js';
import { addressOutcome, routeReason, type AddressEnvelope } from './send-outcome.js';
import * as repo from './transactional.repository.js';
import type { EMAIL_REASONS, EMAIL_STATUSES } from './transactional.schemas.js';

export type EmailReason = (typeof EMAIL_REASONS)[number];
export type EmailSendStatus = (typeof EMAIL_STATUSES)[number];

export interface EmailEnvelope extends AddressEnvelope<EmailSendStatus, EmailReason> {
  missing?: string[];
  field?: string;
  error?: string;
}

export interface EmailInput {
  to: string;
  subject?: string | undefined;
  htmlContent?: string | undefined;
  textContent?: string | undefined;
  templateId?: string | undefined;
  variables?: Record<string, unknown> | undefined;
  senderEmail: string;
  senderName?: string | undefined;
  replyTo?: string | undefined;
  essential?: boolean | undefined;
}

export interface TransactionalEmailDependencies {
  templates: EmailTemplateService;
  domains: EmailDomainService;
  contacts: ContactService;
  suppressions: SuppressionService;
}

/** The request's name of each part of the send's own content. */
const CONTENT_FIELDS: Record<string, string> = { html: 'htmlContent', text: 'textContent' };

const refused = (reason: EmailReason, extra: Pick<EmailEnvelope, 'missing' | 'field' | 'error'> = {}): EmailEnvelope => ({
  success: true,
  status: 'refused',
  messageId: null,
  reason,
  ...extra,
});

/**
 * Why the address may not be mailed, from its state on the suppression list and what its subscribers say (one row's
 * word holds for the address): a complaint, a bounce, the project's own suppression; an unsubscribe (or email turned
 * off) only without `essential`, which never lifts the others.
 */
function recipientRefusal(suppressed: SuppressionReason | undefined, holders: EmailHolders | undefined, essential: boolean): EmailReason | undefined {
  if (suppressed === 'complained') return 'recipient_complained';
  if (suppressed === 'bounced') return 'recipient_bounced';
  if (suppressed === 'manual') return 'recipient_suppressed';
  if (!essential && (suppressed === 'unsubscribed' || holders?.emailOff === true)) return 'recipient_unsubscribed';
  return undefined;
}

/** An engine reason as this route reports it; the engine's word for an opted-out address is the recipient's here. */
const deliveryReason = routeReason<EmailReason>(['recipient_bounced', 'recipient_complained', 'provider_not_configured', 'sandbox_limit_reached'], {
  subscriber_unsubscribed: 'recipient_unsubscribed',
});

/** A rendered email ready to go, as the group that checks and writes it gets it. */
interface Ready {
  sender: ProjectTenant;
  project: SendingProject;
  address: string;
  essential: boolean;
  message: MessageRecord<'email'>;
}

/** What the group made of one send: refused by its address's states, or as the engine wrote it. */
type Held = { refusal: EmailReason } | Hold;

/** Sends checked and written together at most; the others wait for the next group. */
const MAX_GROUP = 100;

export class TransactionalEmailService {
  private readonly holds: GroupCommit<Ready, Held>;
  private readonly log: repo.SendLog;

  constructor(
    private readonly db: Db,
    private readonly delivery: DeliveryEngine,
    private readonly deps: TransactionalEmailDependencies,
  ) {
    this.holds = new GroupCommit((group) => this.hold(group), { maxBatch: MAX_GROUP });
    this.log = repo.sendLog(db);
  }

  /**
   * Sends one email now and logs the send; 422 `sender_domain_not_verified` when senderEmail or replyTo is on no
   * verified sending domain of the project. A test key's email is rendered and recorded, never sent.
   */
  async send(sender: ProjectTenant, input: EmailInput, idempotencyKey: string | undefined): Promise<EmailEnvelope> {
    await this.checkSenders(sender.projectId, input);
    return this.log(sender, 'email', { to: input.to }, idempotencyKey, await this.deliver(sender, input));
  }

  /** The sender is the project's to prove, never Herald's to rewrite: each address on a verified domain, or 422. */
  private async checkSenders(projectId: string, input: EmailInput): Promise<void> {
    const named = [['senderEmail', input.senderEmail] as const, ...(input.replyTo === undefined ? [] : [['replyTo', input.replyTo] as const])];
    const details = [];
    for (const [field, address] of named) {
      if (await this.deps.domains.verifiedDomainFor(projectId, address)) continue;
      const domain = address.slice(address.lastIndexOf('@') + 1).toLowerCase();
      details.push({ field, error: `${domain} is not a verified sending domain of the project, nor a subdomain of one` });
    }
    if (details.length > 0) {
      throw new AppError(422, 'sender_domain_not_verified', 'The sender is not on a verified sending domain of the project', details);
    }
  }

  private async deliver(sender: ProjectTenant, input: EmailInput): Promise<{ envelope: EmailEnvelope; messageId: string | null }> {
    const none = { messageId: null };
    const rendered = await this.render(sender, input);
    // A part of the send's own content is named as the request names it; a template's, as the template does.
    const field = (part: string) => (input.templateId === undefined ? (CONTENT_FIELDS[part] ?? part) : part);
    if (!rendered.ok) {
      if (rendered.reason === 'template_variables_missing') return { ...none, envelope: refused(rendered.reason, { missing: rendered.missing }) };
      if (rendered.reason === 'template_render_failed') return { ...none, envelope: refused(rendered.reason, { field: field(rendered.field), error: rendered.error }) };
      return { ...none, envelope: refused(rendered.reason) };
    }
    const content: EmailContent = {
      subject: rendered.subject,
      html: rendered.html,
      text: rendered.text,
      preheader: rendered.preheader ?? undefined,
      from: { email: input.senderEmail, name: input.senderName },
      replyTo: input.replyTo === undefined ? undefined : { email: input.replyTo },
    };
    // What rendering made of the parts may still not go as an email (a value stretching the subject past 998 characters).
    const problem = this.delivery.validate('email', content)?.[0];
    if (problem) return { ...none, envelope: refused('template_render_failed', { field: field(problem.field ?? 'html'), error: problem.error }) };

    const essential = input.essential === true;
    // Cached only while the engine hears of changes: a change to the project's policy or zone applies to the next send.
    const project = (await this.delivery.sendingProjects([sender.projectId])).get(sender.projectId)!;
    const message: MessageRecord<'email'> = {
      id: newId('msg'),
      projectId: sender.projectId,
      channel: 'email',
      source: 'transactional',
      campaignId: null,
      sandbox: sender.sandbox,
      content,
      options: essential ? { essential } : {},
    };
    const held = await this.holds.submit({ sender, project, address: input.to.toLowerCase(), essential, message });
    if ('refusal' in held) return { ...none, envelope: refused(held.refusal) };

    const [result] = await this.delivery.sendHeld(message, project, [held]);
    if ('refusal' in result!) return { ...none, envelope: refused(result.refusal) };
    return { messageId: message.id, envelope: { success: true, messageId: message.id, ...addressOutcome(result!, sender.sandbox, deliveryReason) } };
  }

  /**
   * Checks and writes a group of sends in one transaction, each answered on its own: the recipient's suppressions
   * and subscribers (a suppressed address is refused before any contact is made for it), then the engine's write
   * (policy, monthly cap, the messages with their deliveries claimed for the inline send). Contacts hold their locks
   * until the commit, so a concurrent send to the same address counts these as in flight.
   */
  private async hold(group: Ready[]): Promise<Held[]> {
    return this.db.transaction(async (tx) => {
      const held: (Held | undefined)[] = new Array(group.length);
      const wanted = group.map(({ sender, address }) => ({ scope: sender, address }));
      const suppressed = await this.deps.suppressions.reasonsFor(tx, wanted);
      const open = group.flatMap((send, i) => {
        const refusal = recipientRefusal(suppressed[i], undefined, send.essential);
        if (refusal) held[i] = { refusal };
        return refusal ? [] : [i];
      });
      const holders = await this.deps.contacts.emailRecipients(tx, open.map((i) => wanted[i]!));

      open.forEach((i, j) => {
        const refusal = recipientRefusal(suppressed[i], holders[j], group[i]!.essential);
        if (refusal) held[i] = { refusal };
      });
      const units = open.flatMap((i, j) => {
        if (held[i]) return [];
        const { message, project, address } = group[i]!;
        return [{ i, unit: { message, project, targets: [{ subscriberId: holders[j]!.subscriberId, destination: address, timezone: holders[j]!.timezone }] } }];
      });
      const written = await this.delivery.hold(tx, units.map(({ unit }) => unit));
      units.forEach(({ i }, k) => (held[i] = written[k]![0]!));
      return held as Held[];
    });
  }

  /** The saved template of the key's project and environment, or the send's own content, rendered with its variables now. */
  private render(sender: ProjectTenant, input: EmailInput): Promise<TemplateRender> | TemplateRender {
    const variables = input.variables ?? {};
    if (input.templateId !== undefined) return this.deps.templates.render(sender, input.templateId, variables, { subject: input.subject });
    return this.deps.templates.renderContent({ subject: input.subject!, html: input.htmlContent!, text: input.textContent }, variables, CONTENT_FIELDS);
  }
}
