// The few columns that name a person in another list (an enrollment, an event): selected by a join on the subscriber's
// primary key within the row's own project, so a list stays on its own index and names its page's people in one query.
import { and, eq, type SQL } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';
import { subscriberName, subscribers } from './schema.js';

export const subscriberSummaryColumns = {
  summaryId: subscribers.id,
  summaryName: subscriberName(subscribers),
  summaryEmail: subscribers.email,
  summaryPhone: subscribers.phone,
  summaryExternalId: subscribers.externalId,
  summaryBrowser: subscribers.browser,
  summaryOs: subscribers.os,
};

export interface SubscriberSummary {
  id: string;
  name: string | null;
  email: string | null;
  phone: string | null;
  externalId: string | null;
  browser: string | null;
  os: string | null;
}

type SummaryRow = { [K in keyof typeof subscriberSummaryColumns]: unknown };

/** The join's condition: the subscriber `subscriberId` names, in the row's project (never another tenant's). */
export const summaryJoin = (subscriberId: AnyPgColumn, projectId: AnyPgColumn | string): SQL =>
  and(eq(subscribers.id, subscriberId), eq(subscribers.projectId, projectId))!;

/** The summary of a joined row; null when no subscriber matched (deleted since). */
export function summaryOf(row: SummaryRow): SubscriberSummary | null {
  if (row.summaryId === null || row.summaryId === undefined) return null;
  return {
    id: row.summaryId as string,
    name: (row.summaryName as string | null) ?? null,
    email: (row.summaryEmail as string | null) ?? null,
    phone: (row.summaryPhone as string | null) ?? null,
    externalId: (row.summaryExternalId as string | null) ?? null,
    browser: (row.summaryBrowser as string | null) ?? null,
    os: (row.summaryOs as string | null) ?? null,
  };
}
