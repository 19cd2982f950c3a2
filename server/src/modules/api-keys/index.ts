// Face of modules/api-keys (the only file others import): the API key service (issue, revoke, resolve), its routes and the key owner type.
export { apiKeyRoutes } from './api-key.routes.js';
export { ApiKeyService } from './api-key.service.js';
