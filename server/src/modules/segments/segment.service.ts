// Saved segments, exact reach estimates (cached 30 s per project and filters) and streamed audience exports.
import type { SQL } from 'drizzle-orm';
import type { Db } from '../../db/database.js';
import type { Channel } from '../../db/schema.js';
import { AppError, conflict, notFound, validationFailed } from '../../shared/errors.js';
import { newId } from '../../shared/ids.js';
import type { ProjectScope, Reach } from '../tenancy.js';
import type { AttributeListService } from './attribute-list.service.js';
import { checkFilters, resolveFilterContext } from './filter-context.js';
import { compileSegmentFilter, EMPTY_CONTEXT, filterKey, hasConditions, segmentFilterSchema, type FilterContext, type SegmentFilter } from './segment-filter.js';
import * as repo from './segment.repository.js';

export interface Segment {
  id: string;
  projectId: string;
  name: string;
  filters: SegmentFilter;
  sandbox: boolean;
  createdAt: string;
  updatedAt: string;
}

/**
 * Stored filters (a segment's, a campaign's inline ones) are re-read through the schema; a stored filter the schema
 * no longer accepts is a server fault. `owner` names where it is stored, e.g. `Segment seg_…`.
 */
export function storedFilter(owner: string, filters: unknown): SegmentFilter {
  const parsed = segmentFilterSchema.safeParse(filters);
  if (!parsed.success) throw new AppError(500, 'invalid_stored_segment', `${owner} has filters Herald cannot read`);
  return parsed.data;
}

/** The project and environment a segment lives in: where its references and attribute types are read. */
const scopeOf = (reach: Reach, row: repo.SegmentRow): ProjectScope => ({ organizationId: reach.organizationId, projectId: row.projectId, sandbox: row.sandbox });

const toSegment = (row: repo.SegmentRow): Segment => ({
  id: row.id,
  projectId: row.projectId,
  name: row.name,
  filters: storedFilter(`Segment ${row.id}`, row.filters),
  sandbox: row.sandbox,
  createdAt: row.createdAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
});

const REACH_CACHE_SECONDS = 30;
const REACH_CACHE_MAX = 5_000;
const EXPORT_BATCH = 1_000;

interface ReachEstimate {
  count: number;
  computedAt: string;
  cached: boolean;
}

export interface ExportRow {
  externalId: string | null;
  token: string;
  email: string | null;
  country: string | null;
  platform: string | null;
  tags: string[];
  subscribedAt: Date;
  lastSeenAt: Date;
}

export class SegmentService {
  private readonly reachCache = new Map<string, { count: number; computedAt: number }>();

  constructor(
    private readonly db: Db,
    readonly attributes: AttributeListService,
    private readonly clock: () => number = Date.now,
  ) {}

  /**
   * What a tree refers to — its attributes' types and the saved segments it names, resolved recursively in the scope's
   * project and environment — for `compileSegmentFilter`. Stored trees are read leniently: a segment that is gone, a
   * cycle, or a condition that no longer fits its attribute's type matches nobody.
   */
  async resolveContext(scope: ProjectScope, filters: SegmentFilter): Promise<FilterContext> {
    if (!hasConditions(filters)) return EMPTY_CONTEXT;
    return (await resolveFilterContext(this.db, scope, filters)).context;
  }

  /**
   * Checks a tree being written (422 on `field`'s paths; `segment_cycle` when segments would name themselves) and
   * returns its context. `segmentId`: the saved segment whose filters these become.
   */
  async checkFilters(scope: ProjectScope, filters: SegmentFilter, field: string, segmentId?: string): Promise<FilterContext> {
    return checkFilters(this.db, scope, filters, field, segmentId);
  }

  /** The one SQL predicate over `subscribers` of a stored tree, for an audience of the scope, its context resolved now. */
  async predicate(scope: ProjectScope, filters: SegmentFilter): Promise<SQL | undefined> {
    return compileSegmentFilter(filters, { context: await this.resolveContext(scope, filters), audience: scope });
  }

  /** A test key saves a sandbox segment; live keys and dashboard users a live one. */
  async create(scope: ProjectScope, input: { name: string; filters: SegmentFilter }): Promise<Segment> {
    const id = newId('seg');
    await this.checkFilters(scope, input.filters, 'filters', id);
    const row = await repo.insertSegment(this.db, {
      id,
      projectId: scope.projectId,
      sandbox: scope.sandbox,
      name: input.name,
      filters: input.filters as Record<string, unknown>,
    });
    return toSegment(row);
  }

  async list(scope: ProjectScope, page: number, pageSize: number) {
    const { rows, total } = await repo.listSegments(this.db, scope, pageSize, (page - 1) * pageSize);
    return { data: rows.map(toSegment), page, pageSize, total };
  }

  async get(reach: Reach, id: string): Promise<Segment> {
    const row = await repo.findSegment(this.db, reach, id);
    if (!row) throw notFound('Segment');
    return toSegment(row);
  }

  async update(reach: Reach, id: string, change: { name?: string | undefined; filters?: SegmentFilter | undefined }) {
    if (change.filters !== undefined) {
      const current = await repo.findSegment(this.db, reach, id);
      if (!current) throw notFound('Segment');
      await this.checkFilters(scopeOf(reach, current), change.filters, 'filters', id);
    }
    const row = await repo.updateSegment(this.db, reach, id, {
      name: change.name,
      filters: change.filters as Record<string, unknown> | undefined,
    });
    if (!row) throw notFound('Segment');
    return toSegment(row);
  }

  /** A segment a draft or scheduled campaign will read cannot be deleted (409): edit or delete the campaign first. */
  async remove(reach: Reach, id: string): Promise<void> {
    const row = await repo.findSegment(this.db, reach, id);
    if (!row) throw notFound('Segment');
    const naming = await repo.segmentsNaming(this.db, scopeOf(reach, row), id);
    if (naming.length > 0) {
      throw conflict(`Segment is named by segment ${naming.join(', ')}: remove it from their filters first`, 'segment_in_use');
    }
    const outcome = await repo.deleteSegment(this.db, reach, id);
    if (outcome === 'not_found') throw notFound('Segment');
    if (outcome === 'in_use') {
      throw conflict('Segment is used by a draft or scheduled campaign: change its segment or delete it first', 'segment_in_use');
    }
  }

  /** The filters of a saved segment this scope may see; undefined when it is not one (another project's, or gone). */
  async savedFilters(scope: ProjectScope, segmentId: string): Promise<SegmentFilter | undefined> {
    const row = await repo.findSegment(this.db, scope, segmentId);
    return row && storedFilter(`Segment ${row.id}`, row.filters);
  }

  /**
   * The filters of a saved segment a send from this scope may target: one of its own environment, so that a test key,
   * which may rewrite sandbox segments, can never steer who a live campaign reaches.
   */
  async sendableFilters(scope: ProjectScope, segmentId: string): Promise<SegmentFilter | undefined> {
    const row = await repo.findSendableSegment(this.db, scope, segmentId);
    return row && storedFilter(`Segment ${row.id}`, row.filters);
  }

  private async filtersOf(scope: ProjectScope, segmentId: string): Promise<SegmentFilter> {
    const filters = await this.savedFilters(scope, segmentId);
    if (!filters) throw notFound('Segment');
    return filters;
  }

  /**
   * Exact audience size for inline filters or a saved segment — of a channel's send audience when `channel` is given —
   * cached 30 s per (project, environment, channel, filters).
   */
  async reach(
    scope: ProjectScope,
    input: { filters?: SegmentFilter | undefined; segmentId?: string | undefined; channel?: Channel | undefined },
  ): Promise<ReachEstimate> {
    if ((input.filters === undefined) === (input.segmentId === undefined)) {
      throw validationFailed([{ field: 'filters', error: 'give exactly one of filters and segmentId' }]);
    }
    const filters = input.filters ?? (await this.filtersOf(scope, input.segmentId!));
    const context = input.filters ? await this.checkFilters(scope, input.filters, 'filters') : await this.resolveContext(scope, filters);
    const key = `${scope.projectId}|${scope.sandbox ? 'sandbox' : 'live'}|${input.channel ?? 'all'}|${filterKey(filters)}`;
    const now = this.clock();
    const hit = this.reachCache.get(key);
    if (hit && now - hit.computedAt < REACH_CACHE_SECONDS * 1000) {
      return { count: hit.count, computedAt: new Date(hit.computedAt).toISOString(), cached: true };
    }
    const count = await repo.countAudience(this.db, scope, compileSegmentFilter(filters, { context, audience: scope }), input.channel);
    this.reachCache.delete(key);
    this.reachCache.set(key, { count, computedAt: now });
    // Oldest entries go first (a Map keeps insertion order), so the cache stays bounded.
    while (this.reachCache.size > REACH_CACHE_MAX) this.reachCache.delete(this.reachCache.keys().next().value!);
    return { count, computedAt: new Date(now).toISOString(), cached: false };
  }

  /**
   * A channel's send audience for `filters` (a campaign's snapshot): the rows it reaches and the address that makes one
   * recipient of several rows (`channelAudience`).
   */
  async audienceOn(scope: ProjectScope, channel: Channel, filters: SegmentFilter): Promise<{ where: SQL; address: SQL | undefined }> {
    return repo.channelAudience(scope, channel, await this.predicate(scope, filters));
  }

  /** The exact size of a channel's send audience for `filters` (its recipients), uncached. */
  async countOn(scope: ProjectScope, channel: Channel, filters: SegmentFilter): Promise<number> {
    return repo.countAudience(this.db, scope, await this.predicate(scope, filters), channel);
  }

  /** Checks the segment now (so a 404 comes before any CSV byte), then yields matching subscribers batch by batch. */
  async openExport(scope: ProjectScope, segmentId: string): Promise<AsyncGenerator<ExportRow>> {
    // A page is the next people by id that match: each person's own check suits it, where sets would be built again
    // for every page.
    const filters = await this.filtersOf(scope, segmentId);
    const filter = compileSegmentFilter(filters, { context: await this.resolveContext(scope, filters) });
    const db = this.db;
    return (async function* () {
      let after: string | undefined;
      for (;;) {
        const rows = await repo.pageAudience(db, scope, filter, after, EXPORT_BATCH);
        for (const row of rows) yield row;
        if (rows.length < EXPORT_BATCH) return;
        after = rows[rows.length - 1]!.id;
      }
    })();
  }
}
