// `herald admin …` through the built CLI against a test database: each command's JSON output and its effect.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { openDatabase, type Database } from '../src/db/database.js';
import { memberships, projects } from '../src/db/schema.js';
import { createServices, type Services } from '../src/services.js';
import { createTestDatabase, TEST_JWT_SECRET, type TestDatabase } from './harness.js';

const MAIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../dist/main.js');

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

let testDb: TestDatabase;
let database: Database;
let services: Services;

function admin(...args: string[]): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [MAIN, 'admin', ...args],
      { env: { PATH: process.env.PATH, DATABASE_URL: testDb.url, LOG_LEVEL: 'info' }, timeout: 30_000 },
      (error, stdout, stderr) => resolve({ code: error ? ((error as { code?: number }).code ?? null) : 0, stdout, stderr }),
    );
  });
}

async function adminJson<T>(...args: string[]): Promise<T> {
  const result = await admin(...args);
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout) as T;
}

beforeAll(async () => {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run \`npm run build\` first (npm test does)`);
  testDb = await createTestDatabase();
  database = openDatabase(testDb.url, 2);
  services = createServices(database.db, loadConfig({ LOG_LEVEL: 'silent' }), TEST_JWT_SECRET);
});

afterAll(async () => {
  await database?.close();
  await testDb?.drop();
});

describe('herald admin', () => {
  let ownerEmail: string;
  let orgId: string;
  let projectId: string;

  it('create-user generates and prints a password that logs in', async () => {
    const user = await adminJson<{ id: string; email: string; name: string; password: string }>('create-user', '--email', 'ops@example.com');
    expect(user).toEqual({ id: expect.stringMatching(/^usr_/), email: 'ops@example.com', name: 'ops', password: expect.any(String) });
    expect(user.password.length).toBeGreaterThanOrEqual(16);
    const login = await services.auth.login('ops@example.com', user.password);
    expect(login.user.id).toBe(user.id);
    ownerEmail = user.email;
  });

  it('create-user with --password does not echo it', async () => {
    const result = await admin('create-user', '--email', 'dev@example.com', '--password', 'a chosen password', '--name', 'Dev');
    expect(result.code).toBe(0);
    expect(result.stdout).not.toContain('a chosen password');
    expect(JSON.parse(result.stdout)).toEqual({ id: expect.stringMatching(/^usr_/), email: 'dev@example.com', name: 'Dev' });
    expect((await services.auth.login('dev@example.com', 'a chosen password')).user.name).toBe('Dev');
  });

  it('set-password replaces a forgotten password: the old one no longer logs in', async () => {
    const result = await adminJson<{ id: string; email: string; password: string }>('set-password', '--email', 'dev@example.com');
    expect(result).toEqual({ id: expect.stringMatching(/^usr_/), email: 'dev@example.com', password: expect.any(String) });
    await expect(services.auth.login('dev@example.com', 'a chosen password')).rejects.toThrow('Invalid email or password');
    expect((await services.auth.login('dev@example.com', result.password)).user.id).toBe(result.id);
    // A chosen one is not echoed (and is the password the tests below log in with).
    const chosen = await admin('set-password', '--email', 'dev@example.com', '--password', 'a chosen password');
    expect(JSON.parse(chosen.stdout)).toEqual({ id: result.id, email: 'dev@example.com' });
    expect((await services.auth.login('dev@example.com', 'a chosen password')).user.id).toBe(result.id);
  });

  it('create-org makes the user its OWNER', async () => {
    const org = await adminJson<{ id: string; name: string; owner: string }>('create-org', '--name', 'Acme', '--owner', ownerEmail);
    expect(org).toEqual({ id: expect.stringMatching(/^org_/), name: 'Acme', owner: ownerEmail });
    orgId = org.id;
    const [user] = await database.db.select().from(memberships).where(eq(memberships.organizationId, orgId));
    expect(user).toMatchObject({ role: 'OWNER' });
  });

  it('create-project creates a project in the organization', async () => {
    const project = await adminJson<{ id: string; name: string; organizationId: string }>(
      'create-project',
      '--org',
      orgId,
      '--name',
      'Website',
      '--domain',
      'Mail.Example.COM',
    );
    // The domain named is the project's choice once verified; until then it has no sending domain (spec 2.6).
    expect(project).toMatchObject({ id: expect.stringMatching(/^prj_/), name: 'Website', organizationId: orgId, emailConfig: { domain: null } });
    projectId = project.id;
  });

  it.each(['live', 'test'] as const)('create-api-key --mode %s prints a working key', async (mode) => {
    const key = await adminJson<{ key: string; mode: string; projectId: string; lastFour: string }>(
      'create-api-key',
      '--project',
      projectId,
      '--mode',
      mode,
    );
    expect(key.key).toMatch(new RegExp(`^hrd_${mode}_[0-9a-z]{32}$`));
    expect(key).toMatchObject({ mode, projectId, lastFour: key.key.slice(-4) });
    expect(await services.apiKeys.authenticate(key.key)).toMatchObject({ projectId, organizationId: orgId, mode, scope: 'server' });
  });

  it('create-api-key --scope publishable prints a working hrd_pub_ key', async () => {
    const key = await adminJson<{ key: string; scope: string }>('create-api-key', '--project', projectId, '--mode', 'live', '--scope', 'publishable');
    expect(key.key).toMatch(/^hrd_pub_live_[0-9a-z]{32}$/);
    expect(key.scope).toBe('publishable');
    expect(await services.apiKeys.authenticate(key.key)).toMatchObject({ projectId, mode: 'live', scope: 'publishable' });
  });

  it('add-member adds a user with a role', async () => {
    const member = await adminJson<{ organizationId: string; userId: string; role: string }>(
      'add-member',
      '--org',
      orgId,
      '--email',
      'dev@example.com',
      '--role',
      'VIEWER',
    );
    expect(member).toMatchObject({ organizationId: orgId, role: 'VIEWER' });
    const login = await services.auth.login('dev@example.com', 'a chosen password');
    expect(login.user.organizations).toEqual([{ id: orgId, name: 'Acme', role: 'VIEWER' }]);
  });

  it('set-rate-limit stores the project limits, keeping those it does not name', async () => {
    expect(await adminJson('set-rate-limit', '--project', projectId, '--default', '5000', '--ingest', '900')).toEqual({
      projectId,
      rateLimits: { default: 5000, ingest: 900 },
    });
    expect(await adminJson('set-rate-limit', '--project', projectId, '--transactional', '300')).toEqual({
      projectId,
      rateLimits: { default: 5000, ingest: 900, transactional: 300 },
    });
    const [row] = await database.db.select().from(projects).where(eq(projects.id, projectId));
    expect(row!.settings.rateLimits).toEqual({ default: 5000, ingest: 900, transactional: 300 });
  });

  it('set-plan stores the plan and the monthly email cap; unlimited lifts the cap', async () => {
    expect(await adminJson('set-plan', '--org', orgId, '--plan', 'growth', '--monthly-email-cap', '100000')).toEqual({
      organizationId: orgId,
      plan: 'growth',
      monthlyEmailCap: 100000,
    });
    expect(await adminJson('set-plan', '--org', orgId, '--monthly-email-cap', 'unlimited')).toEqual({ organizationId: orgId, plan: 'growth', monthlyEmailCap: null });
  });

  it('--help prints the usage and exits 0', async () => {
    const result = await admin('--help');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Usage: herald admin/);
  });

  it.each([
    [[], /Usage: herald admin/],
    [['bogus'], /unknown admin command: bogus/],
    [['create-user'], /--email is required/],
    [['create-user', '--email', 'x@example.com', '--password', 'short'], /at least 8 characters/],
    [['create-user', '--email', 'ops@example.com'], /exists/],
    [['create-user', '--email', 'y@example.com', '--unknown', 'z'], /unknown/i],
    [['create-org', '--name', 'X', '--owner', 'ghost@example.com'], /no user with email ghost@example.com/],
    [['create-api-key', '--project', 'prj_missing', '--mode', 'live'], /no project prj_missing/],
    [['create-api-key', '--project', 'prj_missing', '--mode', 'prod'], /--mode must be live or test/],
    [['create-api-key', '--project', 'prj_missing', '--mode', 'live', '--scope', 'browser'], /--scope must be server or publishable/],
    [['add-member', '--org', 'org_missing', '--email', 'dev@example.com', '--role', 'ADMIN'], /no organization org_missing/],
    [['add-member', '--org', 'org_x', '--email', 'dev@example.com', '--role', 'KING'], /--role must be one of/],
    [['create-project', '--org', 'org_missing', '--name', 'P'], /no organization org_missing/],
    [['set-rate-limit', '--project', 'prj_missing', '--default', '10'], /no project prj_missing/],
    [['set-plan', '--org', 'org_missing', '--plan', 'x'], /no organization org_missing/],
  ])('bad usage %j exits 2 with the usage text', async (args, message) => {
    const result = await admin(...args);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stderr + result.stdout).toMatch(/Usage: herald admin/);
    expect(result.stderr).not.toMatch(/\n\s+at /); // no stack trace
  });

  it('rejects a non-numeric rate limit with exit 2', async () => {
    const result = await admin('set-rate-limit', '--project', projectId, '--default', 'lots');
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--default must be a positive integer/);
  });

  it('adding an existing member exits 2', async () => {
    const result = await admin('add-member', '--org', orgId, '--email', 'dev@example.com', '--role', 'ADMIN');
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/already a member/);
  });
});

describe('herald', () => {
  it('prints the usage for an unknown command and exits 2', async () => {
    const result = await new Promise<CliResult>((resolve) =>
      execFile(process.execPath, [MAIN, 'bogus'], { env: { PATH: process.env.PATH }, timeout: 30_000 }, (error, stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? null) : 0, stdout, stderr }),
      ),
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/Unknown command: bogus/);
    expect(result.stderr).toMatch(/Usage: herald <command>/);
  });
});
