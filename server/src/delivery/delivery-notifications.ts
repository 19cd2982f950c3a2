// Wakes idle delivery workers when deliveries are queued (PostgreSQL LISTEN/NOTIFY); polling remains the fallback.
import { sql } from 'drizzle-orm';
import type pg from 'pg';
import type { Logger } from 'pino';
import type { Db } from '../db/database.js';
import { listen } from '../db/listen.js';

/** The NOTIFY channel on which queued deliveries are announced to every worker. */
export const DELIVERIES_CHANNEL = 'herald_deliveries';

/** Tells every listening worker that deliveries are due (call after queueing them, outside or after the commit). */
export async function announceDeliveries(db: Db): Promise<void> {
  await db.execute(sql`SELECT pg_notify(${DELIVERIES_CHANNEL}, '')`);
}

/** Listens on a dedicated connection, reconnecting after errors; resolves with a function that stops listening. */
export function listenForDeliveries(connection: pg.ClientConfig, onAnnounce: () => void, logger: Logger): Promise<() => Promise<void>> {
  return listen(connection, DELIVERIES_CHANNEL, {
    applicationName: 'herald-delivery-listener',
    onNotify: onAnnounce,
    // Anything queued while not listening.
    onListening: onAnnounce,
    onLost: (error) => logger.warn({ err: error }, 'delivery listener lost its connection; polling until it reconnects'),
  });
}
