// Finds the PostgreSQL to use: DATABASE_URL, else the embedded server under DATA_DIR (started, or joined if running).
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { DataDirLockedError, lockDataDir, startEmbeddedPostgres } from './embedded-postgres.js';

/** Where the database is: `DATABASE_URL`, else the embedded server's data folder (`Config` has both). */
export interface DatabaseSettings {
  databaseUrl?: string | undefined;
  dataDir: string;
}

export interface DatabaseServer {
  connectionString: string;
  /** Whether this process started the server (and so stops it). */
  embedded: boolean;
  release(): Promise<void>;
}

/** For `serve`: the external database, or an embedded server owned by this process (DATA_DIR locked). */
export async function acquireDatabase(config: DatabaseSettings, log: (message: string) => void): Promise<DatabaseServer> {
  if (config.databaseUrl) return { connectionString: config.databaseUrl, embedded: false, release: async () => {} };
  const unlock = await lockDataDir(config.dataDir);
  try {
    const server = await startEmbeddedPostgres({ dataDir: config.dataDir, log });
    return {
      connectionString: server.connectionString,
      embedded: true,
      async release() {
        await server.stop();
        await unlock();
      },
    };
  } catch (error) {
    await unlock();
    throw error;
  }
}

/**
 * For short commands (`migrate`, `admin`): like acquireDatabase, but when a running `herald serve` holds DATA_DIR,
 * join its embedded server instead of failing.
 */
export async function joinDatabase(config: DatabaseSettings, log: (message: string) => void): Promise<DatabaseServer> {
  try {
    return await acquireDatabase(config, log);
  } catch (error) {
    if (!(error instanceof DataDirLockedError)) throw error;
    const root = path.resolve(config.dataDir);
    const pid = (await readFile(path.join(root, 'postgres', 'postmaster.pid'), 'utf8')).split('\n');
    const password = (await readFile(path.join(root, 'postgres-password'), 'utf8')).trim();
    return {
      connectionString: `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${pid[3]}/postgres`,
      embedded: false,
      release: async () => {},
    };
  }
}
