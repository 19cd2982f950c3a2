// Who is calling and which tenant a request may touch: the types every service and repository is scoped by.
export const ROLES = ['OWNER', 'ADMIN', 'MEMBER', 'VIEWER'] as const;
export type Role = (typeof ROLES)[number];

const rank: Record<Role, number> = { VIEWER: 0, MEMBER: 1, ADMIN: 2, OWNER: 3 };
export const roleAtLeast = (role: Role, minimum: Role) => rank[role] >= rank[minimum];

/** A dashboard user acting inside one organization (JWT + x-org-id). */
export interface OrganizationTenant {
  kind: 'organization';
  organizationId: string;
  userId: string;
  role: Role;
}

/** A project acting through one of its API keys. `sandbox` is true for test keys, `publishable` for a browser's key. */
export interface ProjectTenant {
  kind: 'project';
  organizationId: string;
  projectId: string;
  sandbox: boolean;
  apiKeyId: string;
  publishable: boolean;
}

export type Tenant = OrganizationTenant | ProjectTenant;

/** One project a request has been cleared to act on, whichever credential got it there. */
export interface ProjectScope {
  organizationId: string;
  projectId: string;
  sandbox: boolean;
}

/** A caller cleared for one project (an API key), or any tenant: routes addressed by a resource id or token. */
export type Reach = ProjectScope | Tenant;
