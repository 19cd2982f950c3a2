// Campaigns on every channel: the status machine of spec 3.1, dispatch (audience snapshot into deliveries), stats,
// re-send, export. What differs by channel (content, its checks, its message, its answer) is its kind's.
import type { z } from 'zod';
import type { Db } from '../../db/database.js';
import type { CampaignChannel, CampaignContent, CampaignSegment, CampaignUtm, EmailCampaignContent, SendingIssue } from '../../db/schema.js';
import type { DeliveryEngine, LocalDue, MessageRecord, TestOutcome } from '../../delivery/index.js';
import { enqueueJob, removeJob } from '../../jobs/enqueue.js';
import { AppError, conflict, notFound, validationFailed } from '../../shared/errors.js';
import { newId } from '../../shared/ids.js';
import { INSTANT_RANGE_ERROR, isStorableInstant } from '../../shared/instants.js';
import { rangeAfter, rangeStart, type SegmentFilter, type SegmentService, storedFilter } from '../segments/index.js';
import type { ProjectScope, Reach } from '../tenancy.js';
import { shownIssue, type CampaignKind } from './campaign-kind.js';
import { localTimeWindow, resolveSendAt } from './campaign-schedule.js';
import * as repo from './campaign.repository.js';
import type { campaignSegment } from './campaign.schemas.js';
import type { EmailCampaign, EmailCampaignInput } from './email-campaign.js';
import type { Campaign } from './push-campaign.js';

export const DISPATCH_TASK = 'campaign-dispatch';
export const SWEEP_TASK = 'campaign-sweep';
export const RESUME_TASK = 'campaign-resume';
export const dispatchJobKey = (campaignId: string) => `campaign-dispatch:${campaignId}`;
const resumeJobKey = (campaignId: string) => `campaign-resume:${campaignId}`;

/** A dispatch job this late has lost its worker (or never got one): the sweep queues it again. */
const STALLED_AFTER_MS = 60_000;
const EXPORT_BATCH = 500;

type Mode = repo.CampaignRow['mode'];
type CampaignSegmentInput = z.output<typeof campaignSegment>;

/** What each channel's campaigns are given, carry and answer. */
export interface CampaignInputs {
  push: CampaignContent;
  email: EmailCampaignInput;
}
export interface CampaignContents {
  push: CampaignContent;
  email: EmailCampaignContent;
}
export interface CampaignViews {
  push: Campaign;
  email: EmailCampaign;
}
export type CampaignKinds = { [C in CampaignChannel]: CampaignKind<CampaignInputs[C], CampaignContents[C], CampaignViews[C]> };

/** A campaign as its create body gives it (UTM null: none). */
export interface CampaignInput<C extends CampaignChannel> {
  name: string;
  content: CampaignInputs[C];
  segment: CampaignSegmentInput;
  schedule: { mode: Mode; sendAt?: string | null | undefined; timezone?: string | null | undefined; localTime?: boolean | undefined };
  utm?: CampaignUtm | null | undefined;
}
export type CampaignPatch<C extends CampaignChannel> = Partial<CampaignInput<C>> & { projectId?: string | undefined };

/** What the progress stream sends: status, every counter of the campaign's stats, and its sending issue. */
export type CampaignProgress = { status: repo.CampaignStatus; sendingIssue: SendingIssue | null } & { [counter: string]: number | string | SendingIssue | null };

/** Statuses after which nothing changes any more (the progress stream ends on them). */
export const FINAL_STATUSES: ReadonlySet<repo.CampaignStatus> = new Set(['sent', 'cancelled', 'failed', 'archived']);

/** What a test push came to: sent (the push service took it), or failed with the delivery reason and the service's answer. */
export interface PushTestOutcome {
  status: 'sent' | 'failed';
  reason: string | null;
  providerCode: string | null;
}

export interface CampaignServiceOptions {
  clock: () => Date;
  /** The engine, which queues, pauses, resumes and withdraws campaign messages and makes their test sends. */
  delivery: Pick<DeliveryEngine, 'queueAudience' | 'announce' | 'pause' | 'resume' | 'withdraw' | 'mergeFieldsOf' | 'sendTest'>;
  /** How late a scheduled campaign may still go out (CAMPAIGN_SCHEDULE_GRACE); later, it fails as schedule_missed. */
  scheduleGraceSeconds: number;
}

/** Everything a validated create or update turns into, ready to be written. */
interface Plan {
  name: string;
  content: CampaignContent | EmailCampaignContent;
  segment: CampaignSegment;
  filters: SegmentFilter;
  mode: Mode;
  sendAt: Date | null;
  timezone: string | null;
  localTime: boolean;
  utm: CampaignUtm | null;
}

// A test key may rewrite sandbox segments, so a live campaign never reads one (and a sandbox campaign never a live one).
const NOT_A_SAVED_SEGMENT = { field: 'segment.savedSegmentId', error: 'is not a saved segment of this project and environment' };

export class CampaignService {
  constructor(
    private readonly db: Db,
    private readonly segments: SegmentService,
    private readonly kinds: CampaignKinds,
    private readonly options: CampaignServiceOptions,
  ) {}

  /**
   * Creates a campaign. immediate: answered `sending` with stats.queued = the audience counted now, while a job
   * snapshots the audience into deliveries; scheduled: a job waits for sendAt; draft: nothing runs.
   */
  async create<C extends CampaignChannel>(scope: ProjectScope, channel: C, input: CampaignInput<C>, resentFrom: string | null = null): Promise<CampaignViews[C]> {
    const plan = await this.plan(scope, channel, input, { sendAtChecked: true });
    const id = newId('cmp');
    const audienceSize = plan.mode === 'immediate' ? await this.countAudience(scope, channel, plan.filters) : 0;
    await this.writingPlan(async (tx) => {
      await repo.insertCampaign(tx, {
        id,
        projectId: scope.projectId,
        channel,
        sandbox: scope.sandbox,
        resentFrom,
        ...this.rowOf(plan, statusOf(plan.mode), audienceSize),
      });
      await this.schedule(tx, scope.projectId, id, plan);
    });
    return this.get(scope, channel, id);
  }

  async list<C extends CampaignChannel>(
    scope: ProjectScope,
    channel: C,
    query: { status?: repo.CampaignStatus | undefined; from?: string | undefined; to?: string | undefined; q?: string | undefined },
    page: number,
    pageSize: number,
  ) {
    const { rows, total } = await repo.listCampaigns(
      this.db,
      scope,
      channel,
      {
        status: query.status,
        ...createdRange(query),
        nameContains: query.q,
      },
      pageSize,
      (page - 1) * pageSize,
    );
    return { data: rows.map((row) => this.kinds[channel].view(row)), page, pageSize, total };
  }

  async get<C extends CampaignChannel>(reach: Reach, channel: C, id: string): Promise<CampaignViews[C]> {
    return this.kinds[channel].view(await this.find(reach, channel, id));
  }

  /** Status and counters only, for the progress stream: its first event (checking the caller may see the campaign). */
  async progress(reach: Reach, channel: CampaignChannel, id: string): Promise<CampaignProgress> {
    const row = await this.find(reach, channel, id);
    return { status: row.status, ...this.kinds[channel].stats(row), sendingIssue: shownIssue(row) };
  }

  /** The progress stream's later reads, by id alone (access was checked on connect); undefined once it is deleted. */
  async progressOf(channel: CampaignChannel, id: string): Promise<CampaignProgress | undefined> {
    const row = await repo.progressOf(this.db, id);
    return row && { status: row.status, ...this.kinds[channel].stats(row), sendingIssue: shownIssue(row) };
  }

  /**
   * Edits a draft (409 otherwise), which stays a draft whatever its schedule says (spec 3.1): schedule.mode and sendAt
   * are stored as what `send` will do. A sendAt given in this edit must be in the future; one stored earlier may have
   * passed meanwhile, and `send` refuses it then.
   */
  async update<C extends CampaignChannel>(reach: Reach, channel: C, id: string, patch: CampaignPatch<C>): Promise<CampaignViews[C]> {
    const current = await this.find(reach, channel, id);
    if (current.status !== 'draft') throw notDraft(current.status);
    if (patch.projectId !== undefined && patch.projectId !== current.projectId) {
      throw validationFailed([{ field: 'projectId', error: 'a campaign cannot move to another project' }]);
    }
    const stored = storedInput<C>(current);
    const plan = await this.plan(
      this.scopeOf(reach, current),
      channel,
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
      const row = await repo.transition(tx, reach, channel, id, ['draft'], this.rowOf(plan, 'draft', 0));
      if (!row) throw notDraft('no longer a draft');
    });
    return this.get(reach, channel, id);
  }

  /**
   * POST /campaigns/:id/send. A draft is dispatched itself, as its schedule says: immediate (or a schedule.mode still
   * `draft`) → sending now, scheduled → scheduled for sendAt, which must still be in the future (422 otherwise). A sent,
   * archived, cancelled or failed campaign is re-sent as a new campaign (`created`). Others answer 409.
   */
  async send<C extends CampaignChannel>(
    reach: Reach,
    channel: C,
    id: string,
    segment: CampaignSegmentInput | undefined,
  ): Promise<{ campaign: CampaignViews[C]; created: boolean }> {
    const current = await this.find(reach, channel, id);
    if (current.status === 'draft') return { campaign: await this.sendDraft(reach, channel, current, segment), created: false };
    if (['sent', 'archived', 'cancelled', 'failed'].includes(current.status)) {
      return { campaign: await this.resend(reach, channel, current, segment), created: true };
    }
    throw conflict(
      `A ${current.status} campaign cannot be sent: drafts are sent, sent and cancelled ones re-sent`,
      'campaign_not_resendable',
    );
  }

  private async sendDraft<C extends CampaignChannel>(reach: Reach, channel: C, draft: repo.CampaignRow, segment: CampaignSegmentInput | undefined): Promise<CampaignViews[C]> {
    if (segment !== undefined) {
      throw validationFailed([{ field: 'segment', error: 'a draft is sent to its own segment: change it with PATCH first' }]);
    }
    const stored = storedInput<C>(draft);
    const mode = stored.schedule.mode === 'scheduled' ? 'scheduled' : 'immediate';
    const scope = this.scopeOf(reach, draft);
    const plan = await this.plan(scope, channel, { ...stored, schedule: { ...stored.schedule, mode } }, { sendAtChecked: true });
    const audienceSize = plan.mode === 'immediate' ? await this.countAudience(scope, channel, plan.filters) : 0;
    await this.writingPlan(async (tx) => {
      const row = await repo.transition(tx, reach, channel, draft.id, ['draft'], this.rowOf(plan, statusOf(plan.mode), audienceSize));
      if (!row) throw conflict('This campaign is no longer a draft: it was sent or deleted meanwhile', 'campaign_not_resendable');
      await this.schedule(tx, row.projectId, draft.id, plan);
    });
    return this.get(reach, channel, draft.id);
  }

  /** Removes a draft, scheduled, cancelled or failed campaign; sent, archived and sending ones answer 409. */
  async remove(reach: Reach, channel: CampaignChannel, id: string): Promise<void> {
    const removed = await this.db.transaction(async (tx) => {
      const deleted = await repo.deleteCampaign(tx, reach, channel, id, ['draft', 'scheduled', 'cancelled', 'failed']);
      if (deleted) await removeJob(tx, dispatchJobKey(id));
      return deleted;
    });
    if (removed) return;
    const { status } = await this.find(reach, channel, id);
    throw conflict(
      status === 'sending' || status === 'paused'
        ? `A ${status} campaign cannot be deleted: cancel it first`
        : `A ${status} campaign cannot be deleted: it is the record of what was sent${status === 'sent' ? '; archive it instead' : ''}`,
      'campaign_not_deletable',
    );
  }

  /**
   * Cancels a scheduled campaign (it never sends) or a sending one: deliveries still queued are suppressed at once
   * and the rest finish; the counters keep what happened.
   */
  async cancel<C extends CampaignChannel>(reach: Reach, channel: C, id: string): Promise<CampaignViews[C]> {
    const cancelled = await this.db.transaction(async (tx) => {
      const row = await repo.transition(tx, reach, channel, id, ['scheduled', 'sending', 'paused'], {
        status: 'cancelled',
        cancelledAt: new Date(),
        pendingSegmentId: null,
      });
      if (!row) return false;
      await removeJob(tx, dispatchJobKey(id));
      await removeJob(tx, resumeJobKey(id));
      if (row.messageId) await this.options.delivery.withdraw(tx, row.projectId, row.messageId);
      return true;
    });
    if (!cancelled) {
      const { status } = await this.find(reach, channel, id);
      throw conflict(`A ${status} campaign cannot be cancelled: only scheduled, sending and paused ones can`, 'campaign_not_cancellable');
    }
    return this.get(reach, channel, id);
  }

  /**
   * Pauses a sending campaign: its deliveries still waiting are held where they are (each keeps when it is due) and
   * no worker takes them; those being sent finish. Its counters keep moving for what went.
   */
  async pause<C extends CampaignChannel>(reach: Reach, channel: C, id: string): Promise<CampaignViews[C]> {
    const paused = await this.db.transaction(async (tx) => {
      const row = await repo.transition(tx, reach, channel, id, ['sending'], { status: 'paused', pausedAt: new Date(), pauseReason: 'manual' });
      if (row?.messageId) await this.options.delivery.pause(tx, row.projectId, row.messageId);
      return row !== undefined;
    });
    if (!paused) {
      const { status } = await this.find(reach, channel, id);
      throw conflict(`A ${status} campaign cannot be paused: only sending ones can`, 'campaign_not_pausable');
    }
    return this.get(reach, channel, id);
  }

  /**
   * Resumes a paused campaign where it stopped: only the deliveries it held go, each once — a recipient already sent
   * is never sent again. One paused before its audience was snapshotted is dispatched now.
   */
  async resume<C extends CampaignChannel>(reach: Reach, channel: C, id: string): Promise<CampaignViews[C]> {
    const current = await this.find(reach, channel, id);
    const resumed = await this.db.transaction(async (tx) => {
      const row = await repo.transition(tx, reach, channel, id, ['paused'], { status: 'sending', pauseReason: null });
      return row !== undefined && (await this.resumed(tx, row), true);
    });
    if (!resumed) throw conflict(`A ${current.status} campaign cannot be resumed: only paused ones can`, 'campaign_not_resumable');
    await this.afterResume(current.projectId, id);
    return this.get(reach, channel, id);
  }

  /**
   * The engine held campaigns' email for their organization's monthly cap: each one still sending pauses, reason
   * `monthly_cap_reached`, and resumes on its own when the cap frees (`until`) — or earlier, by hand, once the plan
   * allows more.
   */
  async onCapReached(messages: readonly MessageRecord[], until: Date): Promise<void> {
    for (const { projectId, campaignId } of messages) {
      await this.db.transaction(async (tx) => {
        const row = await repo.transitionOwn(tx, projectId, campaignId!, ['sending'], { status: 'paused', pausedAt: new Date(), pauseReason: 'monthly_cap_reached' });
        if (!row) return;
        if (row.messageId) await this.options.delivery.pause(tx, projectId, row.messageId);
        await enqueueJob(tx, RESUME_TASK, { projectId, campaignId }, { runAt: until, jobKey: resumeJobKey(campaignId!) });
      });
    }
  }

  /** The `campaign-resume` job: a campaign the monthly cap paused goes on when the month turns. */
  async resumeAfterCap(projectId: string, campaignId: string): Promise<void> {
    const resumed = await this.db.transaction(async (tx) => {
      const row = await repo.transitionOwn(tx, projectId, campaignId, ['paused'], { status: 'sending', pauseReason: null }, 'monthly_cap_reached');
      return row !== undefined && (await this.resumed(tx, row), true);
    });
    if (resumed) await this.afterResume(projectId, campaignId);
  }

  /** What resuming does in the transaction that moved the campaign back to sending. */
  private async resumed(tx: Db, row: repo.CampaignRow): Promise<void> {
    await removeJob(tx, resumeJobKey(row.id));
    if (row.messageId) await this.options.delivery.resume(tx, row.projectId, row.messageId);
    else await enqueueJob(tx, DISPATCH_TASK, { projectId: row.projectId, campaignId: row.id }, { jobKey: dispatchJobKey(row.id) });
  }

  private async afterResume(projectId: string, campaignId: string): Promise<void> {
    await this.options.delivery.announce();
    // Paused with nothing left to send, it is complete now.
    await repo.completeFinished(this.db, [{ projectId, campaignId }]);
  }

  /** Hides a sent campaign from default lists (the status filter `archived` shows it). */
  async archive<C extends CampaignChannel>(reach: Reach, channel: C, id: string): Promise<CampaignViews[C]> {
    const row = await repo.transition(this.db, reach, channel, id, ['sent'], { status: 'archived', archivedAt: new Date() });
    if (!row) {
      const { status } = await this.find(reach, channel, id);
      throw conflict(`A ${status} campaign cannot be archived: only sent ones can`, 'campaign_not_archivable');
    }
    return this.get(reach, channel, id);
  }

  /**
   * Sends a finished campaign (sent, archived, cancelled or failed) again as a new campaign dispatched at once: same
   * name, content, UTM and environment, the original segment or `segment`. The original and its stats are unchanged.
   */
  private resend<C extends CampaignChannel>(reach: Reach, channel: C, original: repo.CampaignRow, segment: CampaignSegmentInput | undefined): Promise<CampaignViews[C]> {
    return this.create(
      this.scopeOf(reach, original),
      channel,
      {
        name: original.name,
        content: original.content as CampaignInputs[C],
        segment: segment ?? segmentInput(original),
        schedule: { mode: 'immediate' },
        utm: original.utm,
      },
      original.id,
    );
  }

  /** A new draft with the campaign's name (marked as a copy), content, segment, UTM and environment; nothing is sent. */
  async duplicate<C extends CampaignChannel>(reach: Reach, channel: C, id: string): Promise<CampaignViews[C]> {
    const original = await this.find(reach, channel, id);
    const stored = storedInput<C>(original);
    return this.create(this.scopeOf(reach, original), channel, {
      ...stored,
      name: `${original.name} (copy)`.slice(0, 200),
      schedule: { mode: 'draft', timezone: stored.schedule.timezone, localTime: stored.schedule.localTime },
    });
  }

  /**
   * Sends the campaign, whatever its status, to a few addresses as a test: its content as it stands, the subject
   * marked `[Test]`, each address rendered with the merge fields of the subscriber holding it in the campaign's
   * environment (none: defaults apply, and a variable without one fails that address). Nothing is counted or logged.
   */
  async testSend(reach: Reach, channel: CampaignChannel, id: string, addresses: readonly string[]): Promise<TestOutcome[]> {
    const row = await this.find(reach, channel, id);
    const message = this.kinds[channel].message(row.content as never, row.utm);
    const test = message.channel === 'email' ? { ...message, content: { ...message.content, subject: `[Test] ${message.content.subject}` } } : message;
    const recipients = await Promise.all(
      [...new Set(addresses.map((a) => a.toLowerCase()))].map(async (address) => ({
        address,
        mergeFields: await this.options.delivery.mergeFieldsOf(row.projectId, row.sandbox, address),
      })),
    );
    return this.options.delivery.sendTest({ id: newId('msg'), projectId: row.projectId, source: 'campaign', campaignId: row.id, sandbox: row.sandbox, ...test }, recipients);
  }

  /**
   * A push composed in a builder, sent to one browser subscription now (the builder's own browser) through the project's
   * keys and push service as a campaign's would be: no campaign, no subscriber, no delivery row, nothing counted. A
   * project without VAPID keys answers `push_not_configured`; a payload over 4 KB is a 422 as for a campaign.
   */
  async testPush(scope: ProjectScope, subscription: { endpoint: string; keys: { p256dh: string; auth: string } }, content: CampaignContent): Promise<PushTestOutcome> {
    const kind = this.kinds.push;
    const problems = await kind.check(scope, content, null);
    if (problems.length > 0) throw validationFailed(problems.map(({ field, error }) => ({ field: field.replace(/^content/, 'notification'), error })));
    const device = { endpoint: subscription.endpoint, p256dh: subscription.keys.p256dh, auth: subscription.keys.auth };
    const [outcome] = await this.options.delivery.sendTest(
      { id: newId('msg'), projectId: scope.projectId, source: 'campaign', campaignId: null, sandbox: scope.sandbox, ...kind.message(content, null) },
      [{ address: 'this browser', mergeFields: null, device }],
    );
    if (!outcome || outcome.status === 'sent') return { status: 'sent', reason: null, providerCode: outcome?.providerCode ?? null };
    // The push adapter refuses before any request when the project has no keys to sign with.
    if (outcome.reason === 'provider_error' && outcome.providerCode === null) {
      throw new AppError(409, 'push_not_configured', 'This project has no VAPID keys, so nothing can be pushed: create its push configuration first');
    }
    return { status: 'failed', reason: outcome.reason, providerCode: outcome.providerCode };
  }

  /** Checks the range now, then yields the project's campaigns created within it, oldest first, batch by batch. */
  openExport<C extends CampaignChannel>(scope: ProjectScope, channel: C, range: { from?: string | undefined; to?: string | undefined }): AsyncGenerator<CampaignViews[C]> {
    const { from, before } = createdRange(range);
    if (from && before && from >= before) throw validationFailed([{ field: 'query.from', error: 'must not be after to' }]);
    const db = this.db;
    const kind = this.kinds[channel];
    return (async function* () {
      let after: repo.PageCursor | undefined;
      for (;;) {
        const page = await repo.pageCampaigns(db, scope, channel, { from, before }, after, EXPORT_BATCH);
        for (const row of page.rows) yield kind.view(row);
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
      const message = this.kinds[row.channel].message(row.content as never, row.utm);
      const size = await this.options.delivery.queueAudience(
        tx,
        { id: messageId, projectId, source: 'campaign', campaignId, sandbox: row.sandbox, ...message },
        await this.segments.audienceOn(scope, row.channel, filters),
        row.localTime ? await this.localDue(row) : undefined,
      );
      await repo.updateLocked(tx, projectId, campaignId, { messageId, audienceSize: size, snapshotAt: now, pendingSegmentId: null });
      return true;
    });
    if (!snapshotted) return;
    await this.options.delivery.announce();
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

  private async find(reach: Reach, channel: CampaignChannel, id: string): Promise<repo.CampaignWithCounters> {
    const row = await repo.findCampaign(this.db, reach, channel, id);
    if (!row) throw notFound(channel === 'email' ? 'Email campaign' : 'Campaign');
    return row;
  }

  /** The project scope a campaign lives in (its own environment), for the audience and for re-sends. */
  private scopeOf(reach: Reach, row: repo.CampaignRow): ProjectScope {
    return { organizationId: reach.organizationId, projectId: row.projectId, sandbox: row.sandbox };
  }

  private countAudience(scope: ProjectScope, channel: CampaignChannel, filters: SegmentFilter): Promise<number> {
    return this.segments.countOn(scope, channel, filters);
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
  private async plan<C extends CampaignChannel>(scope: ProjectScope, channel: C, input: CampaignInput<C>, { sendAtChecked }: { sendAtChecked: boolean }): Promise<Plan> {
    const problems: { field: string; error: string }[] = [];
    let filters: SegmentFilter = {};
    if ('savedSegmentId' in input.segment) {
      const saved = await this.segments.sendableFilters(scope, input.segment.savedSegmentId);
      if (saved) filters = saved;
      else problems.push(NOT_A_SAVED_SEGMENT);
    } else {
      filters = input.segment.filters;
      await this.segments.checkFilters(scope, filters, 'segment.filters');
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

    const localTime = input.schedule.localTime === true;
    if (localTime && mode === 'immediate') problems.push({ field: 'schedule.localTime', error: "needs a scheduled time: it sends at that time of each recipient's day" });

    const utm = input.utm ?? null;
    const kind = this.kinds[channel] as CampaignKind<CampaignInputs[C], CampaignContents[C], CampaignViews[C]>;
    const content = await kind.prepare(scope, input.content);
    problems.push(...(await kind.check(scope, content, utm)));
    if (problems.length > 0) throw validationFailed(problems);
    return {
      name: input.name,
      content,
      segment: input.segment as CampaignSegment,
      filters,
      mode,
      sendAt: mode === 'immediate' ? null : sendAt,
      timezone,
      localTime,
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
      localTime: plan.localTime,
      utm: plan.utm,
      audienceSize,
      sentAt: status === 'sending' ? this.options.clock() : null,
    };
  }

  /**
   * Queues the dispatch job in the caller's transaction: at once for immediate, at sendAt for scheduled — for a
   * local-time send, when the first zone on Earth reaches its wall-clock time.
   */
  private async schedule(tx: Db, projectId: string, campaignId: string, plan: Plan): Promise<void> {
    if (plan.mode === 'draft') return;
    const runAt = plan.mode !== 'scheduled' ? undefined : plan.localTime ? localTimeWindow(plan.sendAt!, plan.timezone ?? 'UTC').first : plan.sendAt!;
    await enqueueJob(tx, DISPATCH_TASK, { projectId, campaignId }, { runAt, jobKey: dispatchJobKey(campaignId) });
  }

  /** A local-time campaign's wall-clock time, due in each recipient's zone (the project's for those without one). */
  private async localDue(row: repo.CampaignRow): Promise<LocalDue> {
    const zone = row.timezone ?? 'UTC';
    return { wallClock: localTimeWindow(row.sendAt!, zone).wallClock, defaultZone: (await repo.projectTimezone(this.db, row.projectId)) ?? zone };
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
function storedInput<C extends CampaignChannel>(row: repo.CampaignRow): CampaignInput<C> {
  return {
    name: row.name,
    content: row.content as CampaignInputs[C],
    segment: segmentInput(row),
    schedule: { mode: row.mode, sendAt: row.sendAt?.toISOString() ?? null, timezone: row.timezone, localTime: row.localTime },
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
