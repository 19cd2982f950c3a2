// Transactional push (spec 4.8): one recipient's devices, then the engine's send (policy, inline send); one envelope, one log row.
import type { Db } from '../../db/database.js';
import type { PushAction, PushOptions } from '../../db/schema.js';
import { DEFAULT_PUSH_TTL_SECONDS, type DeliveryEngine, type MessageRecord } from '../../delivery/index.js';
import { newId } from '../../shared/ids.js';
import type { ProjectScope, ProjectTenant } from '../tenancy.js';
import { routeReason } from './send-outcome.js';
import * as repo from './transactional.repository.js';
import type { SEND_REASONS } from './transactional.schemas.js';

export type SendReason = (typeof SEND_REASONS)[number];

export interface SendEnvelope {
  success: true;
  subscriberFound: boolean;
  delivered: boolean;
  deactivated: boolean;
  reason: SendReason | null;
}

export interface SendInput {
  externalId?: string | undefined;
  token?: string | undefined;
  title: string;
  body: string;
  url?: string | undefined;
  iconUrl?: string | undefined;
  imageUrl?: string | undefined;
  badge?: string | undefined;
  ttl?: number | undefined;
  urgency?: PushOptions['urgency'] | undefined;
  topic?: string | undefined;
  actions?: PushAction[] | undefined;
}

/** A user has a handful of devices; more than this many under one externalId are not all sent to. */
const MAX_DEVICES = 100;

/**
 * When devices end differently and none got the push, the envelope names the reason of the device that came
 * closest to getting it: a failed attempt first (payload_too_large is the caller's to fix and would fail on every
 * device; provider_error may pass on a retry), then a policy hold (the device is reachable), then device states.
 */
const PRECEDENCE = [
  'payload_too_large',
  'provider_error',
  'quiet_hours',
  'frequency_capped',
  'subscriber_unsubscribed',
  'subscriber_inactive',
] as const satisfies readonly SendReason[];

type DeviceReason = (typeof PRECEDENCE)[number];

/** An engine reason as this route reports it: one it cannot give (a campaign's) would be a provider-side failure. */
const deviceReason = routeReason<DeviceReason>(PRECEDENCE);

/** What happened to one device. `sent` means accepted by the provider (the sandbox provider for a test key). */
type DeviceOutcome = { sent: true } | { sent: false; reason: DeviceReason; deactivated?: boolean };

const envelope = (subscriberFound: boolean, delivered: boolean, deactivated: boolean, reason: SendReason | null): SendEnvelope => ({
  success: true,
  subscriberFound,
  delivered,
  deactivated,
  reason,
});

/** One envelope for every device the send reached: delivered if any device got it, deactivated if any was gone. */
function summarize(outcomes: DeviceOutcome[], sandbox: boolean): SendEnvelope {
  const deactivated = outcomes.some((o) => !o.sent && o.deactivated === true);
  if (outcomes.some((o) => o.sent)) return sandbox ? envelope(true, false, false, 'sandbox') : envelope(true, true, deactivated, null);
  // Never empty here, and every device reason is in PRECEDENCE.
  const reasons = new Set(outcomes.map((o) => (o.sent ? undefined : o.reason)));
  return envelope(true, false, deactivated, PRECEDENCE.find((r) => reasons.has(r))!);
}

export class TransactionalService {
  private readonly log: repo.SendLog;

  constructor(
    private readonly db: Db,
    private readonly delivery: DeliveryEngine,
  ) {
    this.log = repo.sendLog(db);
  }

  /**
   * Sends one push to every active device of the recipient in the key's environment, now, and logs the send. A
   * test key's send goes through the sandbox provider: recorded, never delivered.
   */
  async send(sender: ProjectTenant, input: SendInput, idempotencyKey: string | undefined): Promise<SendEnvelope> {
    const recipient: repo.Recipient = input.externalId !== undefined ? { externalId: input.externalId } : { token: input.token! };
    return this.log(sender, 'push', recipient, idempotencyKey, await this.deliver(sender, recipient, input));
  }

  private async deliver(sender: ProjectTenant, recipient: repo.Recipient, input: SendInput) {
    const none = { messageId: null };
    const devices = await repo.findDevices(this.db, sender.projectId, recipient, MAX_DEVICES);
    if (devices.length === 0) return { ...none, envelope: envelope(false, false, false, 'subscriber_not_found') };
    // Devices of the other environment are not the caller's to reach (spec 7.4: subscriber_inactive).
    const own = devices.filter((d) => d.sandbox === sender.sandbox);
    if (own.length === 0) return { ...none, envelope: envelope(true, false, false, 'subscriber_inactive') };

    const outcomes: DeviceOutcome[] = [];
    const reachable: repo.Device[] = [];
    for (const d of own) {
      if (d.status === 'active' && d.pushable) reachable.push(d);
      else outcomes.push({ sent: false, reason: d.status === 'inactive' ? 'subscriber_inactive' : 'subscriber_unsubscribed' });
    }
    if (reachable.length === 0) return { ...none, envelope: summarize(outcomes, sender.sandbox) };

    // Cached only while the engine hears of changes: a change to the project's policy or zone applies to the next send.
    const project = (await this.delivery.sendingProjects([sender.projectId])).get(sender.projectId)!;
    const message: MessageRecord = {
      id: newId('msg'),
      projectId: sender.projectId,
      channel: 'push',
      source: 'transactional',
      campaignId: null,
      sandbox: sender.sandbox,
      content: {
        title: input.title,
        body: input.body,
        url: input.url,
        iconUrl: input.iconUrl,
        imageUrl: input.imageUrl,
        badge: input.badge,
        actions: input.actions,
      },
      options: { ttlSeconds: input.ttl ?? DEFAULT_PUSH_TTL_SECONDS, urgency: input.urgency ?? 'normal', topic: input.topic },
    };
    const targets = reachable.map((d) => ({ subscriberId: d.id, destination: null, timezone: d.timezone }));
    const results = await this.delivery.send(message, targets, project);
    for (const result of results) {
      if ('refusal' in result) outcomes.push({ sent: false, reason: deviceReason(result.refusal) });
      else outcomes.push(result.status === 'sent' ? { sent: true } : { sent: false, reason: deviceReason(result.reason), deactivated: result.deactivated });
    }
    // A message is written once some device's policy lets it go.
    const written = results.some((result) => !('refusal' in result));
    return { messageId: written ? message.id : null, envelope: summarize(outcomes, sender.sandbox) };
  }

  async listSends(scope: ProjectScope, filters: repo.SendFilters, page: number, pageSize: number) {
    const { rows, total } = await repo.listSends(this.db, scope, filters, pageSize, (page - 1) * pageSize);
    return {
      data: rows.map(({ send: row, delivery }) => ({
        id: row.id,
        channel: row.channel,
        apiKeyId: row.apiKeyId,
        sandbox: row.sandbox,
        recipient: row.recipient,
        messageId: row.messageId,
        idempotencyKey: row.idempotencyKey,
        outcome: row.outcome as unknown as SendEnvelope,
        reason: row.reason as SendReason | null,
        delivery: delivery && { status: delivery.status, reason: delivery.reason, providerCode: delivery.providerCode, providerError: delivery.providerError },
        createdAt: row.createdAt.toISOString(),
      })),
      page,
      pageSize,
      total,
    };
  }
}
