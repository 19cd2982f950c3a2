// LISTEN on a PostgreSQL channel from a connection of its own, reconnecting every second after it is lost.
import pg from 'pg';

const RETRY_MS = 1000;

export interface ListenOptions {
  /** Distinguishes the connection in pg_stat_activity (a connection string's application_name wins). */
  applicationName: string;
  onNotify(payload: string): void;
  /** LISTEN is in effect (again): notifications sent from now on arrive, earlier ones may have been missed. */
  onListening?(): void;
  /** The connection failed or was lost; a reconnect follows in a second. */
  onLost?(error: unknown): void;
}

/** `channel` is a constant identifier (it is not quoted). Resolves after the first attempt (a failed one is retried) with a function that stops listening. */
export async function listen(connection: pg.ClientConfig, channel: string, options: ListenOptions): Promise<() => Promise<void>> {
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
      if (message.channel === channel) options.onNotify(message.payload ?? '');
    });
    try {
      await current.connect();
      await current.query(`LISTEN ${channel}`);
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
