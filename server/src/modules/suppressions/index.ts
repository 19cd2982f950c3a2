// Face of modules/suppressions (the only file others import): the service and routes that read, add and lift an address's suppression.
export { suppressionRoutes } from './suppression.routes.js';
export { SuppressionService } from './suppression.service.js';
