// Wakes idle delivery workers when deliveries are queued (PostgreSQL NOTIFY, heard in DeliveryEngine.watchChanges);
// polling remains the fallback.
import { sql } from 'drizzle-orm';
import type { Db } from '../db/database.js';

/** The NOTIFY channel on which queued deliveries are announced to every worker. */
export const DELIVERIES_CHANNEL = 'herald_deliveries';

/** Tells every listening worker that deliveries are due (call after queueing them, outside or after the commit). */
export async function announceDeliveries(db: Db): Promise<void> {
  await db.execute(sql`SELECT pg_notify(${DELIVERIES_CHANNEL}, '')`);
}
