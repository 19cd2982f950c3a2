// Test harness: a fresh database per test file (cloned from the migrated template) and the app built on it.
import type { Agent } from 'node:https';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import pg from 'pg';
import type { Logger } from 'pino';
import { inject } from 'vitest';
import { loadConfig, type Config, type Env } from '../src/config.js';
import { openDatabase, type Database } from '../src/db/database.js';
import { buildApp } from '../src/app/app.js';
import type { App } from '../src/http/types.js';
import { createLogger } from '../src/logger.js';
import type { DkimKeys } from '../src/delivery/index.js';
import { createServices, type Services } from '../src/services.js';
import { withDatabase } from './global-setup.js';

export const TEST_JWT_SECRET = 'test-secret-test-secret-test-secret-0123456789';

export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

async function adminQuery(sql: string) {
  const client = new pg.Client({ connectionString: inject('adminDatabaseUrl') });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** A new database with every migration applied, private to the caller. */
export async function createTestDatabase(options: { empty?: boolean } = {}): Promise<TestDatabase> {
  const name = `${inject('databasePrefix')}${randomBytes(5).toString('hex')}`;
  await adminQuery(
    options.empty ? `CREATE DATABASE ${name}` : `CREATE DATABASE ${name} TEMPLATE ${inject('templateDatabase')}`,
  );
  return {
    name,
    url: withDatabase(inject('adminDatabaseUrl'), name),
    drop: () => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}

export interface TestApp {
  app: App;
  database: Database;
  services: Services;
  config: Config;
  close(): Promise<void>;
}

export interface TestAppOptions {
  /** Called after every route is registered and before app.ready(): register test-only routes or hooks here. */
  beforeReady?: (app: App) => void | Promise<void>;
  /** The logger the app writes to (default: silent). */
  logger?: Logger;
  /** Build on this existing database instead of a fresh one; close() then leaves it in place. */
  database?: TestDatabase;
  /** The clock the services read (the delivery policy's quiet hours and cap windows). */
  clock?: () => Date;
  /** The DKIM keys email is signed with (the sending-domains module's, in production). */
  dkimKeys?: DkimKeys;
  /** The built dashboard to serve under /app/ (default: dashboard/dist). */
  dashboardDir?: string;
  /** The built browser SDK to serve under /sdk/ (default: sdk/dist). */
  sdkDir?: string;
  /** The agent the SES webhook reaches SNS through (`sns-peer.ts`: trusts the test's own SNS, and only that). */
  snsAgent?: Agent;
}

/** The real app on a fresh database, with rate limits off and 127.0.0.1 an allowed outbound host unless the env says otherwise. */
export async function startTestApp(env: Env = {}, options: TestAppOptions = {}): Promise<TestApp> {
  const testDb = options.database ?? (await createTestDatabase());
  const ownsDatabase = options.database === undefined;
  const config = loadConfig({
    DATABASE_URL: testDb.url,
    LOG_LEVEL: 'silent',
    JWT_SECRET: TEST_JWT_SECRET,
    RATE_LIMIT_ENABLED: 'false',
    // The local peers (SMTP sinks) listen on loopback, as a self-hoster's own relay may: the operator allows it. Tests of
    // the outbound guard set it to '' (unset).
    OUTBOUND_ALLOWED_HOSTS: '127.0.0.1',
    ...env,
  });
  const database = openDatabase(testDb.url, 5);
  // Like runtime.ts: with REDIS_URL, rate-limit counters and send rates live in Redis.
  const redis = config.redisUrl ? new Redis(config.redisUrl, { maxRetriesPerRequest: 1, connectTimeout: 2000 }) : undefined;
  redis?.on('error', () => {});
  const services = createServices(database.db, config, config.jwtSecret!, { clock: options.clock, redis, snsAgent: options.snsAgent, dkimKeys: options.dkimKeys });
  const app = await buildApp({ config, logger: options.logger ?? createLogger('silent'), pool: database.pool, services, redis, dashboardDir: options.dashboardDir, sdkDir: options.sdkDir });
  await options.beforeReady?.(app);
  await app.ready();
  return {
    app,
    database,
    services,
    config,
    async close() {
      await app.close();
      if (redis) await redis.quit();
      await database.close();
      if (ownsDatabase) await testDb.drop();
    },
  };
}
