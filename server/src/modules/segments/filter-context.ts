// Resolving what a filters tree refers to — the attribute types, the saved segments it names (level by level, with
// cycle detection) — and the checks of a tree being written against them.
import { sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/database.js';
import type { EntryRule } from '../../db/schema.js';
import { AppError, type FieldError } from '../../shared/errors.js';
import { compileSegmentFilter, hasConditions } from './segment-filter.js';
import { attributeTypes as listedTypes, type AttributeScope } from './attribute-list.repository.js';
import { attributeTypeOf } from './attribute-condition.js';
import { misfit } from './filter-values.js';
import { EMPTY_CONTEXT, eachCondition, namedSegments, segmentFilterSchema, type FilterContext, type SegmentFilter } from './segment-filter.js';
import * as repo from './segment.repository.js';

export interface ResolvedFilter {
  context: FilterContext;
  /** Named segments (at any depth) that do not exist in the project and environment. */
  missing: Set<string>;
  /** A chain of segment ids that comes back to where it started, if any. */
  cycle: string[] | undefined;
}

/**
 * Loads the context of a tree: one query per level of segment references, then one for the attribute types of every
 * attribute named in the tree and its segments. `segmentId`: the tree is that saved segment's (new) filters.
 */
export async function resolveFilterContext(
  db: Db,
  scope: AttributeScope,
  filter: SegmentFilter,
  segmentId?: string,
): Promise<ResolvedFilter> {
  const segments = new Map<string, SegmentFilter>();
  const missing = new Set<string>();
  if (segmentId !== undefined) segments.set(segmentId, filter);
  let frontier = [...namedSegments(filter)].filter((id) => !segments.has(id));
  while (frontier.length > 0) {
    const found = await repo.findSegmentFilters(db, scope, frontier);
    const next = new Set<string>();
    for (const id of frontier) {
      const parsed = segmentFilterSchema.safeParse(found.get(id));
      if (!found.has(id) || !parsed.success) {
        missing.add(id);
        continue;
      }
      segments.set(id, parsed.data);
      for (const named of namedSegments(parsed.data)) if (!segments.has(named) && !missing.has(named)) next.add(named);
    }
    frontier = [...next];
  }
  const names = new Set<string>();
  for (const tree of [filter, ...segments.values()]) {
    eachCondition(tree, (condition) => {
      if ('attribute' in condition) names.add(condition.attribute);
    });
  }
  const attributeTypes = await listedTypes(db, scope, [...names]);
  const longTexts = await repo.attributesWithLongTexts(db, scope, [...names]);
  return { context: { attributeTypes, longTexts, segments }, missing, cycle: findCycle(filter, segments, segmentId) };
}

/** A path of segment references from the tree that reaches a segment already on the path. */
function findCycle(root: SegmentFilter, segments: ReadonlyMap<string, SegmentFilter>, rootId: string | undefined): string[] | undefined {
  const done = new Set<string>();
  const visit = (tree: SegmentFilter, path: string[]): string[] | undefined => {
    for (const id of namedSegments(tree)) {
      if (path.includes(id)) return [...path.slice(path.indexOf(id)), id];
      const next = segments.get(id);
      if (!next || done.has(id)) continue;
      const found = visit(next, [...path, id]);
      if (found) return found;
      done.add(id);
    }
    return undefined;
  };
  // A segment's own tree starts its path with its id, so naming itself is found too.
  return visit(root, rootId !== undefined ? [rootId] : []);
}

/**
 * The 422 of a tree being written: a segment cycle (`segment_cycle`), or each condition that names a segment that
 * does not exist or does not fit its attribute's type, on its path under `field`.
 */
export function checkResolved(filter: SegmentFilter, resolved: ResolvedFilter, field: string): void {
  if (resolved.cycle) {
    throw new AppError(422, 'segment_cycle', `Segments cannot name themselves: ${resolved.cycle.join(' → ')}`, [
      { field, error: `names itself through ${resolved.cycle.join(' → ')}` },
    ]);
  }
  const problems: FieldError[] = [];
  eachCondition(filter, (condition, path) => {
    const at = [field, ...path].join('.');
    if ('attribute' in condition) {
      const problem = misfit(attributeTypeOf(condition, resolved.context.attributeTypes), condition);
      if (problem) problems.push({ field: `${at}.${problem.field}`, error: problem.error });
    }
    for (const key of ['inSegment', 'notInSegment'] as const) {
      if (key in condition && resolved.missing.has((condition as Record<string, string>)[key]!)) {
        problems.push({ field: `${at}.${key}`, error: 'is not a saved segment of this project and environment' });
      }
    }
  });
  if (problems.length > 0) throw new AppError(422, 'validation_failed', 'Validation failed', problems);
}

/**
 * Whether one subscriber matches a stored tree now, evaluated in SQL with its context resolved leniently (what an
 * automation's condition step asks of the person it is at).
 */
export async function subscriberMatches(db: Db, scope: AttributeScope, subscriberId: string, filter: SegmentFilter): Promise<boolean> {
  const context = hasConditions(filter) ? (await resolveFilterContext(db, scope, filter)).context : undefined;
  return repo.subscriberMatches(db, subscriberId, compileSegmentFilter(filter, { context }));
}

/** Resolves a tree being written and throws its 422s (`checkResolved`); returns its context. */
export async function checkFilters(db: Db, scope: AttributeScope, filters: SegmentFilter, field: string, segmentId?: string): Promise<FilterContext> {
  if (!hasConditions(filters)) return EMPTY_CONTEXT;
  const resolved = await resolveFilterContext(db, scope, filters, segmentId);
  checkResolved(filters, resolved, field);
  return resolved.context;
}

/** Checks an automation's entry rule being written: its inline filters, or that its saved segment exists (422 on `field`). */
export async function checkEntryRule(db: Db, scope: AttributeScope, rule: EntryRule, field: string): Promise<void> {
  if ('filters' in rule) {
    await checkFilters(db, scope, rule.filters as SegmentFilter, `${field}.filters`);
    return;
  }
  if (!(await repo.findSegmentFilters(db, scope, [rule.savedSegmentId])).has(rule.savedSegmentId)) {
    throw new AppError(422, 'validation_failed', 'Validation failed', [{ field: `${field}.savedSegmentId`, error: 'is not a saved segment of this project and environment' }]);
  }
}

/**
 * The people an entry rule lets in, as a subquery of subscriber ids of the scope (`s.id IN (…)`), resolved now from
 * what is stored: a saved segment that is gone lets nobody in.
 */
export async function entryRuleMembers(db: Db, scope: AttributeScope, rule: EntryRule): Promise<SQL> {
  let filters: SegmentFilter | undefined;
  if ('filters' in rule) filters = segmentFilterSchema.safeParse(rule.filters).data;
  else filters = segmentFilterSchema.safeParse((await repo.findSegmentFilters(db, scope, [rule.savedSegmentId])).get(rule.savedSegmentId)).data;
  if (!filters) return sql`(SELECT NULL::text WHERE false)`;
  const context = hasConditions(filters) ? (await resolveFilterContext(db, scope, filters)).context : undefined;
  return repo.membersOf(scope, compileSegmentFilter(filters, { context }));
}
