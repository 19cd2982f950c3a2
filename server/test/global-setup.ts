// Vitest global setup: one PostgreSQL for the run (HERALD_TEST_DATABASE_URL, else embedded) and a migrated template.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { lockDataDir, startEmbeddedPostgres } from '../src/db/embedded-postgres.js';
import { createLogger } from '../src/logger.js';
import { migrateAll } from '../src/runtime.js';

declare module 'vitest' {
  export interface ProvidedContext {
    adminDatabaseUrl: string;
    templateDatabase: string;
    databasePrefix: string;
  }
}

export function withDatabase(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
}

export default async function setup(project: TestProject) {
  const cleanups: (() => Promise<void>)[] = [];
  let adminUrl = process.env.HERALD_TEST_DATABASE_URL;
  if (!adminUrl) {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'herald-test-pg-'));
    const unlock = await lockDataDir(dataDir);
    const server = await startEmbeddedPostgres({ dataDir });
    adminUrl = server.connectionString;
    cleanups.push(async () => {
      await server.stop();
      await unlock();
      await rm(dataDir, { recursive: true, force: true });
    });
  }
  const template = `herald_template_${process.pid}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${template}`);
  await admin.query(`CREATE DATABASE ${template}`);
  await admin.end();
  await migrateAll(withDatabase(adminUrl, template), createLogger('warn'));

  project.provide('adminDatabaseUrl', adminUrl);
  project.provide('templateDatabase', template);
  project.provide('databasePrefix', `herald_t_${process.pid}_`);

  return async () => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    const { rows } = await client.query<{ datname: string }>(
      `SELECT datname FROM pg_database WHERE datname = $1 OR datname LIKE 'herald_t\\_${process.pid}\\_%'`,
      [template],
    );
    for (const { datname } of rows) await client.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
    await client.end();
    for (const cleanup of cleanups.reverse()) await cleanup();
  };
}
