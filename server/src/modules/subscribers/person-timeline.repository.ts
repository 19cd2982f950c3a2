// A person's timeline: messages, their events, the application's events and automation enrollments, one page at a time.
import { sql } from 'drizzle-orm';
import type { Db } from '../../db/database.js';
import type { Channel, DELIVERY_STATUSES, EnrollmentState } from '../../db/schema.js';
import type { SubscriberRow } from './subscriber.repository.js';

/** Where a page starts: the instant (text, to the microsecond) and the sort key of the last item of the page before. */
export interface TimelineCursor {
  at: string;
  key: string;
}

export type TimelineRow = {
  at: Date;
  /** `at` to the microsecond (a Date keeps milliseconds), for the next page's cursor. */
  exactAt: string;
  key: string;
  kind: string;
  channel: Channel | null;
  status: (typeof DELIVERY_STATUSES)[number] | null;
  reason: string | null;
  providerCode: string | null;
  source: 'campaign' | 'automation' | 'transactional' | null;
  messageTitle: string | null;
  campaignId: string | null;
  campaignName: string | null;
  automationId: string | null;
  automationName: string | null;
  detail: Record<string, unknown> | null;
  repeat: boolean | null;
  eventName: string | null;
  properties: Record<string, unknown> | null;
  enrollmentState: EnrollmentState | null;
  enrollmentReason: string | null;
};

/**
 * One page of the subscriber's timeline, newest first; the caller has checked the subscriber is visible. Every branch
 * leads with the subscriber (`deliveries_subscriber_idx`, then each delivery's events by `delivery_events_source_key`;
 * `events_subscriber_idx`; `automation_enrollments_subscriber_idx`), so a page reads one person's rows and never walks
 * the project's; the page is cut before its messages, campaigns and automations are joined.
 */
export async function timelinePage(db: Db, subscriber: Pick<SubscriberRow, 'id' | 'projectId'>, after: TimelineCursor | undefined, limit: number): Promise<TimelineRow[]> {
  const { id, projectId } = subscriber;
  const before = after ? sql`where (i.at, i.key) < (${after.at}::timestamptz, ${after.key})` : sql``;
  const { rows } = await db.execute<TimelineRow>(sql`
    with page as (
      select i.* from (
        select coalesce(d.sent_at, d.failed_at, d.created_at) as at, 'd' || lpad(d.id::text, 19, '0') as key, 'message' as kind,
               d.id as delivery_id, null::bigint as event_row_id, null::text as ref_id
          from deliveries d where d.subscriber_id = ${id} and d.project_id = ${projectId}
        union all
        select e.occurred_at, 'e' || lpad(e.id::text, 19, '0'), e.type::text, e.delivery_id, e.id, null
          from deliveries d join delivery_events e on e.delivery_id = d.id
         where d.subscriber_id = ${id} and d.project_id = ${projectId}
        union all
        select v.occurred_at, 'v' || v.id, 'event', null, null, v.id
          from events v where v.subscriber_id = ${id} and v.project_id = ${projectId}
        union all
        select n.enrolled_at, 'n' || n.id || '1', 'enrolled', null, null, n.id
          from automation_enrollments n where n.subscriber_id = ${id} and n.project_id = ${projectId}
        union all
        select n.ended_at, 'n' || n.id || '2', 'enrollment_' || n.state, null, null, n.id
          from automation_enrollments n where n.subscriber_id = ${id} and n.project_id = ${projectId} and n.ended_at is not null
      ) i
      ${before}
      order by i.at desc, i.key desc
      limit ${limit}
    )
    select page.at, to_char(page.at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as "exactAt", page.key, page.kind,
           d.channel, d.status, d.reason, d.provider_code as "providerCode", m.source,
           coalesce(m.content ->> 'title', m.content ->> 'subject', m.content ->> 'templateName') as "messageTitle",
           m.campaign_id as "campaignId", c.name as "campaignName",
           coalesce(n.automation_id, sent_by.automation_id) as "automationId", a.name as "automationName",
           e.detail, e.repeat, v.name as "eventName", v.properties,
           n.state as "enrollmentState", n.reason as "enrollmentReason"
      from page
      left join deliveries d on d.id = page.delivery_id
      left join messages m on m.id = d.message_id
      left join campaigns c on c.id = m.campaign_id
      left join delivery_events e on e.id = page.event_row_id
      left join events v on page.kind = 'event' and v.id = page.ref_id
      left join automation_enrollments n on page.kind <> 'event' and n.id = page.ref_id
      left join lateral (
        select r.automation_id from automation_enrollments en join automation_step_runs r on r.enrollment_id = en.id
         where m.source = 'automation' and en.subscriber_id = ${id} and r.message_id = m.id
         limit 1
      ) sent_by on true
      left join automations a on a.id = coalesce(n.automation_id, sent_by.automation_id)
     order by page.at desc, page.key desc
  `);
  return rows.map((row) => ({ ...row, at: new Date(row.at) }));
}
