// Projects of an organization: the unit every subscriber, campaign and API key belongs to.
import type { Db } from '../../db/database.js';
import type { ForgetProject } from '../../db/project-changes.js';
import type { ProjectSettings } from '../../db/schema.js';
import { notFound, validationFailed } from '../../shared/errors.js';
import { newId } from '../../shared/ids.js';
import { ChannelConfigService, type Keyring } from '../channels/index.js';
import type { OrganizationTenant, ProjectScope } from '../tenancy.js';
import { listVerified } from '../email-domains/index.js';
import * as repo from './project.repository.js';
import { newIdentitySecret } from './identity-secret.js';

export interface Project {
  id: string;
  organizationId: string;
  name: string;
  emailConfig: { domain: string | null };
  settings: ProjectSettings;
  /** From its push channel configuration; null without one. */
  vapidPublicKey: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface ProjectInput {
  name?: string | undefined;
  emailConfig?: { domain: string | null } | undefined;
  settings?: ProjectSettings | undefined;
}

function toProject(row: repo.ProjectRow): Project {
  // Operator-granted rate-limit raises stay internal: a project owner reads and writes the rest.
  const { rateLimits: _operatorOnly, ...settings } = row.settings;
  return {
    id: row.id,
    organizationId: row.organizationId,
    name: row.name,
    emailConfig: { domain: row.emailDomain },
    settings,
    vapidPublicKey: row.vapidPublicKey,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/**
 * The project's sending domain (spec 2.6: "the verified sending domain"): the one chosen with PATCH while it stays
 * verified, else the first of its verified domains by name, else null. Sends still pick the domain covering their
 * From address; this is the one the project names by default.
 */
async function sendingDomain(db: Db, row: repo.ProjectRow): Promise<repo.ProjectRow> {
  const verified = (await listVerified(db, row.id)).map((d) => d.domain).sort();
  const chosen = row.emailDomain !== null && verified.includes(row.emailDomain) ? row.emailDomain : (verified[0] ?? null);
  return { ...row, emailDomain: chosen };
}

export class ProjectService {
  /**
   * Every process hears of a settings change or a deletion through PostgreSQL (`PROJECT_CHANGES_CHANNEL`);
   * `forget` evicts this process's caches before the caller is answered, so its next request cannot beat the
   * notification. The CLI has no cache and passes none.
   */
  private readonly channels: ChannelConfigService;

  constructor(
    private readonly db: Db,
    keyring: Keyring,
    private readonly forget: ForgetProject = () => undefined,
  ) {
    this.channels = new ChannelConfigService(db, keyring, { forget });
  }

  async list(tenant: OrganizationTenant, page: number, pageSize: number) {
    const { rows, total } = await repo.listProjects(this.db, tenant.organizationId, pageSize, (page - 1) * pageSize);
    return { data: (await Promise.all(rows.map((row) => sendingDomain(this.db, row)))).map(toProject), page, pageSize, total };
  }

  async create(organizationId: string, input: ProjectInput & { name: string }): Promise<Project> {
    return this.db.transaction(async (tx) => {
      const row = await repo.insertProject(tx, {
        id: newId('prj'),
        organizationId,
        name: input.name,
        settings: input.settings ?? {},
        identitySecret: newIdentitySecret(),
      });
      const emailDomain = input.emailConfig?.domain?.toLowerCase() ?? null;
      if (emailDomain !== null) await this.channels.setEmailDomain(tx, row.id, emailDomain);
      // Every project can take push subscriptions from the start: it gets its own VAPID key pair.
      // A new project has no verified domain yet: the one named is its choice once verified.
      return toProject({ ...row, emailDomain: null, vapidPublicKey: await this.channels.createPush(tx, row.id) });
    });
  }

  /** The raw row, for the tenancy guard and other services; undefined when the org does not own it. */
  findRow(organizationId: string, projectId: string) {
    return repo.findProject(this.db, organizationId, projectId);
  }

  /** Whether the project exists in any organization (see `projectExists`). */
  exists(projectId: string): Promise<boolean> {
    return repo.projectExists(this.db, projectId);
  }

  async get(scope: ProjectScope): Promise<Project> {
    const row = await repo.findProject(this.db, scope.organizationId, scope.projectId);
    if (!row) throw notFound('Project');
    return toProject(await sendingDomain(this.db, row));
  }

  async pushConfig(scope: ProjectScope): Promise<{ projectId: string; vapidPublicKey: string }> {
    const project = await this.get(scope);
    if (!project.vapidPublicKey) throw notFound('Push configuration');
    return { projectId: project.id, vapidPublicKey: project.vapidPublicKey };
  }

  /** Readable by OWNERs and ADMINs, like Intercom's and OneSignal's: the customer's server needs it configured. */
  async identitySecret(scope: ProjectScope): Promise<{ identitySecret: string }> {
    const secret = await repo.identitySecret(this.db, scope.organizationId, scope.projectId, newIdentitySecret());
    if (secret === undefined) throw notFound('Project');
    return { identitySecret: secret };
  }

  /** A new secret; hashes made with the old one fail from now on. */
  async rotateIdentitySecret(scope: ProjectScope): Promise<{ identitySecret: string }> {
    const secret = newIdentitySecret();
    if (!(await repo.rotateIdentitySecret(this.db, scope.organizationId, scope.projectId, secret))) throw notFound('Project');
    return { identitySecret: secret };
  }

  /** `emailConfig.domain` chooses among the project's verified domains (422 for any other); null clears the choice. */
  async update(scope: ProjectScope, input: ProjectInput): Promise<Project> {
    const domain = input.emailConfig?.domain?.toLowerCase();
    if (domain !== undefined && !(await listVerified(this.db, scope.projectId)).some((d) => d.domain === domain)) {
      throw validationFailed([
        { field: 'emailConfig.domain', error: `${domain} is not a verified sending domain of this project: add it under email domains and verify it first` },
      ]);
    }
    const row = await this.db.transaction(async (tx) => {
      const updated = await repo.updateProject(tx, scope.organizationId, scope.projectId, { name: input.name, settings: input.settings });
      if (!updated || input.emailConfig === undefined) return updated;
      await this.channels.setEmailDomain(tx, updated.id, domain ?? null);
      return { ...updated, emailDomain: domain ?? null };
    });
    if (!row) throw notFound('Project');
    if (input.settings !== undefined || input.emailConfig !== undefined) this.forget(row.id);
    return toProject(await sendingDomain(this.db, row));
  }

  async remove(scope: ProjectScope): Promise<void> {
    if (!(await repo.deleteProject(this.db, scope.organizationId, scope.projectId))) throw notFound('Project');
    this.forget(scope.projectId);
  }

  /** Operator-only: raise a project's per-IP rate limits (granted on request, set from the CLI). */
  async setRateLimits(organizationId: string, projectId: string, rateLimits: NonNullable<ProjectSettings['rateLimits']>) {
    const row = await repo.updateProject(this.db, organizationId, projectId, { settings: { rateLimits } });
    if (!row) throw notFound('Project');
    this.forget(projectId);
  }
}
