// The tenancy guard: every route declares who may call it, and this plugin alone authenticates and scopes requests.
import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';
import type { ProjectSettings } from '../db/schema.js';
import { roleAtLeast, type OrganizationTenant, type ProjectScope, type Reach, type Role, type Tenant } from '../modules/tenancy.js';
import { AppError, forbidden, INVALID_TOKEN, notFound, unauthorized } from '../shared/errors.js';

const INVALID_API_KEY = 'Invalid API key';
const CROSS_PROJECT = 'Resource belongs to a different project';
const PUBLISHABLE_FORBIDDEN =
  'A publishable key may only call the routes a browser SDK needs; call this route from your server with a server key';

/** Where a route names the project it acts on, e.g. `params.projectId` or `body.projectId`. */
export type ProjectSource = `${'params' | 'body' | 'query'}.${string}`;

export type Access =
  /** No credentials: login, health, tracking links. */
  | { auth: 'public' }
  /** Any signed-in user, no organization context; `optional`: anonymous callers too (a bad token is still 401). */
  | { auth: 'user'; optional?: boolean }
  /** A member of the organization named by x-org-id (JWT only). */
  | { auth: 'organization'; minRole?: Role }
  /**
   * A project's API key, or a member of the organization that owns the project (JWT + x-org-id). `jwt-query`: a
   * JWT only (an API key is not read), from the `token` and `orgId` query parameters (event streams, whose browser
   * clients cannot set headers) or, without a `token` parameter, from the usual Authorization and x-org-id headers.
   */
  | {
      auth: 'project';
      credentials?: 'any' | 'apiKey' | 'jwt' | 'jwt-query';
      project?: ProjectSource;
      minRole?: Role;
      /**
       * A publishable key (the browser SDK's) may call this route too, cross-origin from the project's allowed
       * origins (cors.ts). Every other route refuses it with 403 `publishable_key_forbidden`.
       */
      publishable?: true;
    };

/** Whether a publishable key may call the route: only what its access declares. */
export const allowsPublishable = (access: Access | undefined) => access?.auth === 'project' && access.publishable === true;

/** A live API key and the project it opens. */
export interface KeyOwner {
  keyId: string;
  mode: 'live' | 'test';
  scope: 'server' | 'publishable';
  projectId: string;
  organizationId: string;
  settings: ProjectSettings;
}

interface Credentials {
  /** undefined: none presented; null: presented but unknown, revoked or expired. */
  apiKey: KeyOwner | null | undefined;
  userId: string | null | undefined;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: Access;
  }
  interface FastifyRequest {
    credentials: Credentials;
    userId: string | undefined;
    tenant: Tenant | undefined;
    project: ProjectScope | undefined;
  }
}

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export function tenantOf(request: FastifyRequest): Tenant {
  if (!request.tenant) throw new Error(`route ${request.routeOptions.url} has no tenant: check its access`);
  return request.tenant;
}

export function organizationOf(request: FastifyRequest): OrganizationTenant {
  const tenant = tenantOf(request);
  if (tenant.kind !== 'organization') throw new Error(`route ${request.routeOptions.url} needs a user tenant`);
  return tenant;
}

export function projectOf(request: FastifyRequest): ProjectScope {
  if (!request.project) throw new Error(`route ${request.routeOptions.url} has no project: check its access`);
  return request.project;
}

/** The project a key opens, else the caller's tenant (routes addressed by id or token check the resource's project). */
export function reachOf(request: FastifyRequest): Reach {
  return request.project ?? tenantOf(request);
}

/** Whether the caller is a publishable key (the browser SDK's), which proves less than a server key or a user. */
export function isPublishable(request: FastifyRequest): boolean {
  return request.tenant?.kind === 'project' && request.tenant.publishable;
}

/** The signed-in user of a route whose access is `{ auth: 'user', optional: true }`, if any. */
export function optionalUserOf(request: FastifyRequest): string | undefined {
  return request.userId;
}

export function userOf(request: FastifyRequest): string {
  if (!request.userId) throw new Error(`route ${request.routeOptions.url} has no user: check its access`);
  return request.userId;
}

/** The route takes a JWT only, from the query string or the headers (`credentials: 'jwt-query'`). */
const jwtOnly = (request: FastifyRequest) => {
  const access = request.routeOptions.config.access;
  return access?.auth === 'project' && access.credentials === 'jwt-query';
};

/**
 * A `jwt-query` route called with a `token` parameter: token and organization both come from the query. Never one
 * from the query and the other from a header, so one request cannot pair two sources' identity and organization.
 */
const fromQuery = (request: FastifyRequest) => jwtOnly(request) && queryValue(request, 'token') !== undefined;

const bearerOf = (request: FastifyRequest) => /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '')?.[1];

function queryValue(request: FastifyRequest, name: string): string | undefined {
  const value = (request.query as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function readSource(request: FastifyRequest, source: ProjectSource): string | undefined {
  const [part, name] = source.split('.', 2) as ['params' | 'body' | 'query', string];
  const container = request[part] as Record<string, unknown> | undefined;
  const value = container?.[name];
  return typeof value === 'string' ? value : undefined;
}

/**
 * What the guard asks of the app, which fills it with the auth, API key and project services: the guard imports no
 * module, the modules import the guard.
 */
export interface AccessServices {
  auth: {
    /** The user a bearer token names; undefined when it is unknown, expired or no longer a user's. */
    userOfToken(token: string): Promise<string | undefined>;
    /** The user's membership of the organization named by x-org-id, or the AppError that refuses it. */
    organizationTenant(userId: string, organizationId: string | undefined): Promise<OrganizationTenant>;
  };
  apiKeys: {
    /** The live key with this secret; undefined when unknown or revoked. */
    authenticate(secret: string): Promise<KeyOwner | undefined>;
  };
  projects: {
    /** Whether the project exists in any organization: the one lookup made outside the caller's tenant. */
    exists(projectId: string): Promise<boolean>;
    /** The organization's project, undefined when it has no such project. */
    findRow(organizationId: string, projectId: string): Promise<{ id: string; organizationId: string } | undefined>;
  };
}

async function accessPlugin(app: FastifyInstance, services: AccessServices) {
  app.decorateRequest('credentials', null as unknown as Credentials);
  app.decorateRequest('userId', undefined);
  app.decorateRequest('tenant', undefined);
  app.decorateRequest('project', undefined);

  // A route that forgets to declare its access does not start.
  app.addHook('onRoute', (route: RouteOptions) => {
    // Only the Swagger UI and its document under /docs are exempt (not, say, a future /docsets route).
    if (route.url === '/docs' || route.url.startsWith('/docs/')) return;
    if (!route.config?.access) throw new Error(`Route ${route.method} ${route.url} declares no access`);
  });

  // Credentials are read before rate limiting (so a project's raised limit applies) but enforced after it,
  // so failed attempts count against the caller's limit too.
  app.addHook('onRequest', async (request) => {
    // Public routes (login, health, tracking links) never use credentials: no key lookup or token check for them.
    if (request.routeOptions.config.access?.auth === 'public') {
      request.credentials = { apiKey: undefined, userId: undefined };
      return;
    }
    const key = jwtOnly(request) ? undefined : request.headers['x-api-key'];
    const bearer = fromQuery(request) ? queryValue(request, 'token') : bearerOf(request);
    request.credentials = {
      apiKey: typeof key === 'string' && key !== '' ? ((await services.apiKeys.authenticate(key)) ?? null) : undefined,
      userId: bearer !== undefined ? ((await services.auth.userOfToken(bearer)) ?? null) : undefined,
    };
  });

  app.addHook('preParsing', async (request) => {
    const access = request.routeOptions.config.access;
    if (!access || access.auth === 'public') return;
    const { apiKey, userId } = request.credentials;
    const write = WRITE_METHODS.has(request.method);
    if (apiKey?.scope === 'publishable' && !allowsPublishable(access)) throw forbidden(PUBLISHABLE_FORBIDDEN, 'publishable_key_forbidden');

    const requireUser = () => {
      if (!userId) throw unauthorized(INVALID_TOKEN);
      request.userId = userId;
      return userId;
    };
    const enterOrganization = async (minRole: Role | undefined) => {
      const header = fromQuery(request) ? queryValue(request, 'orgId') : request.headers['x-org-id'];
      const tenant = await services.auth.organizationTenant(requireUser(), typeof header === 'string' ? header : undefined);
      const needed = minRole ?? (write ? 'MEMBER' : 'VIEWER');
      if (!roleAtLeast(tenant.role, needed)) {
        throw forbidden(
          tenant.role === 'VIEWER' && write ? 'The VIEWER role is read-only' : `This action needs the ${needed} role`,
          'insufficient_role',
        );
      }
      request.tenant = tenant;
    };

    switch (access.auth) {
      case 'user':
        if (access.optional && userId === undefined) return;
        requireUser();
        return;
      case 'organization':
        await enterOrganization(access.minRole);
        return;
      case 'project': {
        const accepts = access.credentials ?? 'any';
        if (accepts !== 'jwt' && apiKey !== undefined) {
          if (apiKey === null) throw unauthorized(INVALID_API_KEY);
          request.tenant = {
            kind: 'project',
            organizationId: apiKey.organizationId,
            projectId: apiKey.projectId,
            sandbox: apiKey.mode === 'test',
            apiKeyId: apiKey.keyId,
            publishable: apiKey.scope === 'publishable',
          };
          return;
        }
        if (accepts !== 'apiKey' && userId !== undefined) {
          await enterOrganization(access.minRole);
          return;
        }
        throw unauthorized(accepts === 'apiKey' ? INVALID_API_KEY : INVALID_TOKEN);
      }
    }
  });

  // Once params and body are validated: clear the project the route names, or the key's own project.
  app.addHook('preHandler', async (request) => {
    const access = request.routeOptions.config.access;
    if (access?.auth !== 'project') return;
    const tenant = tenantOf(request);
    const named = access.project ? readSource(request, access.project) : undefined;
    if (tenant.kind === 'project') {
      if (named !== undefined && named !== tenant.projectId) {
        // An unknown project is a 404 (spec 4.3), another project's a 403 (spec 5.2.6).
        if (!(await services.projects.exists(named))) throw notFound('Project');
        throw new AppError(403, 'cross_project', CROSS_PROJECT);
      }
      request.project = { organizationId: tenant.organizationId, projectId: tenant.projectId, sandbox: tenant.sandbox };
      return;
    }
    if (named === undefined) return;
    const row = await services.projects.findRow(tenant.organizationId, named);
    if (!row) throw notFound('Project');
    request.project = { organizationId: row.organizationId, projectId: row.id, sandbox: false };
  });
}

export default fp(accessPlugin, { name: 'herald-access' });
