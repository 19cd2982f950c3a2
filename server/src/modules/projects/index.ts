// Face of modules/projects (the only file others import): the service, its routes and the identity-verification check.
export { identityHashMatches } from './identity-secret.js';
export { identityVerification } from './project.repository.js';
export { projectRoutes } from './project.routes.js';
export { ProjectService } from './project.service.js';
