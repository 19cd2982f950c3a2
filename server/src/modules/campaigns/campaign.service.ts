// Push campaigns: the status machine of spec 3.1, dispatch (audience snapshot into deliveries), stats, re-send, export.
import type { z } from 'zod';
import type { Db } from '../../db/database.js';
import type { CampaignContent, CampaignSegment, CampaignUtm, PushContent } from '../../db/schema.js';
import { DEFAULT_PUSH_TTL_SECONDS } from '../../delivery/channel.js';
import { MAX_PLAINTEXT_BYTES } from '../../delivery/channels/push/push-encryption.js';
import { pushPayload } from '../../delivery/delivery-engine.js';
import { announceDeliveries } from '../../delivery/delivery-notifications.js';
import * as deliveryRepo from '../../delivery/delivery.repository.js';
import type { MessageRecord } from '../../delivery/delivery.repository.js';
import { TRACKING_TOKEN_LENGTH, trackingUrl } from '../../delivery/tracking-token.js';
import { enqueueJob, removeJob } from '../../jobs/enqueue.js';
import { conflict, notFound, validationFailed } from '../../shared/errors.js';
import { newId } from '../../shared/ids.js';
import { INSTANT_RANGE_ERROR, isStorableInstant } from '../../shared/instants.js';
import { compileSegmentFilter, rangeAfter, rangeStart, type SegmentFilter } from '../segments/segment-filter.js';
import { countAudience, pushAudience } from '../segments/segment.repository.js';
import { storedFilter, type SegmentService } from '../segments/segment.service.js';
import type { ProjectScope, Reach } from '../tenancy.js';
import { localIso, resolveSendAt } from './campaign-schedule.js';
import * as repo from './campaign.repository.js';
import type { campaign, campaignSegment, campaignStats, createCampaignBody, updateCampaignBody } from './campaign.schemas.js';
import { applyUtm } from './utm.js';

export const DISPATCH_TASK = 'campaign-dispatch';
export const SWEEP_TASK = 'campaign-sweep';
export const dispatchJobKey = (campaignId: string) => `campaign-dispatch:${campaignId}`;

/** A dispatch job this late has lost its worker (or never got one): the sweep queues it again. */
const STALLED_AFTER_MS = 60_000;
const EXPORT_BATCH = 500;

type Mode = repo.CampaignRow['mode'];
type CampaignSegmentInput = z.output<typeof campaignSegment>;
type CampaignInput = Omit<z.output<typeof createCampaignBody>, 'projectId' | 'utm'> & { utm?: CampaignUtm | null | undefined };
type CampaignPatch = z.output<typeof updateCampaignBody>;
type CampaignStats = z.output<typeof campaignStats>;
/** A campaign as answered; its stored segment keeps the filters as written. */
export type Campaign = Omit<z.output<typeof campaign>, 'segment'> & { segment: CampaignSegment };

/** What the progress stream sends: status and every counter. */
export type CampaignProgress = { status: repo.CampaignStatus } & CampaignStats;

/** Statuses after which nothing changes any more (the progress stream ends on them). */
export const FINAL_STATUSES: ReadonlySet<repo.CampaignStatus> = new Set(['sent', 'cancelled', 'failed', 'archived']);

const rate = (part: number, whole: number) => (whole === 0 ? 0 : Math.round((part / whole) * 10_000) / 10_000);

function statsOf(row: Pick<repo.CampaignWithCounters, 'audienceSize' | 'counters'>): CampaignStats {
  const { counters } = row;
  return {
    queued: row.audienceSize,
    ...counters,
    ctr: rate(counters.clicked, counters.sent),
    deliveryRate: rate(counters.delivered, counters.sent),
  };
}

const iso = (date: Date | null) => date?.toISOString() ?? null;

function toCampaign(row: repo.CampaignWithCounters): Campaign {
  return {
    id: row.id,
    projectId: row.projectId,
    name: row.name,
    status: row.status,
    sandbox: row.sandbox,
    content: row.content,
    segment: row.segment,
    schedule: { mode: row.mode, sendAt: row.sendAt && localIso(row.sendAt, row.timezone ?? 'UTC'), timezone: row.timezone },
    utm: row.utm,
    stats: statsOf(row),
    failureReason: row.failureReason,
    resentFrom: row.resentFrom,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    sentAt: iso(row.sentAt),
    completedAt: iso(row.completedAt),
    cancelledAt: iso(row.cancelledAt),
    archivedAt: iso(row.archivedAt),
  };
}

const toPushContent = (content: CampaignContent): PushContent => ({
  title: content.title,
  body: content.body,
  url: content.clickUrl,
  iconUrl: content.iconUrl,
  imageUrl: content.imageUrl,
  actions: content.actions,
});

export interface CampaignServiceOptions {
  clock: () => Date;
  /** How late a scheduled campaign may still go out (CAMPAIGN_SCHEDULE_GRACE); later, it fails as schedule_missed. */
  scheduleGraceSeconds: number;
  /** Tracking links in the payload start with it (the 4 KB check counts them). */
  publicUrl: string;
}

/** Everything a validated create or update turns into, ready to be written. */
interface Plan {
  name: string;
  content: CampaignContent;
  segment: CampaignSegment;
  filters: SegmentFilter;
  mode: Mode;
  sendAt: Date | null;
  timezone: string | null;
  utm: CampaignUtm | null;
}

// A test key may rewrite sandbox segments, so a live campaign never reads one (and a sandbox campaign never a live one).
const NOT_A_SAVED_SEGMENT = { field: 'segment.savedSegmentId', error: 'is not a saved segment of this project and environment' };

export class CampaignService {
  constructor(
    private readonly db: Db,
    private readonly segments: SegmentService,
    private readonly options: CampaignServiceOptions,
  ) {}

  /**
   * Creates a campaign. immediate: answered `sending` with stats.queued = the audience counted now, while a job
   * snapshots the audience into deliveries; scheduled: a job waits for sendAt; draft: nothing runs.
   */
  async create(scope: ProjectScope, input: CampaignInput, resentFrom: string | null = null): Promise<Campaign> {
    const plan = await this.plan(scope, input, { sendAtChecked: true });
    const id = newId('cmp');
    const audienceSize = plan.mode === 'immediate' ? await this.countAudience(scope, plan.filters) : 0;
    await this.writingPlan(async (tx) => {
      await repo.insertCampaign(tx, {
        id,
        projectId: scope.projectId,
        sandbox: scope.sandbox,
        resentFrom,
        ...this.rowOf(plan, statusOf(plan.mode), audienceSize),
      });
      await this.schedule(tx, scope.projectId, id, plan);
    });
    return this.get(scope, id);
  }

  async list(scope: ProjectScope, query: { status?: repo.CampaignStatus | undefined; from?: string | undefined; to?: string | undefined; q?: string | undefined }, page: number, pageSize: number) {
    const { rows, total } = await repo.listCampaigns(
      this.db,
      scope,
      {
        status: query.status,
        ...createdRange(query),
        nameContains: query.q,
      },
      pageSize,
      (page - 1) * pageSize,
    );
    return { data: rows.map(toCampaign), page, pageSize, total };
  }

  async get(reach: Reach, id: string): Promise<Campaign> {
    return toCampaign(await this.find(reach, id));
  }

  /** Status and counters only, for the progress stream: its first event (checking the caller may see the campaign). */
  async progress(reach: Reach, id: string): Promise<CampaignProgress> {
    const row = await this.find(reach, id);
    return { status: row.status, ...statsOf(row) };
  }

  /** The progress stream's later reads, by id alone (access was checked on connect); undefined once it is deleted. */
  async progressOf(id: string): Promise<CampaignProgress | undefined> {
    const row = await repo.progressOf(this.db, id);
    return row && { status: row.status, ...statsOf(row) };
  }

  /**
   * Edits a draft (409 otherwise), which stays a draft whatever its schedule says (spec 3.1): schedule.mode and sendAt
   * are stored as what `send` will do. A sendAt given in this edit must be in the future; one stored earlier may have
   * passed meanwhile, and `send` refuses it then.
   */
  async update(reach: Reach, id: string, patch: CampaignPatch): Promise<Campaign> {
    const current = await this.find(reach, id);
    if (current.status !== 'draft') throw notDraft(current.status);
    if (patch.projectId !== undefined && patch.projectId !== current.projectId) {
      throw validationFailed([{ field: 'projectId', error: 'a campaign cannot move to another project' }]);
    }
    const stored = storedInput(current);
    const plan = await this.plan(
      this.scopeOf(reach, current),
      {
        name: patch.name ?? stored.name,
        content: patch.content ?? stored.content,
        segment: patch.segment ?? stored.segment,
        schedule: patch.schedule ?? stored.schedule,
        utm: patch.utm === undefined ? stored.utm : patch.utm,
      },
      { sendAtChecked: patch.schedule !== undefined },
    );
    await this.writingPlan(async (tx) => {
      const row = await repo.transition(tx, reach, id, ['draft'], this.rowOf(plan, 'draft', 0));
      if (!row) throw notDraft('no longer a draft');
    });
    return this.get(reach, id);
  }

  /**
   * POST /campaigns/:id/send. A draft is dispatched itself, as its schedule says: immediate (or a schedule.mode still
   * `draft`) → sending now, scheduled → scheduled for sendAt, which must still be in the future (422 otherwise). A sent,
   * archived, cancelled or failed campaign is re-sent as a new campaign (`created`). Others answer 409.
   */
  async send(reach: Reach, id: string, segment: CampaignSegmentInput | undefined): Promise<{ campaign: Campaign; created: boolean }> {
    const current = await this.find(reach, id);
    if (current.status === 'draft') return { campaign: await this.sendDraft(reach, current, segment), created: false };
    if (['sent', 'archived', 'cancelled', 'failed'].includes(current.status)) {
      return { campaign: await this.resend(reach, current, segment), created: true };
    }
    throw conflict(
      `A ${current.status} campaign cannot be sent: drafts are sent, sent and cancelled ones re-sent`,
      'campaign_not_resendable',
    );
  }

  private async sendDraft(reach: Reach, draft: repo.CampaignRow, segment: CampaignSegmentInput | undefined): Promise<Campaign> {
    if (segment !== undefined) {
      throw validationFailed([{ field: 'segment', error: 'a draft is sent to its own segment: change it with PATCH first' }]);
    }
    const stored = storedInput(draft);
    const mode = stored.schedule.mode === 'scheduled' ? 'scheduled' : 'immediate';
    const scope = this.scopeOf(reach, draft);
    const plan = await this.plan(scope, { ...stored, schedule: { ...stored.schedule, mode } }, { sendAtChecked: true });
    const audienceSize = plan.mode === 'immediate' ? await this.countAudience(scope, plan.filters) : 0;
    await this.writingPlan(async (tx) => {
      const row = await repo.transition(tx, reach, draft.id, ['draft'], this.rowOf(plan, statusOf(plan.mode), audienceSize));
      if (!row) throw conflict('This campaign is no longer a draft: it was sent or deleted meanwhile', 'campaign_not_resendable');
      await this.schedule(tx, row.projectId, draft.id, plan);
    });
    return this.get(reach, draft.id);
  }

  /** Removes a draft, scheduled, cancelled or failed campaign; sent, archived and sending ones answer 409. */
  async remove(reach: Reach, id: string): Promise<void> {
    const removed = await this.db.transaction(async (tx) => {
      const deleted = await repo.deleteCampaign(tx, reach, id, ['draft', 'scheduled', 'cancelled', 'failed']);
      if (deleted) await removeJob(tx, dispatchJobKey(id));
      return deleted;
    });
    if (removed) return;
    const { status } = await this.find(reach, id);
    throw conflict(
      status === 'sending'
        ? 'A sending campaign cannot be deleted: cancel it first'
        : `A ${status} campaign cannot be deleted: it is the record of what was sent${status === 'sent' ? '; archive it instead' : ''}`,
      'campaign_not_deletable',
    );
  }

  /**
   * Cancels a scheduled campaign (it never sends) or a sending one: deliveries still queued are suppressed at once
   * and the rest finish; the counters keep what happened.
   */
  async cancel(reach: Reach, id: string): Promise<Campaign> {
    const cancelled = await this.db.transaction(async (tx) => {
      const row = await repo.transition(tx, reach, id, ['scheduled', 'sending'], {
        status: 'cancelled',
        cancelledAt: new Date(),
        pendingSegmentId: null,
      });
      if (!row) return false;
      await removeJob(tx, dispatchJobKey(id));
      if (row.messageId) await deliveryRepo.withdrawMessage(tx, row.projectId, row.messageId);
      return true;
    });
    if (!cancelled) {
      const { status } = await this.find(reach, id);
      throw conflict(`A ${status} campaign cannot be cancelled: only scheduled and sending ones can`, 'campaign_not_cancellable');
    }
    return this.get(reach, id);
  }

  /** Hides a sent campaign from default lists (the status filter `archived` shows it). */
  async archive(reach: Reach, id: string): Promise<Campaign> {
    const row = await repo.transition(this.db, reach, id, ['sent'], { status: 'archived', archivedAt: new Date() });
    if (!row) {
      const { status } = await this.find(reach, id);
      throw conflict(`A ${status} campaign cannot be archived: only sent ones can`, 'campaign_not_archivable');
    }
    return this.get(reach, id);
  }

  /**
   * Sends a finished campaign (sent, archived, cancelled or failed) again as a new campaign dispatched at once: same
   * name, content, UTM and environment, the original segment or `segment`. The original and its stats are unchanged.
   */
  private resend(reach: Reach, original: repo.CampaignRow, segment: CampaignSegmentInput | undefined): Promise<Campaign> {
    return this.create(
      this.scopeOf(reach, original),
      {
        name: original.name,
        content: original.content,
        segment: segment ?? segmentInput(original),
        schedule: { mode: 'immediate' },
        utm: original.utm,
      },
      original.id,
    );
  }

  /** Checks the range now, then yields the project's campaigns created within it, oldest first, batch by batch. */
  openExport(scope: ProjectScope, range: { from?: string | undefined; to?: string | undefined }): AsyncGenerator<Campaign> {
    const { from, before } = createdRange(range);
    if (from && before && from >= before) throw validationFailed([{ field: 'query.from', error: 'must not be after to' }]);
    const db = this.db;
    return (async function* () {
      let after: repo.PageCursor | undefined;
      for (;;) {
        const page = await repo.pageCampaigns(db, scope, { from, before }, after, EXPORT_BATCH);
        for (const row of page.rows) yield toCampaign(row);
        if (page.rows.length < EXPORT_BATCH) return;
        after = page.cursor;
      }
    })();
  }

  /**
   * The dispatch job (immediate, or a scheduled campaign's time): in one transaction, under the campaign's row lock,
   * moves a due scheduled campaign to sending — or to failed (`schedule_missed`) when it is later than the grace
   * window, never sending it late — then writes the message and snapshots the audience into deliveries. A crash rolls
   * all of it back and the job runs again; a second dispatcher finds the row locked or already snapshotted.
   */
  async dispatch(projectId: string, campaignId: string): Promise<void> {
    const now = this.options.clock();
    const snapshotted = await this.db.transaction(async (tx) => {
      const locked = await repo.lockForDispatch(tx, projectId, campaignId);
      if (!locked) return false;
      const row = locked.campaign;
      if (row.status === 'scheduled') {
        if (now.getTime() - row.sendAt!.getTime() > this.options.scheduleGraceSeconds * 1000) {
          await repo.updateLocked(tx, projectId, campaignId, { status: 'failed', failureReason: 'schedule_missed', pendingSegmentId: null });
          return false;
        }
        await repo.updateLocked(tx, projectId, campaignId, { status: 'sending', sentAt: now });
      } else if (row.status !== 'sending' || row.snapshotAt !== null) {
        return false;
      }
      const scope = { organizationId: locked.organizationId, projectId, sandbox: row.sandbox };
      const filters = await this.filtersOf(scope, row);
      const messageId = newId('msg');
      await deliveryRepo.insertMessage(tx, {
        id: messageId,
        projectId,
        source: 'campaign',
        campaignId,
        sandbox: row.sandbox,
        content: toPushContent(applyUtm(row.content, row.utm)),
        options: { ttlSeconds: DEFAULT_PUSH_TTL_SECONDS, urgency: 'normal' },
      });
      await deliveryRepo.insertMessageStats(tx, messageId);
      const size = await deliveryRepo.snapshotDeliveries(tx, projectId, messageId, pushAudience(scope, compileSegmentFilter(filters)));
      await repo.updateLocked(tx, projectId, campaignId, { messageId, audienceSize: size, snapshotAt: now, pendingSegmentId: null });
      return true;
    });
    if (!snapshotted) return;
    await announceDeliveries(this.db);
    // An empty audience (or one the workers finished already) is complete now.
    await repo.completeFinished(this.db, [{ projectId, campaignId }]);
  }

  /** The engine recorded a batch: the campaigns among its messages may have just finished. */
  async onDeliveriesRecorded(messages: readonly MessageRecord[]): Promise<void> {
    const targets = messages.flatMap((m) => (m.campaignId ? [{ projectId: m.projectId, campaignId: m.campaignId }] : []));
    if (targets.length > 0) await repo.completeFinished(this.db, targets);
  }

  /**
   * The periodic backstop (every minute): finishes campaigns whose last batch was recorded by a worker that died
   * before it checked, and queues again the dispatch of campaigns whose job was lost with its worker.
   */
  async sweep(): Promise<void> {
    await repo.completeFinished(this.db);
    for (const stalled of await repo.findStalled(this.db, new Date(this.options.clock().getTime() - STALLED_AFTER_MS))) {
      await enqueueJob(this.db, DISPATCH_TASK, { projectId: stalled.projectId, campaignId: stalled.id }, { jobKey: dispatchJobKey(stalled.id) });
    }
  }

  private async find(reach: Reach, id: string): Promise<repo.CampaignWithCounters> {
    const row = await repo.findCampaign(this.db, reach, id);
    if (!row) throw notFound('Campaign');
    return row;
  }

  /** The project scope a campaign lives in (its own environment), for the audience and for re-sends. */
  private scopeOf(reach: Reach, row: repo.CampaignRow): ProjectScope {
    return { organizationId: reach.organizationId, projectId: row.projectId, sandbox: row.sandbox };
  }

  private countAudience(scope: ProjectScope, filters: SegmentFilter): Promise<number> {
    return countAudience(this.db, scope, compileSegmentFilter(filters), 'push');
  }

  /** Writes a validated plan in one transaction; a saved segment deleted since validation is the same 422. */
  private async writingPlan(write: (tx: Db) => Promise<void>): Promise<void> {
    try {
      await this.db.transaction(write);
    } catch (error) {
      if (error instanceof repo.SavedSegmentGone) throw validationFailed([NOT_A_SAVED_SEGMENT]);
      throw error;
    }
  }

  /**
   * Validates what the body alone cannot: the saved segment, the 4 KB payload, and sendAt in the future when
   * `sendAtChecked` (a draft's edit that leaves the schedule alone does not judge the stored time).
   */
  private async plan(scope: ProjectScope, input: CampaignInput, { sendAtChecked }: { sendAtChecked: boolean }): Promise<Plan> {
    const problems: { field: string; error: string }[] = [];
    let filters: SegmentFilter = {};
    if ('savedSegmentId' in input.segment) {
      const saved = await this.segments.sendableFilters(scope, input.segment.savedSegmentId);
      if (saved) filters = saved;
      else problems.push(NOT_A_SAVED_SEGMENT);
    } else {
      filters = input.segment.filters;
    }

    const { mode } = input.schedule;
    const zoned = mode === 'scheduled' || Boolean(input.schedule.sendAt);
    const timezone = input.schedule.timezone ?? (zoned ? ((await repo.projectTimezone(this.db, scope.projectId)) ?? 'UTC') : null);
    const sendAt = input.schedule.sendAt ? resolveSendAt(input.schedule.sendAt, timezone ?? 'UTC') : null;
    if (mode === 'scheduled' && !sendAt) problems.push({ field: 'schedule.sendAt', error: 'is required when mode is scheduled' });
    // A wall-clock time at the edge of the range can leave it once its zone applies.
    if (sendAt && !isStorableInstant(sendAt.getTime())) problems.push({ field: 'schedule.sendAt', error: INSTANT_RANGE_ERROR });
    if (sendAtChecked && mode === 'scheduled' && sendAt && sendAt.getTime() <= this.options.clock().getTime()) {
      problems.push({ field: 'schedule.sendAt', error: 'must be in the future' });
    }

    const utm = input.utm ?? null;
    const track = trackingUrl(this.options.publicUrl, 'x'.repeat(TRACKING_TOKEN_LENGTH));
    const payload = pushPayload(toPushContent(applyUtm(input.content, utm)), track);
    const bytes = Buffer.byteLength(JSON.stringify(payload));
    if (bytes > MAX_PLAINTEXT_BYTES) {
      problems.push({ field: 'content', error: `the push would be ${bytes} bytes; at most ${MAX_PLAINTEXT_BYTES} fit in a web push` });
    }
    if (problems.length > 0) throw validationFailed(problems);
    return {
      name: input.name,
      content: input.content,
      segment: input.segment as CampaignSegment,
      filters,
      mode,
      sendAt: mode === 'immediate' ? null : sendAt,
      timezone,
      utm,
    };
  }

  private rowOf(plan: Plan, status: repo.CampaignStatus, audienceSize: number): Omit<repo.NewCampaignRow, 'id' | 'projectId' | 'sandbox'> {
    return {
      name: plan.name,
      status,
      mode: plan.mode,
      content: plan.content,
      segment: plan.segment,
      // Held until the audience is snapshotted: the segment cannot be deleted before the campaign reads it.
      pendingSegmentId: 'savedSegmentId' in plan.segment ? plan.segment.savedSegmentId : null,
      sendAt: plan.sendAt,
      timezone: plan.timezone,
      utm: plan.utm,
      audienceSize,
      sentAt: status === 'sending' ? this.options.clock() : null,
    };
  }

  /** Queues the dispatch job in the caller's transaction: at once for immediate, at sendAt for scheduled. */
  private async schedule(tx: Db, projectId: string, campaignId: string, plan: Plan): Promise<void> {
    if (plan.mode === 'draft') return;
    await enqueueJob(tx, DISPATCH_TASK, { projectId, campaignId }, {
      runAt: plan.mode === 'scheduled' ? plan.sendAt! : undefined,
      jobKey: dispatchJobKey(campaignId),
    });
  }

  /**
   * The filters a campaign sends to, read now; its saved segment is held by the campaign until then. Its environment was
   * checked when the campaign was written, so it is read in the whole project (a live scope sees both environments).
   */
  private async filtersOf(scope: ProjectScope, row: repo.CampaignRow): Promise<SegmentFilter> {
    const segment = segmentInput(row);
    if (!('savedSegmentId' in segment)) return segment.filters;
    const filters = await this.segments.savedFilters({ ...scope, sandbox: false }, segment.savedSegmentId);
    if (!filters) throw new Error(`saved segment ${segment.savedSegmentId} of a campaign being dispatched is gone`);
    return filters;
  }
}

/** What a campaign is dispatched as: immediate → sending, scheduled → scheduled; draft → stays a draft. */
const statusOf = (mode: Mode): repo.CampaignStatus => (mode === 'immediate' ? 'sending' : mode === 'scheduled' ? 'scheduled' : 'draft');

/** A stored campaign as the create body would give it. */
function storedInput(row: repo.CampaignRow): CampaignInput {
  return {
    name: row.name,
    content: row.content,
    segment: segmentInput(row),
    schedule: { mode: row.mode, sendAt: row.sendAt?.toISOString() ?? null, timezone: row.timezone },
    utm: row.utm,
  };
}

/** A stored campaign's segment as the API takes it: inline filters re-read through the schema. */
function segmentInput(row: repo.CampaignRow): CampaignSegmentInput {
  return 'savedSegmentId' in row.segment ? row.segment : { filters: storedFilter(`Campaign ${row.id}`, row.segment.filters) };
}

/** A list or export range as instants: `to` is inclusive, and a date covers its whole UTC day. */
function createdRange(range: { from?: string | undefined; to?: string | undefined }): repo.CreatedRange {
  return {
    from: range.from !== undefined ? new Date(rangeStart(range.from)) : undefined,
    before: range.to !== undefined ? rangeAfter(range.to) : undefined,
  };
}

const notDraft = (status: string) => conflict(`Only draft campaigns can be edited (this one is ${status})`, 'campaign_not_draft');
