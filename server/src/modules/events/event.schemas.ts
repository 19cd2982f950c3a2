// Zod schemas of the events routes (spec 4.6, 6.1): what an application reports, one at a time or in batches.
import { z } from 'zod';
import { dateOrDateTime, subscriberSummary, timestamp } from '../../http/schemas.js';

const MAX_PROPERTIES_BYTES = 16 * 1024;

const eventName = z.string().regex(/^[A-Za-z0-9_.:-]{1,100}$/, 'must be 1–100 letters, digits, ".", ":", "_" or "-"');

const eventFields = {
    name: eventName.describe('The event name, e.g. cart.abandoned: `event` triggers of the same name enroll its subscriber'),
    externalId: z.string().min(1).max(255).optional().describe("The person by the application's own user id (the subscriber seen last with it)"),
    token: z.string().min(1).max(200).optional().describe("The person by a subscriber's token (that device)"),
    subscriberId: z.string().min(1).max(100).optional().describe('The person by subscriber id'),
    properties: z
      .record(z.string(), z.unknown())
      .refine((p) => Buffer.byteLength(JSON.stringify(p), 'utf8') <= MAX_PROPERTIES_BYTES, 'must be at most 16 KiB of JSON')
      .optional()
      .describe('Any JSON object, at most 16 KiB: what trigger conditions, condition steps and email merge tags (`{{ event.total }}`) read'),
    occurredAt: dateOrDateTime.optional().describe('When it happened (default: when received)'),
    eventId: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .describe("The application's own id of the event: another event with the same eventId in the project is ignored (`duplicate`)"),
};

const namesOnePerson = (e: { externalId?: string | undefined; token?: string | undefined; subscriberId?: string | undefined }) =>
  [e.externalId, e.token, e.subscriberId].filter((v) => v !== undefined).length === 1;
const ONE_PERSON = { message: 'must name the person by exactly one of externalId, token, subscriberId' };

export const eventInput = z.strictObject(eventFields).refine(namesOnePerson, ONE_PERSON).meta({ id: 'NewEvent' });

export const MAX_EVENTS_PER_BATCH = 1000;

const projectId = z
  .string()
  .optional()
  .describe("The project: required with a JWT + x-org-id; with an API key, the key's project (another → 403 `cross_project`)");

export const eventsBody = z
  .union([
    z.strictObject({ projectId, ...eventFields }).refine(namesOnePerson, ONE_PERSON),
    z.strictObject({ projectId, events: z.array(eventInput).min(1).max(MAX_EVENTS_PER_BATCH) }),
  ])
  .describe(`One event, or {events: [...]} with up to ${MAX_EVENTS_PER_BATCH}`);

export const eventOutcome = z.object({
  id: z.string().describe("Herald's id of the event (of the first one, for a duplicate)"),
  eventId: z.string().nullable(),
  name: z.string(),
  status: z.enum(['recorded', 'duplicate']).describe('duplicate: an event with this eventId was recorded before; nothing happened'),
  subscriberId: z.string().nullable().describe('The subscriber it was recorded against; null when none matched (recorded, enrolls nobody)'),
  enrolled: z.number().int().describe('Automations it enrolled its subscriber in'),
});

export const eventsResponse = z
  .object({ recorded: z.number().int(), duplicates: z.number().int(), data: z.array(eventOutcome) })
  .meta({ id: 'EventsAccepted' });

export const event = z
  .object({
    id: z.string(),
    name: z.string(),
    subscriberId: z.string().nullable(),
    subscriber: subscriberSummary.nullable(),
    identity: z.record(z.string(), z.string()).describe('How the application named the person'),
    properties: z.record(z.string(), z.unknown()),
    eventId: z.string().nullable(),
    occurredAt: timestamp,
    receivedAt: timestamp,
  })
  .meta({ id: 'Event' });

export const eventsQuery = z.strictObject({
  page: z.coerce.number().int().min(1).default(1),
  pageSize: z.coerce.number().int().min(1).max(100).default(20),
  name: z.string().min(1).max(100).optional(),
  subscriberId: z.string().min(1).max(100).optional(),
});

export const countsQuery = z.strictObject({
  days: z.coerce.number().int().min(1).max(365).default(30).describe('Over the last N days (default 30)'),
});

export const eventCounts = z
  .object({ days: z.number().int(), data: z.array(z.object({ name: z.string(), count: z.number().int(), lastReceivedAt: timestamp })) })
  .meta({ id: 'EventCounts' });

/** How many of the most recent events of a name `GET /events/project/:projectId/properties` reads. */
export const PROPERTIES_SAMPLE = 1000;
/** Values listed per property. */
export const PROPERTY_TOP_VALUES = 20;

export const propertiesQuery = z.strictObject({
  name: eventName.describe('The event name whose properties to list'),
});

const jsonType = z.enum(['string', 'number', 'boolean', 'null', 'array', 'object']);

export const eventProperties = z
  .object({
    name: z.string(),
    sampled: z.number().int().describe(`Events read: the ${PROPERTIES_SAMPLE} most recently received of the name (fewer when there are fewer)`),
    properties: z
      .array(
        z.object({
          path: z.string().describe('Dotted path of a value under nested objects, e.g. shipping.method: what an event condition\'s `where` names'),
          seen: z.number().int().describe('Sampled events that carry it'),
          types: z
            .array(z.object({ type: jsonType, count: z.number().int() }))
            .describe('Its JSON types, most frequent first (a path can hold "10" in one event and 10 in another)'),
          values: z
            .array(z.object({ value: z.union([z.string(), z.number(), z.boolean(), z.null()]), count: z.number().int() }))
            .describe(`Its ${PROPERTY_TOP_VALUES} most frequent scalar values (of at most 200 characters), most frequent first`),
        }),
      )
      .describe('At most 200 paths, the most often seen first; objects are walked 5 levels deep'),
  })
  .meta({ id: 'EventProperties' });
