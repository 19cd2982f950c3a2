// Automations: flows checked and versioned, their states, starters, per-step stats, enrollments, and what enrolls people.
import { sql, type SQL } from 'drizzle-orm';
import type pg from 'pg';
import type { z } from 'zod';
import type { Db } from '../../db/database.js';
import type { AutomationGoal, AutomationState, AutomationStep, AutomationTrigger, EmailCampaignContent, EnrollmentState } from '../../db/schema.js';
import type { DeliveryEngine } from '../../delivery/index.js';
import { AppError, notFound, validationFailed, type FieldError } from '../../shared/errors.js';
import { newId } from '../../shared/ids.js';
import type { CampaignKind, EmailCampaign, EmailCampaignInput } from '../campaigns/index.js';
import { checkEntryRule, entryRuleMembers } from '../segments/index.js';
import type { ProjectScope, Reach } from '../tenancy.js';
import { allHold } from './automation-conditions.js';
import * as enrollments from './automation-enrollment.repository.js';
import { flowProblems } from './automation-flow.js';
import { KNOWN_ZONES, zonesFiring } from './automation-schedule.js';
import { STARTERS, type Starter } from './automation-starters.js';
import * as repo from './automation.repository.js';
import type { automation, automationStats, enrollment, enrollmentDetail, StepInput } from './automation.schemas.js';

export type AutomationView = z.output<typeof automation>;
export type EnrollmentView = z.output<typeof enrollment>;

/** Which states each action moves an automation from. */
const MOVES: Record<'activate' | 'pause' | 'archive', { from: AutomationState[]; to: AutomationState }> = {
  activate: { from: ['draft', 'paused'], to: 'active' },
  pause: { from: ['active'], to: 'paused' },
  archive: { from: ['draft', 'active', 'paused'], to: 'archived' },
};

const iso = (date: Date | null) => date?.toISOString() ?? null;

const view = (row: repo.AutomationRecord): AutomationView => ({
  id: row.id,
  projectId: row.projectId,
  sandbox: row.sandbox,
  name: row.name,
  state: row.state,
  version: row.version,
  trigger: row.trigger,
  // Stored steps passed the step schema when saved.
  steps: row.steps as StepInput[],
  goal: row.goal,
  starter: row.starter,
  activatedAt: iso(row.activatedAt),
  createdAt: row.createdAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
});

const enrollmentView = (row: repo.NamedEnrollmentRow): EnrollmentView => {
  const running = row.state === 'active' || row.state === 'waiting';
  return {
    id: row.id,
    automationId: row.automationId,
    version: row.version,
    subscriberId: row.subscriberId,
    subscriber: row.subscriber,
    state: row.state,
    stepId: running ? row.stepId : null,
    dueAt: running ? row.dueAt.toISOString() : null,
    eventId: row.eventId,
    reason: row.reason,
    enrolledAt: row.enrolledAt.toISOString(),
    endedAt: iso(row.endedAt),
  };
};

/** An event as the events module hands it over, once stored: who, what, and its properties. */
export interface StoredEvent {
  id: string;
  name: string;
  subscriberId: string | null;
  properties: Record<string, unknown>;
  occurredAt: Date;
}

export interface AutomationDeps {
  delivery: Pick<DeliveryEngine, 'validate'>;
  /** Email campaigns' content rules, which an automation's emails share: a template's parts copied in, the checks. */
  email: Pick<CampaignKind<EmailCampaignInput, EmailCampaignContent, EmailCampaign>, 'prepare' | 'check'>;
}

export class AutomationService {
  constructor(
    private readonly db: Db,
    private readonly deps: AutomationDeps,
  ) {}

  /**
   * Enrolls subscribers just registered in their `subscriber_added` automations, on the registration's connection and
   * transaction (handed to the subscribers module as its `onRegistered`); one with an entry rule takes only those
   * matching it, read in that transaction.
   */
  async enrollRegistered(client: pg.ClientBase, registered: readonly { id: string; projectId: string; sandbox: boolean }[]): Promise<void> {
    for (const ruled of await enrollments.enrollRegistered(client, registered)) {
      // The rule's references (saved segments, attribute types) are committed rows; the people are this transaction's.
      await enrollments.enrollRegisteredMembers(client, ruled, await entryRuleMembers(this.db, ruled, ruled.rule));
    }
  }

  starters(): { data: Starter[] } {
    return { data: [...STARTERS] };
  }

  async create(
    scope: ProjectScope,
    input: { name: string; trigger: AutomationTrigger; steps: StepInput[]; goal?: AutomationGoal | null | undefined },
    starter: string | null = null,
  ): Promise<AutomationView> {
    const steps = await this.checkedFlow(scope, input.steps, false);
    await this.checkEntryRule(scope, input.trigger);
    const row = await repo.insertAutomation(this.db, {
      id: newId('aut'),
      projectId: scope.projectId,
      sandbox: scope.sandbox,
      name: input.name,
      starter,
      trigger: input.trigger,
      steps,
      goal: input.goal ?? null,
    });
    return view(row);
  }

  /** Clones a starter into the project as a draft. */
  async fromStarter(scope: ProjectScope, starterId: Starter['id'], name: string | undefined): Promise<AutomationView> {
    const starter = STARTERS.find((s) => s.id === starterId)!;
    return this.create(scope, { name: name ?? starter.name, trigger: starter.trigger, steps: structuredClone(starter.steps) }, starter.id);
  }

  async list(scope: ProjectScope, query: { page: number; pageSize: number; state?: AutomationState | undefined }) {
    const { rows, total } = await repo.listAutomations(this.db, scope, { limit: query.pageSize, offset: (query.page - 1) * query.pageSize, state: query.state });
    const counts = await repo.countEnrollments(
      this.db,
      rows.map((r) => r.id),
    );
    return { data: rows.map((row) => ({ ...view(row), totals: totalsOf(counts.get(row.id)) })), page: query.page, pageSize: query.pageSize, total };
  }

  async get(reach: Reach, id: string): Promise<AutomationView> {
    return view(await this.find(reach, id));
  }

  /** Renames, or gives a new flow: a draft's is replaced, any other's becomes a new version (enrollments keep theirs). */
  async update(
    reach: Reach,
    id: string,
    change: { name?: string | undefined; trigger?: AutomationTrigger | undefined; steps?: StepInput[] | undefined; goal?: AutomationGoal | null | undefined },
  ): Promise<AutomationView> {
    const current = await this.find(reach, id);
    if (current.state === 'archived') throw new AppError(409, 'automation_archived', 'An archived automation cannot be changed');
    const flowChanged = change.trigger !== undefined || change.steps !== undefined || change.goal !== undefined;
    if (change.trigger) await this.checkEntryRule(scopeOf(reach, current), change.trigger);
    const flow = flowChanged
      ? {
          trigger: change.trigger ?? current.trigger,
          steps: await this.checkedFlow(scopeOf(reach, current), change.steps ?? (current.steps as StepInput[]), current.state !== 'draft'),
          goal: change.goal === undefined ? current.goal : change.goal,
        }
      : undefined;
    const row = await repo.updateAutomation(this.db, reach, id, { name: change.name, flow });
    if (!row) throw notFound('Automation');
    return view(row);
  }

  async remove(reach: Reach, id: string): Promise<void> {
    if (!(await repo.deleteAutomation(this.db, reach, id))) throw notFound('Automation');
  }

  /**
   * `activate` (draft or paused → active: its email senders must be on verified domains), `pause` (active →
   * paused: nobody is enrolled and no step runs until it is active again), `archive` (→ archived, for good: running
   * enrollments exit). Any other move → 409 `invalid_state_transition`.
   */
  async move(reach: Reach, id: string, action: keyof typeof MOVES): Promise<AutomationView> {
    const { from, to } = MOVES[action];
    if (action === 'activate') {
      const current = await this.find(reach, id);
      await this.checkedFlow(scopeOf(reach, current), current.steps as StepInput[], true);
    }
    const moved = await repo.changeState(this.db, reach, id, from, to);
    if (!moved) throw notFound('Automation');
    if ('state' in moved) throw new AppError(409, 'invalid_state_transition', `Cannot ${action} an automation that is ${moved.state}`);
    return view(moved.moved);
  }

  async stats(reach: Reach, id: string): Promise<z.output<typeof automationStats>> {
    const automation = await this.find(reach, id);
    const [counts, steps] = await Promise.all([repo.countEnrollments(this.db, [id]), repo.stepCounts(this.db, id)]);
    const byStep = new Map(steps.map((s) => [s.stepId, s]));
    // The current flow's steps in order, then any step only an older version had.
    const ordered = [
      ...automation.steps.map((step) => byStep.get(step.id) ?? { stepId: step.id, type: step.type, entered: 0, completed: 0, sent: 0, clicked: 0, converted: 0 }),
      ...steps.filter((s) => !automation.steps.some((step) => step.id === s.stepId)),
    ];
    return {
      automationId: id,
      totals: totalsOf(counts.get(id)),
      steps: ordered.map(({ stepId, type, entered, sent, clicked, completed, converted }) => ({ stepId, type, entered, sent, clicked, completed, converted })),
    };
  }

  async enrollmentsOf(reach: Reach, id: string, query: { page: number; pageSize: number; state?: EnrollmentState | undefined; subscriberId?: string | undefined }) {
    await this.find(reach, id);
    const { rows, total } = await repo.listEnrollments(this.db, id, { limit: query.pageSize, offset: (query.page - 1) * query.pageSize, state: query.state, subscriberId: query.subscriberId });
    return { data: rows.map(enrollmentView), page: query.page, pageSize: query.pageSize, total };
  }

  async enrollmentOf(reach: Reach, id: string, enrollmentId: string): Promise<z.output<typeof enrollmentDetail>> {
    await this.find(reach, id);
    const found = await repo.findEnrollment(this.db, id, enrollmentId);
    if (!found) throw notFound('Enrollment');
    return {
      ...enrollmentView(found.enrollment),
      history: found.history.map((run) => ({
        stepId: run.stepId,
        type: run.stepType,
        enteredAt: run.enteredAt.toISOString(),
        completedAt: iso(run.completedAt),
        outcome: run.outcome,
        messageId: run.messageId,
      })),
    };
  }

  /** Deletes an enrollment and its history: the subscriber may be enrolled again by the next trigger (spec 3.3). */
  async deleteEnrollment(reach: Reach, id: string, enrollmentId: string): Promise<void> {
    await this.find(reach, id);
    if (!(await repo.deleteEnrollment(this.db, id, enrollmentId))) throw notFound('Enrollment');
  }

  /**
   * What stored events do to their people's running enrollments, in the caller's transaction, set-based: one that
   * reaches an enrollment's goal ends it `converted`; one its wait-until step waits for (that occurred after the step
   * was reached and before its timeout, with properties matching) makes it due now, to take the matched branch.
   * Returns how many were made due.
   */
  async reactToEvents(tx: Db, scope: ProjectScope, stored: readonly StoredEvent[]): Promise<number> {
    const named = stored.filter((e) => e.subscriberId !== null);
    if (named.length === 0) return 0;
    const listening = await enrollments.findListening(tx, scope.projectId, [...new Set(named.map((e) => e.subscriberId!))], [...new Set(named.map((e) => e.name))]);
    const converted = new Set<string>();
    const matched = new Map<string, { id: string; stepId: string; eventId: string }>();
    for (const event of named) {
      for (const enrollment of listening) {
        if (enrollment.subscriberId !== event.subscriberId || converted.has(enrollment.id)) continue;
        const { goal, wait } = enrollment;
        if (goal?.event === event.name && event.occurredAt >= enrollment.enrolledAt && allHold(goal.conditions, event.properties)) {
          converted.add(enrollment.id);
          matched.delete(enrollment.id);
        } else if (
          wait &&
          !matched.has(enrollment.id) &&
          wait.step.event === event.name &&
          event.occurredAt >= wait.since &&
          event.occurredAt < wait.until &&
          allHold(wait.step.conditions, event.properties)
        ) {
          matched.set(enrollment.id, { id: enrollment.id, stepId: wait.step.id, eventId: event.id });
        }
      }
    }
    await enrollments.convert(tx, [...converted]);
    return enrollments.wake(tx, [...matched.values()]);
  }

  /**
   * Enrolls the subscribers of stored events in the project's active `event` automations whose name and property
   * conditions match, in the caller's transaction. Returns how many enrollments each event made.
   */
  async enrollForEvents(tx: Db, scope: ProjectScope, stored: readonly StoredEvent[]): Promise<Map<string, number>> {
    const made = new Map<string, number>();
    const named = stored.filter((e) => e.subscriberId !== null);
    if (named.length === 0) return made;
    const automations = await enrollments.findEventAutomations(tx, scope.projectId, scope.sandbox, [...new Set(named.map((e) => e.name))]);
    // An entry rule admits only the people it matches now: one query per automation that has one.
    const admitted = new Map<string, Set<string>>();
    for (const a of automations) {
      if (a.trigger.type !== 'event' || !a.trigger.segment) continue;
      const members = await entryRuleMembers(tx, scope, a.trigger.segment);
      admitted.set(a.id, await enrollments.subscribersIn(tx, [...new Set(named.map((e) => e.subscriberId!))], members));
    }
    const items = named.flatMap((event) =>
      automations
        .filter((a) => a.trigger.type === 'event' && a.trigger.eventName === event.name && allHold(a.trigger.conditions, event.properties))
        .filter((a) => admitted.get(a.id)?.has(event.subscriberId!) ?? true)
        .map((a) => ({
          projectId: scope.projectId,
          automationId: a.id,
          version: a.version,
          stepId: a.entryStepId,
          subscriberId: event.subscriberId!,
          eventId: event.id,
          properties: event.properties,
        })),
    );
    // One enrollment per automation and subscriber, whichever of the batch's events comes first.
    const unique = [...new Map(items.map((i) => [`${i.automationId}:${i.subscriberId}`, i])).values()];
    for (const eventId of await enrollments.enrollEach(tx, unique)) made.set(eventId, (made.get(eventId) ?? 0) + 1);
    return made;
  }

  /**
   * The minute tick of `schedule` and `subscriber_inactive` triggers: each active one is evaluated over the window
   * since its last evaluation, and enrolls set-based whoever it selects. Returns how many were enrolled.
   */
  async evaluateTriggers(): Promise<number> {
    const now = await enrollments.databaseNow(this.db);
    let enrolled = 0;
    for (const automation of await enrollments.findTickAutomations(this.db)) {
      const { trigger } = automation;
      const rule = trigger.segment ? await entryRuleMembers(this.db, automation, trigger.segment) : undefined;
      const admitted = (who: SQL) => (rule ? sql`(${who}) AND s.id IN ${rule}` : who);
      if (trigger.type === 'subscriber_inactive') {
        const threshold = sql`now() - make_interval(days => ${trigger.inactiveDays})`;
        // Only those who crossed the threshold since the last evaluation: everyone inactive on the first one.
        const crossed = automation.evaluatedUntil
          ? sql`s.last_seen_at > ${automation.evaluatedUntil}::timestamptz - make_interval(days => ${trigger.inactiveDays}) AND s.last_seen_at <= ${threshold}`
          : sql`s.last_seen_at <= ${threshold}`;
        enrolled += (await enrollments.enrollSelected(this.db, automation, now, admitted(crossed))) ?? 0;
      } else if (trigger.type === 'schedule') {
        const from = automation.evaluatedUntil === null ? now : new Date(automation.evaluatedUntil);
        const fired = zonesFiring(trigger.cron, from, now);
        const fallback = trigger.defaultTimezone ?? 'UTC';
        // A subscriber without a zone this runtime knows is read in the trigger's default zone.
        const who =
          fired.length === 0
            ? sql`false`
            : fired.includes(fallback)
              ? sql`(s.timezone = ANY(${sql.param(fired)}::text[]) OR s.timezone IS NULL OR NOT s.timezone = ANY(${sql.param([...KNOWN_ZONES])}::text[]))`
              : sql`s.timezone = ANY(${sql.param(fired)}::text[])`;
        enrolled += (await enrollments.enrollSelected(this.db, automation, now, admitted(who))) ?? 0;
      }
    }
    return enrolled;
  }

  private async find(reach: Reach, id: string): Promise<repo.AutomationRecord> {
    const row = await repo.findAutomation(this.db, reach, id);
    if (!row) throw notFound('Automation');
    return row;
  }

  /**
   * The steps as stored (an email's template parts copied in), or 422 naming each step that breaks the flow or
   * whose content cannot go on its channel. `sending`: also check what only matters once it runs (senders on
   * verified domains), as activation does.
   */
  /** A trigger's entry rule must hold filters that fit the attribute list, or name a saved segment of the environment (422). */
  private async checkEntryRule(scope: ProjectScope, trigger: AutomationTrigger): Promise<void> {
    if (trigger.segment) await checkEntryRule(this.db, scope, trigger.segment, 'trigger.segment');
  }

  private async checkedFlow(scope: ProjectScope, steps: StepInput[], sending: boolean): Promise<AutomationStep[]> {
    const problems: FieldError[] = flowProblems(steps as AutomationStep[]);
    const stored: AutomationStep[] = [];
    for (const [i, step] of steps.entries()) {
      const at = (field: string | undefined, error: string) => problems.push({ field: `steps[${i}].${field ?? 'content'}`, error: `step ${step.id}: ${error}` });
      const channelProblems = (channel: 'push' | 'sms' | 'whatsapp', content: unknown) => {
        for (const p of this.deps.delivery.validate(channel, content as never) ?? []) at(p.field ? `content.${p.field}` : undefined, p.error);
      };
      switch (step.type) {
        case 'send_push': {
          const { clickUrl, ...content } = step.content;
          channelProblems('push', { ...content, url: clickUrl });
          break;
        }
        case 'send_sms':
          channelProblems('sms', step.content);
          break;
        case 'send_whatsapp':
          if (step.content.text !== undefined) channelProblems('whatsapp', { type: 'text', text: step.content.text });
          break;
        case 'send_email': {
          let content: EmailCampaignContent;
          try {
            content = await this.deps.email.prepare(scope, step.content);
          } catch (error) {
            if (error instanceof AppError && error.details) for (const d of error.details) at(d.field, d.error);
            else throw error;
            break;
          }
          const checks = await this.deps.email.check(scope, content, null);
          for (const d of checks) if (sending || !d.error.includes('sender_domain_not_verified')) at(d.field, d.error);
          stored.push({ ...step, content });
          continue;
        }
      }
      stored.push(step as AutomationStep);
    }
    // A condition's segment must be one of the automation's project and environment (deleted later, it holds for nobody).
    const named = steps.flatMap((step, i) => (step.type === 'condition' && step.criteria.segmentId !== undefined ? [{ i, step, segmentId: step.criteria.segmentId }] : []));
    const segments = await enrollments.findSegmentFilters(this.db, scope.projectId, scope.sandbox, named.map((n) => n.segmentId));
    for (const { i, step, segmentId } of named) {
      if (!segments.has(segmentId)) problems.push({ field: `steps[${i}].criteria.segmentId`, error: `step ${step.id}: segment ${segmentId} not found` });
    }
    if (problems.length > 0) throw validationFailed(problems);
    return stored;
  }
}

const scopeOf = (reach: Reach, row: repo.AutomationRecord): ProjectScope => ({ organizationId: reach.organizationId, projectId: row.projectId, sandbox: row.sandbox });

function totalsOf(counts: Record<EnrollmentState, number> | undefined) {
  const c = counts ?? repo.noEnrollments();
  const enrolled = c.active + c.waiting + c.completed + c.converted + c.exited + c.failed;
  const rate = (n: number) => (enrolled === 0 ? 0 : Math.round((n / enrolled) * 10_000) / 10_000);
  return { enrolled, ...c, conversion: rate(c.completed), goalConversion: rate(c.converted) };
}
