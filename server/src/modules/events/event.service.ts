// Events (spec 4.6, 6.1): stored per project once per eventId, against the subscriber they name, enrolling it in the
// matching event automations (and reaching its running automations' goals and wait-until steps) in the same transaction.
import type { z } from 'zod';
import type { Db } from '../../db/database.js';
import { newId } from '../../shared/ids.js';
import type { AutomationService } from '../automations/index.js';
import type { ProjectScope } from '../tenancy.js';
import * as repo from './event.repository.js';
import { PROPERTIES_SAMPLE, PROPERTY_TOP_VALUES, type event, type eventInput, type eventProperties, type eventsResponse } from './event.schemas.js';

type EventInput = z.output<typeof eventInput>;
type EventView = z.output<typeof event>;

const view = (row: repo.NamedEventRow): EventView => ({
  id: row.id,
  name: row.name,
  subscriberId: row.subscriberId,
  subscriber: row.subscriber,
  identity: row.identity,
  properties: row.properties,
  eventId: row.eventKey,
  occurredAt: row.occurredAt.toISOString(),
  receivedAt: row.receivedAt.toISOString(),
});

export class EventService {
  constructor(
    private readonly db: Db,
    private readonly automations: AutomationService,
    /** Told when events enrolled someone or made a waiting enrollment due, so this process's executor looks at once. */
    private readonly onEnrolled: () => void = () => {},
  ) {}

  /**
   * Records events. An event naming nobody known is recorded with no subscriber and enrolls nobody, now or later
   * (it happened before the person was known to Herald). One whose eventId the project already has is a duplicate.
   */
  async record(scope: ProjectScope, inputs: readonly EventInput[]): Promise<z.output<typeof eventsResponse>> {
    const outcome = await this.db.transaction(async (tx) => {
      const found = await repo.resolveSubscribers(tx, scope, {
        ids: inputs.flatMap((e) => (e.subscriberId === undefined ? [] : [e.subscriberId])),
        tokens: inputs.flatMap((e) => (e.token === undefined ? [] : [e.token])),
        externalIds: inputs.flatMap((e) => (e.externalId === undefined ? [] : [e.externalId])),
      });
      const rows = inputs.map((input) => {
        const subscriberId =
          input.subscriberId !== undefined
            ? found.ids.has(input.subscriberId)
              ? input.subscriberId
              : null
            : input.token !== undefined
              ? (found.tokens.get(input.token) ?? null)
              : (found.externalIds.get(input.externalId!) ?? null);
        const identity: Record<string, string> =
          input.subscriberId !== undefined ? { subscriberId: input.subscriberId } : input.token !== undefined ? { token: input.token } : { externalId: input.externalId! };
        return {
          id: newId('evt'),
          projectId: scope.projectId,
          sandbox: scope.sandbox,
          name: input.name,
          subscriberId,
          identity,
          properties: input.properties ?? {},
          occurredAt: input.occurredAt === undefined ? new Date() : new Date(input.occurredAt),
          eventKey: input.eventId ?? null,
        };
      });
      const { inserted, existing } = await repo.insertEvents(tx, rows);
      // Before enrolling: an event reaches the goals and wait-until steps of enrollments already running, not its own.
      const woken = await this.automations.reactToEvents(tx, scope, inserted);
      const enrolled = await this.automations.enrollForEvents(tx, scope, inserted);
      const recorded = new Set(inserted.map((r) => r.id));
      const data = rows.map((row) => ({
        id: recorded.has(row.id) ? row.id : (existing.get(row.eventKey!) ?? row.id),
        eventId: row.eventKey,
        name: row.name,
        status: recorded.has(row.id) ? ('recorded' as const) : ('duplicate' as const),
        subscriberId: row.subscriberId,
        enrolled: enrolled.get(row.id) ?? 0,
      }));
      return { data, woken };
    });
    if (outcome.woken > 0 || outcome.data.some((o) => o.enrolled > 0)) this.onEnrolled();
    const recorded = outcome.data.filter((o) => o.status === 'recorded').length;
    return { recorded, duplicates: outcome.data.length - recorded, data: outcome.data };
  }

  async list(scope: ProjectScope, query: { page: number; pageSize: number; name?: string | undefined; subscriberId?: string | undefined }) {
    const { rows, total } = await repo.listEvents(this.db, scope, { limit: query.pageSize, offset: (query.page - 1) * query.pageSize, name: query.name, subscriberId: query.subscriberId });
    return { data: rows.map(view), page: query.page, pageSize: query.pageSize, total };
  }

  async counts(scope: ProjectScope, days: number) {
    return { days, data: await repo.countByName(this.db, scope, days) };
  }

  /** The properties seen on the most recent events of a name, for the segment builder's typeahead. */
  async properties(scope: ProjectScope, name: string): Promise<z.output<typeof eventProperties>> {
    const seen = await repo.recentProperties(this.db, scope, name, { sample: PROPERTIES_SAMPLE, top: PROPERTY_TOP_VALUES, depth: 5, paths: 200 });
    return { name, ...seen };
  }
}
