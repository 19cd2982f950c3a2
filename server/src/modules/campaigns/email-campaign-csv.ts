// The email campaign CSV exports: the campaign list with its counters and rates, and one campaign's recipients with
// their outcomes. Columns documented once; every cell a person or a provider wrote is formula-injection safe.
import { escapeCell } from '../../http/csv.js';
import type { RecipientOutcome } from './email-campaign-analytics.repository.js';
import type { EmailCampaign } from './email-campaign.js';

const FORMULA_NOTE = 'Cells starting with = + - @ tab, CR or NUL are prefixed with an apostrophe so spreadsheets do not run them as formulas.';

export const EMAIL_CAMPAIGN_CSV_COLUMNS = [
  'id',
  'name',
  'subject',
  'status',
  'sandbox',
  'createdAt',
  'sentAt',
  'completedAt',
  'totalTargeted',
  'sent',
  'delivered',
  'opened',
  'clicked',
  'bounced',
  'complained',
  'unsubscribed',
  'failed',
  'suppressed',
  'openRate',
  'clickRate',
  'bounceRate',
  'complaintRate',
  'unsubscribeRate',
] as const;

export const EMAIL_CAMPAIGN_CSV_DESCRIPTION =
  `Columns, in order: ${EMAIL_CAMPAIGN_CSV_COLUMNS.join(', ')}. One row per email campaign of the project created within ` +
  '[from, to] (UTC days, both inclusive; archived ones included), oldest first. subject is the content\'s, merge tags ' +
  'unrendered. Timestamps are ISO 8601 (empty when not reached yet: sentAt = sending started, completedAt = every delivery ' +
  'final); sandbox is true or false; the counters and rates are those of GET /email-campaigns/{id} (openRate = opened / ' +
  'sent, clickRate, bounceRate, complaintRate and unsubscribeRate likewise over sent; 0 to 1). A test key ' +
  `lists sandbox campaigns only. ${FORMULA_NOTE}`;

export function toEmailCampaignCsvRecord(campaign: EmailCampaign): string[] {
  const { stats } = campaign;
  return [
    escapeCell(campaign.id),
    escapeCell(campaign.name),
    escapeCell(campaign.content.subject),
    campaign.status,
    String(campaign.sandbox),
    campaign.createdAt,
    campaign.sentAt ?? '',
    campaign.completedAt ?? '',
    ...[
      stats.totalTargeted,
      stats.sent,
      stats.delivered,
      stats.opened,
      stats.clicked,
      stats.bounced,
      stats.complained,
      stats.unsubscribed,
      stats.failed,
      stats.suppressed,
      stats.openRate,
      stats.clickRate,
      stats.bounceRate,
      stats.complaintRate,
      stats.unsubscribeRate,
    ].map(String),
  ];
}

export const RECIPIENT_CSV_COLUMNS = [
  'address',
  'subscriberId',
  'status',
  'reason',
  'sentAt',
  'deliveredAt',
  'openedAt',
  'clickedAt',
  'bounced',
  'complained',
  'unsubscribed',
  'opens',
  'clicks',
  'humanOpened',
  'humanClicked',
] as const;

export const RECIPIENT_CSV_DESCRIPTION =
  `Columns, in order: ${RECIPIENT_CSV_COLUMNS.join(', ')}. One row per recipient (delivery) of the campaign, in subscriber ` +
  'id order, streamed; none before the campaign is dispatched. address is where the email went; status and reason are the ' +
  "delivery's (docs/CONTEXT.md, Messages and deliveries: e.g. failed with recipient_bounced when the server refused the " +
  'address); sentAt, deliveredAt, openedAt and clickedAt are the first of each (ISO 8601, empty if none). From the events ' +
  'log: bounced, complained and unsubscribed (true when the provider or the recipient reported it after the send), opens ' +
  'and clicks (every one logged, repeats and machine-flagged ones included), humanOpened and humanClicked (at least one ' +
  `without machine signals). ${FORMULA_NOTE}`;

const iso = (date: Date | null) => date?.toISOString() ?? '';

export function toRecipientCsvRecord(row: RecipientOutcome): string[] {
  return [
    escapeCell(row.address),
    escapeCell(row.subscriberId),
    row.status,
    escapeCell(row.reason),
    iso(row.sentAt),
    iso(row.deliveredAt),
    iso(row.openedAt),
    iso(row.clickedAt),
    String(row.bounced),
    String(row.complained),
    String(row.unsubscribed),
    String(row.opens),
    String(row.clicks),
    String(row.humanOpened),
    String(row.humanClicked),
  ];
}
