// Enrollments' SQL: set-based enrollment by each trigger, the executor's locked claim, and its fenced write-back.
import { sql, type SQL } from 'drizzle-orm';
import { alias, PgDialect } from 'drizzle-orm/pg-core';
import type pg from 'pg';
import type { Db } from '../../db/database.js';
import { subscribers, type AutomationGoal, type AutomationStep, type AutomationTrigger, type EnrollmentState, type EntryRule } from '../../db/schema.js';
import { type ConsentChannel, emailStatusOf, marketingConsentOf, reachableOnSome } from '../segments/index.js';

// Prepared once per connection, like the registration statement it follows in the same transaction. Automations
// with an entry rule are only returned, with the people each may take: their rule is compiled per automation.
const ENROLL_REGISTERED = {
  name: 'automation_enrollments_enroll_registered',
  text: `with candidates as (
           select i.project_id, i.sandbox, i.id, a.id as automation_id, a.version, v.steps->0->>'id' as step_id, v.trigger->'segment' as rule
           from unnest($1::text[], $2::text[], $3::boolean[]) as i(id, project_id, sandbox)
           join automations a on a.project_id = i.project_id and a.sandbox = i.sandbox and a.state = 'active' and a.trigger_type = 'subscriber_added'
           join automation_versions v on v.automation_id = a.id and v.version = a.version),
         enrolled as (
           insert into automation_enrollments (project_id, automation_id, version, subscriber_id, step_id)
           select project_id, automation_id, version, id, step_id from candidates where rule is null
           on conflict do nothing)
         select automation_id, project_id, sandbox, version, step_id, rule, array_agg(id) as ids
         from candidates where rule is not null
         group by automation_id, project_id, sandbox, version, step_id, rule`,
} as const;

/** An active `subscriber_added` automation with an entry rule, and the people just registered it may take. */
export interface RuledRegistration {
  automationId: string;
  projectId: string;
  sandbox: boolean;
  version: number;
  stepId: string;
  rule: EntryRule;
  ids: string[];
}

/**
 * Enrolls subscribers just registered in their project's active `subscriber_added` automations of their environment
 * that have no entry rule, on the registration's own connection and transaction, so that it commits with it; returns
 * those with a rule, for `enrollRegisteredMembers`.
 */
export async function enrollRegistered(
  client: pg.ClientBase,
  registered: readonly { id: string; projectId: string; sandbox: boolean }[],
): Promise<RuledRegistration[]> {
  if (registered.length === 0) return [];
  const { rows } = await client.query<{ automation_id: string; project_id: string; sandbox: boolean; version: number; step_id: string; rule: EntryRule; ids: string[] }>({
    ...ENROLL_REGISTERED,
    values: [registered.map((r) => r.id), registered.map((r) => r.projectId), registered.map((r) => r.sandbox)],
  });
  return rows.map((r) => ({ automationId: r.automation_id, projectId: r.project_id, sandbox: r.sandbox, version: r.version, stepId: r.step_id, rule: r.rule, ids: r.ids }));
}

/** Enrolls, in the registration's transaction, those of `automation.ids` among `members` (a subquery of subscriber ids). */
export async function enrollRegisteredMembers(client: pg.ClientBase, automation: RuledRegistration, members: SQL): Promise<void> {
  const query = new PgDialect().sqlToQuery(sql`
    INSERT INTO automation_enrollments (project_id, automation_id, version, subscriber_id, step_id)
    SELECT ${automation.projectId}, ${automation.automationId}, ${automation.version}, i.id, ${automation.stepId}
    FROM unnest(${sql.param(automation.ids)}::text[]) AS i(id) WHERE i.id IN ${members}
    ON CONFLICT DO NOTHING`);
  await client.query(query.sql, query.params);
}

/** An active automation as a trigger reads it: its current version's trigger. */
export interface TriggerAutomation {
  id: string;
  projectId: string;
  sandbox: boolean;
  version: number;
  trigger: AutomationTrigger;
  /** Where its current version starts. */
  entryStepId: string;
  /** Where the last evaluated window ended: the database's text, compared exactly when the window moves on. */
  evaluatedUntil: string | null;
}

type TriggerAutomationRow = { id: string; project_id: string; sandbox: boolean; version: number; trigger: AutomationTrigger; entry_step_id: string; evaluated_until: string | null };

const triggerAutomation = (r: TriggerAutomationRow): TriggerAutomation => ({
  id: r.id,
  projectId: r.project_id,
  sandbox: r.sandbox,
  version: r.version,
  trigger: r.trigger,
  entryStepId: r.entry_step_id,
  evaluatedUntil: r.evaluated_until,
});

/** The project's active `event` automations listening for any of `names`, in one environment. */
export async function findEventAutomations(db: Db, projectId: string, sandbox: boolean, names: readonly string[]): Promise<TriggerAutomation[]> {
  const { rows } = await db.execute<TriggerAutomationRow>(sql`
    SELECT a.id, a.project_id, a.sandbox, a.version, v.trigger, v.steps->0->>'id' AS entry_step_id, a.evaluated_until FROM automations a
    JOIN automation_versions v ON v.automation_id = a.id AND v.version = a.version
    WHERE a.project_id = ${projectId} AND a.state = 'active' AND a.trigger_type = 'event' AND a.sandbox = ${sandbox}
      AND a.event_name = ANY(${sql.param([...names])}::text[])`);
  return rows.map(triggerAutomation);
}

/** Every active automation whose trigger is evaluated by the minute tick (`schedule`, `subscriber_inactive`). */
export async function findTickAutomations(db: Db): Promise<TriggerAutomation[]> {
  const { rows } = await db.execute<TriggerAutomationRow>(sql`
    SELECT a.id, a.project_id, a.sandbox, a.version, v.trigger, v.steps->0->>'id' AS entry_step_id, a.evaluated_until FROM automations a
    JOIN automation_versions v ON v.automation_id = a.id AND v.version = a.version
    WHERE a.state = 'active' AND a.trigger_type IN ('schedule', 'subscriber_inactive')`);
  return rows.map(triggerAutomation);
}

/** Which of the subscribers are among `members` (a subquery of subscriber ids). */
export async function subscribersIn(db: Db, ids: readonly string[], members: SQL): Promise<Set<string>> {
  const { rows } = await db.execute<{ id: string }>(sql`SELECT id FROM unnest(${sql.param([...ids])}::text[]) AS i(id) WHERE id IN ${members}`);
  return new Set(rows.map((r) => r.id));
}

/** Enrolls subscribers named one by one (events); a subscriber already enrolled is skipped. Returns the event of each enrollment made. */
export async function enrollEach(
  db: Db,
  items: readonly { projectId: string; automationId: string; version: number; stepId: string; subscriberId: string; eventId: string | null; properties: Record<string, unknown> | null }[],
): Promise<string[]> {
  if (items.length === 0) return [];
  const column = <T>(pick: (item: (typeof items)[number]) => T) => sql.param(items.map(pick));
  const { rows } = await db.execute<{ event_id: string }>(sql`
    INSERT INTO automation_enrollments (project_id, automation_id, version, step_id, subscriber_id, event_id, event_properties)
    SELECT * FROM unnest(${column((i) => i.projectId)}::text[], ${column((i) => i.automationId)}::text[], ${column((i) => i.version)}::int[], ${column((i) => i.stepId)}::text[],
      ${column((i) => i.subscriberId)}::text[], ${column((i) => i.eventId)}::text[], ${column((i) => (i.properties === null ? null : JSON.stringify(i.properties)))}::jsonb[])
    ON CONFLICT DO NOTHING
    RETURNING event_id`);
  return rows.map((r) => r.event_id);
}

/**
 * Moves a tick-evaluated automation's window to `until` and enrolls, in one statement, every subscriber of its
 * environment that `who` selects (a predicate over `s`) and that is reachable for marketing on some channel (an
 * automation is marketing; a dead push device leaves its person's addresses in); each is due at a moment spread over the minute after
 * `until` (by its id), so that a trigger matching a million people does not make them all due at once. Nothing
 * happens when another evaluation moved the window meanwhile. Returns how many were enrolled, or undefined then.
 */
export async function enrollSelected(db: Db, automation: TriggerAutomation, until: Date, who: ReturnType<typeof sql>): Promise<number | undefined> {
  return db.transaction(async (tx) => {
    const moved = await tx.execute(sql`
      UPDATE automations SET evaluated_until = ${until} WHERE id = ${automation.id} AND state = 'active'
        AND evaluated_until IS NOT DISTINCT FROM ${automation.evaluatedUntil}`);
    if (moved.rowCount !== 1) return undefined;
    const inserted = await tx.execute(sql`
      INSERT INTO automation_enrollments (project_id, automation_id, version, step_id, subscriber_id, due_at)
      SELECT s.project_id, ${automation.id}, ${automation.version}, ${automation.entryStepId}, s.id,
        ${until}::timestamptz + make_interval(secs => (hashtext(s.id) & 65535) * 60.0 / 65536)
      FROM subscribers s
      WHERE s.project_id = ${automation.projectId} AND s.sandbox = ${automation.sandbox} AND ${who}
        AND ${reachableOnSome({ marketing: true }, alias(subscribers, 's'))}
      ON CONFLICT DO NOTHING`);
    return inserted.rowCount ?? 0;
  });
}

/** The database's clock: every due and lock comparison reads it, never a process's own. */
export async function databaseNow(db: Db): Promise<Date> {
  const { rows } = await db.execute<{ now: Date }>(sql`SELECT now() AS now`);
  return new Date(rows[0]!.now);
}

/** An enrollment this executor holds the lock of. */
export interface ClaimedEnrollment {
  id: string;
  projectId: string;
  automationId: string;
  version: number;
  subscriberId: string;
  state: EnrollmentState;
  stepId: string | null;
  eventProperties: Record<string, unknown> | null;
  /** At a wait-until step: the event that came in time (null: the timeout passed first). */
  waitMatchedEventId: string | null;
  /** The fencing token: the write-back applies only while the lock is still this one. */
  lockVersion: number;
  /** Another executor held it before and its lock expired (it crashed or stalled): a takeover. */
  takenOver: boolean;
}

/**
 * Locks up to `limit` due enrollments of active automations that no executor holds (or whose lock expired) for
 * `lockSeconds`, atomically: two executors never hold the same one (FOR UPDATE SKIP LOCKED, then the lock columns).
 * The earliest due first, across automations: each active automation's earliest are read from its part of the due
 * index (twice the batch, so that an executor claiming at the same instant as another still finds a batch beyond the
 * rows the other locks), then merged. A paused automation's due enrollments are never read, however many.
 */
export async function claimDue(db: Db, executor: string, limit: number, lockSeconds: number): Promise<ClaimedEnrollment[]> {
  const { rows } = await db.execute<{
    id: string;
    project_id: string;
    automation_id: string;
    version: number;
    subscriber_id: string;
    state: EnrollmentState;
    step_id: string | null;
    event_properties: Record<string, unknown> | null;
    wait_matched_event_id: string | null;
    lock_version: number;
    taken_over: boolean;
  }>(sql`
    WITH due AS (
      SELECT e.id, e.locked_until IS NOT NULL AS taken_over
      FROM automations a
      CROSS JOIN LATERAL (
        SELECT c.id, c.due_at FROM automation_enrollments c
        WHERE c.automation_id = a.id AND c.state IN ('active', 'waiting') AND c.due_at <= now() AND (c.locked_until IS NULL OR c.locked_until < now())
        ORDER BY c.due_at
        LIMIT ${2 * limit}
      ) c
      JOIN automation_enrollments e ON e.id = c.id
      -- Again on the row as locked: one another executor claimed meanwhile is read anew and no longer passes.
      WHERE a.state = 'active' AND e.state IN ('active', 'waiting') AND e.due_at <= now() AND (e.locked_until IS NULL OR e.locked_until < now())
      ORDER BY c.due_at
      LIMIT ${limit}
      FOR UPDATE OF e SKIP LOCKED
    )
    UPDATE automation_enrollments e
    SET locked_by = ${executor}, locked_until = now() + make_interval(secs => ${lockSeconds}), lock_version = e.lock_version + 1
    FROM due WHERE e.id = due.id
    RETURNING e.id, e.project_id, e.automation_id, e.version, e.subscriber_id, e.state, e.step_id, e.event_properties, e.wait_matched_event_id, e.lock_version, due.taken_over`);
  return rows.map((r) => ({
    id: r.id,
    projectId: r.project_id,
    automationId: r.automation_id,
    version: r.version,
    subscriberId: r.subscriber_id,
    state: r.state,
    stepId: r.step_id,
    eventProperties: r.event_properties,
    waitMatchedEventId: r.wait_matched_event_id,
    lockVersion: r.lock_version,
    takenOver: r.taken_over,
  }));
}

/** The flows of the versions named, with their automation's environment: immutable once enrollments run on them, so executors keep them. */
export async function findVersions(
  db: Db,
  keys: readonly { automationId: string; version: number }[],
): Promise<{ automationId: string; version: number; sandbox: boolean; steps: AutomationStep[] }[]> {
  const { rows } = await db.execute<{ automation_id: string; version: number; sandbox: boolean; steps: AutomationStep[] }>(sql`
    SELECT v.automation_id, v.version, a.sandbox, v.steps FROM automation_versions v
    JOIN automations a ON a.id = v.automation_id
    JOIN unnest(${sql.param(keys.map((k) => k.automationId))}::text[], ${sql.param(keys.map((k) => k.version))}::int[]) AS k(automation_id, version)
      ON v.automation_id = k.automation_id AND v.version = k.version`);
  return rows.map((r) => ({ automationId: r.automation_id, version: r.version, sandbox: r.sandbox, steps: r.steps }));
}

/** What a step's executor reads of a subscriber: its addresses, fields for conditions and merge tags, its preferences. */
export interface EnrollmentSubscriber {
  id: string;
  projectId: string;
  sandbox: boolean;
  status: 'active' | 'inactive' | 'unsubscribed';
  email: string | null;
  phone: string | null;
  /** A browser subscription: a contact known only by email or phone has none. */
  pushSubscribed: boolean;
  externalId: string | null;
  platform: string | null;
  browser: string | null;
  os: string | null;
  country: string | null;
  city: string | null;
  device: string | null;
  language: string | null;
  timezone: string | null;
  tags: string[];
  emailStatus: string;
  /** Marketing consent per channel (`marketingConsentOf`); null: no address on it. */
  consent: Record<ConsentChannel, string | null>;
  attributes: Record<string, unknown>;
  preferences: { channels?: Record<string, boolean | undefined> };
  subscribedAt: Date;
  lastSeenAt: Date;
}

export async function findSubscribers(db: Db, ids: readonly string[]): Promise<EnrollmentSubscriber[]> {
  const { rows } = await db.execute<Record<string, unknown>>(sql`
    SELECT id, project_id, sandbox, status, email, phone, endpoint IS NOT NULL AS push_subscribed, external_id, platform, browser, os, country, city, device, language,
      timezone, tags, ${emailStatusOf()} AS email_status, attributes, preferences, subscribed_at, last_seen_at,
      ${marketingConsentOf('email')} AS email_consent, ${marketingConsentOf('sms')} AS sms_consent, ${marketingConsentOf('whatsapp')} AS whatsapp_consent
    FROM subscribers WHERE id = ANY(${sql.param([...ids])}::text[])`);
  return rows.map((r) => ({
    id: r.id as string,
    projectId: r.project_id as string,
    sandbox: r.sandbox as boolean,
    status: r.status as EnrollmentSubscriber['status'],
    email: r.email as string | null,
    phone: r.phone as string | null,
    pushSubscribed: r.push_subscribed as boolean,
    externalId: r.external_id as string | null,
    platform: r.platform as string | null,
    browser: r.browser as string | null,
    os: r.os as string | null,
    country: r.country as string | null,
    city: r.city as string | null,
    device: r.device as string | null,
    language: r.language as string | null,
    timezone: r.timezone as string | null,
    tags: r.tags as string[],
    emailStatus: r.email_status as string,
    consent: { email: r.email_consent as string | null, sms: r.sms_consent as string | null, whatsapp: r.whatsapp_consent as string | null },
    attributes: r.attributes as Record<string, unknown>,
    preferences: r.preferences as EnrollmentSubscriber['preferences'],
    subscribedAt: new Date(r.subscribed_at as string),
    lastSeenAt: new Date(r.last_seen_at as string),
  }));
}

/** The filters of the segments named, of one project and environment (a test key's segments are the sandbox's). */
export async function findSegmentFilters(db: Db, projectId: string, sandbox: boolean, ids: readonly string[]): Promise<Map<string, unknown>> {
  if (ids.length === 0) return new Map();
  const { rows } = await db.execute<{ id: string; filters: unknown }>(sql`
    SELECT id, filters FROM segments WHERE project_id = ${projectId} AND sandbox = ${sandbox} AND id = ANY(${sql.param([...ids])}::text[])`);
  return new Map(rows.map((r) => [r.id, r.filters]));
}

/**
 * Where an enrollment goes after a pass: its next step and when it is due (after `delaySeconds`), or its end.
 * `waitEvent`: the event a wait-until step now waits for (from now on).
 */
export interface EnrollmentAdvance {
  id: string;
  lockVersion: number;
  state: EnrollmentState;
  stepId: string | null;
  delaySeconds: number;
  waitEvent: string | null;
  reason: string | null;
}

/** A step an enrollment entered or finished in a pass. */
export interface StepRunWrite {
  enrollmentId: string;
  automationId: string;
  stepId: string;
  stepType: string;
  completed: boolean;
  outcome: string | null;
  messageId: string | null;
}

/**
 * Writes a pass's outcome for the enrollments this executor still holds (`lockVersion` unchanged) and releases
 * them; returns the ids written. Run first in the pass's transaction: the rows stay locked until it commits, so
 * the pass's other writes are kept only for these.
 *
 * The lock version alone fences (every claim moves it), and the rows are found by id alone: a test of `locked_by`
 * too let the planner, whose statistics see that column null, scan the whole table for it on every pass.
 */
export async function advance(db: Db, advances: readonly EnrollmentAdvance[]): Promise<Set<string>> {
  if (advances.length === 0) return new Set();
  const column = <T>(pick: (a: EnrollmentAdvance) => T) => sql.param(advances.map(pick));
  const { rows } = await db.execute<{ id: string }>(sql`
    UPDATE automation_enrollments e
    SET state = x.state, step_id = x.step_id, reason = x.reason, locked_by = NULL, locked_until = NULL,
      due_at = now() + make_interval(secs => x.delay_seconds),
      wait_event = x.wait_event, wait_since = CASE WHEN x.wait_event IS NOT NULL THEN now() END, wait_matched_event_id = NULL,
      ended_at = CASE WHEN x.state IN ('completed', 'exited', 'failed') THEN now() END
    FROM unnest(${column((a) => a.id)}::text[], ${column((a) => a.lockVersion)}::int[], ${column((a) => a.state)}::text[],
      ${column((a) => a.stepId)}::text[], ${column((a) => a.delaySeconds)}::int[], ${column((a) => a.waitEvent)}::text[], ${column((a) => a.reason)}::text[])
      AS x(id, lock_version, state, step_id, delay_seconds, wait_event, reason)
    WHERE e.id = x.id AND e.lock_version = x.lock_version
    RETURNING e.id`);
  return new Set(rows.map((r) => r.id));
}

/** Records the steps entered and completed (a delay entered in one pass completes in a later one). */
export async function recordStepRuns(db: Db, runs: readonly StepRunWrite[]): Promise<void> {
  if (runs.length === 0) return;
  const column = <T>(pick: (r: StepRunWrite) => T) => sql.param(runs.map(pick));
  await db.execute(sql`
    INSERT INTO automation_step_runs AS r (enrollment_id, automation_id, step_id, step_type, entered_at, completed_at, outcome, message_id)
    SELECT x.enrollment_id, x.automation_id, x.step_id, x.step_type, clock_timestamp(), CASE WHEN x.completed THEN clock_timestamp() END, x.outcome, x.message_id
    FROM unnest(${column((r) => r.enrollmentId)}::text[], ${column((r) => r.automationId)}::text[], ${column((r) => r.stepId)}::text[],
      ${column((r) => r.stepType)}::text[], ${column((r) => r.completed)}::boolean[], ${column((r) => r.outcome)}::text[], ${column((r) => r.messageId)}::text[])
      WITH ORDINALITY AS x(enrollment_id, automation_id, step_id, step_type, completed, outcome, message_id, n)
    ORDER BY x.n
    ON CONFLICT (enrollment_id, step_id) DO UPDATE
    SET completed_at = coalesce(r.completed_at, excluded.completed_at), outcome = coalesce(excluded.outcome, r.outcome),
      message_id = coalesce(r.message_id, excluded.message_id)`);
}

/** Releases enrollments whose pass failed, due again at once, while still held under the same lock; returns how many. */
export async function release(db: Db, held: readonly Pick<ClaimedEnrollment, 'id' | 'lockVersion'>[]): Promise<number> {
  if (held.length === 0) return 0;
  const released = await db.execute(sql`
    UPDATE automation_enrollments e SET locked_by = NULL, locked_until = NULL
    FROM unnest(${sql.param(held.map((h) => h.id))}::text[], ${sql.param(held.map((h) => h.lockVersion))}::int[]) AS x(id, lock_version)
    WHERE e.id = x.id AND e.lock_version = x.lock_version`);
  return released.rowCount ?? 0;
}

type WaitUntilStep = Extract<AutomationStep, { type: 'wait_until' }>;

/** A running enrollment an event of its person may end (its goal) or move on (the wait-until step it waits at). */
export interface ListeningEnrollment {
  id: string;
  subscriberId: string;
  enrolledAt: Date;
  /** Its version's goal, when it is one of the events' names. */
  goal: AutomationGoal | null;
  /** The wait-until step it waits at for one of the events' names, since when, and until when (its timeout). */
  wait: { step: WaitUntilStep; since: Date; until: Date } | null;
}

/**
 * The running enrollments of a project's subscribers that events of `names` concern: those whose version's goal is
 * one of them, and those waiting at a wait-until step for one of them with nothing matched yet.
 */
export async function findListening(db: Db, projectId: string, subscriberIds: readonly string[], names: readonly string[]): Promise<ListeningEnrollment[]> {
  const { rows } = await db.execute<{
    id: string;
    subscriber_id: string;
    enrolled_at: string;
    goal: AutomationGoal | null;
    wait_step: WaitUntilStep | null;
    wait_since: string | null;
    due_at: string;
  }>(sql`
    SELECT e.id, e.subscriber_id, e.enrolled_at, e.wait_since, e.due_at,
      CASE WHEN v.goal->>'event' = ANY(${sql.param([...names])}::text[]) THEN v.goal END AS goal,
      CASE WHEN e.state = 'waiting' AND e.wait_matched_event_id IS NULL AND e.wait_event = ANY(${sql.param([...names])}::text[])
        THEN (SELECT s FROM jsonb_array_elements(v.steps) s WHERE s->>'id' = e.step_id) END AS wait_step
    FROM automation_enrollments e
    JOIN automation_versions v ON v.automation_id = e.automation_id AND v.version = e.version
    WHERE e.project_id = ${projectId} AND e.subscriber_id = ANY(${sql.param([...subscriberIds])}::text[]) AND e.state IN ('active', 'waiting')
      AND (v.goal->>'event' = ANY(${sql.param([...names])}::text[])
        OR (e.state = 'waiting' AND e.wait_matched_event_id IS NULL AND e.wait_event = ANY(${sql.param([...names])}::text[])))`);
  return rows.map((r) => ({
    id: r.id,
    subscriberId: r.subscriber_id,
    enrolledAt: new Date(r.enrolled_at),
    goal: r.goal,
    wait: r.wait_step && r.wait_since ? { step: r.wait_step, since: new Date(r.wait_since), until: new Date(r.due_at) } : null,
  }));
}

/**
 * Ends running enrollments as `converted` (their person reached the goal). The lock version moves on, so an executor
 * running one of them meanwhile has its pass refused by the fence: the enrollment ends once, here. Returns how many.
 */
export async function convert(db: Db, ids: readonly string[]): Promise<number> {
  if (ids.length === 0) return 0;
  const converted = await db.execute(sql`
    UPDATE automation_enrollments
    SET state = 'converted', step_id = NULL, reason = NULL, ended_at = now(), wait_event = NULL, wait_since = NULL, wait_matched_event_id = NULL,
      locked_by = NULL, locked_until = NULL, lock_version = lock_version + 1
    WHERE id = ANY(${sql.param([...ids].sort())}::text[]) AND state IN ('active', 'waiting')`);
  return converted.rowCount ?? 0;
}

/**
 * Marks enrollments still waiting at their wait-until step as matched by an event, due now: the next pass takes
 * their matched branch. As with `convert`, an executor taking the timeout branch of one meanwhile is fenced off;
 * one whose timeout was already written has left the step and is not matched. Returns how many.
 */
export async function wake(db: Db, matches: readonly { id: string; stepId: string; eventId: string }[]): Promise<number> {
  if (matches.length === 0) return 0;
  const sorted = [...matches].sort((a, b) => (a.id < b.id ? -1 : 1));
  const woken = await db.execute(sql`
    UPDATE automation_enrollments e
    SET wait_matched_event_id = x.event_id, due_at = now(), locked_by = NULL, locked_until = NULL, lock_version = e.lock_version + 1
    FROM unnest(${sql.param(sorted.map((m) => m.id))}::text[], ${sql.param(sorted.map((m) => m.stepId))}::text[], ${sql.param(sorted.map((m) => m.eventId))}::text[])
      AS x(id, step_id, event_id)
    WHERE e.id = x.id AND e.state = 'waiting' AND e.step_id = x.step_id AND e.wait_matched_event_id IS NULL`);
  return woken.rowCount ?? 0;
}
