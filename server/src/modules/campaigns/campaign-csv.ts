// The campaign CSV export: its columns, documented once, and one row per campaign, formula-injection safe.
import { escapeCell } from '../../http/csv.js';
import type { Campaign } from './push-campaign.js';

export const CAMPAIGN_CSV_COLUMNS = [
  'id',
  'name',
  'status',
  'sandbox',
  'createdAt',
  'sentAt',
  'completedAt',
  'queued',
  'sent',
  'delivered',
  'clicked',
  'dismissed',
  'failed',
  'suppressed',
  'ctr',
  'deliveryRate',
] as const;

export const CAMPAIGN_CSV_DESCRIPTION =
  `Columns, in order: ${CAMPAIGN_CSV_COLUMNS.join(', ')}. One row per campaign of the project created within [from, to] ` +
  '(UTC days, both inclusive; archived ones included), oldest first. Timestamps are ISO 8601 (empty when not reached yet: ' +
  'sentAt = sending started, completedAt = every delivery final); sandbox is true or false; the counters and rates are those ' +
  'of GET /campaigns/{id} (ctr = clicked / sent, deliveryRate = delivered / sent, 0 to 1). Cells starting with = + - @ tab, ' +
  'CR or NUL are prefixed with an apostrophe so spreadsheets do not run them as formulas.';

export function toCsvRecord(campaign: Campaign): string[] {
  const { stats } = campaign;
  return [
    escapeCell(campaign.id),
    escapeCell(campaign.name),
    campaign.status,
    String(campaign.sandbox),
    campaign.createdAt,
    campaign.sentAt ?? '',
    campaign.completedAt ?? '',
    ...[stats.queued, stats.sent, stats.delivered, stats.clicked, stats.dismissed, stats.failed, stats.suppressed, stats.ctr, stats.deliveryRate].map(String),
  ];
}
