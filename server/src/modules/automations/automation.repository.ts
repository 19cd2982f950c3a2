// Automations' SQL: the automation rows with their current flow, versions, state changes, enrollments and per-step stats.
import { and, count, desc, eq, inArray, sql } from 'drizzle-orm';
import type { Db } from '../../db/database.js';
import {
  automationEnrollments,
  automations,
  automationStepRuns,
  automationVersions,
  type AutomationGoal,
  type AutomationState,
  type AutomationStep,
  type AutomationTrigger,
  subscribers,
  type EnrollmentState,
} from '../../db/schema.js';
import { subscriberSummaryColumns, summaryJoin, summaryOf, type SubscriberSummary } from '../../db/subscriber-summary.js';
import { reachableRows } from '../../db/tenant-scope.js';
import type { ProjectScope, Reach } from '../tenancy.js';

export type AutomationRecord = typeof automations.$inferSelect & { trigger: AutomationTrigger; steps: AutomationStep[]; goal: AutomationGoal | null };
/** What each version holds: the trigger, the steps and the goal. */
export type Flow = { trigger: AutomationTrigger; steps: AutomationStep[]; goal: AutomationGoal | null };
export type EnrollmentRow = typeof automationEnrollments.$inferSelect;
/** An enrollment with the person it is about, for the lists. */
export type NamedEnrollmentRow = EnrollmentRow & { subscriber: SubscriberSummary | null };
export type StepRunRow = typeof automationStepRuns.$inferSelect;

const reachable = (db: Db, reach: Reach) => reachableRows(db, reach, { projectId: automations.projectId, sandbox: automations.sandbox });

const withFlow = {
  automation: automations,
  trigger: automationVersions.trigger,
  steps: automationVersions.steps,
  goal: automationVersions.goal,
};

function selectWithFlow(db: Db) {
  return db
    .select(withFlow)
    .from(automations)
    .innerJoin(automationVersions, and(eq(automationVersions.automationId, automations.id), eq(automationVersions.version, automations.version)));
}

const flat = (row: { automation: typeof automations.$inferSelect } & Flow): AutomationRecord => ({
  ...row.automation,
  trigger: row.trigger,
  steps: row.steps,
  goal: row.goal,
});

/** The trigger's columns on the automation row, which triggers look automations up by. */
const triggerColumns = (trigger: AutomationTrigger) => ({ triggerType: trigger.type, eventName: trigger.type === 'event' ? trigger.eventName : null });

export async function insertAutomation(
  db: Db,
  row: { id: string; projectId: string; sandbox: boolean; name: string; starter: string | null } & Flow,
): Promise<AutomationRecord> {
  return db.transaction(async (tx) => {
    const [automation] = await tx
      .insert(automations)
      .values({ id: row.id, projectId: row.projectId, sandbox: row.sandbox, name: row.name, starter: row.starter, ...triggerColumns(row.trigger) })
      .returning();
    await tx.insert(automationVersions).values({ automationId: row.id, version: 1, trigger: row.trigger, steps: row.steps, goal: row.goal });
    return { ...automation!, trigger: row.trigger, steps: row.steps, goal: row.goal };
  });
}

export async function findAutomation(db: Db, reach: Reach, id: string): Promise<AutomationRecord | undefined> {
  const [row] = await selectWithFlow(db).where(and(reachable(db, reach), eq(automations.id, id)));
  return row && flat(row);
}

export async function listAutomations(db: Db, scope: ProjectScope, page: { limit: number; offset: number; state?: AutomationState | undefined }) {
  const where = and(reachable(db, scope), page.state === undefined ? undefined : eq(automations.state, page.state));
  const [rows, [total]] = await Promise.all([
    selectWithFlow(db).where(where).orderBy(desc(automations.createdAt), desc(automations.id)).limit(page.limit).offset(page.offset),
    db.select({ total: count() }).from(automations).where(where),
  ]);
  return { rows: rows.map(flat), total: total?.total ?? 0 };
}

/**
 * Writes a change. A new flow (trigger or steps) replaces a draft's in place — nobody can be enrolled on it — and
 * becomes a new version of any other automation, so that each enrollment keeps the flow it started on.
 */
export async function updateAutomation(
  db: Db,
  reach: Reach,
  id: string,
  change: { name?: string | undefined; flow?: Flow | undefined },
): Promise<AutomationRecord | undefined> {
  return db.transaction(async (tx) => {
    const [current] = await tx
      .select()
      .from(automations)
      .where(and(reachable(tx, reach), eq(automations.id, id)))
      .for('update');
    if (!current) return undefined;
    let version = current.version;
    if (change.flow) {
      if (current.state === 'draft') {
        await tx
          .update(automationVersions)
          .set(change.flow)
          .where(and(eq(automationVersions.automationId, id), eq(automationVersions.version, version)));
      } else {
        version += 1;
        await tx.insert(automationVersions).values({ automationId: id, version, ...change.flow });
      }
    }
    await tx
      .update(automations)
      .set({ name: change.name ?? current.name, version, ...(change.flow ? triggerColumns(change.flow.trigger) : {}), updatedAt: new Date() })
      .where(eq(automations.id, id));
    const [row] = await selectWithFlow(tx).where(eq(automations.id, id));
    return flat(row!);
  });
}

/**
 * Moves the automation to `to` when its state is one of `from`; returns the row after, or its state when it was in
 * none of them (undefined: not found). Archiving ends its running enrollments as `exited`. Activating (or resuming)
 * starts the window of `schedule` and `subscriber_inactive` triggers now, so a pause is not caught up afterwards —
 * except a first activation of `subscriber_inactive`, whose first evaluation reaches back to everyone already inactive.
 */
export async function changeState(
  db: Db,
  reach: Reach,
  id: string,
  from: readonly AutomationState[],
  to: AutomationState,
): Promise<{ moved: AutomationRecord } | { state: AutomationState } | undefined> {
  return db.transaction(async (tx) => {
    const [current] = await tx
      .select({ state: automations.state, activatedAt: automations.activatedAt, triggerType: automations.triggerType })
      .from(automations)
      .where(and(reachable(tx, reach), eq(automations.id, id)))
      .for('update');
    if (!current) return undefined;
    if (!from.includes(current.state)) return { state: current.state };
    const firstActivation = to === 'active' && current.activatedAt === null;
    // A first subscriber_inactive evaluation (no window yet) reaches back to everyone already inactive.
    const reachBack = firstActivation && current.triggerType === 'subscriber_inactive';
    await tx
      .update(automations)
      .set({
        state: to,
        updatedAt: new Date(),
        ...(firstActivation ? { activatedAt: sql`now()` } : {}),
        ...(to === 'active' ? { evaluatedUntil: reachBack ? null : sql`date_trunc('milliseconds', now())` } : {}),
      })
      .where(eq(automations.id, id));
    if (to === 'archived') {
      await tx
        .update(automationEnrollments)
        .set({ state: 'exited', reason: 'automation_archived', stepId: null, endedAt: sql`now()`, lockedBy: null, lockedUntil: null })
        .where(and(eq(automationEnrollments.automationId, id), inArray(automationEnrollments.state, ['active', 'waiting'])));
    }
    const [row] = await selectWithFlow(tx).where(eq(automations.id, id));
    return { moved: flat(row!) };
  });
}

export async function deleteAutomation(db: Db, reach: Reach, id: string): Promise<boolean> {
  const deleted = await db
    .delete(automations)
    .where(and(reachable(db, reach), eq(automations.id, id)))
    .returning({ id: automations.id });
  return deleted.length > 0;
}

export const noEnrollments = (): Record<EnrollmentState, number> => ({ active: 0, waiting: 0, completed: 0, converted: 0, exited: 0, failed: 0 });

/** Enrollment counts per state of each automation. */
export async function countEnrollments(db: Db, automationIds: readonly string[]): Promise<Map<string, Record<EnrollmentState, number>>> {
  const counts = new Map<string, Record<EnrollmentState, number>>();
  if (automationIds.length === 0) return counts;
  const rows = await db
    .select({ automationId: automationEnrollments.automationId, state: automationEnrollments.state, n: count() })
    .from(automationEnrollments)
    .where(inArray(automationEnrollments.automationId, [...automationIds]))
    .groupBy(automationEnrollments.automationId, automationEnrollments.state);
  for (const row of rows) {
    const entry = counts.get(row.automationId) ?? noEnrollments();
    entry[row.state] = row.n;
    counts.set(row.automationId, entry);
  }
  return counts;
}

export interface StepCounts {
  stepId: string;
  type: string;
  entered: number;
  completed: number;
  sent: number;
  clicked: number;
  converted: number;
}

/**
 * Per step: enrollments that entered it and moved past it, of its messages those sent and clicked, and of its
 * enrollments those that ended converted (the goal reached after the step, or while in it).
 */
export async function stepCounts(db: Db, automationId: string): Promise<StepCounts[]> {
  const { rows } = await db.execute<{ step_id: string; step_type: string; entered: string; completed: string; sent: string; clicked: string; converted: string }>(sql`
    SELECT r.step_id, min(r.step_type) AS step_type, count(*) AS entered, count(r.completed_at) AS completed,
      count(d.sent_at) AS sent, count(d.clicked_at) AS clicked, count(*) FILTER (WHERE e.state = 'converted') AS converted
    FROM automation_step_runs r
    JOIN automation_enrollments e ON e.id = r.enrollment_id
    LEFT JOIN deliveries d ON d.message_id = r.message_id
    WHERE r.automation_id = ${automationId}
    GROUP BY r.step_id`);
  return rows.map((r) => ({
    stepId: r.step_id,
    type: r.step_type,
    entered: Number(r.entered),
    completed: Number(r.completed),
    sent: Number(r.sent),
    clicked: Number(r.clicked),
    converted: Number(r.converted),
  }));
}

export async function listEnrollments(
  db: Db,
  automationId: string,
  page: { limit: number; offset: number; state?: EnrollmentState | undefined; subscriberId?: string | undefined },
) {
  const where = and(
    eq(automationEnrollments.automationId, automationId),
    page.state === undefined ? undefined : eq(automationEnrollments.state, page.state),
    page.subscriberId === undefined ? undefined : eq(automationEnrollments.subscriberId, page.subscriberId),
  );
  const [rows, [total]] = await Promise.all([
    db
      .select({ enrollment: automationEnrollments, ...subscriberSummaryColumns })
      .from(automationEnrollments)
      .leftJoin(subscribers, summaryJoin(automationEnrollments.subscriberId, automationEnrollments.projectId))
      .where(where)
      .orderBy(desc(automationEnrollments.enrolledAt), desc(automationEnrollments.id))
      .limit(page.limit)
      .offset(page.offset),
    db.select({ total: count() }).from(automationEnrollments).where(where),
  ]);
  return { rows: rows.map((row) => ({ ...row.enrollment, subscriber: summaryOf(row) })), total: total?.total ?? 0 };
}

export async function findEnrollment(db: Db, automationId: string, id: string): Promise<{ enrollment: NamedEnrollmentRow; history: StepRunRow[] } | undefined> {
  const [row] = await db
    .select({ enrollment: automationEnrollments, ...subscriberSummaryColumns })
    .from(automationEnrollments)
    .leftJoin(subscribers, summaryJoin(automationEnrollments.subscriberId, automationEnrollments.projectId))
    .where(and(eq(automationEnrollments.automationId, automationId), eq(automationEnrollments.id, id)));
  if (!row) return undefined;
  const history = await db.select().from(automationStepRuns).where(eq(automationStepRuns.enrollmentId, id)).orderBy(automationStepRuns.enteredAt);
  return { enrollment: { ...row.enrollment, subscriber: summaryOf(row) }, history };
}

/** Deletes an enrollment with its history: the subscriber may be enrolled again (spec 3.3). */
export async function deleteEnrollment(db: Db, automationId: string, id: string): Promise<boolean> {
  const deleted = await db
    .delete(automationEnrollments)
    .where(and(eq(automationEnrollments.automationId, automationId), eq(automationEnrollments.id, id)))
    .returning({ id: automationEnrollments.id });
  return deleted.length > 0;
}
