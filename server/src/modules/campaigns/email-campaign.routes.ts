// Email campaigns' routes (spec 2.3): at /email-campaigns, the campaign route family's verbs plus duplicate, test, pause and resume.
import type { CampaignRoutes } from './campaign.routes.js';
import { emailCampaignSchemas, testAnswer, testBody } from './email-campaign.schemas.js';

const AUDIENCE_DOC =
  'The audience is evaluated when the campaign is sent: the subscribers of its segment in its environment that carry an ' +
  'email address, one email per distinct address (the first subscriber holding it), leaving out addresses on the ' +
  "project's suppression list (unsubscribed, bounced, complained or suppressed by hand), and subscribers whose " +
  'preferences turn email off.';

export const emailCampaignRoutes: CampaignRoutes<'email', { emails: string[] }> = {
  channel: 'email',
  path: '/email-campaigns',
  tag: 'Email campaigns',
  schemas: emailCampaignSchemas,
  docs: {
    create: {
      summary: 'Create an email campaign: sent now, scheduled, or kept as a draft',
      description:
        'As POST /campaigns for push: immediate → `sending` (stats.totalTargeted counted now, the audience snapshotted into one ' +
        'delivery per address by a background job, `sent` once every delivery reached a final state); scheduled → `scheduled` ' +
        'until sendAt (in the future); draft → kept. Checked when written (422): merge tags parse in every part, the From and ' +
        'Reply-To addresses are on verified sending domains of the project, the content fits an email. A test key makes a ' +
        `sandbox campaign: rendered and recorded for sandbox subscribers, never handed to a provider. ${AUDIENCE_DOC}`,
    },
    list: {
      summary: "A project's email campaigns, newest first",
      description: 'Archived campaigns are left out unless `status=archived`. A test key sees sandbox campaigns only.',
    },
    get: { summary: 'One email campaign with its live counters and rates' },
    update: {
      summary: 'Edit a draft email campaign; it stays a draft',
      description: 'Only drafts can be edited (409 `campaign_not_draft` otherwise); checked as on create. Nothing is sent until POST /email-campaigns/{id}/send.',
    },
    remove: {
      summary: 'Delete a draft, scheduled, cancelled or failed email campaign',
      description: 'sent and archived campaigns answer 409 (archive a sent one instead), sending ones 409 (cancel first).',
    },
    send: {
      summary: 'Send a draft, or re-send a finished email campaign as a new one',
      description:
        'As POST /campaigns/{id}/send: a draft goes as its schedule says (200, the same campaign); a sent, archived, cancelled ' +
        'or failed campaign is re-sent as a new campaign dispatched at once (201), to its segment evaluated now or the ' +
        '`segment` given. Scheduled and sending campaigns answer 409 `campaign_not_resendable`.',
    },
    duplicate: {
      summary: 'Copy an email campaign into a new draft',
      description: 'Any status: the new draft has the name (marked "(copy)"), content, segment, UTM and time zone settings; nothing is sent.',
    },
    cancel: {
      summary: 'Cancel a scheduled, sending or paused email campaign',
      description: 'A scheduled campaign never sends; a sending or paused one stops: emails not yet handed to a worker are suppressed at once, those being sent finish. Other statuses answer 409.',
    },
    pause: {
      summary: 'Pause a sending email campaign',
      description:
        '`sending` → `paused`: the emails still waiting are held (their deliveries `paused`, each keeping when it is due) and no ' +
        'worker takes them; those already being sent finish and are counted. Other statuses answer 409 `campaign_not_pausable`.',
    },
    resume: {
      summary: 'Resume a paused email campaign where it stopped',
      description:
        '`paused` → `sending`: the held emails go, each as it was due (those overdue first). A recipient already sent is never ' +
        'sent again: every recipient is one delivery row, and only rows still held go. Other statuses answer 409 ' +
        '`campaign_not_resumable`. A paused campaign can also be cancelled.',
    },
    archive: {
      summary: 'Archive a sent email campaign',
      description: 'Hides it from lists unless status=archived; it stays readable and re-sendable. Other statuses answer 409.',
    },
    stream: {
      summary: 'Live counters of an email campaign (server-sent events)',
      description:
        'As GET /campaigns/{id}/stream, with the email counters: each event is `data: {"status", "totalTargeted", "sent", ' +
        '"delivered", "opened", "clicked", "bounced", "complained", "unsubscribed", "failed", "suppressed", the rates, and ' +
        '"sendingIssue" as on the campaign}`, one ' +
        'on connect and one whenever something changed (read at most every 400 ms), so the dashboard\'s counters move within ' +
        'the two seconds of spec 6.3. API-key callers poll GET /email-campaigns/{id}.',
    },
  },
  test: {
    summary: 'Send the campaign as it stands to a few addresses, as a test',
    description:
      'Any status (a draft, typically). Each address gets the email now, its subject marked `[Test]`, rendered with the ' +
      'merge fields of the subscriber holding that address in the campaign\'s environment (none: only defaults, and a ' +
      'variable without one fails that address with `template_variables_missing`). Not counted in the campaign\'s stats, ' +
      'not logged as a delivery; its tracked links lead where they should but record nothing. It goes through the ' +
      "project's provider (a test key's campaign: the sandbox, nothing sent), within its rate, a sandbox account's " +
      'quota and the monthly cap. Each address answers `sent` or `failed` with a reason (spec 7.4 codes and ' +
      '`provider_not_configured`, `monthly_cap_reached`, `sandbox_limit_reached`).',
    body: testBody,
    addressesOf: (body) => body.emails,
    answer: testAnswer,
    answerOf: (outcomes) => ({ data: outcomes.map(({ address, status, reason }) => ({ email: address, status, reason })) }),
  },
};
