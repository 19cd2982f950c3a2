// Migration 0031 on a database populated before it: what only subscribers.email_status said moves to the address.
import { cp, mkdtemp, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { drizzle } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/harness.js';
import { emailStatusOf } from '../modules/segments/index.js';
import { migrateDatabase, migrationsFolder, openDatabase } from './database.js';
import { subscribers } from './schema.js';

const MIGRATION = '0031_retire_email_status';

let testDb: TestDatabase;
let client: pg.Client;
const query = async (text: string, values: unknown[] = []) => (await client.query(text, values)).rows as Record<string, unknown>[];

/** The database as it was with every migration before 0031 applied. */
async function migrateBefore(url: string): Promise<void> {
  const folder = await mkdtemp(path.join(tmpdir(), 'herald-migrations-'));
  try {
    await cp(migrationsFolder, folder, { recursive: true });
    const journalPath = path.join(folder, 'meta/_journal.json');
    const journal = JSON.parse(await readFile(journalPath, 'utf8')) as { entries: { tag: string }[] };
    const at = journal.entries.findIndex((entry) => entry.tag === MIGRATION);
    expect(at).toBeGreaterThan(0);
    for (const entry of journal.entries.slice(at)) await unlink(path.join(folder, `${entry.tag}.sql`));
    await writeFile(journalPath, JSON.stringify({ ...journal, entries: journal.entries.slice(0, at) }));
    const migrator = new pg.Client({ connectionString: url });
    await migrator.connect();
    try {
      await migrate(drizzle(migrator), { migrationsFolder: folder });
    } finally {
      await migrator.end();
    }
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

beforeAll(async () => {
  testDb = await createTestDatabase({ empty: true });
  await migrateBefore(testDb.url);
  client = new pg.Client({ connectionString: testDb.url });
  await client.connect();
});
afterAll(async () => {
  await client?.end();
  await testDb?.drop();
});

describe(`migration ${MIGRATION} on a populated database`, () => {
  it('writes each address’s strongest mirrored word over a reachable or weaker state, keeps a stronger one, then drops the column', async () => {
    await query(`INSERT INTO organizations (id, name) VALUES ('org_m', 'Org')`);
    await query(`INSERT INTO projects (id, organization_id, name) VALUES ('prj_one', 'org_m', 'One'), ('prj_two', 'org_m', 'Two')`);
    const person = (id: string, project: string, email: string | null, status: string, sandbox = false) =>
      query(`INSERT INTO subscribers (id, project_id, token, email, email_status, sandbox) VALUES ($1, $2, $3, $4, $5, $6)`, [id, project, `tok_${id}`, email, status, sandbox]);
    const address = (project: string, email: string, status: string, reason: string | null, consent = 'subscribed') =>
      query(`INSERT INTO channel_addresses (project_id, sandbox, channel, address, status, status_reason, source, consent) VALUES ($1, false, 'email', $2, $3, $4, 'api', $5)`, [
        project,
        email,
        status,
        reason,
        consent,
      ]);
    await person('sub_only', 'prj_one', 'Only@Example.com', 'unsubscribed');
    await person('sub_b1', 'prj_one', 'both@example.com', 'unsubscribed');
    await person('sub_b2', 'prj_one', 'BOTH@example.com', 'bounced');
    await person('sub_open', 'prj_one', 'open@example.com', 'complained');
    await address('prj_one', 'open@example.com', 'reachable', null, 'transactional');
    await person('sub_weaker', 'prj_one', 'weaker@example.com', 'bounced');
    await address('prj_one', 'weaker@example.com', 'opted_out', 'unsubscribed', 'unsubscribed');
    await person('sub_stronger', 'prj_one', 'stronger@example.com', 'unsubscribed');
    await address('prj_one', 'stronger@example.com', 'unreachable', 'bounced');
    await person('sub_manual', 'prj_one', 'manual@example.com', 'unsubscribed');
    await address('prj_one', 'manual@example.com', 'opted_out', 'manual');
    await person('sub_active', 'prj_one', 'active@example.com', 'active');
    await person('sub_none', 'prj_one', null, 'none');
    await person('sub_sandbox', 'prj_one', 'sandbox@example.com', 'bounced', true);
    await person('sub_other', 'prj_two', 'only@example.com', 'active');

    await migrateDatabase(testDb.url);

    const rows = await query(
      `SELECT project_id, sandbox, address, status, status_reason, source, consent, consent_source FROM channel_addresses ORDER BY project_id, sandbox, address`,
    );
    expect(rows).toEqual([
      { project_id: 'prj_one', sandbox: false, address: 'both@example.com', status: 'unreachable', status_reason: 'bounced', source: 'provider', consent: 'subscribed', consent_source: null },
      { project_id: 'prj_one', sandbox: false, address: 'manual@example.com', status: 'opted_out', status_reason: 'unsubscribed', source: 'recipient', consent: 'unsubscribed', consent_source: 'recipient' },
      { project_id: 'prj_one', sandbox: false, address: 'only@example.com', status: 'opted_out', status_reason: 'unsubscribed', source: 'recipient', consent: 'unsubscribed', consent_source: 'recipient' },
      { project_id: 'prj_one', sandbox: false, address: 'open@example.com', status: 'opted_out', status_reason: 'complained', source: 'provider', consent: 'unsubscribed', consent_source: 'provider' },
      { project_id: 'prj_one', sandbox: false, address: 'stronger@example.com', status: 'unreachable', status_reason: 'bounced', source: 'api', consent: 'subscribed', consent_source: null },
      { project_id: 'prj_one', sandbox: false, address: 'weaker@example.com', status: 'unreachable', status_reason: 'bounced', source: 'provider', consent: 'unsubscribed', consent_source: null },
      { project_id: 'prj_one', sandbox: true, address: 'sandbox@example.com', status: 'unreachable', status_reason: 'bounced', source: 'provider', consent: 'subscribed', consent_source: null },
    ]);
    expect(await query(`SELECT 1 FROM information_schema.columns WHERE table_name = 'subscribers' AND column_name = 'email_status'`)).toEqual([]);
    expect(await query(`SELECT 1 FROM pg_type WHERE typname = 'email_status'`)).toEqual([]);

    // Every subscriber reads its address's strongest word (one row's word holds for the address, as audiences read it).
    const database = openDatabase(testDb.url, 1);
    try {
      const read = await database.db.select({ id: subscribers.id, status: emailStatusOf() }).from(subscribers);
      expect(Object.fromEntries(read.map((r) => [r.id, r.status]))).toEqual({
        sub_only: 'unsubscribed',
        sub_b1: 'bounced',
        sub_b2: 'bounced',
        sub_open: 'complained',
        sub_weaker: 'bounced',
        sub_stronger: 'bounced',
        sub_manual: 'unsubscribed',
        sub_active: 'active',
        sub_none: 'none',
        sub_sandbox: 'bounced',
        sub_other: 'active',
      });
    } finally {
      await database.close();
    }
  });
});
