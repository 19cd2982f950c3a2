// A project's overview: its live audience per channel, growth and sends over the window, engagement, recent work,
// health warnings and the getting-started checklist.
import type { z } from 'zod';
import type { Db } from '../../db/database.js';
import { CHANNELS } from '../../db/schema.js';
import { countAudience } from '../segments/index.js';
import type { ProjectScope } from '../tenancy.js';
import * as repo from './overview.repository.js';
import type { overviewActivity, overviewAudience, projectOverview } from './overview.schemas.js';

export type ProjectOverview = z.output<typeof projectOverview>;
export type OverviewActivity = z.output<typeof overviewActivity>;
export type OverviewAudience = z.output<typeof overviewAudience>;
type Health = ProjectOverview['health'][number];

const RECENT = 5;
const DAY_MS = 86_400_000;
/** Below this many emails in the window a rate says too little to warn about. */
const RATE_MINIMUM_SENT = 100;
// Mailbox providers' published thresholds: bounces above 2 % and complaints above 0.1 % hurt delivery; complaints
// above 0.3 % (Gmail's and Yahoo's sender rules) and bounces above 5 % get mail refused.
const BOUNCE_WARNING = 0.02;
const BOUNCE_CRITICAL = 0.05;
const COMPLAINT_WARNING = 0.001;
const COMPLAINT_CRITICAL = 0.003;

/** The UTC days of a window of `days` ending today, oldest first. */
export function windowDays(now: Date, days: number): string[] {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  return Array.from({ length: days }, (_, i) => new Date(today - (days - 1 - i) * DAY_MS).toISOString().slice(0, 10));
}

export class OverviewService {
  constructor(
    private readonly db: Db,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  /** The whole overview: its audience and its activity, read side by side. */
  async overview(scope: ProjectScope, days: number): Promise<ProjectOverview> {
    const [audience, activity] = await Promise.all([this.audience(scope), this.activity(scope, days)]);
    return { ...activity, audience };
  }

  /**
   * Who each channel reaches now: the overview's costly part (a count over the whole audience per channel), apart so
   * that a page can show the rest while it is counted. Always the live environment, whichever credential asked.
   */
  async audience(scope: ProjectScope): Promise<OverviewAudience> {
    const live = { ...scope, sandbox: false };
    const [people, push, email, sms, whatsapp] = await Promise.all([
      countAudience(this.db, live, undefined),
      countAudience(this.db, live, undefined, 'push'),
      countAudience(this.db, live, undefined, 'email'),
      countAudience(this.db, live, undefined, 'sms'),
      countAudience(this.db, live, undefined, 'whatsapp'),
    ]);
    return { people, push, email, sms, whatsapp };
  }

  /** Everything but the audience: growth and sends over the window, rates, recent work, health and the checklist. */
  async activity(scope: ProjectScope, days: number): Promise<OverviewActivity> {
    const projectId = scope.projectId;
    const dayList = windowDays(this.clock(), days);
    const from = new Date(`${dayList[0]}T00:00:00Z`);
    const [growth, sends, engagement, state, recent] = await Promise.all([
      repo.growthPerDay(this.db, projectId, from),
      repo.sendsPerDay(this.db, projectId, from),
      repo.engagement(this.db, projectId, from),
      repo.projectState(this.db, projectId),
      repo.recentWork(this.db, projectId, RECENT),
    ]);

    const subscribed = new Map(growth.map((row) => [row.day, row.subscribed]));
    const sent = new Map(sends.map((row) => [`${row.day}:${row.channel}`, row.sent]));
    const sendSeries = dayList.map((day) => ({
      day,
      ...(Object.fromEntries(CHANNELS.map((channel) => [channel, sent.get(`${day}:${channel}`) ?? 0])) as Record<(typeof CHANNELS)[number], number>),
    }));
    const sentOn = (channel: (typeof CHANNELS)[number]) => sendSeries.reduce((sum, row) => sum + row[channel], 0);
    const events = (channel: 'email' | 'push', type: string) => engagement.find((row) => row.channel === channel && row.type === type)?.total ?? 0;
    const rates = {
      email: {
        sent: sentOn('email'),
        delivered: events('email', 'delivered'),
        opened: events('email', 'opened'),
        clicked: events('email', 'clicked'),
        bounced: events('email', 'bounced'),
        complained: events('email', 'complained'),
      },
      push: { sent: sentOn('push'), delivered: events('push', 'delivered'), clicked: events('push', 'clicked') },
    };

    return {
      days,
      growth: dayList.map((day) => ({ day, subscribed: subscribed.get(day) ?? 0 })),
      sends: sendSeries,
      rates,
      recent: {
        campaigns: recent
          .filter((item) => item.kind === 'campaign')
          .map((item) => ({ id: item.id, channel: item.channel ?? 'push', name: item.name, status: item.status, at: item.at.toISOString() })),
        automations: recent.filter((item) => item.kind === 'automation').map((item) => ({ id: item.id, name: item.name, status: item.status, at: item.at.toISOString() })),
      },
      health: health(state, rates.email),
      checklist: [
        { step: 'install_sdk', done: state.pushSubscriber },
        { step: 'verify_domain', done: state.verifiedDomains > 0 },
        { step: 'connect_provider', done: state.anyProvider },
        { step: 'add_people', done: state.anySubscriber },
        { step: 'first_campaign', done: state.campaignSent },
      ],
    };
  }
}

/** The warnings a project's state and its window's email figures call for, critical first. */
export function health(state: repo.ProjectState, email: { sent: number; bounced: number; complained: number }): Health[] {
  const found: Health[] = [];
  if (state.emailProvider && state.verifiedDomains === 0) found.push({ code: 'no_verified_domain', severity: 'critical', fix: 'domains' });
  if (state.failingDomains > 0) found.push({ code: 'domain_failing', severity: 'critical', fix: 'domains' });
  if (!state.emailProvider && (state.domains > 0 || state.emailCampaigns)) found.push({ code: 'email_provider_missing', severity: 'warning', fix: 'email-provider' });
  if (email.sent >= RATE_MINIMUM_SENT) {
    const bounces = email.bounced / email.sent;
    const complaints = email.complained / email.sent;
    if (bounces > BOUNCE_WARNING) found.push({ code: 'bounce_rate_high', severity: bounces > BOUNCE_CRITICAL ? 'critical' : 'warning', fix: 'suppressions' });
    if (complaints > COMPLAINT_WARNING) {
      found.push({ code: 'complaint_rate_high', severity: complaints > COMPLAINT_CRITICAL ? 'critical' : 'warning', fix: 'suppressions' });
    }
  }
  if (!state.vapidSubject) found.push({ code: 'vapid_subject_unset', severity: 'warning', fix: 'settings' });
  return found.sort((a, b) => (a.severity === b.severity ? 0 : a.severity === 'critical' ? -1 : 1));
}
