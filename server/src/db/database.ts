// The database handle every layer shares: one pg Pool, its Drizzle wrapper, migrations and the readiness probe.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import pg from 'pg';
import * as schema from './schema.js';

// src/db and dist/db are both two levels below server/, where the generated migrations live.
export const migrationsFolder = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../migrations');
const MIGRATION_LOCK = 7_305_001; // pg_advisory_lock key: one migrator at a time across every instance

export type Db = NodePgDatabase<typeof schema>;

export interface Database {
  pool: pg.Pool;
  db: Db;
  connectionString: string;
  close(): Promise<void>;
}

export function openDatabase(connectionString: string, poolMax = 10): Database {
  const pool = new pg.Pool({ connectionString, max: poolMax, application_name: 'herald' });
  // An idle client losing its connection (database restart) must not crash the process; the pool replaces it.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  return {
    pool,
    db: drizzle(pool, { schema }),
    connectionString,
    close: () => pool.end(),
  };
}

/** Applies pending migrations under an advisory lock, so concurrent starts are safe; running it twice is a no-op. */
export async function migrateDatabase(connectionString: string): Promise<void> {
  const client = new pg.Client({ connectionString, application_name: 'herald-migrate' });
  await client.connect();
  try {
    await client.query('SET client_min_messages = warning');
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    await migrate(drizzle(client), { migrationsFolder });
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
    await client.end();
  }
}

let expectedMigrations: number | undefined;

/** How far the database is behind the migrations shipped with this build (0 = current). */
export async function pendingMigrations(pool: pg.Pool): Promise<number> {
  if (expectedMigrations === undefined) {
    const journal = JSON.parse(await readFile(path.join(migrationsFolder, 'meta/_journal.json'), 'utf8')) as {
      entries: unknown[];
    };
    expectedMigrations = journal.entries.length;
  }
  // Two statements: a query naming the table fails to parse while it does not exist, whatever CASE guards it.
  const { rows: tables } = await pool.query<{ exists: boolean }>(
    `SELECT to_regclass('drizzle.__drizzle_migrations') IS NOT NULL AS exists`,
  );
  if (!tables[0]?.exists) return expectedMigrations;
  const { rows } = await pool.query<{ applied: number }>('SELECT count(*)::int AS applied FROM drizzle.__drizzle_migrations');
  return Math.max(0, expectedMigrations - (rows[0]?.applied ?? 0));
}
