// Face of modules/api-keys (the only file others import): the API key service (issue, revoke, resolve), its routes and the key owner type.
export type { KeyOwner } from './api-key.repository.js';
export { apiKeyRoutes } from './api-key.routes.js';
export { ApiKeyService } from './api-key.service.js';
