// Keeps an ApiKeyCache honest across processes: LISTENs for key changes on a dedicated connection, reconnecting.
import pg from 'pg';
import type { BaseLogger } from 'pino';
import type { ApiKeyCache, KeyChange } from './api-key-cache.js';
import { KEY_CHANGES_CHANNEL } from './api-key.repository.js';

const RETRY_MS = 1000;

/**
 * Starts listening; the cache is trusted only while LISTEN is in effect. Resolves after the first attempt (failed
 * attempts are retried every second) with a function that stops listening.
 */
export async function listenForKeyChanges(
  connection: pg.ClientConfig,
  cache: ApiKeyCache,
  logger: Pick<BaseLogger, 'warn'>,
): Promise<() => Promise<void>> {
  let client: pg.Client | undefined;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;

  const lost = (current: pg.Client, error?: unknown) => {
    if (client !== current) return;
    client = undefined;
    cache.setTrusted(false);
    void current.end().catch(() => undefined);
    if (stopped) return;
    logger.warn({ err: error }, 'API key listener lost its connection; keys are looked up in the database until it reconnects');
    retry = setTimeout(() => void connect(), RETRY_MS);
  };

  const connect = async () => {
    // No pool slot: a LISTEN connection is held for the life of the process.
    const current = new pg.Client({ ...connection, application_name: 'herald-api-key-listener' });
    client = current;
    current.on('error', (error) => lost(current, error));
    current.on('end', () => lost(current));
    current.on('notification', (message) => {
      if (message.channel !== KEY_CHANGES_CHANNEL || !message.payload) return;
      try {
        cache.evict(JSON.parse(message.payload) as KeyChange);
      } catch {
        cache.clear();
      }
    });
    try {
      await current.connect();
      await current.query(`LISTEN ${KEY_CHANGES_CHANNEL}`);
      if (client === current && !stopped) cache.setTrusted(true);
    } catch (error) {
      lost(current, error);
    }
  };

  await connect();
  return async () => {
    stopped = true;
    clearTimeout(retry);
    const current = client;
    client = undefined;
    cache.setTrusted(false);
    await current?.end().catch(() => undefined);
  };
}
