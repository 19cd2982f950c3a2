// Transactional SMS (spec 4.8): an E.164 number, its segments counted, a sender provisioned for its country, the
// number's opt-out and its subscribers' preferences, then the engine's send (policy, inline send); one log row.
import { parsePhoneNumberFromString } from 'libphonenumber-js';
import type { Db } from '../../db/database.js';
import type { SmsContent } from '../../db/schema.js';
import { countSegments, type DeliveryEngine, type MessageRecord } from '../../delivery/index.js';
import { validationFailed } from '../../shared/errors.js';
import { newId } from '../../shared/ids.js';
import { messagingServiceOf, type SmsSenderService } from '../channels/index.js';
import type { ContactService } from '../subscribers/index.js';
import type { ProjectTenant } from '../tenancy.js';
import { addressOutcome, routeReason, type AddressEnvelope } from './send-outcome.js';
import * as repo from './transactional.repository.js';
import type { SMS_REASONS, SMS_STATUSES } from './transactional.schemas.js';

export type SmsReason = (typeof SMS_REASONS)[number];
export type SmsSendStatus = (typeof SMS_STATUSES)[number];

export interface SmsEnvelope extends AddressEnvelope<SmsSendStatus, SmsReason> {
  segments: number;
  encoding: 'GSM-7' | 'UCS-2';
  from: string | null;
}

export interface SmsInput {
  to: string;
  message: string;
  senderId?: string | undefined;
}

/** An engine reason (a policy refusal, a failure) as this route reports it. */
const deliveryReason = routeReason<SmsReason>([
  'quiet_hours',
  'frequency_capped',
  'invalid_phone',
  'carrier_rejected',
  'unverified_sender_id',
  'recipient_opted_out',
  'provider_not_configured',
]);

export class TransactionalSmsService {
  private readonly log: repo.SendLog;

  constructor(
    private readonly db: Db,
    private readonly delivery: DeliveryEngine,
    private readonly deps: { contacts: ContactService; senders: SmsSenderService },
  ) {
    this.log = repo.sendLog(db);
  }

  /** Sends one SMS now and logs the send; 422 when the text is empty or longer than MAX_SMS_SEGMENTS parts. */
  async send(sender: ProjectTenant, input: SmsInput, idempotencyKey: string | undefined): Promise<SmsEnvelope> {
    const content: SmsContent = { body: input.message };
    const problem = this.delivery.validate('sms', content)?.[0];
    if (problem) throw validationFailed([{ field: 'message', error: problem.error }]);
    return this.log(sender, 'sms', { to: input.to }, idempotencyKey, await this.deliver(sender, input, content));
  }

  private async deliver(sender: ProjectTenant, input: SmsInput, content: SmsContent): Promise<{ messageId: string | null; envelope: SmsEnvelope }> {
    const { segments, encoding } = countSegments(content.body);
    const refused = (reason: SmsReason) => ({ messageId: null, envelope: { success: true as const, status: 'refused' as const, messageId: null, reason, segments, encoding, from: null } });

    const phone = input.to.startsWith('+') ? parsePhoneNumberFromString(input.to) : undefined;
    if (!phone?.isValid()) return refused('invalid_phone');
    const to = phone.number as string;

    // Cached only while the engine hears of changes: a new provider, policy or zone applies to the next send.
    const project = (await this.delivery.sendingProjects([sender.projectId])).get(sender.projectId)!;
    const chosen = await this.deps.senders.choose(sender.projectId, phone.country, input.senderId, messagingServiceOf(project.channels.sms?.settings));
    if ('refusal' in chosen) return refused(chosen.refusal);

    // An opted-out or dead number is refused before any contact is made for it.
    const state = await this.delivery.addressState({ projectId: sender.projectId, sandbox: sender.sandbox, channel: 'sms', address: to });
    if (state.status === 'opted_out') return refused('recipient_opted_out');
    if (state?.status === 'unreachable') return refused(state.reason === 'twilio_21211' ? 'invalid_phone' : 'carrier_rejected');
    const holders = await this.deps.contacts.phoneRecipient(sender, to, 'sms');
    if (holders.channelOff) return refused('recipient_unsubscribed');

    const message: MessageRecord<'sms'> = {
      id: newId('msg'),
      projectId: sender.projectId,
      channel: 'sms',
      source: 'transactional',
      campaignId: null,
      sandbox: sender.sandbox,
      content,
      options: chosen.options,
    };
    const [result] = await this.delivery.send(message, [{ subscriberId: holders.subscriberId, destination: to, timezone: holders.timezone }], project);
    if ('refusal' in result!) return refused(deliveryReason(result.refusal));
    const outcome = addressOutcome(result!, sender.sandbox, deliveryReason);
    return { messageId: message.id, envelope: { success: true, messageId: message.id, ...outcome, segments, encoding, from: chosen.options.from ?? null } };
  }
}
