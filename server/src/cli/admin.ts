// `herald admin …`: operator commands that work straight on the database, for set-up and scripting.
import { parseArgs } from 'node:util';
import { eq } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { organizations, projects } from '../db/schema.js';
import { ApiKeyService } from '../modules/api-keys/index.js';
import { hashPassword, userDirectory } from '../modules/auth/index.js';
import { organizationDirectory } from '../modules/organizations/index.js';
import { ChannelConfigService, type Keyring } from '../modules/channels/index.js';
import { resealPrivateKeys } from '../modules/email-domains/index.js';
import { ProjectService } from '../modules/projects/index.js';
import { ROLES, type Role } from '../modules/tenancy.js';
import { newId } from '../shared/ids.js';
import { randomToken } from '../shared/secrets.js';

const ADMIN_USAGE = `Usage: herald admin <command> [options]   (prints JSON)

  create-user     --email E [--password P] [--name N]       a password is generated when omitted
  set-password    --email E [--password P]                  a password is generated when omitted (a forgotten
                                                            password when no project can email a reset link)
  create-org      --name N --owner EMAIL
  add-member      --org ORG_ID --email E --role OWNER|ADMIN|MEMBER|VIEWER
  create-project  --org ORG_ID --name N [--domain example.com]
  create-api-key  --project PROJECT_ID --mode live|test [--scope server|publishable] [--name N]
  set-rate-limit  --project PROJECT_ID [--default N] [--ingest N] [--transactional N]
  set-plan        --org ORG_ID [--plan NAME] [--monthly-email-cap N|unlimited]
                                                            emails per calendar month (UTC) across its projects
  rotate-secret-key                                         reseals channel credentials and sending domains' DKIM keys
                                                            under HERALD_SECRET_KEY; HERALD_SECRET_KEY_PREVIOUS holds
                                                            the key they were sealed with
`;

class UsageError extends Error {}

function required(values: Record<string, string | undefined>, name: string): string {
  const value = values[name];
  if (!value) throw new UsageError(`--${name} is required`);
  return value;
}

function positive(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`--${name} must be a positive integer`);
  return n;
}

function nonNegative(value: string, name: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new UsageError(`--${name} must be a whole number of emails, or unlimited`);
  return n;
}

async function userByEmail(db: Db, email: string) {
  const user = await userDirectory.findByEmail(db, email);
  if (!user) throw new UsageError(`no user with email ${email}`);
  return user;
}

async function organizationById(db: Db, organizationId: string) {
  const [row] = await db.select().from(organizations).where(eq(organizations.id, organizationId));
  if (!row) throw new UsageError(`no organization ${organizationId}`);
  return row;
}

async function projectById(db: Db, projectId: string) {
  const [row] = await db.select().from(projects).where(eq(projects.id, projectId));
  if (!row) throw new UsageError(`no project ${projectId}`);
  return row;
}

const options = {
  email: { type: 'string' },
  password: { type: 'string' },
  name: { type: 'string' },
  owner: { type: 'string' },
  org: { type: 'string' },
  role: { type: 'string' },
  domain: { type: 'string' },
  project: { type: 'string' },
  mode: { type: 'string' },
  scope: { type: 'string' },
  default: { type: 'string' },
  ingest: { type: 'string' },
  transactional: { type: 'string' },
  plan: { type: 'string' },
  'monthly-email-cap': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

async function execute(db: Db, keyring: Keyring, command: string, v: Record<string, string | undefined>): Promise<unknown> {
  switch (command) {
    case 'create-user': {
      const email = required(v, 'email');
      if (await userDirectory.findByEmail(db, email)) throw new UsageError(`a user with email ${email} exists`);
      const password = v.password ?? randomToken(20);
      if (password.length < 8) throw new UsageError('--password must be at least 8 characters');
      const user = await userDirectory.create(db, {
        id: newId('usr'),
        email,
        name: v.name ?? email.split('@')[0]!,
        passwordHash: await hashPassword(password),
      });
      return { id: user.id, email: user.email, name: user.name, ...(v.password ? {} : { password }) };
    }
    case 'set-password': {
      const user = await userByEmail(db, required(v, 'email'));
      const password = v.password ?? randomToken(20);
      if (password.length < 8) throw new UsageError('--password must be at least 8 characters');
      await userDirectory.setPassword(db, user.id, await hashPassword(password));
      return { id: user.id, email: user.email, ...(v.password ? {} : { password }) };
    }
    case 'create-org': {
      const owner = await userByEmail(db, required(v, 'owner'));
      const org = await organizationDirectory.create(db, { id: newId('org'), name: required(v, 'name') }, owner.id);
      return { id: org.id, name: org.name, owner: owner.email };
    }
    case 'add-member': {
      const role = required(v, 'role') as Role;
      if (!ROLES.includes(role)) throw new UsageError(`--role must be one of ${ROLES.join(', ')}`);
      const user = await userByEmail(db, required(v, 'email'));
      const orgId = (await organizationById(db, required(v, 'org'))).id;
      if (!(await organizationDirectory.addMember(db, orgId, user.id, role))) throw new UsageError('already a member');
      return { organizationId: orgId, userId: user.id, role };
    }
    case 'create-project':
      return new ProjectService(db, keyring).create((await organizationById(db, required(v, 'org'))).id, {
        name: required(v, 'name'),
        ...(v.domain && { emailConfig: { domain: v.domain.toLowerCase() } }),
      });
    case 'create-api-key': {
      const mode = required(v, 'mode');
      if (mode !== 'live' && mode !== 'test') throw new UsageError('--mode must be live or test');
      const scope = v.scope ?? 'server';
      if (scope !== 'server' && scope !== 'publishable') throw new UsageError('--scope must be server or publishable');
      const project = await projectById(db, required(v, 'project'));
      return new ApiKeyService(db).create(
        { organizationId: project.organizationId, projectId: project.id, sandbox: mode === 'test' },
        { name: v.name ?? `${mode} key`, mode, scope },
      );
    }
    case 'set-rate-limit': {
      const project = await projectById(db, required(v, 'project'));
      const rateLimits = {
        ...project.settings.rateLimits,
        ...Object.fromEntries(
          (['default', 'ingest', 'transactional'] as const)
            .map((group) => [group, positive(v[group], group)] as const)
            .filter(([, n]) => n !== undefined),
        ),
      };
      await new ProjectService(db, keyring).setRateLimits(project.organizationId, project.id, rateLimits);
      return { projectId: project.id, rateLimits };
    }
    case 'set-plan': {
      const org = await organizationById(db, required(v, 'org'));
      const cap = v['monthly-email-cap'];
      const change = {
        ...(v.plan !== undefined && { plan: v.plan }),
        ...(cap !== undefined && { monthlyEmailCap: cap === 'unlimited' ? null : nonNegative(cap, 'monthly-email-cap') }),
      };
      if (Object.keys(change).length === 0) throw new UsageError('give --plan, --monthly-email-cap or both');
      const [row] = await db.update(organizations).set(change).where(eq(organizations.id, org.id)).returning();
      return { organizationId: row!.id, plan: row!.plan, monthlyEmailCap: row!.monthlyEmailCap };
    }
    case 'rotate-secret-key':
      return { resealed: (await new ChannelConfigService(db, keyring).rotate()) + (await resealPrivateKeys(db, keyring)) };
    default:
      throw new UsageError(`unknown admin command: ${command}`);
  }
}

/** Runs one admin command and returns the process exit code. */
export async function runAdminCommand(db: Db, keyring: Keyring, argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    const { values } = parseArgs({ args: rest, options, strict: true });
    if (!command || values.help || command === '--help') {
      // Asked for: stdout and exit 0; missing command: a usage error on stderr.
      (command ? process.stdout : process.stderr).write(ADMIN_USAGE);
      return command ? 0 : 2;
    }
    const result = await execute(db, keyring, command, values as Record<string, string | undefined>);
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return 0;
  } catch (error) {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`herald admin: ${(error as Error).message}\n\n${ADMIN_USAGE}`);
      return 2;
    }
    throw error;
  }
}
