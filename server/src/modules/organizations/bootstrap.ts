// First start on an empty database: the owner, an organization, a "Demo" project, a live and a test server key and a
// live publishable key (what a web page holds for the browser SDK).
import { sql } from 'drizzle-orm';
import type { Db } from '../../db/database.js';
import { newId } from '../../shared/ids.js';
import { randomToken } from '../../shared/secrets.js';
import { ApiKeyService } from '../api-keys/index.js';
import { hashPassword, userDirectory } from '../auth/index.js';
import type { Keyring } from '../channels/index.js';
import { ProjectService } from '../projects/index.js';
import * as orgs from './organization.repository.js';

const BOOTSTRAP_LOCK = 7_305_002;

export interface FirstRun {
  email: string;
  /** Set only when the password was generated: the one time it is shown. */
  generatedPassword: string | undefined;
  organizationId: string;
  projectId: string;
  liveKey: string;
  testKey: string;
  publishableKey: string;
}

/** Creates the first owner when there are no users yet; returns undefined on every later start. */
export async function bootstrapFirstRun(
  db: Db,
  keyring: Keyring,
  admin: { email: string | undefined; password: string | undefined },
): Promise<FirstRun | undefined> {
  return db.transaction(async (tx) => {
    // Serialises concurrent first starts of several instances on one database.
    await tx.execute(sql`SELECT pg_advisory_xact_lock(${BOOTSTRAP_LOCK})`);
    const existing = await tx.execute<{ any: boolean }>(sql`SELECT EXISTS (SELECT 1 FROM users) AS any`);
    if (existing.rows[0]?.any) return undefined;

    const email = admin.email ?? 'admin@localhost';
    const generatedPassword = admin.password ? undefined : randomToken(20);
    const owner = await userDirectory.create(tx, {
      id: newId('usr'),
      email,
      name: 'Admin',
      passwordHash: await hashPassword(admin.password ?? generatedPassword!),
    });
    const org = await orgs.insertOrganization(tx, { id: newId('org'), name: 'Default organization' }, owner.id);
    const project = await new ProjectService(tx, keyring).create(org.id, { name: 'Demo' });
    const scope = { organizationId: org.id, projectId: project.id, sandbox: false };
    const keys = new ApiKeyService(tx);
    const live = await keys.create(scope, { name: 'Default live key', mode: 'live' });
    const test = await keys.create(scope, { name: 'Default test key', mode: 'test' });
    const publishable = await keys.create(scope, { name: 'Default publishable key', mode: 'live', scope: 'publishable' });
    return {
      email,
      generatedPassword,
      organizationId: org.id,
      projectId: project.id,
      liveKey: live.key,
      testKey: test.key,
      publishableKey: publishable.key,
    };
  });
}
