// The data layer from an empty database: migrations (twice, concurrently), readiness, the JWT secret and first run.
import { totalmem } from 'node:os';
import { count } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/harness.js';
import { loadConfig } from '../config.js';
import { buildApp } from '../app/app.js';
import { WORKER_SCHEMA } from '../jobs/worker.js';
import { createLogger } from '../logger.js';
import { resolveJwtSecret } from '../modules/auth/index.js';
import { createKeyring } from '../modules/channels/index.js';
import { bootstrapFirstRun } from '../modules/organizations/index.js';

const NO_SECRET_KEY = { current: undefined, previous: undefined };
import { migrateAll } from '../runtime.js';
import { createServices } from '../services.js';
import { openDatabase, pendingMigrations, type Database } from './database.js';
import { apiKeys, instanceSecrets, memberships, organizations, projects, users } from './schema.js';

const logger = createLogger('silent');
const secret = 'x'.repeat(40);

async function tableCount(database: Database): Promise<number> {
  const { rows } = await database.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema NOT IN ('pg_catalog', 'information_schema')`,
  );
  return rows[0]!.n;
}

describe('migrations from an empty database', () => {
  let testDb: TestDatabase;
  let database: Database;

  beforeAll(async () => {
    testDb = await createTestDatabase({ empty: true });
    database = openDatabase(testDb.url, 4);
  });
  afterAll(async () => {
    await database?.close();
    await testDb?.drop();
  });

  it('reports every migration pending and /readyz 503 migrations_pending before migrating', async () => {
    expect(await tableCount(database)).toBe(0);
    expect(await pendingMigrations(database.pool)).toBeGreaterThan(0);

    const config = loadConfig({ DATABASE_URL: testDb.url, JWT_SECRET: secret, LOG_LEVEL: 'silent', RATE_LIMIT_ENABLED: 'false' });
    // Nothing in building the app may need a migrated database: it answers "not ready" instead of crashing.
    const app = await buildApp({ config, logger, pool: database.pool, services: createServices(database.db, config, secret) });
    try {
      await app.ready();
      const res = await app.inject({ method: 'GET', url: '/readyz', headers: { 'x-request-id': 'ready-check-1' } });
      expect(res.statusCode).toBe(503);
      expect(res.json()).toEqual({
        statusCode: 503,
        code: 'migrations_pending',
        message: expect.stringMatching(/migration\(s\) pending/),
        requestId: 'ready-check-1',
      });
      expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });

  it('applies every migration, both concurrent runs succeeding', async () => {
    await Promise.all([migrateAll(testDb.url, logger), migrateAll(testDb.url, logger)]);
    expect(await pendingMigrations(database.pool)).toBe(0);
    const { rows } = await database.pool.query<{ name: string }>(
      `SELECT nspname AS name FROM pg_namespace WHERE nspname IN ('drizzle', $1)`,
      [WORKER_SCHEMA],
    );
    expect(rows.map((r) => r.name).sort()).toEqual(['drizzle', WORKER_SCHEMA].sort());
  });

  it('is a no-op the second time', async () => {
    const before = await tableCount(database);
    const applied = await database.pool.query('SELECT id, hash, created_at FROM drizzle.__drizzle_migrations ORDER BY id');
    await migrateAll(testDb.url, logger);
    expect(await tableCount(database)).toBe(before);
    expect((await database.pool.query('SELECT id, hash, created_at FROM drizzle.__drizzle_migrations ORDER BY id')).rows).toEqual(
      applied.rows,
    );
    expect(await pendingMigrations(database.pool)).toBe(0);
  });

  it('then answers /readyz 200', async () => {
    const config = loadConfig({ DATABASE_URL: testDb.url, JWT_SECRET: secret, LOG_LEVEL: 'silent', RATE_LIMIT_ENABLED: 'false' });
    const app = await buildApp({ config, logger, pool: database.pool, services: createServices(database.db, config, secret) });
    try {
      const res = await app.inject({ method: 'GET', url: '/readyz' });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ status: 'ready' });
    } finally {
      await app.close();
    }
  });

  it('answers /readyz 503 database_unavailable when the database is unreachable', async () => {
    const config = loadConfig({ JWT_SECRET: secret, LOG_LEVEL: 'silent', RATE_LIMIT_ENABLED: 'false' });
    const url = new URL(testDb.url);
    url.port = '1'; // nothing listens there
    const unreachable = openDatabase(url.toString(), 1);
    const app = await buildApp({ config, logger, pool: unreachable.pool, services: createServices(unreachable.db, config, secret) });
    try {
      const res = await app.inject({ method: 'GET', url: '/readyz' });
      expect(res.statusCode).toBe(503);
      expect(res.json()).toMatchObject({ statusCode: 503, code: 'database_unavailable', message: 'Database unreachable' });
    } finally {
      await app.close();
      await unreachable.close();
    }
  });
});

describe('on a migrated database', () => {
  let testDb: TestDatabase;
  let database: Database;

  beforeAll(async () => {
    testDb = await createTestDatabase();
    database = openDatabase(testDb.url, 4);
  });
  afterAll(async () => {
    await database?.close();
    await testDb?.drop();
  });

  it('has no pending migrations in the template', async () => {
    expect(await pendingMigrations(database.pool)).toBe(0);
  });

  it('generates the JWT secret once and returns the persisted one afterwards', async () => {
    const first = await resolveJwtSecret(database.db, undefined);
    expect(first.length).toBeGreaterThanOrEqual(32);
    // A second instance (or a restart) gets the same secret, including when both ask at once.
    const again = await Promise.all([resolveJwtSecret(database.db, undefined), resolveJwtSecret(database.db, undefined)]);
    expect(again).toEqual([first, first]);
    const other = openDatabase(testDb.url, 1);
    try {
      expect(await resolveJwtSecret(other.db, undefined)).toBe(first);
    } finally {
      await other.close();
    }
    const [stored] = await database.db.select({ n: count() }).from(instanceSecrets);
    expect(stored!.n).toBe(1);
  });

  it('uses JWT_SECRET when configured, without replacing the stored one', async () => {
    const stored = await resolveJwtSecret(database.db, undefined);
    expect(await resolveJwtSecret(database.db, 'c'.repeat(32))).toBe('c'.repeat(32));
    expect(await resolveJwtSecret(database.db, undefined)).toBe(stored);
  });
});

describe('first run', () => {
  const created: TestDatabase[] = [];
  const opened: Database[] = [];

  async function freshDatabase(): Promise<Database> {
    const testDb = await createTestDatabase();
    created.push(testDb);
    const database = openDatabase(testDb.url, 4);
    opened.push(database);
    return database;
  }

  afterAll(async () => {
    for (const database of opened) await database.close();
    for (const testDb of created) await testDb.drop();
  });

  async function countsOf(database: Database) {
    const n = async (table: typeof users | typeof organizations | typeof memberships | typeof projects | typeof apiKeys) =>
      (await database.db.select({ n: count() }).from(table))[0]!.n;
    return {
      users: await n(users),
      organizations: await n(organizations),
      memberships: await n(memberships),
      projects: await n(projects),
      apiKeys: await n(apiKeys),
    };
  }

  it('creates admin@localhost with a generated password, an organization, "Demo", a live and a test server key and a publishable key, once', async () => {
    const database = await freshDatabase();
    const services = createServices(database.db, loadConfig({ JWT_TTL: '60' }), secret);

    const firstRun = await bootstrapFirstRun(database.db, createKeyring(database.db, NO_SECRET_KEY), { email: undefined, password: undefined });
    expect(firstRun).toBeDefined();
    expect(firstRun!.email).toBe('admin@localhost');
    expect(firstRun!.generatedPassword).toEqual(expect.any(String));
    expect(firstRun!.generatedPassword!.length).toBeGreaterThanOrEqual(16);
    expect(firstRun!.liveKey).toMatch(/^hrd_live_[0-9a-z]{32}$/);
    expect(firstRun!.testKey).toMatch(/^hrd_test_[0-9a-z]{32}$/);
    expect(firstRun!.publishableKey).toMatch(/^hrd_pub_live_[0-9a-z]{32}$/);
    expect(await countsOf(database)).toEqual({ users: 1, organizations: 1, memberships: 1, projects: 1, apiKeys: 3 });

    const login = await services.auth.login('admin@localhost', firstRun!.generatedPassword!);
    expect(login.user.organizations).toEqual([{ id: firstRun!.organizationId, name: expect.any(String), role: 'OWNER' }]);
    const [project] = await database.db.select().from(projects);
    expect(project).toMatchObject({ id: firstRun!.projectId, name: 'Demo', organizationId: firstRun!.organizationId });
    expect(await services.apiKeys.authenticate(firstRun!.liveKey)).toMatchObject({ projectId: firstRun!.projectId });
    expect(await services.apiKeys.authenticate(firstRun!.testKey)).toMatchObject({ projectId: firstRun!.projectId });
    expect(await services.apiKeys.authenticate(firstRun!.publishableKey)).toMatchObject({ projectId: firstRun!.projectId, scope: 'publishable' });
    // Keys are stored hashed: the secret appears nowhere in the table.
    const stored = JSON.stringify(await database.db.select().from(apiKeys));
    expect(stored).not.toContain(firstRun!.liveKey);
    expect(stored).not.toContain(firstRun!.testKey);
    expect(stored).not.toContain(firstRun!.publishableKey);

    expect(await bootstrapFirstRun(database.db, createKeyring(database.db, NO_SECRET_KEY), { email: undefined, password: undefined })).toBeUndefined();
    expect(await bootstrapFirstRun(database.db, createKeyring(database.db, NO_SECRET_KEY), { email: 'other@example.com', password: 'another password' })).toBeUndefined();
    expect(await countsOf(database)).toEqual({ users: 1, organizations: 1, memberships: 1, projects: 1, apiKeys: 3 });
  });

  it('honours ADMIN_EMAIL and ADMIN_PASSWORD and generates no password then', async () => {
    const database = await freshDatabase();
    const services = createServices(database.db, loadConfig({ JWT_TTL: '60' }), secret);
    const config = loadConfig({ ADMIN_EMAIL: 'ops@example.com', ADMIN_PASSWORD: 'operator password 1' });

    const firstRun = await bootstrapFirstRun(database.db, createKeyring(database.db, NO_SECRET_KEY), { email: config.adminEmail, password: config.adminPassword });
    expect(firstRun).toMatchObject({ email: 'ops@example.com', generatedPassword: undefined });
    const login = await services.auth.login('ops@example.com', 'operator password 1');
    expect(login.user.email).toBe('ops@example.com');
    await expect(services.auth.login('admin@localhost', 'operator password 1')).rejects.toMatchObject({ statusCode: 401 });
  });

  it('creates exactly one owner when several instances start at once', async () => {
    const database = await freshDatabase();
    const results = await Promise.all(
      [1, 2, 3].map(() => bootstrapFirstRun(database.db, createKeyring(database.db, NO_SECRET_KEY), { email: undefined, password: undefined })),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await countsOf(database)).toEqual({ users: 1, organizations: 1, memberships: 1, projects: 1, apiKeys: 3 });
  });
});

describe.skipIf(process.env.HERALD_TEST_DATABASE_URL)('the embedded PostgreSQL', () => {
  it('runs with a quarter of the memory as shared_buffers, between 128 MB and 1 GB, not the 128 MB default', async () => {
    const testDb = await createTestDatabase({ empty: true });
    const pool = openDatabase(testDb.url, 1).pool;
    try {
      const { rows } = await pool.query<{ mb: number }>(`SELECT setting::bigint * 8 / 1024 AS mb FROM pg_settings WHERE name = 'shared_buffers'`);
      const expected = Math.max(128, Math.min(1024, Math.floor(Math.min(totalmem(), process.constrainedMemory?.() || Infinity) / 4 / 2 ** 20)));
      expect(Number(rows[0]!.mb)).toBe(expected);
    } finally {
      await pool.end();
      await testDb.drop();
    }
  });
});
