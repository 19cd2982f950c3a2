// Wakes idle delivery workers when deliveries are queued (PostgreSQL LISTEN/NOTIFY); polling remains the fallback.
import { sql } from 'drizzle-orm';
import type pg from 'pg';
import type { Logger } from 'pino';
import type { Db } from '../db/database.js';

const CHANNEL = 'herald_deliveries';

/** Tells every listening worker that deliveries are due (call after queueing them, outside or after the commit). */
export async function announceDeliveries(db: Db): Promise<void> {
  await db.execute(sql`SELECT pg_notify(${CHANNEL}, '')`);
}

/** Listens on a dedicated connection, reconnecting after errors; returns a function that stops listening. */
export function listenForDeliveries(pool: pg.Pool, onAnnounce: () => void, logger: Logger): () => Promise<void> {
  let client: pg.PoolClient | undefined;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;
  const connect = async () => {
    try {
      const connected = await pool.connect();
      if (stopped) return connected.release();
      client = connected;
      connected.on('notification', onAnnounce);
      connected.on('error', (error) => {
        logger.warn({ err: error }, 'delivery listener lost its connection; polling until it reconnects');
        connected.release(true);
        client = undefined;
        if (!stopped) retry = setTimeout(() => void connect(), 1000);
      });
      await connected.query(`LISTEN ${CHANNEL}`);
      onAnnounce(); // anything queued while not listening
    } catch (error) {
      logger.warn({ err: error }, 'delivery listener could not connect; polling until it does');
      if (!stopped) retry = setTimeout(() => void connect(), 1000);
    }
  };
  void connect();
  return async () => {
    stopped = true;
    clearTimeout(retry);
    const current = client;
    client = undefined;
    if (current) {
      await current.query(`UNLISTEN ${CHANNEL}`).catch(() => undefined);
      current.release();
    }
  };
}
