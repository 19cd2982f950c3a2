// Zod schemas of the automation routes (spec 2.5, 3.3, 6.2): triggers, steps, conditions, automations, stats, enrollments.
import { z } from 'zod';
import { AUTOMATION_STATES, ENROLLMENT_STATES } from '../../db/schema.js';
import { subscriberSummary, timestamp, timezone } from '../../http/schemas.js';
import { mailbox, pushContent } from '../campaigns/index.js';
import { html, MERGE_TAGS_NOTE, preheader, subject, text } from '../email-templates/index.js';
import { segmentFilterSchema } from '../segments/index.js';
import { templateComponent } from '../transactional/index.js';
import { isValidCron } from './automation-schedule.js';
import { DURATION_PATTERN } from './automation-flow.js';

const stepId = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1–64 letters, digits, _ or -')
  .describe("The step's id, unique in its flow");
const next = stepId.nullable().describe('The id of the following step; null ends the flow');
const eventName = z
  .string()
  .regex(/^[A-Za-z0-9_.:-]{1,100}$/, 'must be 1–100 letters, digits, ".", ":", "_" or "-"')
  .describe('An event name, e.g. cart.abandoned');

export const propertyCondition = z
  .strictObject({
    path: z
      .string()
      .regex(/^[A-Za-z0-9_$-]+(\.[A-Za-z0-9_$-]+)*$/, 'must be a property name, or a dotted path such as cart.total')
      .max(200)
      .describe('The property, a dotted path into nested objects (cart.total)'),
    operator: z
      .enum(['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'contains', 'in', 'exists', 'not_exists'])
      .describe('eq / neq: equal (JSON value); gt, gte, lt, lte: numbers (or ISO 8601 strings) compared; contains: a string containing, or an array holding, value; in: one of the array value; exists / not_exists: no value'),
    value: z.unknown().optional(),
  })
  .superRefine((c, ctx) => {
    const needsValue = c.operator !== 'exists' && c.operator !== 'not_exists';
    if (needsValue && c.value === undefined) ctx.addIssue({ code: 'custom', path: ['value'], message: `is required with ${c.operator}` });
    if (c.operator === 'in' && !Array.isArray(c.value)) ctx.addIssue({ code: 'custom', path: ['value'], message: 'must be an array with in' });
  })
  .meta({ id: 'PropertyCondition', description: 'A test of one property of the triggering event or of the subscriber\'s attributes' });

const propertyConditions = z.array(propertyCondition).min(1).max(20);

const duration = z.string().regex(DURATION_PATTERN, 'must be a number and a unit: 30m, 2h, 1d or 2w');

export const goal = z
  .strictObject({
    event: eventName.describe('The event that counts as reaching the goal, e.g. order.completed'),
    conditions: propertyConditions.optional().describe("Tests of the event's properties, all of which must hold"),
  })
  .meta({
    id: 'AutomationGoal',
    description:
      'What the automation is for: a person enrolled who performs this event (after enrolling) leaves the flow at once, ' +
      'their enrollment ending `converted`; versioned with the flow, like the trigger',
  });

/** Who may enter: only people matching it are enrolled by the trigger (docs/TARGETING.md, "Entry rules"). */
const entryRule = z
  .union([
    z.strictObject({ filters: segmentFilterSchema }),
    z.strictObject({ savedSegmentId: z.string().min(1).max(100).describe("A saved segment of the automation's project and environment") }),
  ])
  .optional()
  .describe('Entry rule: only people matching these filters (or in this saved segment) when the trigger fires are enrolled');

export const trigger = z
  .discriminatedUnion('type', [
    z
      .strictObject({ type: z.literal('subscriber_added'), segment: entryRule })
      .describe('A new subscriber registers on the project (POST /subscribers); an entry rule is read as the registration commits'),
    z
      .strictObject({
        type: z.literal('subscriber_inactive'),
        inactiveDays: z.number().int().min(1).max(3650).describe('N: enrolls a subscriber not seen for N days (lastSeenAt)'),
        segment: entryRule,
      })
      .describe('A subscriber has not been seen for N days'),
    z
      .strictObject({
        type: z.literal('event'),
        eventName,
        conditions: propertyConditions.optional().describe("Tests of the event's properties, all of which must hold"),
        segment: entryRule,
      })
      .describe('POST /events with this name (and properties matching the conditions)'),
    z
      .strictObject({
        type: z.literal('schedule'),
        cron: z
          .string()
          .max(100)
          .refine(isValidCron, 'must be a 5-field cron expression (minute hour day-of-month month day-of-week), e.g. "0 9 * * 1"')
          .describe("A 5-field cron expression, read in each subscriber's own timezone: \"0 9 * * 1\" is Mondays 9:00 local"),
        defaultTimezone: timezone.optional().describe('The zone of subscribers whose timezone is unknown (default UTC)'),
        segment: entryRule,
      })
      .describe("A cron expression fires in the subscriber's timezone"),
  ])
  .meta({ id: 'AutomationTrigger', description: 'What enrolls a subscriber (spec 6.2)' });

const emailStepContent = z
  .strictObject({
    subject: subject.optional(),
    preheader: preheader.unwrap().optional(),
    html: html.optional(),
    text: text.unwrap().optional(),
    from: mailbox('From'),
    replyTo: mailbox('Reply-To').optional(),
    templateId: z
      .string()
      .min(1)
      .max(100)
      .optional()
      .describe('A saved email template of the project: the parts not given here are copied from it when the automation is saved'),
  })
  .refine((content) => content.templateId !== undefined || (content.subject !== undefined && content.html !== undefined), {
    message: 'needs subject and html, or a templateId to take them from',
  })
  .describe(
    `${MERGE_TAGS_NOTE} An automation's email reads its subscriber's attributes and standard fields, as a campaign's does, and ` +
      '`event` — the properties of the event that enrolled it (`{{ event.cart.total }}`).',
  );

const whatsappStepContent = z
  .strictObject({
    text: z
      .string()
      .min(1)
      .max(4096)
      .optional()
      .describe("Free-form text: sent only inside the 24-hour customer-service window the person's last message opened; otherwise the step is skipped (skipped:outside_service_window)"),
    templateName: z.string().regex(/^[a-z0-9_]{1,512}$/, 'must be a template name').optional().describe('An APPROVED template of the registry'),
    language: z.string().regex(/^[a-z]{2,3}(_[A-Za-z0-9]{2,8})?$/, 'must be a Meta language code such as en_US').optional(),
    components: z.array(templateComponent).max(20).optional(),
  })
  .refine((c) => (c.text === undefined) !== (c.templateName === undefined), { message: 'needs text or templateName (one of them)' });

export const conditionCriteria = z
  .strictObject({
    subscriber: segmentFilterSchema.optional().describe("The subscriber's fields, as a segment's filters"),
    segmentId: z.string().min(1).max(100).optional().describe("Membership of a saved segment of the automation's project and environment (checked at save; one deleted later matches nobody)"),
    attributes: propertyConditions.optional().describe("Tests of the subscriber's attributes"),
    event: propertyConditions.optional().describe('Tests of the properties of the event that enrolled the subscriber (false without one)'),
  })
  .refine((c) => c.subscriber || c.segmentId || c.attributes || c.event, 'must name at least one of subscriber, segmentId, attributes, event')
  .meta({ id: 'ConditionCriteria', description: 'Every part given must hold (AND) for the true branch' });

export const step = z
  .discriminatedUnion('type', [
    z.strictObject({ id: stepId, type: z.literal('send_push'), next, content: pushContent }),
    z.strictObject({ id: stepId, type: z.literal('send_email'), next, content: emailStepContent }),
    z.strictObject({
      id: stepId,
      type: z.literal('send_sms'),
      next,
      content: z.strictObject({ body: z.string().min(1).max(1600).describe("The text; the sender is chosen per the number's country") }),
    }),
    z.strictObject({ id: stepId, type: z.literal('send_whatsapp'), next, content: whatsappStepContent }),
    z.strictObject({
      id: stepId,
      type: z.literal('delay'),
      next,
      duration: duration.describe('How long to wait: minutes (30m), hours (2h), days (1d) or weeks (2w); at most 365 days'),
    }),
    z.strictObject({
      id: stepId,
      type: z.literal('condition'),
      criteria: conditionCriteria,
      trueBranch: next.describe('The step when the criteria hold; null ends the flow'),
      falseBranch: next.describe('The step otherwise; null ends the flow'),
    }),
    z
      .strictObject({
        id: stepId,
        type: z.literal('wait_until'),
        event: eventName.describe('The event to wait for, from the same person (POST /events)'),
        conditions: propertyConditions.optional().describe("Tests of the event's properties, all of which must hold"),
        timeout: duration.describe('How long to wait at most, as a delay: 30m, 2h, 1d, 2w; at most 365 days'),
        matchedBranch: next.describe('The step when the event comes in time; null ends the flow'),
        timeoutBranch: next.describe('The step when the timeout passes first; null ends the flow'),
      })
      .describe('Waits until the person performs an event (one that occurs after reaching the step), or until the timeout'),
    z.strictObject({ id: stepId, type: z.literal('exit') }).describe('Ends the enrollment as exited'),
  ])
  .meta({ id: 'AutomationStep', description: 'One step; the first of the list is the entry step' });

/** A step as a request gives it: an email's parts may still be its template's. */
export type StepInput = z.output<typeof step>;

const steps = z.array(step).min(1).max(100);

const name = z.string().trim().min(1).max(200);

export const createAutomationBody = z
  .strictObject({ projectId: z.string().min(1), name, trigger, steps, goal: goal.nullable().optional().describe('None by default') })
  .meta({ id: 'NewAutomation', description: 'Saved as a draft: POST /automations/{id}/activate starts it' });

export const updateAutomationBody = z
  .strictObject({ name: name.optional(), trigger: trigger.optional(), steps: steps.optional(), goal: goal.nullable().optional().describe('null removes it') })
  .refine((b) => b.name !== undefined || b.trigger !== undefined || b.steps !== undefined || b.goal !== undefined, 'must change name, trigger, steps or goal');

export const fromStarterBody = z.strictObject({
  projectId: z.string().min(1),
  starter: z.enum(['welcome-series', 'reengagement-30d', 'onboarding-drip-7d', 'abandoned-cart']),
  name: name.optional().describe("Default: the starter's name"),
});

export const automation = z
  .object({
    id: z.string(),
    projectId: z.string(),
    sandbox: z.boolean().describe('Made with a test key: enrolls sandbox subscribers only, and sends nothing out'),
    name: z.string(),
    state: z.enum(AUTOMATION_STATES),
    version: z.number().int().describe('The version new enrollments start on; enrollments keep the version they started on'),
    trigger,
    steps: z.array(step),
    goal: goal.nullable(),
    starter: z.string().nullable(),
    activatedAt: timestamp.nullable(),
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({ id: 'Automation' });

export const automationTotals = z
  .object({
    enrolled: z.number().int().describe('Enrollments now on record (a deleted one is not counted)'),
    active: z.number().int(),
    waiting: z.number().int(),
    completed: z.number().int(),
    converted: z.number().int().describe('Enrollments that ended because the person reached the goal'),
    exited: z.number().int(),
    failed: z.number().int(),
    conversion: z.number().describe('completed / enrolled, 0 to 1 (0 with no enrollment)'),
    goalConversion: z.number().describe('converted / enrolled, 0 to 1 (0 with no enrollment, or without a goal)'),
  })
  .meta({ id: 'AutomationTotals' });

export const automationStats = z
  .object({
    automationId: z.string(),
    totals: automationTotals,
    steps: z.array(
      z.object({
        stepId: z.string(),
        type: z.string(),
        entered: z.number().int().describe('Enrollments the step started for'),
        sent: z.number().int().describe('Send steps: messages the provider accepted (0 for other steps)'),
        clicked: z.number().int().describe('Send steps: messages clicked (0 for other steps)'),
        completed: z.number().int().describe('Enrollments that moved past the step; a delay not yet expired is entered, not completed'),
        converted: z.number().int().describe('Enrollments that entered the step and later (or while in it) reached the goal'),
      }),
    ),
  })
  .meta({ id: 'AutomationStats', description: 'Per-step stats (spec 2.5) over every version: a step keeps its id across versions' });

export const enrollment = z
  .object({
    id: z.string(),
    automationId: z.string(),
    version: z.number().int(),
    subscriberId: z.string(),
    subscriber: subscriberSummary.nullable(),
    state: z.enum(ENROLLMENT_STATES),
    stepId: z.string().nullable().describe('The step it runs next; null once ended'),
    dueAt: timestamp.nullable().describe('When that step is due; null once ended'),
    eventId: z.string().nullable(),
    reason: z.string().nullable().describe('Why it failed or exited, when it did'),
    enrolledAt: timestamp,
    endedAt: timestamp.nullable(),
  })
  .meta({ id: 'Enrollment' });

export const stepRun = z.object({
  stepId: z.string(),
  type: z.string(),
  enteredAt: timestamp,
  completedAt: timestamp.nullable(),
  outcome: z
    .string()
    .nullable()
    .describe('sent, skipped:<why>, true / false (a condition), waited, matched / timed_out (a wait-until step), exited, or failed:<why>'),
  messageId: z.string().nullable().describe("A send step's message (its delivery is in the subscriber's history)"),
});

export const enrollmentDetail = enrollment.extend({ history: z.array(stepRun) }).meta({ id: 'EnrollmentDetail' });

export const enrollmentsQuery = z.strictObject({
  page: z.coerce.number().int().min(1).default(1),
  pageSize: z.coerce.number().int().min(1).max(100).default(20),
  state: z.enum(ENROLLMENT_STATES).optional(),
  subscriberId: z.string().min(1).optional(),
});

export const listQuery = z.strictObject({
  page: z.coerce.number().int().min(1).default(1),
  pageSize: z.coerce.number().int().min(1).max(100).default(20),
  state: z.enum(AUTOMATION_STATES).optional(),
});

export const starter = z.object({ id: z.string(), name: z.string(), description: z.string(), trigger, steps: z.array(step) }).meta({ id: 'AutomationStarter' });
