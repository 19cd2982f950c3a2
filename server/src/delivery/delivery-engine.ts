// The delivery engine: claims due deliveries in batches under a lease, sends them through a channel provider,
// records each outcome, retries what may succeed later, and deactivates subscriptions that are gone or refused.
import type pg from 'pg';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Db } from '../db/database.js';
import { listen } from '../db/listen.js';
import type { PushContent } from '../db/schema.js';
import { PROJECT_CHANGES_CHANNEL } from '../modules/projects/project.repository.js';
import { NotifiedCache } from '../shared/notified-cache.js';
import { ProviderError, type ChannelProvider, type DeadRecipient, type DeliveryReason, type PushItem, type PushPayload, type SendOutcome } from './channel.js';
import * as policyRepo from './delivery-policy.repository.js';
import { DELIVERIES_CHANNEL } from './delivery-notifications.js';
import * as repo from './delivery.repository.js';
import type { ClaimedDelivery, DeliveryUpdate, MessageRecord, SendingProject } from './delivery.repository.js';
import { retryDelayMs } from './retry-policy.js';
import { trackingUrl, type TrackingTokens } from './tracking-token.js';

/** Where one delivery ended up after the engine handled it. */
export interface DeliveryResult {
  deliveryId: number;
  subscriberId: string;
  status: DeliveryUpdate['status'];
  reason: DeliveryReason | null;
  /** The subscription was found dead (gone, or refused by the endpoint guard) and the subscriber deactivated by this send. */
  deactivated: boolean;
}

export interface DeliveryProviders {
  push: ChannelProvider<PushItem>;
  sandbox: ChannelProvider<PushItem>;
}

export interface EngineOptions {
  db: Db;
  config: Pick<Config, 'delivery' | 'publicUrl' | 'push'>;
  providers: DeliveryProviders;
  tracking: TrackingTokens;
  logger?: Logger | undefined;
  /** Called when the worker loop goes idle or is told new work exists (tests and LISTEN/NOTIFY wire it). */
  sleep?: (ms: number, wake: AbortSignal) => Promise<void>;
  /** The time the delivery policy reads (quiet hours, cap windows); tests inject one. */
  clock?: () => Date;
  /**
   * Told the messages of each batch once its outcomes are recorded (campaigns detect their end with it). Its
   * errors are logged, never thrown: the outcomes are already committed.
   */
  onBatchRecorded?: (messages: readonly MessageRecord[]) => Promise<void>;
}

/** A claimed delivery cleared to go to its provider. */
interface Pending {
  delivery: ClaimedDelivery;
  item: PushItem;
  attempts: number;
  message: MessageRecord;
}

/** What the service worker receives for a message; `track` is the delivery's tracking base URL. */
export function pushPayload(content: PushContent, track: string): PushPayload {
  return {
    title: content.title,
    body: content.body,
    icon: content.iconUrl,
    image: content.imageUrl,
    badge: content.badge,
    url: content.url,
    actions: content.actions,
    track,
  };
}

// The wake signal lives until the next notify: a listener left on it by every idle poll would pile up.
const sleepFor = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const onAbort = () => (clearTimeout(timer), resolve());
    const timer = setTimeout(() => (signal?.removeEventListener('abort', onAbort), resolve()), ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/** Immutable per message id; kept for the batches of one campaign instead of re-read per batch. */
const MESSAGE_CACHE_SIZE = 1000;

export class DeliveryEngine {
  private readonly messages = new Map<string, MessageRecord>();
  /** Sending settings (VAPID keys, delivery policy, zone) per project id, trusted only while watchChanges listens. */
  private readonly projects = new NotifiedCache<SendingProject>({ maxEntries: 10_000, ttlMs: 30_000 });
  private running: Promise<void> | undefined;
  private stopping = new AbortController();
  private wake = new AbortController();
  private inFlight = 0;
  private readonly batches = new Set<Promise<void>>();

  constructor(private readonly options: EngineOptions) {}

  private get settings() {
    return this.options.config.delivery;
  }

  /** Starts the worker loop: claim, send, record, until stop(). */
  start(): void {
    this.running ??= this.loop();
  }

  /** Tells an idle loop to look for work now (a NOTIFY, or a message just queued in this process). */
  notify(): void {
    this.wake.abort();
  }

  /**
   * Listens on one connection for queued deliveries (they wake an idle loop) and for project changes (they evict
   * the project's sending settings). Until this runs, and whenever the listener is disconnected, each batch reads
   * its projects' settings from the database, so a change applies to the next batch whatever was missed. Resolves
   * with a function that stops listening.
   */
  async watchChanges(connection: pg.ClientConfig): Promise<() => Promise<void>> {
    const stop = await listen(connection, [DELIVERIES_CHANNEL, PROJECT_CHANGES_CHANNEL], {
      applicationName: 'herald-delivery-listener',
      onNotify: (payload, channel) => {
        if (channel === DELIVERIES_CHANNEL) return this.notify();
        try {
          this.forgetProject((JSON.parse(payload) as { projectId: string }).projectId);
        } catch {
          this.projects.clear();
        }
      },
      onListening: () => {
        this.projects.setTrusted(true);
        // Anything queued while not listening.
        this.notify();
      },
      onLost: (error) => {
        this.projects.setTrusted(false);
        this.options.logger?.warn({ err: error }, 'delivery listener lost its connection; polling and reading project settings per batch until it reconnects');
      },
    });
    return async () => {
      this.projects.setTrusted(false);
      await stop();
    };
  }

  /** After a project's settings changed or it was deleted in this process (others hear of it in watchChanges). */
  forgetProject(projectId: string): void {
    this.projects.evictWhere((project) => project.id === projectId);
  }

  /** Stops claiming, lets claimed batches finish and record their outcomes. */
  async stop(): Promise<void> {
    this.stopping.abort();
    this.wake.abort();
    await this.running;
    this.running = undefined;
  }

  private async loop(): Promise<void> {
    let nextReap = 0;
    while (!this.stopping.signal.aborted) {
      try {
        if (Date.now() >= nextReap) {
          const requeued = await repo.requeueExpiredLeases(this.options.db);
          if (requeued > 0) this.options.logger?.warn({ requeued }, 'requeued deliveries whose worker lease expired');
          nextReap = Date.now() + Math.max(1000, (this.settings.leaseSeconds * 1000) / 4);
        }
        const room = this.settings.concurrency - this.inFlight;
        if (room < Math.min(this.settings.batchSize, this.settings.concurrency) && this.batches.size > 0) {
          await Promise.race(this.batches);
          continue;
        }
        const claimed = await repo.claimDue(this.options.db, Math.min(this.settings.batchSize, room), this.settings.leaseSeconds);
        if (claimed.length === 0) {
          await this.idle();
          continue;
        }
        this.inFlight += claimed.length;
        const batch = this.deliver(claimed)
          .then(() => undefined)
          .catch((error: unknown) => this.options.logger?.error({ err: error }, 'delivery batch failed; its leases will expire and be retried'))
          .finally(() => {
            this.inFlight -= claimed.length;
            this.batches.delete(batch);
          });
        this.batches.add(batch);
      } catch (error) {
        this.options.logger?.error({ err: error }, 'delivery loop error');
        await sleepFor(this.settings.pollIntervalMs, this.stopping.signal);
      }
    }
    await Promise.allSettled(this.batches);
  }

  private async idle(): Promise<void> {
    if (this.wake.signal.aborted) this.wake = new AbortController();
    const sleep = this.options.sleep ?? sleepFor;
    await sleep(this.settings.pollIntervalMs, this.wake.signal);
    if (this.wake.signal.aborted) this.wake = new AbortController();
  }

  /**
   * Sends deliveries of `message` this process already holds (the transactional path, which just wrote the message
   * and read its project's sending settings to apply the policy, and so passes both rather than have them read
   * again): retryable failures are tried again inline while the retry budget lasts, then recorded as final. Returns
   * each delivery's final state.
   */
  async deliverNow(claimed: ClaimedDelivery[], message: MessageRecord, project: SendingProject): Promise<DeliveryResult[]> {
    return this.deliver(claimed, { inlineBudgetMs: this.settings.transactionalRetryBudgetMs, message, project });
  }

  /** One batch: check, send, record; with `inline`, retry inline instead of queueing. */
  private async deliver(
    claimed: ClaimedDelivery[],
    inline?: { inlineBudgetMs: number; message: MessageRecord; project: SendingProject },
  ): Promise<DeliveryResult[]> {
    const deadline = inline === undefined ? undefined : Date.now() + inline.inlineBudgetMs;
    const messages = inline ? new Map([[inline.message.id, inline.message]]) : await this.loadMessages(claimed);
    const projects = inline ? new Map([[inline.project.id, inline.project]]) : await this.loadProjects(claimed);
    const results: DeliveryResult[] = [];
    const updates: DeliveryUpdate[] = [];
    const dead: Record<DeadRecipient, string[]> = { gone: [], refused: [] };
    const final = (d: ClaimedDelivery, attempts: number, update: Omit<DeliveryUpdate, 'id' | 'fence' | 'attempts'>, deactivated = false) => {
      updates.push({ id: d.id, fence: d.attempts, attempts, ...update });
      results.push({ deliveryId: d.id, subscriberId: d.subscriberId, status: update.status, reason: update.reason, deactivated });
    };

    const candidates: Pending[] = [];
    for (const delivery of claimed) {
      const message = messages.get(delivery.messageId)!;
      if (delivery.messageCancelled) {
        final(delivery, delivery.attempts, { status: 'suppressed', reason: 'campaign_cancelled', providerCode: null, delayMs: 0 });
        continue;
      }
      const refusal = refusalOf(delivery, message);
      if (refusal) {
        final(delivery, delivery.attempts, { status: 'failed', reason: refusal, providerCode: null, delayMs: 0 });
        continue;
      }
      candidates.push({ delivery, item: this.pushItem(delivery, message, projects.get(delivery.projectId)!), attempts: delivery.attempts, message });
    }
    let pending = await this.obeyPolicy(claimed, candidates, projects, results);

    while (pending.length > 0) {
      const retries: typeof pending = [];
      let wait = 0;
      for (const sandbox of [false, true]) {
        const group = pending.filter((p) => p.message.sandbox === sandbox);
        if (group.length === 0) continue;
        const provider = sandbox ? this.options.providers.sandbox : this.options.providers.push;
        const outcomes = await provider.send(group.map((p) => p.item));
        group.forEach((p, i) => {
          const outcome: SendOutcome = outcomes[i] ?? { ok: false, error: missingOutcome(provider.name) };
          if (outcome.ok) {
            final(p.delivery, p.attempts, { status: 'sent', reason: null, providerCode: outcome.providerCode, delayMs: 0 });
            return;
          }
          const { error } = outcome;
          if (error.deadRecipient) dead[error.deadRecipient].push(p.delivery.subscriberId);
          const delay = retryDelayMs(error, p.attempts, this.settings);
          if (deadline !== undefined && delay !== undefined && Date.now() + delay <= deadline) {
            retries.push({ ...p, attempts: p.attempts + 1 });
            wait = Math.max(wait, delay);
          } else if (delay !== undefined && deadline === undefined) {
            final(p.delivery, p.attempts, { status: 'queued', reason: error.reason, providerCode: error.providerCode, delayMs: delay });
          } else {
            const deactivated = error.deadRecipient !== undefined;
            final(p.delivery, p.attempts, { status: 'failed', reason: error.reason, providerCode: error.providerCode, delayMs: 0 }, deactivated);
          }
        });
      }
      if (retries.length > 0) await sleepFor(wait);
      pending = retries;
    }

    await repo.deactivateDeadSubscriptions(this.options.db, dead);
    await this.record(this.options.db, updates);
    if (this.options.onBatchRecorded) {
      await this.options.onBatchRecorded([...messages.values()]).catch((error: unknown) =>
        this.options.logger?.error({ err: error }, 'batch-recorded hook failed'),
      );
    }
    return results;
  }

  private async record(db: Db, updates: DeliveryUpdate[]): Promise<void> {
    const recorded = await repo.recordOutcomes(db, updates);
    if (recorded < updates.length) {
      this.options.logger?.warn({ lost: updates.length - recorded }, 'outcomes dropped: their lease expired and another worker took them over');
    }
  }

  /**
   * Campaign deliveries obey their project's delivery policy here, when they go out (transactional sends apply it
   * before they send). During quiet hours a delivery waits in the queue until they end — a hold, not an attempt;
   * one over the frequency cap is suppressed. Cap decisions run under the per-subscriber cap lock, and the holds
   * and suppressions are recorded before it is released: every other `sending` row then is a push really going out.
   * Returns the candidates cleared to send.
   */
  private async obeyPolicy(
    claimed: ClaimedDelivery[],
    candidates: Pending[],
    projects: Map<string, SendingProject>,
    results: DeliveryResult[],
  ): Promise<Pending[]> {
    const governed = new Map<string, Pending[]>();
    const cleared: Pending[] = [];
    for (const candidate of candidates) {
      const policy = projects.get(candidate.delivery.projectId)!.deliveryPolicy;
      if (candidate.message.source !== 'campaign' || (!policy?.quietHours && !policy?.frequencyCap)) {
        cleared.push(candidate);
        continue;
      }
      const group = governed.get(candidate.delivery.projectId) ?? [];
      group.push(candidate);
      governed.set(candidate.delivery.projectId, group);
    }
    if (governed.size === 0) return cleared;

    const now = (this.options.clock ?? (() => new Date()))();
    // This batch's rows are `sending` already, yet only those needing no clearance go out undecided: the rest are
    // left out of the cap counts, and each one cleared is counted as decidePolicy goes.
    const going = new Set(cleared.map((c) => c.delivery.id));
    const undecided = claimed.filter((d) => !going.has(d.id)).map((d) => d.id);

    for (const [projectId, group] of governed) {
      const targets = group.map(({ delivery }) => ({ subscriberId: delivery.subscriberId, timezone: delivery.subscriberTimezone }));
      await this.options.db.transaction(async (tx) => {
        const decisions = await policyRepo.decidePolicy(tx, projects.get(projectId)!, targets, now, undecided);
        const updates: DeliveryUpdate[] = [];
        group.forEach((candidate, i) => {
          const decision = decisions[i]!;
          const { delivery } = candidate;
          if (decision.allowed) {
            cleared.push(candidate);
            return;
          }
          const update: DeliveryUpdate =
            decision.reason === 'quiet_hours'
              ? {
                  id: delivery.id,
                  fence: delivery.attempts,
                  attempts: delivery.attempts - 1,
                  status: 'queued',
                  reason: 'quiet_hours',
                  providerCode: null,
                  delayMs: Math.max(0, decision.until.getTime() - now.getTime()),
                }
              : { id: delivery.id, fence: delivery.attempts, attempts: delivery.attempts, status: 'suppressed', reason: 'frequency_capped', providerCode: null, delayMs: 0 };
          updates.push(update);
          results.push({ deliveryId: delivery.id, subscriberId: delivery.subscriberId, status: update.status, reason: update.reason, deactivated: false });
        });
        await this.record(tx, updates);
      });
    }
    return cleared;
  }

  private pushItem(delivery: ClaimedDelivery, message: MessageRecord, project: SendingProject): PushItem {
    return {
      deliveryId: delivery.id,
      endpoint: delivery.endpoint!,
      p256dh: delivery.p256dh!,
      auth: delivery.auth!,
      payload: pushPayload(message.content, trackingUrl(this.options.config.publicUrl, this.options.tracking.sign(delivery.id))),
      options: message.options,
      vapid: {
        publicKey: project.vapidPublicKey,
        privateKey: project.vapidPrivateKey,
        subject: project.vapidSubject ?? this.options.config.push.vapidSubject,
      },
    };
  }

  private async loadMessages(claimed: ClaimedDelivery[]): Promise<Map<string, MessageRecord>> {
    const missing = [...new Set(claimed.map((d) => d.messageId))].filter((id) => !this.messages.has(id));
    if (missing.length > 0) {
      for (const message of await repo.findMessages(this.options.db, missing)) {
        if (this.messages.size >= MESSAGE_CACHE_SIZE) this.messages.delete(this.messages.keys().next().value!);
        this.messages.set(message.id, message);
      }
    }
    return new Map(claimed.map((d) => [d.messageId, this.messages.get(d.messageId)!]));
  }

  private async loadProjects(claimed: ClaimedDelivery[]): Promise<Map<string, SendingProject>> {
    const version = this.projects.version();
    const found = new Map<string, SendingProject>();
    const missing: string[] = [];
    for (const id of new Set(claimed.map((d) => d.projectId))) {
      const cached = this.projects.get(id);
      if (cached) found.set(id, cached);
      else missing.push(id);
    }
    if (missing.length > 0) {
      for (const project of await repo.findSendingProjects(this.options.db, missing)) {
        found.set(project.id, project);
        this.projects.set(project.id, project, version);
      }
    }
    return found;
  }
}

/** Why a claimed delivery must not be sent at all, checked at send time (the subscriber may have changed). */
function refusalOf(delivery: ClaimedDelivery, message: MessageRecord): DeliveryReason | undefined {
  if (delivery.subscriberSandbox !== message.sandbox) return 'subscriber_inactive';
  if (delivery.subscriberStatus === 'unsubscribed' || !delivery.endpoint || !delivery.p256dh || !delivery.auth) return 'subscriber_unsubscribed';
  if (delivery.subscriberStatus !== 'active') return 'subscriber_inactive';
  return undefined;
}

const missingOutcome = (provider: string) =>
  new ProviderError(`${provider} returned no outcome`, { reason: 'provider_error', retryable: true, providerCode: 'no_outcome' });
