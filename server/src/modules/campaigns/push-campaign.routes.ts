// Push campaigns' routes (spec 4.4): at /campaigns, with the CSV export; the verbs are the campaign route family's.
import { CAMPAIGN_CSV_COLUMNS, CAMPAIGN_CSV_DESCRIPTION, toCsvRecord } from './campaign-csv.js';
import type { CampaignRoutes } from './campaign.routes.js';
import { pushCampaignSchemas } from './campaign.schemas.js';

const STATS_DOC =
  'stats: queued = recipients (the audience counted when the campaign was dispatched, replaced by the snapshot size once the ' +
  'delivery rows are written); sent = accepted by the push service (including those later delivered, clicked or dismissed); ' +
  'delivered = confirmed by the device; clicked; dismissed; failed; suppressed (frequency cap, cancellation); ' +
  'ctr = clicked / sent and deliveryRate = delivered / sent, from 0 to 1, both 0 while sent is 0.';

export const pushCampaignRoutes: CampaignRoutes<'push'> = {
  channel: 'push',
  path: '/campaigns',
  tag: 'Campaigns',
  schemas: pushCampaignSchemas,
  docs: {
    create: {
      summary: 'Create a push campaign: sent now, scheduled, or kept as a draft',
      description:
        'immediate → `sending`: the audience is counted now (stats.queued) and snapshotted into one delivery per recipient by a ' +
        'background job; `sent` once every delivery reached a final state. scheduled → `scheduled` until sendAt (must be in ' +
        'the future); draft → `draft`, never sent until changed. A test key makes a sandbox campaign: its audience is the sandbox ' +
        'subscribers and nothing reaches a push service, while statuses and stats move as for a live one. The project\'s delivery ' +
        'policy applies to every delivery when it goes out: over the frequency cap it is suppressed; during quiet hours it waits ' +
        `until they end in the subscriber's zone, and the campaign stays sending meanwhile. ${STATS_DOC}`,
    },
    list: {
      summary: "A project's campaigns, newest first",
      description: 'Archived campaigns are left out unless `status=archived`. A test key sees sandbox campaigns only.',
    },
    get: { summary: 'One campaign with its full stats', description: STATS_DOC },
    update: {
      summary: 'Edit a draft campaign; it stays a draft',
      description:
        'Only drafts can be edited: any other status answers 409 `campaign_not_draft`. The campaign stays a draft whatever the ' +
        'edit: schedule.mode and sendAt are stored as what POST /campaigns/{id}/send will do (a sendAt given here must be in the ' +
        'future). Nothing is sent or scheduled until that call.',
    },
    remove: {
      summary: 'Delete a draft, scheduled, cancelled or failed campaign',
      description:
        'A scheduled campaign is removed and never sent. sent and archived campaigns answer 409 (archive a sent one instead), ' +
        'sending ones 409 (cancel first). What was already sent stays in the delivery log.',
    },
    send: {
      summary: 'Send a draft, or re-send a sent or cancelled campaign as a new campaign',
      description:
        '**A draft** is dispatched itself, as its stored schedule says, and answered **200** with the same campaign: schedule.mode ' +
        'immediate (or still `draft`) → `sending` now, with stats.queued = the audience counted now; scheduled → `scheduled` ' +
        'until sendAt, which must still be in the future (422 on `schedule.sendAt` otherwise: PATCH a new one). The content, ' +
        'segment and payload size are validated again (422). A draft is sent to its own segment: a `segment` in the body ' +
        'answers 422.\n\n' +
        '**A sent or cancelled campaign** (archived and failed ones too): creates and dispatches at once a new campaign with the ' +
        'same name, content, UTM and environment, to the original segment (evaluated now) or the `segment` given, answered ' +
        '**201**. The original and its stats are unchanged; the new one (resentFrom = the original) counts on its own.\n\n' +
        'Scheduled and sending campaigns answer 409 `campaign_not_resendable`.',
    },
    cancel: {
      summary: 'Cancel a scheduled or sending campaign',
      description:
        'A scheduled campaign never sends. A sending one stops: deliveries not yet handed to a worker are suppressed at once and ' +
        'none of them is sent later; those being sent finish. Its stats keep what happened. Other statuses answer 409.',
    },
    archive: {
      summary: 'Archive a sent campaign',
      description: 'Hides it from lists unless status=archived; it stays readable, exportable and re-sendable. Other statuses answer 409.',
    },
    stream: {
      summary: 'Live progress of a campaign (server-sent events)',
      description:
        'A dashboard token only: in the `token` and `orgId` query parameters (EventSource cannot set headers), or in the usual ' +
        '`Authorization: Bearer` and `x-org-id` headers when there is no `token` parameter (the two are never mixed). API keys ' +
        'are refused (401 Invalid or expired token): API-key callers poll GET /campaigns/{id}. Each event is `data: {"status", "queued", "sent", "delivered", "clicked", "dismissed", ' +
        '"failed", "suppressed", "ctr", "deliveryRate", "sendingIssue"}` (sendingIssue as on the campaign: why its provider holds ' +
        'sending up, or null): one on connect, then one whenever something changed (read at most ' +
        'every 400 ms, changes in between coalesced), with a `: heartbeat` comment every 15 s. The stream ends after an event ' +
        'with a final status (sent, cancelled, failed, archived) or when the campaign is deleted.',
    },
  },
  export: {
    summary: "CSV stream of a project's campaigns with their stats",
    description: CAMPAIGN_CSV_DESCRIPTION,
    columns: CAMPAIGN_CSV_COLUMNS,
    toRecord: toCsvRecord,
  },
};
