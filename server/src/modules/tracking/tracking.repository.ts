// Tracking events on deliveries. The signed token in the push is the authority: rows are addressed by delivery id alone.
import { sql } from 'drizzle-orm';
import type { Db } from '../../db/database.js';

export const TRACKING_EVENTS = ['delivered', 'clicked', 'dismissed'] as const;
export type TrackingEvent = (typeof TRACKING_EVENTS)[number];

/**
 * Records an event, idempotently: each timestamp is set only while null (every event implies delivered_at), and
 * the status only moves forward — sent → delivered → dismissed or clicked, a click winning over a dismissal. A row
 * still `sending` gets only the timestamps: recording the send outcome promotes its status from them. Other states
 * (failed, queued…) keep their status. False when the delivery does not exist (any more).
 *
 * This statement is where a delivery's first delivered, click or dismiss is known (RETURNING, under the row lock),
 * so it also adds them to the message's counters (`message_stats`): replays count nothing.
 */
export async function recordEvent(db: Db, deliveryId: number, event: TrackingEvent): Promise<boolean> {
  const { rows } = await db.execute(sql`
    WITH old AS (
      SELECT id, delivered_at, clicked_at, dismissed_at FROM deliveries WHERE id = ${deliveryId} FOR UPDATE
    ), changed AS (
      UPDATE deliveries d SET
        delivered_at = coalesce(d.delivered_at, now()),
        clicked_at = CASE WHEN ${event} = 'clicked' THEN coalesce(d.clicked_at, now()) ELSE d.clicked_at END,
        dismissed_at = CASE WHEN ${event} = 'dismissed' THEN coalesce(d.dismissed_at, now()) ELSE d.dismissed_at END,
        status = (CASE
          WHEN d.status NOT IN ('sent', 'delivered', 'dismissed') THEN d.status::text
          WHEN ${event} = 'clicked' THEN 'clicked'
          WHEN ${event} = 'dismissed' AND d.status <> 'dismissed' THEN 'dismissed'
          WHEN ${event} = 'delivered' AND d.status = 'sent' THEN 'delivered'
          ELSE d.status::text END)::delivery_status,
        updated_at = now()
      FROM old
      WHERE d.id = old.id
      RETURNING d.project_id, d.message_id,
        old.delivered_at IS NULL AS delivered,
        (old.clicked_at IS NULL AND d.clicked_at IS NOT NULL) AS clicked,
        (old.dismissed_at IS NULL AND d.dismissed_at IS NOT NULL) AS dismissed
    ), counted AS (
      -- The message's counters (when it keeps them) move in the same statement, by first transitions only.
      UPDATE message_stats ms SET
        delivered = ms.delivered + changed.delivered::int,
        clicked = ms.clicked + changed.clicked::int,
        dismissed = ms.dismissed + changed.dismissed::int,
        updated_at = now()
      FROM changed
      WHERE ms.message_id = changed.message_id AND (changed.delivered OR changed.clicked OR changed.dismissed)
    )
    SELECT 1 FROM changed`);
  return rows.length > 0;
}
