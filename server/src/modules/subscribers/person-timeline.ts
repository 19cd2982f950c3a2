// A person's timeline items in words (titles, reasons, event summaries) and the opaque cursor of its pages.
import type { Channel } from '../../db/schema.js';
import { validationFailed } from '../../shared/errors.js';
import type { TimelineCursor, TimelineRow } from './person-timeline.repository.js';
import type { TimelineKind } from './person-timeline.schemas.js';

const CHANNEL_WORD: Record<Channel, string> = { push: 'Push', email: 'Email', sms: 'SMS', whatsapp: 'WhatsApp message' };

/** Spec 7.4's reason codes (and Herald's own), said the way the person page shows them. */
const REASON_WORDS: Record<string, string> = {
  subscriber_not_found: 'no subscriber matched',
  subscriber_unsubscribed: 'the person had unsubscribed',
  subscriber_inactive: 'the person is inactive',
  frequency_capped: "over the project's frequency cap",
  quiet_hours: "inside the project's quiet hours",
  provider_error: 'the provider refused it or was unreachable',
  payload_too_large: 'the push is over 4 KB',
  recipient_bounced: 'the address bounced before',
  recipient_complained: 'the person marked an earlier email as spam',
  recipient_unsubscribed: 'the person turned this channel off',
  recipient_suppressed: 'the address is on the suppression list',
  sender_domain_not_verified: 'the sending domain is not verified',
  template_not_found: 'no template of that name',
  template_variables_missing: 'the template needs variables the send did not give',
  template_render_failed: 'the template could not be rendered',
  provider_not_configured: 'the project has no provider for this channel',
  monthly_cap_reached: "the organization's monthly email cap is reached",
  sandbox_limit_reached: "over the provider sandbox's daily limit",
  campaign_cancelled: 'its campaign was cancelled before it went out',
  template_not_approved: 'Meta has not approved the template',
  outside_service_window: 'free-form text more than 24 hours after the person last wrote',
  invalid_phone: 'not a valid international phone number',
  carrier_rejected: 'the carrier refused the number',
  unverified_sender_id: 'no sender for the destination country',
  recipient_opted_out: 'the number opted out (STOP)',
  sandbox: "sent with a test key: recorded, never delivered",
  // Why an enrollment ended.
  exit_step: 'it reached an exit step',
  automation_archived: 'the automation was archived',
  too_many_steps: 'its flow ran too many steps in a row',
};

const reasonInWords = (code: string | null): string | null => {
  if (code === null) return null;
  if (code.startsWith('step_not_found:')) return 'its next step no longer exists';
  return REASON_WORDS[code] ?? code.replaceAll('_', ' ');
};

const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : null);

/** An event's properties in one short line: `plan: pro, amount: 20, …` (at most five, each value cut at 40 characters). */
export function propertiesSummary(properties: Record<string, unknown> | null): string | null {
  const entries = Object.entries(properties ?? {});
  if (entries.length === 0) return null;
  const shown = entries.slice(0, 5).map(([key, value]) => {
    const said = typeof value === 'string' ? value : JSON.stringify(value);
    return `${key}: ${said.length > 40 ? `${said.slice(0, 39)}…` : said}`;
  });
  return entries.length > 5 ? `${shown.join(', ')}, … (${entries.length - 5} more)` : shown.join(', ');
}

function messageTitle(channel: string, status: string | null): string {
  switch (status) {
    case 'queued':
    case 'sending':
      return `${channel} queued`;
    case 'paused':
      return `${channel} held (campaign paused)`;
    case 'failed':
      return `${channel} not sent`;
    case 'suppressed':
      return `${channel} held back`;
    default:
      return `${channel} sent`;
  }
}

const EVENT_WORD: Record<string, string> = {
  delivered: 'delivered',
  opened: 'opened',
  clicked: 'clicked',
  dismissed: 'dismissed',
  unsubscribed: 'unsubscribed from',
  complained: 'marked as spam',
  bounced: 'bounced',
  soft_bounced: 'soft-bounced',
  failed: 'not delivered by the carrier',
};

/** What one timeline row says: the words a person reads beside the ids the API links by. */
export function toTimelineItem(row: TimelineRow) {
  const kind = row.kind as TimelineKind;
  const channel = row.channel === null ? 'Message' : CHANNEL_WORD[row.channel];
  const reported = row.detail ?? {};
  let title: string;
  let detail: string | null = null;
  let url: string | null = null;
  if (kind === 'message') {
    title = messageTitle(channel, row.status);
    detail = reasonInWords(row.reason);
  } else if (kind === 'event') {
    title = `Event ${row.eventName ?? ''}`.trim();
    detail = propertiesSummary(row.properties);
  } else if (kind === 'enrolled') {
    title = `Entered automation ${row.automationName ?? '(deleted)'}`;
  } else if (kind.startsWith('enrollment_')) {
    const verb = { enrollment_completed: 'Completed', enrollment_exited: 'Left', enrollment_failed: 'Stopped in' }[kind as 'enrollment_completed'];
    title = `${verb} automation ${row.automationName ?? '(deleted)'}`;
    detail = reasonInWords(row.enrollmentReason);
  } else {
    title = kind === 'unsubscribed' ? `Unsubscribed from ${channel.toLowerCase()}` : `${channel} ${EVENT_WORD[kind] ?? kind}`;
    if (kind === 'clicked') url = text(reported.url) ?? text(reported.link);
    if (kind === 'bounced' || kind === 'soft_bounced') {
      detail = [text(reported.status), text(reported.diagnosticCode) ?? text(reported.bounceSubType)].filter(Boolean).join(': ') || null;
    }
    if (kind === 'failed') detail = reasonInWords(text(reported.reason) ?? row.reason);
    if (kind === 'delivered' && row.channel === 'push') detail = "confirmed by the device's service worker (an offline browser confirms when it comes back)";
    if (kind === 'clicked') detail = url;
  }
  return {
    at: row.at.toISOString(),
    kind,
    channel: kind === 'event' || kind.startsWith('enroll') ? null : row.channel,
    title,
    detail,
    status: kind === 'message' ? row.status : null,
    reason: kind === 'message' ? row.reason : kind.startsWith('enrollment_') ? row.enrollmentReason : null,
    source: row.source,
    messageTitle: row.messageTitle,
    campaign: row.campaignId === null ? null : { id: row.campaignId, name: row.campaignName },
    automation: row.automationId === null ? null : { id: row.automationId, name: row.automationName },
    url,
    repeat: row.repeat === true,
    machine: reported.machine !== undefined,
    eventName: row.eventName,
  };
}

/** The cursor after a page's last row: opaque to callers, the row's exact instant and sort key inside. */
export const encodeCursor = (row: Pick<TimelineRow, 'exactAt' | 'key'>): string => Buffer.from(`${row.exactAt}|${row.key}`).toString('base64url');

export function decodeCursor(cursor: string): TimelineCursor {
  const [at, key, ...rest] = Buffer.from(cursor, 'base64url').toString().split('|');
  if (at === undefined || key === undefined || rest.length > 0 || !/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/.test(at) || !/^[denv][\w-]+$/.test(key)) {
    throw validationFailed([{ field: 'cursor', error: 'is not a cursor this timeline gave (pass nextCursor as it came)' }]);
  }
  return { at, key };
}
