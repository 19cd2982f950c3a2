// The in-memory evaluator of the filters tree: the same semantics as the SQL compiler, on one person (property tests).
import { attributeTypeOf } from './attribute-condition.js';
import { inRange, rangeEnd, rangeStart } from './date-range.js';
import type { EventCondition } from './event-condition.js';
import { compareHolds, misfit, testHolds, typeOfTest } from './filter-values.js';
import { asArray, CONSENT_CHANNELS, EMPTY_CONTEXT, type FilterableSubscriber, type FilterCondition, type FilterContext, type SegmentFilter } from './segment-filter.js';

const DAY_MS = 86_400_000;

/** A person as the evaluator reads them: the fixed fields, attributes and events (absent: none). */
export interface EvaluablePerson extends FilterableSubscriber {
  attributes?: Record<string, unknown> | undefined;
  events?: readonly PersonEvent[] | undefined;
}

export interface PersonEvent {
  name: string;
  occurredAt: Date;
  properties: Record<string, unknown>;
}

/** The value at a dotted path, or undefined. */
function valueAt(object: Record<string, unknown>, path: string): unknown {
  let value: unknown = object;
  for (const key of path.split('.')) {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

function eventHolds(condition: EventCondition, events: readonly PersonEvent[], now: Date): boolean {
  const matching = events.filter(
    (e) =>
      e.name === condition.event &&
      (condition.withinLastDays === undefined || e.occurredAt.getTime() >= now.getTime() - condition.withinLastDays * DAY_MS) &&
      (condition.between === undefined || inRange(condition.between, e.occurredAt.getTime())) &&
      (condition.where ?? []).every((test) => testHolds(typeOfTest(test), valueAt(e.properties, test.property), test, now)),
  );
  const count = condition.count ?? { operator: 'gte', value: 1 };
  const times = matching.map((e) => e.occurredAt.getTime());
  const holds =
    (count.operator === 'gte' ? matching.length >= count.value : count.operator === 'lte' ? matching.length <= count.value : matching.length === count.value) &&
    (condition.first === undefined || (times.length > 0 && compareHolds('date', Math.min(...times), condition.first, now))) &&
    (condition.last === undefined || (times.length > 0 && compareHolds('date', Math.max(...times), condition.last, now)));
  return condition.performed === false ? !holds : holds;
}

function conditionHolds(condition: FilterCondition, person: EvaluablePerson, now: Date, context: FilterContext, inside: ReadonlySet<string>): boolean {
  if ('attribute' in condition) {
    const type = attributeTypeOf(condition, context.attributeTypes);
    return !misfit(type, condition) && testHolds(type, person.attributes?.[condition.attribute], condition, now);
  }
  if ('event' in condition) return eventHolds(condition, person.events ?? [], now);
  if ('inSegment' in condition || 'notInSegment' in condition) {
    const id = 'inSegment' in condition ? condition.inSegment : condition.notInSegment;
    const saved = context.segments.get(id);
    const member = saved !== undefined && !inside.has(id) && groupHolds(saved, person, now, context, new Set([...inside, id]));
    return 'inSegment' in condition ? member : !member;
  }
  return groupHolds(condition, person, now, context, inside);
}

/** The same semantics as compileSegmentFilter, on one person in memory. */
export function matchesSegmentFilter(filter: SegmentFilter, person: EvaluablePerson, now: Date, context: FilterContext = EMPTY_CONTEXT): boolean {
  return groupHolds(filter, person, now, context, new Set());
}

function groupHolds(filter: SegmentFilter, subscriber: EvaluablePerson, now: Date, context: FilterContext, inside: ReadonlySet<string>): boolean {
  const anyOf = (value: string | string[] | undefined, actual: string | null) =>
    value === undefined || (actual !== null && asArray(value).includes(actual));
  if (!anyOf(filter.platform, subscriber.platform)) return false;
  if (!anyOf(filter.browser, subscriber.browser)) return false;
  if (!anyOf(filter.os, subscriber.os)) return false;
  if (!anyOf(filter.country, subscriber.country)) return false;
  if (!anyOf(filter.city, subscriber.city)) return false;
  if (!anyOf(filter.device, subscriber.device)) return false;
  if (!anyOf(filter.emailStatus, subscriber.emailStatus)) return false;
  if (!CONSENT_CHANNELS.every((channel) => anyOf(filter[`${channel}Consent`], subscriber.consent[channel]))) return false;
  if (filter.language !== undefined) {
    const language = subscriber.language;
    if (language === null || !asArray(filter.language).some((l) => language === l || language.startsWith(`${l}-`))) return false;
  }
  if (filter.tags !== undefined) {
    const tags = Array.isArray(filter.tags) ? { any: filter.tags } : filter.tags;
    const has = (t: string) => subscriber.tags.includes(t);
    if (tags.any && !tags.any.some(has)) return false;
    if (tags.all && !tags.all.every(has)) return false;
    if (tags.none && tags.none.some(has)) return false;
  }
  if (filter.lastSeenDays !== undefined && subscriber.lastSeenAt.getTime() < now.getTime() - filter.lastSeenDays * DAY_MS) {
    return false;
  }
  if (filter.subscriptionDate !== undefined) {
    const at = subscriber.subscribedAt.getTime();
    const { from, to } = filter.subscriptionDate;
    if (from !== undefined && at < rangeStart(from)) return false;
    if (to !== undefined && at > rangeEnd(to)) return false;
  }
  if (filter.all && !filter.all.every((c) => conditionHolds(c, subscriber, now, context, inside))) return false;
  if (filter.any && !filter.any.some((c) => conditionHolds(c, subscriber, now, context, inside))) return false;
  return true;
}

