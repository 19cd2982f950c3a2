// What a channel's campaign pages differ by — names, routes, API calls, statuses, counters and rates — so
// the list, the builder and the campaign's page are one set for every channel (push at /campaigns, email at /email-campaigns).
import { api, unwrap, type Body, type Schemas } from '../api/client';
import { download } from '../api/download';
import { everyValue } from '../components/format';

type PushCampaign = Schemas['Campaign'];
type EmailCampaign = Schemas['EmailCampaign'];
export type AnyCampaign = PushCampaign | EmailCampaign;
export type Status = EmailCampaign['status'];
export type Action = 'send' | 'pause' | 'resume' | 'cancel' | 'archive';

/** A list's filters, in the URL. */
export interface ListFilters {
  status?: Status;
  q?: string;
  from?: string;
  to?: string;
  page?: number;
}

interface Page<C> {
  data: C[];
  page: number;
  pageSize: number;
  total: number;
}

/** `B`: the body its builder saves. */
export interface CampaignChannel<C extends AnyCampaign = AnyCampaign, B = unknown> {
  channel: 'push' | 'email';
  /** The list's title and the breadcrumb back to it. */
  title: string;
  /** "New campaign", "New email campaign": the list's link and the builder's title. */
  newTitle: string;
  /** The query keys of the list and of one campaign. */
  listKey: string;
  itemKey: string;
  routes: {
    list: '/projects/$projectId/campaigns' | '/projects/$projectId/email-campaigns';
    new: '/projects/$projectId/campaigns/new' | '/projects/$projectId/email-campaigns/new';
    page: '/projects/$projectId/campaigns/$campaignId' | '/projects/$projectId/email-campaigns/$campaignId';
    edit: '/projects/$projectId/campaigns/$campaignId/edit' | '/projects/$projectId/email-campaigns/$campaignId/edit';
  };
  /** The statuses its campaigns can be in, as the list filters them. */
  statuses: readonly Status[];
  /** The list's columns after name and status: what it shows of the content, then counters (by key, named as on the page). */
  listed: { content?: [header: string, cell: (campaign: C) => string]; counters: string[] };
  /** Counters and rates of its stats, as the campaign's page shows them; `total` is the recipients counted. */
  counters: [key: string, label: string][];
  rates: [key: string, label: string][];
  total?: string;
  ratesHint?: string;
  /** A rate in words where a figure would mislead: "No confirmation yet" rather than 0.00 % while devices have not confirmed. */
  rateInWords?: (key: string, stats: Record<string, number>) => string | undefined;
  /** What its deliveries are called in the page's words ("Deliveries", "Emails"). */
  items: string;
  /** The verbs it has beyond send, cancel, archive and re-send. */
  pausable: boolean;
  list: (projectId: string, query: ListFilters & { pageSize: number }) => Promise<Page<C>>;
  get: (id: string) => Promise<C>;
  /** Creates a campaign, or edits the draft `id`. */
  save(body: B, id: string | undefined): Promise<C>;
  act: (action: Action, id: string) => Promise<C>;
  resend: (id: string, body: { segment?: { savedSegmentId: string } }) => Promise<C>;
  duplicate?: (id: string) => Promise<C>;
  exportCsv?: (projectId: string, range: { from?: string; to?: string }) => Promise<void>;
  streamPath: (id: string) => string;
}

const idPath = (id: string) => ({ params: { path: { id } } });

/** What "delivered" means for a push, wherever it shows. */
export const PUSH_DELIVERED = "confirmed by the device's service worker; browsers that are offline confirm when they come back";

export const pushCampaigns: CampaignChannel<PushCampaign, Body<'/campaigns', 'post'>> = {
  channel: 'push',
  title: 'Campaigns',
  newTitle: 'New campaign',
  listKey: 'campaigns',
  itemKey: 'campaign',
  routes: {
    list: '/projects/$projectId/campaigns',
    new: '/projects/$projectId/campaigns/new',
    page: '/projects/$projectId/campaigns/$campaignId',
    edit: '/projects/$projectId/campaigns/$campaignId/edit',
  },
  statuses: everyValue<PushCampaign['status']>()('draft', 'scheduled', 'sending', 'sent', 'cancelled', 'failed', 'archived'),
  listed: { counters: ['queued', 'sent', 'clicked', 'failed'] },
  counters: [
    ['queued', 'Queued'],
    ['sent', 'Sent'],
    ['delivered', 'Delivered'],
    ['clicked', 'Clicked'],
    ['dismissed', 'Dismissed'],
    ['failed', 'Failed'],
    ['suppressed', 'Suppressed'],
  ],
  rates: [
    ['ctr', 'Click-through rate'],
    ['deliveryRate', 'Delivery rate'],
  ],
  ratesHint: `Delivered — ${PUSH_DELIVERED}. Rates are over the pushes sent.`,
  rateInWords: (key, stats) => {
    if (!stats.sent) return 'Nothing sent yet';
    if (key === 'deliveryRate' && !stats.delivered) return 'No confirmation yet';
    return undefined;
  },
  items: 'Deliveries',
  pausable: false,
  list: (projectId, query) => unwrap(api.GET('/campaigns/project/{projectId}', { params: { path: { projectId }, query: { ...query, status: query.status as PushCampaign['status'] } } })),
  get: (id) => unwrap(api.GET('/campaigns/{id}', idPath(id))),
  save: (body, id) => unwrap(id ? api.PATCH('/campaigns/{id}', { ...idPath(id), body }) : api.POST('/campaigns', { body })),
  act: (action, id) => {
    if (action === 'pause' || action === 'resume') throw new Error(`a push campaign has no ${action}`);
    return unwrap(api.POST(`/campaigns/{id}/${action}`, idPath(id)));
  },
  resend: (id, body) => unwrap(api.POST('/campaigns/{id}/send', { ...idPath(id), body })),
  exportCsv: (projectId, { from, to }) => {
    const range = new URLSearchParams(Object.entries({ from: from?.slice(0, 10), to: to?.slice(0, 10) }).filter(([, v]) => v) as [string, string][]);
    return download(`/campaigns/export/project/${encodeURIComponent(projectId)}.csv?${range}`, 'campaigns.csv');
  },
  streamPath: (id) => `/campaigns/${encodeURIComponent(id)}/stream`,
};

export const emailCampaigns: CampaignChannel<EmailCampaign, Body<'/email-campaigns', 'post'>> = {
  channel: 'email',
  title: 'Email campaigns',
  newTitle: 'New email campaign',
  listKey: 'email-campaigns',
  itemKey: 'email-campaign',
  routes: {
    list: '/projects/$projectId/email-campaigns',
    new: '/projects/$projectId/email-campaigns/new',
    page: '/projects/$projectId/email-campaigns/$campaignId',
    edit: '/projects/$projectId/email-campaigns/$campaignId/edit',
  },
  statuses: everyValue<Status>()('draft', 'scheduled', 'sending', 'paused', 'sent', 'cancelled', 'failed', 'archived'),
  listed: { content: ['Subject', (c) => c.content.subject], counters: ['totalTargeted', 'sent', 'opened', 'clicked', 'bounced'] },
  counters: [
    ['totalTargeted', 'Targeted'],
    ['sent', 'Sent'],
    ['delivered', 'Delivered'],
    ['opened', 'Opened'],
    ['clicked', 'Clicked'],
    ['bounced', 'Bounced'],
    ['complained', 'Complained'],
    ['unsubscribed', 'Unsubscribed'],
    ['failed', 'Failed'],
    ['suppressed', 'Suppressed'],
  ],
  rates: [
    ['openRate', 'Open rate'],
    ['clickRate', 'Click rate'],
    ['bounceRate', 'Bounce rate'],
    ['complaintRate', 'Complaint rate'],
    ['unsubscribeRate', 'Unsubscribe rate'],
  ],
  total: 'totalTargeted',
  ratesHint: 'Rates are over the emails sent and not bounced (the bounce rate: over those sent).',
  items: 'Emails',
  pausable: true,
  list: (projectId, query) => unwrap(api.GET('/email-campaigns/project/{projectId}', { params: { path: { projectId }, query } })),
  get: (id) => unwrap(api.GET('/email-campaigns/{id}', idPath(id))),
  save: (body, id) => unwrap(id ? api.PATCH('/email-campaigns/{id}', { ...idPath(id), body }) : api.POST('/email-campaigns', { body })),
  act: (action, id) => unwrap(api.POST(`/email-campaigns/{id}/${action}`, idPath(id))),
  resend: (id, body) => unwrap(api.POST('/email-campaigns/{id}/send', { ...idPath(id), body })),
  duplicate: (id) => unwrap(api.POST('/email-campaigns/{id}/duplicate', idPath(id))),
  streamPath: (id) => `/email-campaigns/${encodeURIComponent(id)}/stream`,
};

/** Search parameters (or the filter form, named query.status …) as a list's query; anything unknown is dropped. */
export function listFiltersFromSearch(statuses: readonly Status[]) {
  return (search: Record<string, unknown>): ListFilters => {
    const value = (key: string) => {
      const found = search[key] ?? search[`query.${key}`];
      return typeof found === 'string' && found.trim() !== '' ? found.trim() : undefined;
    };
    const filters: ListFilters = {};
    const status = value('status');
    if (status && (statuses as readonly string[]).includes(status)) filters.status = status as Status;
    for (const key of ['q', 'from', 'to'] as const) {
      const text = value(key);
      if (text) filters[key] = text;
    }
    const page = Number(search.page);
    if (Number.isInteger(page) && page > 1) filters.page = page;
    return filters;
  };
}
