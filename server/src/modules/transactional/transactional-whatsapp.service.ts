// Transactional WhatsApp (spec 4.8): an approved template or free-form text inside the 24-hour customer-service
// window, the number's opt-out and preferences, then the engine's send (policy, inline send); one envelope, one log row.
import type { Db } from '../../db/database.js';
import type { WhatsAppContent, WhatsAppTemplateComponent } from '../../db/schema.js';
import { type DeliveryEngine, type MessageRecord } from '../../delivery/index.js';
import { newId } from '../../shared/ids.js';
import type { ContactService } from '../subscribers/index.js';
import type { ProjectTenant } from '../tenancy.js';
import type { WhatsAppTemplateService } from '../whatsapp/index.js';
import { addressOutcome, routeReason, type AddressEnvelope } from './send-outcome.js';
import * as repo from './transactional.repository.js';
import type { WHATSAPP_REASONS, WHATSAPP_STATUSES } from './transactional.schemas.js';

export type WhatsAppReason = (typeof WHATSAPP_REASONS)[number];
export type WhatsAppSendStatus = (typeof WHATSAPP_STATUSES)[number];

/** How long after a person's last message free-form messages may be sent (Meta's customer-service window). */
export const SERVICE_WINDOW_MS = 24 * 60 * 60 * 1000;

export interface WhatsAppEnvelope extends AddressEnvelope<WhatsAppSendStatus, WhatsAppReason> {
  /** What went (or would have): the free-form text or the template. */
  messageType: 'text' | 'template' | null;
}

export interface WhatsAppInput {
  /** E.164, normalised by the schema. */
  to: string;
  message?: string | undefined;
  templateName?: string | undefined;
  templateLanguage?: string | undefined;
  templateComponents?: WhatsAppTemplateComponent[] | undefined;
  /** Through Twilio: the template's ContentVariables. */
  templateVariables?: Record<string, string> | undefined;
}

export interface TransactionalWhatsAppDependencies {
  templates: WhatsAppTemplateService;
  contacts: ContactService;
}

const refused = (reason: WhatsAppReason, messageType: WhatsAppEnvelope['messageType']): WhatsAppEnvelope => ({
  success: true,
  status: 'refused',
  messageId: null,
  reason,
  messageType,
});

/** An engine reason as this route reports it; the engine's word for an unsubscribed person is an opt-out here. */
const deliveryReason = routeReason<WhatsAppReason>(
  ['quiet_hours', 'frequency_capped', 'template_not_approved', 'template_not_found', 'outside_service_window', 'recipient_opted_out', 'provider_not_configured'],
  { subscriber_unsubscribed: 'recipient_opted_out' },
);

export class TransactionalWhatsAppService {
  private readonly log: repo.SendLog;

  constructor(
    private readonly db: Db,
    private readonly delivery: DeliveryEngine,
    private readonly deps: TransactionalWhatsAppDependencies,
    private readonly clock: () => Date,
  ) {
    this.log = repo.sendLog(db);
  }

  /** Sends one WhatsApp message now and logs the send. A test key's message is checked and recorded, never sent. */
  async send(sender: ProjectTenant, input: WhatsAppInput, idempotencyKey: string | undefined): Promise<WhatsAppEnvelope> {
    return this.log(sender, 'whatsapp', { to: input.to }, idempotencyKey, await this.deliver(sender, input));
  }

  private async deliver(sender: ProjectTenant, input: WhatsAppInput): Promise<{ envelope: WhatsAppEnvelope; messageId: string | null }> {
    const none = { messageId: null };
    const now = this.clock();
    // The person's word and their window are the live number's (Meta calls back for it alone), whichever key asks.
    const number = await this.delivery.addressState({ projectId: sender.projectId, sandbox: false, channel: 'whatsapp', address: input.to });
    const windowOpen = number.lastInboundAt !== null && now.getTime() - number.lastInboundAt.getTime() < SERVICE_WINDOW_MS;
    // With both, the text goes while the window is open and the template once it is closed.
    const useTemplate = input.templateName !== undefined && (input.message === undefined || !windowOpen);
    const messageType = useTemplate ? 'template' : 'text';

    // Cached only while the engine hears of changes: a new provider or policy applies to the next send.
    const project = (await this.delivery.sendingProjects([sender.projectId])).get(sender.projectId)!;
    let content: WhatsAppContent;
    if (useTemplate) {
      const chosen = await this.deps.templates.choose(sender.projectId, input.templateName!, input.templateLanguage);
      if (!chosen.ok) return { ...none, envelope: refused(chosen.reason, messageType) };
      const template = { name: chosen.name, language: chosen.language, components: input.templateComponents };
      if (project.channels.whatsapp?.provider === 'twilio') {
        // Twilio knows a template by its Content SID alone: one the registry lacks cannot be sent.
        if (chosen.providerTemplateId === null) return { ...none, envelope: refused('template_not_found', messageType) };
        content = { type: 'template', template: { ...template, contentSid: chosen.providerTemplateId, variables: input.templateVariables } };
      } else {
        content = { type: 'template', template };
      }
    } else {
      content = { type: 'text', text: input.message! };
    }
    if (number.status !== 'reachable') return { ...none, envelope: refused('recipient_opted_out', messageType) };
    if (!useTemplate && !windowOpen) return { ...none, envelope: refused('outside_service_window', messageType) };
    const holders = await this.deps.contacts.phoneRecipient(sender, input.to, 'whatsapp');
    if (holders.channelOff) return { ...none, envelope: refused('recipient_unsubscribed', messageType) };

    const message: MessageRecord<'whatsapp'> = {
      id: newId('msg'),
      projectId: sender.projectId,
      channel: 'whatsapp',
      source: 'transactional',
      campaignId: null,
      sandbox: sender.sandbox,
      content,
      options: {},
    };
    // A provider's opt-out answer (Meta's 131050, Twilio's 63014) opts the number out in the engine: the next send is
    // refused before it is written.
    const [result] = await this.delivery.send(message, [{ subscriberId: holders.subscriberId, destination: input.to, timezone: holders.timezone }], project);
    if ('refusal' in result!) return { ...none, envelope: refused(deliveryReason(result.refusal), messageType) };
    return { messageId: message.id, envelope: { success: true, messageId: message.id, ...addressOutcome(result!, sender.sandbox, deliveryReason), messageType } };
  }
}
