// The automation executor: claims due enrollments under a 5-minute lock, runs their steps in memory, and writes each
// pass's sends, step history and next due times in one fenced transaction (spec 3.3).
import { createHash, randomUUID } from 'node:crypto';
import { parsePhoneNumberFromString } from 'libphonenumber-js';
import type { Logger } from 'pino';
import type { Db } from '../../db/database.js';
import type { AutomationStep, EmailContent, EnrollmentState } from '../../db/schema.js';
import {
  DEFAULT_PUSH_TTL_SECONDS,
  personalizeEmail,
  recipientVariables,
  type DeliveryEngine,
  type MessageRecord,
} from '../../delivery/index.js';
import { sleepFor } from '../../shared/sleep.js';
import { messagingServiceOf, type SmsSenderService } from '../channels/index.js';
import { type ConsentChannel, hasConditions, type SegmentFilter, storedFilter, subscriberMatches } from '../segments/index.js';
import { SERVICE_WINDOW_MS } from '../transactional/index.js';
import type { WhatsAppTemplateService } from '../whatsapp/index.js';
import { criteriaHold } from './automation-conditions.js';
import * as repo from './automation-enrollment.repository.js';
import { durationSeconds, successors } from './automation-flow.js';

export interface ExecutorOptions {
  lockSeconds: number;
  pollIntervalMs: number;
  batchSize: number;
  /** Passes in flight at once (default 1): one claims and runs while another's writes wait on the database. */
  concurrency?: number;
}

/** What one pass did: enrollments claimed, steps run, locks taken over from a dead executor, and writes lost to a newer lock. */
export interface PassResult {
  claimed: number;
  steps: number;
  takenOver: number;
  fenced: number;
}

/** A flow as the executor keeps it: steps by id, and each email step's content without its template reference. */
interface Flow {
  entry: string;
  /** The automation's environment: its condition steps read that environment's segments. */
  sandbox: boolean;
  steps: Map<string, AutomationStep>;
  emails: Map<string, EmailContent>;
}

type Send = { message: MessageRecord; recipient: { subscriberId: string; destination: string | null } };
type StepOutcome = { outcome: string; send?: Send };

const MAX_FLOWS = 1000;
/** A flow has at most 100 steps and no cycle: a pass never runs more per enrollment. */
const MAX_STEPS_PER_PASS = 100;

/**
 * The message id of a send step run by an enrollment: the same enrollment and step always make the same message,
 * which is written once, so a step run again (a lock taken over) never sends twice.
 */
export function stepMessageId(enrollmentId: string, stepId: string): string {
  return `msg_${createHash('sha256').update(`${enrollmentId}\u0000${stepId}`).digest('base64url').slice(0, 26)}`;
}

export class AutomationExecutor {
  /** This process's name on the locks it takes. */
  readonly id = `exe_${randomUUID()}`;
  private readonly flows = new Map<string, Flow>();
  private readonly stopping = new AbortController();
  private wake = new AbortController();
  private running: Promise<void> | undefined;

  constructor(
    private readonly db: Db,
    private readonly deps: { delivery: DeliveryEngine; senders: SmsSenderService; whatsappTemplates: WhatsAppTemplateService },
    private readonly options: ExecutorOptions,
    private readonly logger?: Logger,
  ) {}

  /** Runs passes until stop(): `concurrency` at a time, back to back while there is due work, else every pollIntervalMs or at notify(). */
  start(): void {
    this.running ??= Promise.all(Array.from({ length: this.options.concurrency ?? 1 }, () => this.loop())).then(() => undefined);
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    this.wake.abort();
    await this.running;
  }

  /** Enrollments were made due in this process: look now. */
  notify(): void {
    this.wake.abort();
  }

  private async loop(): Promise<void> {
    while (!this.stopping.signal.aborted) {
      try {
        // A short batch may be one claimed beside another pass of this or another process: look again at once.
        if ((await this.runOnce()).claimed > 0) continue;
      } catch (error) {
        this.logger?.error({ err: error }, 'automation pass failed; its enrollments are due again');
      }
      if (this.wake.signal.aborted) this.wake = new AbortController();
      await sleepFor(this.options.pollIntervalMs, AbortSignal.any([this.wake.signal, this.stopping.signal]));
    }
  }

  /** One pass: claim due enrollments, run each to its next delay or end, write it all in one fenced transaction. */
  async runOnce(): Promise<PassResult> {
    const claimed = await repo.claimDue(this.db, this.id, this.options.batchSize, this.options.lockSeconds);
    const result: PassResult = { claimed: claimed.length, steps: 0, takenOver: claimed.filter((e) => e.takenOver).length, fenced: 0 };
    if (claimed.length === 0) return result;
    if (result.takenOver > 0) this.logger?.warn({ takenOver: result.takenOver }, 'took over enrollments whose executor lock expired');
    try {
      const [flows, subscribers] = await Promise.all([this.flowsOf(claimed), repo.findSubscribers(this.db, claimed.map((e) => e.subscriberId))]);
      const byId = new Map(subscribers.map((s) => [s.id, s]));
      const context = new PassContext(this.db, this.deps, flows, claimed);
      await context.prepare();

      const advances: repo.EnrollmentAdvance[] = [];
      const runs: repo.StepRunWrite[] = [];
      const sends: { enrollmentId: string; send: Send }[] = [];
      for (const enrollment of claimed) {
        const walked = await this.walk(enrollment, flows.get(`${enrollment.automationId}:${enrollment.version}`)!, byId.get(enrollment.subscriberId), context);
        advances.push(walked.advance);
        runs.push(...walked.runs);
        sends.push(...walked.sends.map((send) => ({ enrollmentId: enrollment.id, send })));
        result.steps += walked.runs.filter((r) => r.completed || r.stepType === 'delay' || r.stepType === 'wait_until').length;
      }

      const queued = await this.db.transaction(async (tx) => {
        const mine = await repo.advance(tx, advances);
        result.fenced = claimed.length - mine.size;
        await repo.recordStepRuns(
          tx,
          runs.filter((r) => mine.has(r.enrollmentId)),
        );
        return this.deps.delivery.queue(
          tx,
          sends.filter((s) => mine.has(s.enrollmentId)).map((s) => s.send),
        );
      });
      if (result.fenced > 0) this.logger?.warn({ fenced: result.fenced }, 'dropped a pass for enrollments another executor took over');
      if (queued > 0) await this.deps.delivery.announce();
      return result;
    } catch (error) {
      await repo.release(this.db, claimed);
      throw error;
    }
  }

  private async flowsOf(claimed: readonly repo.ClaimedEnrollment[]): Promise<Map<string, Flow>> {
    const keys = [...new Map(claimed.map((e) => [`${e.automationId}:${e.version}`, { automationId: e.automationId, version: e.version }])).entries()];
    const missing = keys.filter(([key]) => !this.flows.has(key)).map(([, k]) => k);
    if (missing.length > 0) {
      if (this.flows.size + missing.length > MAX_FLOWS) this.flows.clear();
      for (const version of await repo.findVersions(this.db, missing)) {
        const emails = new Map<string, EmailContent>();
        for (const step of version.steps) {
          if (step.type !== 'send_email') continue;
          const { templateId: _template, ...content } = step.content;
          emails.set(step.id, content);
        }
        this.flows.set(`${version.automationId}:${version.version}`, { entry: version.steps[0]!.id, sandbox: version.sandbox, steps: new Map(version.steps.map((s) => [s.id, s])), emails });
      }
    }
    return new Map(keys.map(([key]) => [key, this.flows.get(key)!]));
  }

  /** Runs one enrollment from its current step until a delay, a wait-until step, an exit or the end of its flow. */
  private async walk(enrollment: repo.ClaimedEnrollment, flow: Flow, subscriber: repo.EnrollmentSubscriber | undefined, context: PassContext) {
    const runs: repo.StepRunWrite[] = [];
    const sends: Send[] = [];
    const run = (step: AutomationStep, completed: boolean, outcome: string | null, messageId: string | null = null) =>
      runs.push({ enrollmentId: enrollment.id, automationId: enrollment.automationId, stepId: step.id, stepType: step.type, completed, outcome, messageId });
    const end = (state: EnrollmentState, reason: string | null = null) => ({
      advance: { id: enrollment.id, lockVersion: enrollment.lockVersion, state, stepId: null, delaySeconds: 0, waitEvent: null, reason },
      runs,
      sends,
    });
    const wait = (step: AutomationStep, seconds: number, waitEvent: string | null) => ({
      advance: { id: enrollment.id, lockVersion: enrollment.lockVersion, state: 'waiting' as const, stepId: step.id, delaySeconds: seconds, waitEvent, reason: null },
      runs,
      sends,
    });

    let stepId: string | null = enrollment.stepId ?? flow.entry;
    if (enrollment.state === 'waiting') {
      // Its delay has expired, or its wait-until step's event came or its timeout passed: the step completes and the flow goes on.
      const waited = flow.steps.get(stepId);
      if (waited?.type === 'wait_until') {
        const matched = enrollment.waitMatchedEventId !== null;
        run(waited, true, matched ? 'matched' : 'timed_out');
        stepId = matched ? waited.matchedBranch : waited.timeoutBranch;
      } else if (waited) {
        run(waited, true, 'waited');
        stepId = successors(waited)[0] ?? null;
      }
    }
    if (!subscriber) return end('failed', 'subscriber_not_found');
    for (let i = 0; i < MAX_STEPS_PER_PASS; i++) {
      if (stepId === null) return end('completed');
      const step = flow.steps.get(stepId);
      if (!step) return end('failed', `step_not_found:${stepId}`);
      switch (step.type) {
        case 'delay':
          run(step, false, null);
          return wait(step, durationSeconds(step.duration)!, null);
        case 'wait_until':
          run(step, false, null);
          return wait(step, durationSeconds(step.timeout)!, step.event);
        case 'exit':
          run(step, true, 'exited');
          return end('exited', 'exit_step');
        case 'condition': {
          const segment = context.segment(flow, subscriber.projectId, step.criteria.segmentId);
          const verdicts = await context.verdicts(flow, subscriber, [step.criteria.subscriber as SegmentFilter | undefined, segment]);
          const holds = criteriaHold(step.criteria, { subscriber, event: enrollment.eventProperties, segment, verdicts }, context.now);
          run(step, true, String(holds));
          stepId = holds ? step.trueBranch : step.falseBranch;
          break;
        }
        default: {
          const outcome = await context.send(enrollment, step, subscriber, flow);
          if (outcome.send) sends.push(outcome.send);
          run(step, true, outcome.outcome, outcome.send?.message.id ?? null);
          stepId = step.next;
        }
      }
    }
    return end('failed', 'too_many_steps');
  }
}

/** What a pass reads once for all its enrollments: segments, SMS senders, WhatsApp templates, sending settings. */
class PassContext {
  readonly now = new Date();
  private readonly segments = new Map<string, SegmentFilter | undefined>();
  private readonly senderChoices = new Map<string, Promise<Awaited<ReturnType<SmsSenderService['choose']>>>>();
  private readonly templateChoices = new Map<string, ReturnType<WhatsAppTemplateService['choose']>>();

  constructor(
    private readonly db: Db,
    private readonly deps: { delivery: DeliveryEngine; senders: SmsSenderService; whatsappTemplates: WhatsAppTemplateService },
    private readonly flows: Map<string, Flow>,
    private readonly claimed: readonly repo.ClaimedEnrollment[],
  ) {}

  /** Loads the saved segments the pass's condition steps name, of each automation's project and environment. */
  async prepare(): Promise<void> {
    const wanted = new Map<string, { projectId: string; sandbox: boolean; ids: Set<string> }>();
    for (const enrollment of this.claimed) {
      const flow = this.flows.get(`${enrollment.automationId}:${enrollment.version}`)!;
      for (const step of flow.steps.values()) {
        if (step.type !== 'condition' || step.criteria.segmentId === undefined) continue;
        const key = `${enrollment.projectId}:${flow.sandbox}`;
        const entry = wanted.get(key) ?? { projectId: enrollment.projectId, sandbox: flow.sandbox, ids: new Set() };
        entry.ids.add(step.criteria.segmentId);
        wanted.set(key, entry);
      }
    }
    for (const [key, { projectId, sandbox, ids }] of wanted) {
      const found = await repo.findSegmentFilters(this.db, projectId, sandbox, [...ids]);
      for (const id of ids) this.segments.set(`${key}:${id}`, found.has(id) ? storedFilter(id, found.get(id)) : undefined);
    }
  }

  /** Trees with attribute, event or segment conditions are evaluated in SQL for the one subscriber; the rest in memory. */
  async verdicts(flow: Flow, subscriber: repo.EnrollmentSubscriber, filters: (SegmentFilter | undefined)[]): Promise<Map<SegmentFilter, boolean>> {
    const verdicts = new Map<SegmentFilter, boolean>();
    const scope = { projectId: subscriber.projectId, sandbox: flow.sandbox };
    for (const filter of filters) if (filter && hasConditions(filter)) verdicts.set(filter, await subscriberMatches(this.db, scope, subscriber.id, filter));
    return verdicts;
  }

  segment(flow: Flow, projectId: string, segmentId: string | undefined): SegmentFilter | undefined {
    return segmentId === undefined ? undefined : this.segments.get(`${projectId}:${flow.sandbox}:${segmentId}`);
  }

  /** The message a send step makes for this subscriber, or why it is skipped (the flow goes on either way). */
  async send(enrollment: repo.ClaimedEnrollment, step: AutomationStep, subscriber: repo.EnrollmentSubscriber, flow: Flow): Promise<StepOutcome> {
    const base = { id: stepMessageId(enrollment.id, step.id), projectId: subscriber.projectId, source: 'automation' as const, campaignId: null, sandbox: subscriber.sandbox };
    const off = (channel: string) => subscriber.preferences.channels?.[channel] === false;
    // An automation is marketing: an address that never subscribed (a receipt's) or unsubscribed is not reached.
    const unconsented = (channel: ConsentChannel) => subscriber.consent[channel] !== 'subscribed';
    switch (step.type) {
      case 'send_push': {
        if (subscriber.status !== 'active') return { outcome: `skipped:subscriber_${subscriber.status}` };
        if (!subscriber.pushSubscribed) return { outcome: 'skipped:no_push_subscription' };
        if (off('push')) return { outcome: 'skipped:channel_off' };
        const { clickUrl, ...content } = step.content;
        const message: MessageRecord<'push'> = {
          ...base,
          channel: 'push',
          content: { ...content, url: clickUrl },
          options: { ttlSeconds: DEFAULT_PUSH_TTL_SECONDS, urgency: 'normal' },
        };
        return { outcome: 'sent', send: { message, recipient: { subscriberId: subscriber.id, destination: null } } };
      }
      case 'send_email': {
        if (!subscriber.email) return { outcome: 'skipped:no_email' };
        if (off('email')) return { outcome: 'skipped:channel_off' };
        if (unconsented('email')) return { outcome: 'skipped:no_marketing_consent' };
        const address = subscriber.email.toLowerCase();
        const variables = { ...recipientVariables(address, subscriber), event: enrollment.eventProperties ?? {} };
        const personalized = personalizeEmail(flow.emails.get(step.id)!, variables);
        if ('refusal' in personalized) return { outcome: `skipped:${personalized.refusal}` };
        const message: MessageRecord<'email'> = { ...base, channel: 'email', content: personalized.content, options: {} };
        return { outcome: 'sent', send: { message, recipient: { subscriberId: subscriber.id, destination: address } } };
      }
      case 'send_sms': {
        const phone = subscriber.phone ? parsePhoneNumberFromString(subscriber.phone) : undefined;
        if (!phone?.isValid()) return { outcome: 'skipped:no_phone' };
        if (off('sms')) return { outcome: 'skipped:channel_off' };
        if (unconsented('sms')) return { outcome: 'skipped:no_marketing_consent' };
        const chosen = await this.sender(subscriber.projectId, phone.country);
        if ('refusal' in chosen) return { outcome: `skipped:${chosen.refusal}` };
        const message: MessageRecord<'sms'> = { ...base, channel: 'sms', content: { body: step.content.body }, options: chosen.options };
        return { outcome: 'sent', send: { message, recipient: { subscriberId: subscriber.id, destination: phone.number } } };
      }
      case 'send_whatsapp': {
        const phone = subscriber.phone ? parsePhoneNumberFromString(subscriber.phone) : undefined;
        if (!phone?.isValid()) return { outcome: 'skipped:no_phone' };
        if (off('whatsapp')) return { outcome: 'skipped:channel_off' };
        if (unconsented('whatsapp')) return { outcome: 'skipped:no_marketing_consent' };
        const { text, templateName, language, components } = step.content;
        let content: MessageRecord<'whatsapp'>['content'];
        if (templateName !== undefined) {
          const choice = await this.template(subscriber.projectId, templateName, language);
          if (!choice.ok) return { outcome: `skipped:${choice.reason}` };
          content = { type: 'template', template: { name: choice.name, language: choice.language, components } };
        } else {
          // Meta takes free-form text only within 24 hours of the person's last message: the live number's, as for transactional sends.
          const number = await this.deps.delivery.addressState({ projectId: subscriber.projectId, sandbox: false, channel: 'whatsapp', address: phone.number });
          if (number.lastInboundAt === null || this.now.getTime() - number.lastInboundAt.getTime() >= SERVICE_WINDOW_MS) return { outcome: 'skipped:outside_service_window' };
          content = { type: 'text', text: text! };
        }
        const message: MessageRecord<'whatsapp'> = { ...base, channel: 'whatsapp', content, options: {} };
        return { outcome: 'sent', send: { message, recipient: { subscriberId: subscriber.id, destination: phone.number } } };
      }
      default:
        throw new Error(`not a send step: ${step.type}`);
    }
  }

  private sender(projectId: string, country: string | undefined) {
    const key = `${projectId}:${country}`;
    let choice = this.senderChoices.get(key);
    if (!choice) {
      choice = (async () => {
        const project = (await this.deps.delivery.sendingProjects([projectId])).get(projectId);
        return this.deps.senders.choose(projectId, country, undefined, messagingServiceOf(project?.channels.sms?.settings));
      })();
      this.senderChoices.set(key, choice);
    }
    return choice;
  }

  private template(projectId: string, name: string, language: string | undefined) {
    const key = `${projectId}:${name}:${language ?? ''}`;
    let choice = this.templateChoices.get(key);
    if (!choice) {
      choice = this.deps.whatsappTemplates.choose(projectId, name, language);
      this.templateChoices.set(key, choice);
    }
    return choice;
  }
}
