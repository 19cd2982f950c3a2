// LISTEN on PostgreSQL channels from a connection of its own, reconnecting every second after it is lost.
import pg from 'pg';

const RETRY_MS = 1000;

export interface ListenOptions {
  /** Distinguishes the connection in pg_stat_activity (a connection string's application_name wins). */
  applicationName: string;
  onNotify(payload: string, channel: string): void;
  /** LISTEN is in effect (again): notifications sent from now on arrive, earlier ones may have been missed. */
  onListening?(): void;
  /** The connection failed or was lost; a reconnect follows in a second. */
  onLost?(error: unknown): void;
}

/**
 * `channels` are constant identifiers (they are not quoted); notifications of one connection arrive in commit order.
 * Resolves after the first attempt (a failed one is retried) with a function that stops listening.
 */
export async function listen(connection: pg.ClientConfig, channels: readonly string[], options: ListenOptions): Promise<() => Promise<void>> {
  let client: pg.Client | undefined;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;

  const lost = (current: pg.Client, error?: unknown) => {
    if (client !== current) return;
    client = undefined;
    void current.end().catch(() => undefined);
    if (stopped) return;
    options.onLost?.(error);
    retry = setTimeout(() => void connect(), RETRY_MS);
  };

  const connect = async () => {
    // Not a pool slot: a LISTEN connection is held for the life of the process.
    const current = new pg.Client({ ...connection, application_name: options.applicationName });
    client = current;
    current.on('error', (error) => lost(current, error));
    current.on('end', () => lost(current));
    current.on('notification', (message) => {
      if (channels.includes(message.channel)) options.onNotify(message.payload ?? '', message.channel);
    });
    try {
      await current.connect();
      await current.query(channels.map((channel) => `LISTEN ${channel};`).join(' '));
      if (client === current && !stopped) options.onListening?.();
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
    await current?.end().catch(() => undefined);
  };
}
