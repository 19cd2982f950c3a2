// What conditions read: property tests over an event's properties or a subscriber's attributes, and a condition step's criteria.
import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';
import type { ConditionCriteria, PropertyCondition } from '../../db/schema.js';
import { writtenInstant } from '../../shared/instants.js';
import { matchesSegmentFilter, type FilterableSubscriber, type SegmentFilter } from '../segments/index.js';

/** The value at a dotted path (`cart.total`), or undefined. */
function valueAt(object: Record<string, unknown> | null | undefined, path: string): unknown {
  let value: unknown = object;
  for (const key of path.split('.')) {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

// JSON equality: an object's keys in any order (jsonb gives them back in its own).
const equal = (a: unknown, b: unknown) => isDeepStrictEqual(a, b);

const isoInstant = z.union([z.iso.date(), z.iso.datetime({ offset: true, local: true })]);

/**
 * Numbers compare as numbers, two ISO 8601 dates or timestamps as instants (one without an offset read as UTC);
 * anything else does not compare — nor strings Date.parse would guess a date in ("10", "Gold 2").
 */
function compare(a: unknown, b: unknown): number | undefined {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (isoInstant.safeParse(a).success && isoInstant.safeParse(b).success) return writtenInstant(a as string) - writtenInstant(b as string);
  return undefined;
}

function holds(condition: PropertyCondition, object: Record<string, unknown> | null | undefined): boolean {
  const actual = valueAt(object, condition.path);
  const { value } = condition;
  switch (condition.operator) {
    case 'exists':
      return actual !== undefined && actual !== null;
    case 'not_exists':
      return actual === undefined || actual === null;
    case 'eq':
      return actual !== undefined && equal(actual, value);
    case 'neq':
      return !equal(actual, value);
    case 'in':
      return Array.isArray(value) && value.some((v) => equal(actual, v));
    case 'contains':
      if (typeof actual === 'string') return typeof value === 'string' && actual.includes(value);
      return Array.isArray(actual) && actual.some((v) => equal(v, value));
    default: {
      const order = compare(actual, value);
      if (order === undefined) return false;
      return condition.operator === 'gt' ? order > 0 : condition.operator === 'gte' ? order >= 0 : condition.operator === 'lt' ? order < 0 : order <= 0;
    }
  }
}

/** Every condition holds of `object` (an event's properties, a subscriber's attributes). */
export function allHold(conditions: readonly PropertyCondition[] | undefined, object: Record<string, unknown> | null | undefined): boolean {
  return (conditions ?? []).every((condition) => holds(condition, object));
}

/** What a condition step reads of an enrollment. */
export interface ConditionSubject {
  subscriber: FilterableSubscriber & { attributes: Record<string, unknown> };
  /** The properties of the event that enrolled it; null when no event did. */
  event: Record<string, unknown> | null;
  /** The filters of the saved segment the criteria name (undefined: the segment no longer exists). */
  segment: SegmentFilter | undefined;
  /** Verdicts on filters with attribute, event or segment conditions, evaluated in SQL beforehand (`subscriberMatches`). */
  verdicts?: ReadonlyMap<SegmentFilter, boolean> | undefined;
}

/** A condition step's criteria: each part given must hold; a segment that no longer exists matches nobody. */
export function criteriaHold(criteria: ConditionCriteria, subject: ConditionSubject, now: Date): boolean {
  const matches = (filter: SegmentFilter) => subject.verdicts?.get(filter) ?? matchesSegmentFilter(filter, subject.subscriber, now);
  if (criteria.subscriber && !matches(criteria.subscriber as SegmentFilter)) return false;
  if (criteria.segmentId !== undefined && (!subject.segment || !matches(subject.segment))) return false;
  if (criteria.attributes && !allHold(criteria.attributes, subject.subscriber.attributes)) return false;
  if (criteria.event && (subject.event === null || !allHold(criteria.event, subject.event))) return false;
  return true;
}
