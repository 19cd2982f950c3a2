// Face of modules/organizations (the only file others import): Organizations, members and invitations: their services and routes, and the first-run bootstrap.
export { bootstrapFirstRun, type FirstRun } from './bootstrap.js';
export { invitationRoutes } from './invitation.routes.js';
export { InvitationService } from './invitation.service.js';
export { organizationDirectory, type OrganizationDirectory } from './organization-directory.js';
export { organizationRoutes } from './organization.routes.js';
export { OrganizationService } from './organization.service.js';
