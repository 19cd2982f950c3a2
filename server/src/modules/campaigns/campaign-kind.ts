// What a campaign's channel decides — its content's checks, the message a dispatch writes, the campaign as answered —
// so the status machine, scheduling, dispatch and export are one for push and email.
import type { CampaignChannel, CampaignUtm, ChannelMessage, SendingIssue } from '../../db/schema.js';
import type { FieldError } from '../../shared/errors.js';
import type { ProjectScope } from '../tenancy.js';
import { localIso } from './campaign-schedule.js';
import type { CampaignWithCounters } from './campaign.repository.js';

/** `Input`: the content as a create or edit gives it; `Content`: as it is stored. */
export interface CampaignKind<Input, Content, View> {
  readonly channel: CampaignChannel;
  /** The content to write, completed from what it names (an email campaign's template); a 422 for what it cannot find. */
  prepare(scope: ProjectScope, content: Input): Promise<Content>;
  /** What keeps the content (with its UTM) from going, beyond what its schema checks: errors named from the body's root. */
  check(scope: ProjectScope, content: Content, utm: CampaignUtm | null): Promise<FieldError[]>;
  /** The message a dispatch writes for the campaign (its content with the UTM applied). */
  message(content: Content, utm: CampaignUtm | null): ChannelMessage;
  /** The campaign as its routes answer it. */
  view(row: CampaignWithCounters): View;
  /** Its counters as its progress stream sends them. */
  stats(row: Pick<CampaignWithCounters, 'audienceSize' | 'counters'>): { [counter: string]: number };
}

/**
 * Part of a whole, from 0 to 1 with 4 decimals; 0 while there is no whole. Every rate's whole is `sent`, which never
 * shrinks and holds every delivery its parts count, except for a moment: a provider's report that comes before the
 * send is recorded counts before its send does. The part is capped at the whole for that moment.
 */
export const rate = (part: number, whole: number) => (whole === 0 ? 0 : Math.round((Math.min(part, whole) / whole) * 10_000) / 10_000);

/** A campaign's sending issue as answered: only while it is sending or paused, when its deliveries still wait. */
export const shownIssue = (row: Pick<CampaignWithCounters, 'status' | 'sendingIssue'>): SendingIssue | null =>
  row.status === 'sending' || row.status === 'paused' ? row.sendingIssue : null;

const iso = (date: Date | null) => date?.toISOString() ?? null;

/** What a campaign answers alike on every channel; its kind's view adds status, content, stats and its own fields. */
export function sharedView(row: CampaignWithCounters) {
  return {
    id: row.id,
    projectId: row.projectId,
    name: row.name,
    sandbox: row.sandbox,
    segment: row.segment,
    utm: row.utm,
    sendingIssue: shownIssue(row),
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

/** The schedule as answered: the resolved sendAt with the offset of its zone. */
export const scheduleView = (row: CampaignWithCounters) => ({
  mode: row.mode,
  sendAt: row.sendAt && localIso(row.sendAt, row.timezone ?? 'UTC'),
  timezone: row.timezone,
});
