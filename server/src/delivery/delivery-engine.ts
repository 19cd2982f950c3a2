// The delivery engine: claims due deliveries in batches under a lease, sends them through their channel's adapter,
// records each outcome, retries what may succeed later, and deactivates subscriptions that are gone or refused.
import { allowAudienceSets } from '../db/audience-memory.js';
import type pg from 'pg';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Db } from '../db/database.js';
import { listen } from '../db/listen.js';
import { PROJECT_CHANGES_CHANNEL } from '../db/project-changes.js';
import { channelPolicy, type Channel, type MessageContent } from '../db/schema.js';
import { GroupCommit } from '../shared/group-commit.js';
import { NotifiedCache } from '../shared/notified-cache.js';
import { sleepFor } from '../shared/sleep.js';
import { ProviderError, type ChannelAdapter, type ContentProblem, type ProviderRate, type SendOutcome } from './channel.js';
import type { DeliveryReason } from './delivery-reason.js';
import * as policyRepo from './delivery-policy.repository.js';
import { findAddressState, type AddressKey } from './address-states.repository.js';
import { announceDeliveries, DELIVERIES_CHANNEL } from './delivery-notifications.js';
import * as repo from './delivery.repository.js';
import type {
  ClaimedDelivery,
  DeadRecipients,
  DeliveryTarget,
  DeliveryUpdate,
  LocalDue,
  MessageRecord,
  PushRecipient,
  SendingProject,
  SnapshotAudience,
  StoredSendingProject,
  SubscriberMergeFields,
} from './delivery.repository.js';
import { refundEmailQuota, reserveEmailQuota } from './email-quota.repository.js';
import { retryDelayMs } from './retry-policy.js';
import { holdSends, type Hold, type SendRefusal, type SendTarget, type SendUnit } from './send-now.js';
import { postgresSendRate, type SendRate } from './send-rate.js';
import { reserveWindowSends } from './send-window.repository.js';

/** What became of one target of a send now: refused before anything was written, or where its delivery ended up. */
export type SendResult = { refusal: SendRefusal } | DeliveryResult;

/** Where one delivery ended up after the engine handled it. */
export interface DeliveryResult {
  deliveryId: number;
  subscriberId: string;
  status: DeliveryUpdate['status'];
  reason: DeliveryReason | null;
  /** The subscription was found dead (gone, or refused by the endpoint guard) and the subscriber deactivated by this send. */
  deactivated: boolean;
}

export interface EngineOptions {
  db: Db;
  config: Pick<Config, 'delivery'>;
  /** One per channel the engine sends, each with its lane; deliveries of another channel wait in the queue. */
  adapters: readonly ChannelAdapter[];
  /** Where the providers' rates are held across workers (default: PostgreSQL; services use Redis with REDIS_URL). */
  sendRate?: SendRate | undefined;
  /** Opens a project's sealed channel credentials (`ChannelConfigService.open`). */
  openCredentials: (sealed: string) => Promise<Record<string, string>>;
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
  /**
   * Told the campaign messages whose email the monthly cap held, and when the cap frees (campaigns pause on it). Its
   * errors are logged, never thrown: the holds are already committed.
   */
  onCapReached?: (messages: readonly MessageRecord[], until: Date) => Promise<void>;
  /**
   * Other caches of a project's rows read when sending (the sending domains'), kept by the engine's listener as it
   * keeps its own: evicted when their project changes, trusted only while it listens.
   */
  projectCaches?: readonly ProjectCache[];
}

/** A cache of project rows that the engine's listener keeps (`EngineOptions.projectCaches`). */
export interface ProjectCache {
  forgetProject(projectId: string): void;
  setTrusted(trusted: boolean): void;
}

/** A claimed delivery cleared to go to its provider, as its adapter addressed it. */
interface Pending {
  delivery: ClaimedDelivery;
  adapter: ChannelAdapter;
  item: unknown;
  attempts: number;
  message: MessageRecord;
}

/**
 * The provider code of a delivery its provider's rate kept back: held in the queue (reason null, the attempt not
 * counted) until its turn, or, on the transactional path, failed when no slot frees within the retry budget.
 */
export const SEND_RATE_CODE = 'send_rate';

/**
 * How far ahead a worker books slots of its providers' rates, holding those deliveries until their instant; the rest
 * go back to the queue at their turn. What waits in memory is at most a rate's two seconds.
 */
const RATE_BOOKING_MS = 2000;
/**
 * A rate's slots are spaced as if its second lasted 80 ms longer (a rate of 25/s books one slot per 43.2 ms: 92.6 % of
 * it), and a booked send that wakes more than 20 ms past its slot books again instead of going. What the check cannot
 * see — the event loop holding the request back after it, the network — may then delay one send by up to 80 ms more
 * than another and still no sliding second of the provider's clock holds more than the documented rate. Measured at
 * the provider's end (`npm run bench -- sms`): with 40 ms, 12 of 30,000 SMS closed a second one over the rate; with 80, none of 100,000.
 */
const SLOT_SLACK_MS = 80;
const SLOT_LATE_MS = 20;

/** The rate a provider's slots are booked at: its documented one, spaced by SLOT_SLACK_MS. */
const slotRate = (rate: ProviderRate) => (rate.perSecond * 1000) / (1000 + SLOT_SLACK_MS);

/** Immutable per message id; kept for the batches of one campaign instead of re-read per batch. */
const MESSAGE_CACHE_SIZE = 1000;
/** Inline sends whose outcomes one statement records at most. */
const MAX_INLINE_GROUP = 100;

export class DeliveryEngine {
  private readonly messages = new Map<string, MessageRecord>();
  /** Sending settings (VAPID keys, delivery policy, zone) per project id, trusted only while watchChanges listens. */
  private readonly projects = new NotifiedCache<SendingProject>({ maxEntries: 10_000, ttlMs: 30_000 });
  private running: Promise<void> | undefined;
  private stopping = new AbortController();
  private wake = new AbortController();
  private wakeWait: { signal: AbortSignal; promise: Promise<void> } | undefined;
  /** Sends in flight per channel (its lane). */
  private readonly inFlight = new Map<Channel, number>();
  private readonly batches = new Set<Promise<void>>();
  private readonly adapters: ReadonlyMap<Channel, ChannelAdapter>;
  private readonly sendRate: SendRate;
  /** Wakes the loop when the first deliveries held for their rate come due (rows again, announced by no NOTIFY). */
  private heldWake: { at: number; timer: NodeJS.Timeout } | undefined;
  /** The outcomes of inline sends that end together, recorded by one statement (group commit). */
  private readonly inlineOutcomes: GroupCommit<DeliveryUpdate[], void>;

  constructor(private readonly options: EngineOptions) {
    this.adapters = new Map(options.adapters.map((adapter) => [adapter.channel, adapter]));
    this.sendRate = options.sendRate ?? postgresSendRate(options.db);
    this.inlineOutcomes = new GroupCommit(
      async (sends) => {
        await this.record(options.db, sends.flat());
        return sends.map(() => undefined);
      },
      { maxBatch: MAX_INLINE_GROUP },
    );
  }

  private get settings() {
    return this.options.config.delivery;
  }

  /** Whether a message's sends draw from the monthly cap: live, on a channel whose adapter says so (email). */
  private capped(message: MessageRecord): boolean {
    return !message.sandbox && this.adapters.get(message.channel)?.monthlyCap === true;
  }

  private now(): Date {
    return this.options.clock?.() ?? new Date();
  }

  /** Starts the worker loop: claim, send, record, until stop(). */
  start(): void {
    this.running ??= this.loop();
  }

  /** What keeps `content` from going on `channel`, as its adapter judges; a channel no adapter sends cannot take it. */
  validate<C extends Channel>(channel: C, content: MessageContent<C>): ContentProblem[] | undefined {
    const adapter = this.adapters.get(channel);
    return adapter ? adapter.validate(content) : [{ error: `no provider sends ${channel} messages` }];
  }

  /** Tells an idle loop to look for work now (a NOTIFY, or a message just queued in this process). */
  notify(): void {
    this.wake.abort();
  }

  /**
   * Listens on one connection for queued deliveries (they wake an idle loop; `deliveries: false` in a process that
   * runs no loop) and for project changes (they evict the project's sending settings). Until this runs, and whenever
   * the listener is disconnected, each batch — and each transactional send — reads its projects' settings from the
   * database, so a change applies to the next one whatever was missed. Resolves with a function that stops listening.
   */
  async watchChanges(connection: pg.ClientConfig, options: { deliveries?: boolean } = {}): Promise<() => Promise<void>> {
    const caches = [this.projects, ...(this.options.projectCaches ?? [])];
    const trust = (trusted: boolean) => caches.forEach((cache) => cache.setTrusted(trusted));
    const channels = options.deliveries === false ? [PROJECT_CHANGES_CHANNEL] : [DELIVERIES_CHANNEL, PROJECT_CHANGES_CHANNEL];
    const stop = await listen(connection, channels, {
      applicationName: 'herald-delivery-listener',
      onNotify: (payload, channel) => {
        if (channel === DELIVERIES_CHANNEL) return this.notify();
        try {
          this.forgetProject((JSON.parse(payload) as { projectId: string }).projectId);
        } catch {
          // An unreadable notification may name any project: trusted anew, every cache starts empty.
          trust(true);
        }
      },
      onListening: () => {
        trust(true);
        // Anything queued while not listening.
        this.notify();
      },
      onLost: (error) => {
        trust(false);
        this.options.logger?.warn({ err: error }, 'delivery listener lost its connection; polling and reading project settings per batch until it reconnects');
      },
    });
    return async () => {
      trust(false);
      await stop();
    };
  }

  /** After a project's settings changed or it was deleted in this process (others hear of it in watchChanges). */
  forgetProject(projectId: string): void {
    this.projects.evictWhere((project) => project.id === projectId);
    for (const cache of this.options.projectCaches ?? []) cache.forgetProject(projectId);
  }

  /** Stops claiming, lets claimed batches finish and record their outcomes. */
  async stop(): Promise<void> {
    this.stopping.abort();
    this.wake.abort();
    await this.running;
    this.running = undefined;
    clearTimeout(this.heldWake?.timer);
    this.heldWake = undefined;
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
        // Each channel claims into its own lane: a lane full of slow sends leaves the others claiming.
        let claimedAny = false;
        let laneFull = false;
        for (const channel of this.adapters.keys()) {
          const limit = this.settings.concurrency[channel];
          const room = limit - (this.inFlight.get(channel) ?? 0);
          if (room < Math.min(this.settings.batchSize, limit)) {
            laneFull = true;
            continue;
          }
          const claimed = await repo.claimDue(this.options.db, channel, Math.min(this.settings.batchSize, room), this.settings.leaseSeconds);
          if (claimed.length > 0) {
            claimedAny = true;
            this.launch(channel, claimed);
          }
        }
        if (claimedAny) continue;
        // A full lane frees up when one of its batches ends; new work for another lane wakes the loop at once.
        if (laneFull && this.batches.size > 0) {
          await Promise.race([...this.batches, this.woken()]);
          if (this.wake.signal.aborted) this.wake = new AbortController();
        } else {
          await this.idle();
        }
      } catch (error) {
        this.options.logger?.error({ err: error }, 'delivery loop error');
        await sleepFor(this.settings.pollIntervalMs, this.stopping.signal);
      }
    }
    await Promise.allSettled(this.batches);
  }

  /** Resolves at the next notify(); one promise per wake signal, so waiting often adds no listener. */
  private woken(): Promise<void> {
    const { signal } = this.wake;
    if (this.wakeWait?.signal !== signal) {
      this.wakeWait = { signal, promise: new Promise((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true }))) };
    }
    return this.wakeWait.promise;
  }

  private launch(channel: Channel, claimed: ClaimedDelivery[]): void {
    this.inFlight.set(channel, (this.inFlight.get(channel) ?? 0) + claimed.length);
    let counted = claimed.length;
    const release = (count: number) => {
      if (count === 0) return;
      counted -= count;
      this.inFlight.set(channel, this.inFlight.get(channel)! - count);
      this.notify();
    };
    const batch = this.deliver(claimed, undefined, release)
      .then(() => undefined)
      .catch((error: unknown) => this.options.logger?.error({ err: error }, 'delivery batch failed; its leases will expire and be retried'))
      .finally(() => {
        this.inFlight.set(channel, this.inFlight.get(channel)! - counted);
        this.batches.delete(batch);
      });
    this.batches.add(batch);
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
   * again): retryable failures are tried again inline while the retry budget lasts, then recorded as final — or,
   * with `queueAfterBudget` (email, which may arrive a little late), left in the queue for the workers as a campaign
   * delivery would be: a retry after its backoff, or a hold for its provider's rate. Returns each delivery's state.
   */
  async deliverNow(
    claimed: ClaimedDelivery[],
    message: MessageRecord,
    project: SendingProject,
    options: { queueAfterBudget?: boolean } = {},
  ): Promise<DeliveryResult[]> {
    return this.deliver(claimed, {
      inlineBudgetMs: this.settings.transactionalRetryBudgetMs,
      queueAfterBudget: options.queueAfterBudget === true,
      message,
      project,
    });
  }

  /**
   * Sends a message now (a transactional send): the delivery policy, the monthly email cap and the write in one
   * transaction (`hold`), then the inline send (`sendHeld`). Answers each target in order: its refusal, or where its
   * delivery ended up. `project` is the one the caller read to address the send (its settings, once).
   */
  async send(message: MessageRecord, targets: readonly SendTarget[], project: SendingProject): Promise<SendResult[]> {
    const [holds] = await this.options.db.transaction((tx) => this.hold(tx, [{ message, project, targets }]));
    return this.sendHeld(message, project, holds!);
  }

  /** The write half of `send`, in the caller's transaction: for sends that check rows of their own in it first (email's group commit). */
  hold(tx: Db, units: readonly SendUnit[]): Promise<Hold[][]> {
    return holdSends(tx, units, { now: this.now(), leaseSeconds: this.settings.leaseSeconds, capped: (message) => this.capped(message) });
  }

  /**
   * The send half of `send`: what `hold` claimed goes out inline; past the inline budget, a channel whose sends may
   * arrive late (`mayArriveLate`) leaves them to the workers, another fails them. The cap counts mail a provider
   * accepted: an email drawn and not sent gives its draw back (a queued one is drawn again by the worker that sends it).
   */
  async sendHeld(message: MessageRecord, project: SendingProject, holds: readonly Hold[]): Promise<SendResult[]> {
    const claimed = holds.flatMap((hold) => ('claimed' in hold ? [hold.claimed] : []));
    const results = claimed.length === 0 ? [] : await this.deliverNow(claimed, message, project, { queueAfterBudget: this.adapters.get(message.channel)?.mayArriveLate === true });
    const byDelivery = new Map(results.map((result) => [result.deliveryId, result]));
    const answers = holds.map((hold) => ('claimed' in hold ? byDelivery.get(hold.claimed.id)! : hold));
    const unsent = holds.filter((hold, i) => 'claimed' in hold && hold.drawn && (answers[i] as DeliveryResult).status !== 'sent').length;
    if (unsent > 0) await refundEmailQuota(this.options.db, message.projectId, unsent, this.now());
    return answers;
  }

  /**
   * Queues a campaign's message for the workers, in the caller's transaction (its own writes commit with it): the
   * message, its counters, and a delivery per person of its audience (due at once, or at `localDue`'s local time).
   * Answers the audience's size. `announce` after the commit.
   */
  async queueAudience(tx: Db, message: MessageRecord, audience: SnapshotAudience, localDue?: LocalDue): Promise<number> {
    await repo.insertMessage(tx, message);
    await repo.insertMessageStats(tx, message.id);
    await allowAudienceSets(tx);
    return repo.snapshotDeliveries(tx, message, audience, localDue);
  }

  /** Queues messages of one recipient each (an automation's sends), in the caller's transaction; answers how many. `announce` after the commit. */
  queue(tx: Db, sends: readonly { message: MessageRecord; recipient: DeliveryTarget }[]): Promise<number> {
    return repo.queueMessages(tx, sends);
  }

  /** Wakes every listening worker: deliveries were queued (call after the commit that queued them). */
  announce(): Promise<void> {
    return announceDeliveries(this.options.db);
  }

  /** Holds a message's waiting deliveries where they are (each keeps when it is due); those being sent finish. */
  pause(tx: Db, projectId: string, messageId: string): Promise<number> {
    return repo.pauseMessage(tx, projectId, messageId);
  }

  /** Puts a paused message's deliveries back in the queue; those the monthly cap held are due at once. */
  resume(tx: Db, projectId: string, messageId: string): Promise<number> {
    return repo.resumeMessage(tx, projectId, messageId);
  }

  /** Withdraws a message: its deliveries not yet sent are suppressed (`campaign_cancelled`) and counted so. */
  withdraw(tx: Db, projectId: string, messageId: string): Promise<number> {
    return repo.withdrawMessage(tx, projectId, messageId);
  }

  /** What an address's row says (its status and reason, when its person last wrote): checked before a send is written. */
  addressState(key: AddressKey) {
    return findAddressState(this.options.db, key);
  }

  /** The merge fields of the subscriber holding an email address in the project's environment (a test send's), or null. */
  mergeFieldsOf(projectId: string, sandbox: boolean, address: string): Promise<SubscriberMergeFields | null> {
    return repo.findMergeFields(this.options.db, projectId, sandbox, address);
  }

  /**
   * Test sends of a message to a few addresses, each rendered as that address's subscriber would get it (merge fields
   * from it, or none) and handed to the project's provider now: no delivery row, no counter, no retry, its links
   * record nothing. The provider's rate, a sandbox account's quota and the monthly cap hold; a test key's message
   * goes to the sandbox.
   */
  async sendTest(message: MessageRecord, recipients: readonly TestRecipient[]): Promise<TestOutcome[]> {
    const adapter = this.adapters.get(message.channel);
    if (!adapter) return recipients.map(({ address }) => ({ address, status: 'failed', reason: 'provider_not_configured', providerCode: null }));
    const project = (await this.sendingProjects([message.projectId])).get(message.projectId)!;
    const outcomes: TestOutcome[] = [];
    for (const { address, mergeFields, device } of recipients) {
      const addressed = adapter.address(testDelivery(message, address, mergeFields, device), message, project);
      if ('refusal' in addressed) {
        outcomes.push({ address, status: 'failed', reason: addressed.refusal, providerCode: null });
        continue;
      }
      const rate = message.sandbox ? undefined : adapter.rate?.(addressed.item);
      if (rate) {
        let slots = await this.sendRate.reserve(rate.key, 1, slotRate(rate), RATE_BOOKING_MS);
        while (slots.granted === 0) {
          await sleepFor(slots.waitMs);
          slots = await this.sendRate.reserve(rate.key, 1, slotRate(rate), RATE_BOOKING_MS);
        }
        await sleepFor(slots.firstAt - Date.now());
        if (rate.per24Hours !== undefined && (await reserveWindowSends(this.options.db, rate.key, 1, rate.per24Hours)).granted === 0) {
          outcomes.push({ address, status: 'failed', reason: 'sandbox_limit_reached', providerCode: null });
          continue;
        }
      }
      const capped = this.capped(message);
      const at = this.now();
      if (capped && (await reserveEmailQuota(this.options.db, message.projectId, 1, at)).granted === 0) {
        outcomes.push({ address, status: 'failed', reason: 'monthly_cap_reached', providerCode: null });
        continue;
      }
      const [outcome] = await adapter.provider(message.sandbox).send([addressed.item]);
      if (capped && !outcome?.ok) await refundEmailQuota(this.options.db, message.projectId, 1, at);
      outcomes.push(
        outcome?.ok
          ? { address, status: 'sent', reason: null, providerCode: outcome.providerCode }
          : { address, status: 'failed', reason: outcome?.error.reason ?? 'provider_error', providerCode: outcome?.error.providerCode ?? null },
      );
    }
    return outcomes;
  }

  /**
   * One batch, its leases renewed every third of a lease until it is recorded: a batch slower than its lease (sends
   * queued behind a provider's few connections, inline retries) stays this worker's, where another would send it
   * again. Only a worker that stops — dies, or stalls for a lease — loses its rows to the others.
   */
  private async deliver(
    claimed: ClaimedDelivery[],
    inline?: { inlineBudgetMs: number; queueAfterBudget: boolean; message: MessageRecord; project: SendingProject },
    release?: (count: number) => void,
  ): Promise<DeliveryResult[]> {
    const held = claimed.map((d) => ({ id: d.id, fence: d.attempts }));
    let renewing: Promise<unknown> = Promise.resolve();
    const renewal = setInterval(() => {
      renewing = renewing
        .then(() => repo.renewLeases(this.options.db, held, this.settings.leaseSeconds))
        .catch((error: unknown) => this.options.logger?.warn({ err: error }, 'could not renew the leases of a batch being sent'));
    }, (this.settings.leaseSeconds * 1000) / 3);
    try {
      return await this.sendBatch(claimed, inline, release);
    } finally {
      clearInterval(renewal);
      await renewing;
    }
  }

  /**
   * Check, send, record; with `inline`, retry inline instead of queueing. A worker's batch tells `release` how many of
   * its deliveries leave its lane before it ends: held back to the queue, or waiting for their booked slot.
   */
  private async sendBatch(
    claimed: ClaimedDelivery[],
    inline?: { inlineBudgetMs: number; queueAfterBudget: boolean; message: MessageRecord; project: SendingProject },
    release?: (count: number) => void,
  ): Promise<DeliveryResult[]> {
    const deadline = inline === undefined ? undefined : Date.now() + inline.inlineBudgetMs;
    const messages = inline ? new Map([[inline.message.id, inline.message]]) : await this.loadMessages(claimed);
    const projects = inline ? new Map([[inline.project.id, inline.project]]) : await this.sendingProjects(claimed.map((d) => d.projectId));
    const results: DeliveryResult[] = [];
    const updates: DeliveryUpdate[] = [];
    const dead: DeadRecipients = { devices: { gone: [], refused: [] }, addresses: [] };
    const final = (d: ClaimedDelivery, attempts: number, update: Omit<DeliveryUpdate, 'id' | 'fence' | 'attempts'>, deactivated = false) => {
      updates.push({ id: d.id, fence: d.attempts, attempts, ...update });
      results.push({ deliveryId: d.id, subscriberId: d.subscriberId, status: update.status, reason: update.reason, deactivated });
    };

    const candidates: Pending[] = [];
    const released = new Set<number>();
    for (const delivery of claimed) {
      const message = messages.get(delivery.messageId)!;
      if (delivery.messageCancelled) {
        final(delivery, delivery.attempts, { status: 'suppressed', reason: 'campaign_cancelled', providerCode: null, delayMs: 0 });
        continue;
      }
      if (delivery.messagePaused) {
        // Back where its campaign's pause put the others: a hold, not an attempt.
        final(delivery, delivery.attempts - 1, { status: 'paused', reason: null, providerCode: null, delayMs: 0 });
        continue;
      }
      // Lanes claim only the channels that have an adapter.
      const adapter = this.adapters.get(message.channel)!;
      // A test key's message never reaches a live subscriber, nor a live one a sandbox subscriber.
      const addressed =
        delivery.subscriberSandbox !== message.sandbox ? { refusal: 'subscriber_inactive' as const } : adapter.address(delivery, message, projects.get(delivery.projectId)!);
      if ('refusal' in addressed) {
        final(delivery, delivery.attempts, { status: 'failed', reason: addressed.refusal, providerCode: null, delayMs: 0 });
        continue;
      }
      candidates.push({ delivery, adapter, item: addressed.item, attempts: delivery.attempts, message });
    }
    const cleared = await this.obeyPolicy(claimed, candidates, projects, results);
    // The transactional path reserves its email before it writes the delivery, and answers the cap itself.
    const quota = inline ? { cleared, drawn: new Map<string, number[]>(), at: new Date() } : await this.drawMonthlyCap(cleared, results);
    let pending = quota.cleared;
    // What the provider made of each campaign message in this batch: its campaign shows why sending is held up.
    const seen = new Map<string, { message: MessageRecord; sent: boolean; failure?: ProviderError }>();
    const saw = (p: Pending, failure?: ProviderError) => {
      if (p.message.source !== 'campaign') return;
      const entry = seen.get(p.message.id) ?? { message: p.message, sent: false };
      if (failure === undefined) entry.sent = true;
      else if (failure.retryable && failure.deadRecipient === undefined) entry.failure = failure;
      seen.set(p.message.id, entry);
    };

    while (pending.length > 0) {
      const retries: typeof pending = [];
      let wait = 0;
      // A worker books its rates' slots a little ahead; the transactional path, as far as its retry budget reaches.
      const holding = deadline === undefined || inline?.queueAfterBudget === true;
      const { going, booked, waiting, exhausted } = await this.throttle(pending, deadline === undefined ? RATE_BOOKING_MS : Math.max(0, deadline - Date.now()), holding);
      const holds: DeliveryUpdate[] = [];
      for (const { p, freesInMs } of exhausted) {
        // A transactional send is answered now rather than a day later; a campaign's waits for the window to free.
        if (inline) final(p.delivery, p.attempts, { status: 'failed', reason: 'sandbox_limit_reached', providerCode: null, delayMs: 0 });
        else {
          const { delivery } = p;
          holds.push({ id: delivery.id, fence: delivery.attempts, attempts: delivery.attempts - 1, status: 'queued', reason: 'sandbox_limit_reached', providerCode: null, delayMs: freesInMs });
          results.push({ deliveryId: delivery.id, subscriberId: delivery.subscriberId, status: 'queued', reason: 'sandbox_limit_reached', deactivated: false });
        }
      }
      for (const { p, turnMs } of waiting) {
        const { delivery } = p;
        if (holding) {
          // A hold, not an attempt, like quiet hours.
          holds.push({ id: delivery.id, fence: delivery.attempts, attempts: delivery.attempts - 1, status: 'queued', reason: null, providerCode: SEND_RATE_CODE, delayMs: turnMs });
          results.push({ deliveryId: delivery.id, subscriberId: delivery.subscriberId, status: 'queued', reason: null, deactivated: false });
        } else {
          final(delivery, p.attempts, { status: 'failed', reason: 'provider_error', providerCode: SEND_RATE_CODE, delayMs: 0 });
        }
      }
      const sendGroup = async (group: Pending[]) => {
        const provider = group[0]!.adapter.provider(group[0]!.message.sandbox);
        const outcomes = await provider.send(group.map((p) => p.item));
        group.forEach((p, i) => {
          const outcome: SendOutcome = outcomes[i] ?? { ok: false, error: missingOutcome(provider.name) };
          saw(p, outcome.ok ? undefined : outcome.error);
          if (outcome.ok) {
            final(p.delivery, p.attempts, { status: 'sent', reason: null, providerCode: outcome.providerCode, providerMessageId: outcome.providerMessageId, delayMs: 0 });
            return;
          }
          const { error } = outcome;
          if (error.deadRecipient) markDead(dead, p.delivery, error, p.adapter);
          const delay = retryDelayMs(error, p.attempts, this.settings);
          if (deadline !== undefined && delay !== undefined && Date.now() + delay <= deadline) {
            retries.push({ ...p, attempts: p.attempts + 1 });
            wait = Math.max(wait, delay);
          } else if (delay !== undefined && (deadline === undefined || inline?.queueAfterBudget)) {
            final(p.delivery, p.attempts, { status: 'queued', reason: error.reason, providerCode: error.providerCode, providerError: error.message, delayMs: delay });
          } else {
            const deactivated = error.deadRecipient !== undefined;
            final(p.delivery, p.attempts, { status: 'failed', reason: error.reason, providerCode: error.providerCode, providerError: error.message, delayMs: 0 }, deactivated);
          }
        });
      };
      if (holds.length > 0) {
        // Recorded before the sends (a batch that fails sends nothing), so each comes due at its turn for any worker.
        await this.record(this.options.db, holds);
        this.wakeAt(Date.now() + Math.min(...holds.map((h) => h.delayMs)));
      }
      // Each booked delivery goes at its slot's instant, on its own; one that wakes too late books again.
      const timed = booked.map(async ({ p, at }) => {
        await sleepFor(at - Date.now());
        if (Date.now() - at > SLOT_LATE_MS) retries.push(p);
        else await sendGroup([p]);
      });
      // What waits for its slot, and what went back to the queue, leaves the lane (once): the worker claims more meanwhile.
      const leaving = [...booked.map(({ p }) => p.delivery.id), ...holds.map((h) => h.id)].filter((id) => !released.has(id));
      leaving.forEach((id) => released.add(id));
      release?.(leaving.length);
      // One provider call per channel and environment in the batch, or per shared body for a bulk provider.
      const groups = new Map<string, Pending[]>();
      for (const p of going) {
        const bulk = p.adapter.bulkKey?.(p.item);
        const key = bulk === undefined ? `${p.adapter.channel}:${p.message.sandbox}` : `${p.adapter.channel}:${p.message.sandbox}:${bulk}`;
        const group = groups.get(key);
        if (group) group.push(p);
        else groups.set(key, [p]);
      }
      // A batch ends only when its booked sends have gone, whatever the others did; a provider that threw fails it.
      const grouped = (async () => {
        for (const group of groups.values()) await sendGroup(group);
      })();
      const thrown = (await Promise.allSettled([grouped, ...timed])).find((r) => r.status === 'rejected');
      if (thrown) throw thrown.reason;
      if (retries.length > 0) await sleepFor(wait);
      pending = retries;
    }

    await repo.deactivateDeadRecipients(this.options.db, dead);
    if (inline) await this.inlineOutcomes.submit(updates);
    else await this.record(this.options.db, updates);
    await this.recordSendingIssues(seen.values());
    // The cap counts email a provider accepted: what was reserved and did not go is given back.
    const sent = new Set(results.filter((r) => r.status === 'sent').map((r) => r.deliveryId));
    for (const [projectId, ids] of quota.drawn) {
      await refundEmailQuota(this.options.db, projectId, ids.filter((id) => !sent.has(id)).length, quota.at);
    }
    if (this.options.onBatchRecorded) {
      await this.options.onBatchRecorded([...messages.values()]).catch((error: unknown) =>
        this.options.logger?.error({ err: error }, 'batch-recorded hook failed'),
      );
    }
    return results;
  }

  /**
   * Splits deliveries cleared to send into those that go now — they draw from no live provider's rate — those `booked`
   * a slot of their rate within `withinMs` (to go at `at`), and those that wait: with `holding`, each is given a turn
   * in its key's line (`turnMs`). A rate with a 24-hour quota (a sandbox account's) is drawn from too, by those
   * booked: what it has no room for is `exhausted` until its oldest sends leave the window (`freesInMs`).
   */
  private async throttle(
    pending: Pending[],
    withinMs: number,
    holding: boolean,
  ): Promise<{
    going: Pending[];
    booked: { p: Pending; at: number }[];
    waiting: { p: Pending; turnMs: number }[];
    exhausted: { p: Pending; freesInMs: number }[];
  }> {
    const going: Pending[] = [];
    const rated = new Map<string, { rate: ProviderRate; items: Pending[] }>();
    for (const p of pending) {
      // The sandbox provider sends nothing, so it draws from no provider's rate.
      const rate = p.message.sandbox ? undefined : p.adapter.rate?.(p.item);
      if (!rate) {
        going.push(p);
        continue;
      }
      const entry = rated.get(rate.key) ?? { rate, items: [] };
      entry.items.push(p);
      rated.set(rate.key, entry);
    }
    const booked: { p: Pending; at: number }[] = [];
    const waiting: { p: Pending; turnMs: number }[] = [];
    const exhausted: { p: Pending; freesInMs: number }[] = [];
    // Not knowing a rate's state, nothing of it goes: a provider's rate is not exceeded for a store's outage.
    const unknown = (key: string) => (error: unknown) => {
      this.options.logger?.warn({ err: error, key }, 'send rate unavailable; its deliveries wait');
      return { granted: 0, firstAt: Date.now(), waitMs: this.settings.pollIntervalMs };
    };
    await Promise.all(
      [...rated].map(async ([key, { rate, items }]) => {
        const perSecond = slotRate(rate);
        const interval = 1000 / perSecond;
        const slots = await this.sendRate.reserve(key, items.length, perSecond, withinMs).catch(unknown(key));
        let granted = items.slice(0, slots.granted);
        const rest = items.slice(slots.granted);
        if (rest.length > 0) {
          const firstTurnMs = holding ? await this.sendRate.line(key, rest.length, perSecond).catch(() => slots.waitMs) : slots.waitMs;
          rest.forEach((p, i) => waiting.push({ p, turnMs: firstTurnMs + Math.ceil(i * interval) }));
        }
        if (rate.per24Hours !== undefined && granted.length > 0) {
          const quota = await reserveWindowSends(this.options.db, key, granted.length, rate.per24Hours).catch((error: unknown) => {
            const { waitMs } = unknown(key)(error);
            granted.forEach((p) => waiting.push({ p, turnMs: waitMs }));
            return undefined;
          });
          granted.slice(quota?.granted ?? 0).forEach((p) => quota && exhausted.push({ p, freesInMs: quota.waitMs }));
          granted = granted.slice(0, quota?.granted ?? 0);
        }
        granted.forEach((p, i) => booked.push({ p, at: slots.firstAt + i * interval }));
      }),
    );
    return { going, booked, waiting, exhausted };
  }

  /**
   * Live email draws from its organization's monthly cap (one reservation per project, exact however many workers
   * reserve at once): what the cap has no room for is held in the queue until the first of next month, UTC — a
   * hold, not an attempt, with reason `monthly_cap_reached` meanwhile. Returns the deliveries cleared, and the ids
   * reserved per project, when.
   */
  private async drawMonthlyCap(pending: Pending[], results: DeliveryResult[]): Promise<{ cleared: Pending[]; drawn: Map<string, number[]>; at: Date }> {
    const at = this.now();
    const cleared: Pending[] = [];
    const capped = new Map<string, Pending[]>();
    for (const p of pending) {
      if (!this.capped(p.message)) cleared.push(p);
      else if (capped.has(p.delivery.projectId)) capped.get(p.delivery.projectId)!.push(p);
      else capped.set(p.delivery.projectId, [p]);
    }
    const drawn = new Map<string, number[]>();
    const holds: DeliveryUpdate[] = [];
    const heldCampaigns = new Map<string, MessageRecord>();
    const nextMonth = Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1);
    for (const [projectId, group] of capped) {
      const { granted } = await reserveEmailQuota(this.options.db, projectId, group.length, at);
      cleared.push(...group.slice(0, granted));
      drawn.set(projectId, group.slice(0, granted).map((p) => p.delivery.id));
      for (const { delivery, message } of group.slice(granted)) {
        if (message.campaignId !== null) heldCampaigns.set(message.id, message);
        holds.push({ id: delivery.id, fence: delivery.attempts, attempts: delivery.attempts - 1, status: 'queued', reason: 'monthly_cap_reached', providerCode: null, delayMs: nextMonth - at.getTime() });
        results.push({ deliveryId: delivery.id, subscriberId: delivery.subscriberId, status: 'queued', reason: 'monthly_cap_reached', deactivated: false });
      }
    }
    await this.record(this.options.db, holds);
    if (heldCampaigns.size > 0 && this.options.onCapReached) {
      await this.options.onCapReached([...heldCampaigns.values()], new Date(nextMonth)).catch((error: unknown) =>
        this.options.logger?.error({ err: error }, 'cap-reached hook failed'),
      );
    }
    return { cleared, drawn, at };
  }

  private wakeAt(at: number): void {
    if (this.heldWake && this.heldWake.at <= at) return;
    clearTimeout(this.heldWake?.timer);
    const timer = setTimeout(() => {
      this.heldWake = undefined;
      this.notify();
    }, Math.max(0, at - Date.now()));
    timer.unref();
    this.heldWake = { at, timer };
  }

  /**
   * A message with a delivery through clears its issue; one whose deliveries met only failures, some retryable, gets
   * the latest. Its errors are logged, never thrown: the outcomes are already committed.
   */
  private async recordSendingIssues(seen: Iterable<{ message: MessageRecord; sent: boolean; failure?: ProviderError }>): Promise<void> {
    const at = this.now();
    const changes: repo.SendingIssueChange[] = [];
    for (const { message, sent, failure } of seen) {
      const target = { projectId: message.projectId, messageId: message.id };
      if (sent) changes.push({ ...target, cleared: true });
      else if (failure) changes.push({ ...target, cleared: false, reason: failure.reason, providerCode: failure.providerCode, detail: issueDetail(failure.message), at });
    }
    await repo.recordSendingIssues(this.options.db, changes).catch((error: unknown) => this.options.logger?.error({ err: error }, 'could not record sending issues'));
  }

  private async record(db: Db, updates: DeliveryUpdate[]): Promise<void> {
    const recorded = await repo.recordOutcomes(db, updates);
    if (recorded < updates.length) {
      this.options.logger?.warn({ lost: updates.length - recorded }, 'outcomes dropped: their lease expired and another worker took them over');
    }
  }

  /**
   * Campaign and automation deliveries obey their project's delivery policy for their channel here, when they go out (transactional
   * sends apply it before they send). During quiet hours a delivery waits in the queue until they end — a hold, not
   * an attempt; one over the frequency cap is suppressed. Cap decisions run under the per-recipient cap lock, and the
   * holds and suppressions are recorded before it is released: every other `sending` row then is a message really
   * going out. Returns the candidates cleared to send.
   */
  private async obeyPolicy(
    claimed: ClaimedDelivery[],
    candidates: Pending[],
    projects: Map<string, SendingProject>,
    results: DeliveryResult[],
  ): Promise<Pending[]> {
    // Governed candidates by project and channel: each channel has its own policy and its own recipients.
    const governed = new Map<string, Pending[]>();
    const cleared: Pending[] = [];
    for (const candidate of candidates) {
      const policy = channelPolicy(projects.get(candidate.delivery.projectId)!.deliveryPolicy, candidate.message.channel);
      if (candidate.message.source === 'transactional' || (!policy?.quietHours && !policy?.frequencyCap)) {
        cleared.push(candidate);
        continue;
      }
      const key = `${candidate.delivery.projectId}:${candidate.message.channel}`;
      const group = governed.get(key) ?? [];
      group.push(candidate);
      governed.set(key, group);
    }
    if (governed.size === 0) return cleared;

    const now = this.now();
    // This batch's rows are `sending` already, yet only those needing no clearance go out undecided: the rest are
    // left out of the cap counts, and each one cleared is counted as decidePolicy goes.
    const going = new Set(cleared.map((c) => c.delivery.id));
    const undecided = claimed.filter((d) => !going.has(d.id)).map((d) => d.id);

    for (const group of governed.values()) {
      const { projectId, channel } = group[0]!.delivery;
      const targets = group.map(({ delivery }) => ({ recipient: addressOf(delivery) ?? delivery.subscriberId, timezone: delivery.subscriberTimezone }));
      await this.options.db.transaction(async (tx) => {
        const decisions = await policyRepo.decidePolicy(tx, projects.get(projectId)!, channel, targets, now, undecided);
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

  /** Projects' sending settings, their credentials opened: cached while the engine hears of their changes. */
  async sendingProjects(projectIds: readonly string[]): Promise<Map<string, SendingProject>> {
    const version = this.projects.version();
    const found = new Map<string, SendingProject>();
    const missing: string[] = [];
    for (const id of new Set(projectIds)) {
      const cached = this.projects.get(id);
      if (cached) found.set(id, cached);
      else missing.push(id);
    }
    if (missing.length > 0) {
      for (const stored of await repo.findSendingProjects(this.options.db, missing)) {
        const project = await this.unseal(stored);
        found.set(project.id, project);
        this.projects.set(project.id, project, version);
      }
    }
    return found;
  }
  private async unseal({ channels, ...project }: StoredSendingProject): Promise<SendingProject> {
    const opened = await Promise.all(
      Object.entries(channels).map(async ([channel, config]) => [channel, { ...config, credentials: await this.options.openCredentials(config.credentials) }] as const),
    );
    return { ...project, channels: Object.fromEntries(opened) };
  }
}

/** What one address of a test send came to. */
export interface TestOutcome {
  address: string;
  status: 'sent' | 'failed';
  reason: DeliveryReason | null;
  providerCode: string | null;
}

/** Who a test send goes to: an address, or for push a browser's subscription (`device`; `address` names it in the outcome). */
export interface TestRecipient {
  address: string;
  mergeFields: SubscriberMergeFields | null;
  device?: Omit<PushRecipient, 'channel'> | undefined;
}

/** A test send's recipient as the adapters see a claimed delivery: an address or a device no row stands for. */
const testDelivery = (message: MessageRecord, address: string, mergeFields: SubscriberMergeFields | null, device?: TestRecipient['device']): ClaimedDelivery => ({
  id: 0,
  projectId: message.projectId,
  messageId: message.id,
  subscriberId: 'test',
  channel: message.channel,
  attempts: 1,
  recipient: message.channel === 'push' ? (device ? { channel: 'push', ...device } : null) : { channel: message.channel, address, status: 'reachable', reason: null },
  subscriberStatus: 'active',
  subscriberSandbox: message.sandbox,
  subscriberTimezone: null,
  messageCancelled: false,
  messagePaused: false,
  mergeFields,
});

/** The address a delivery goes to on email, SMS or WhatsApp; null for push (the device is its subscriber's). */
const addressOf = ({ recipient }: ClaimedDelivery): string | null => (recipient === null || recipient.channel === 'push' ? null : recipient.address);

/** A dead push subscription takes its device out; a dead address (email, SMS, WhatsApp) its address on that channel. */
function markDead(dead: DeadRecipients, delivery: ClaimedDelivery, error: ProviderError, adapter: ChannelAdapter): void {
  const address = addressOf(delivery);
  if (address === null) {
    if (error.deadRecipient !== 'opted_out') dead.devices[error.deadRecipient!].push(delivery.subscriberId);
  } else {
    const { projectId, subscriberSandbox: sandbox, channel } = delivery;
    const reason = adapter.deadAddressReason?.(error) ?? error.providerCode;
    const status = error.deadRecipient === 'opted_out' ? 'opted_out' : 'unreachable';
    dead.addresses.push({ projectId, sandbox, channel, address, status, reason, source: 'provider' });
  }
}

/**
 * A provider's words as a campaign shows them: addresses and URLs (a push endpoint is a capability) taken out, one
 * line, at most 200 characters.
 */
function issueDetail(message: string): string | null {
  const detail = message
    .replace(/[a-z][a-z0-9+.-]*:\/\/\S+/gi, '<url>')
    .replace(/[^\s<>@"']+@[^\s<>@"']+/g, '<address>')
    .replace(/\s+/g, ' ')
    .trim();
  if (detail === '') return null;
  return detail.length > 200 ? `${detail.slice(0, 199)}…` : detail;
}

const missingOutcome = (provider: string) =>
  new ProviderError(`${provider} returned no outcome`, { reason: 'provider_error', retryable: true, providerCode: 'no_outcome' });
