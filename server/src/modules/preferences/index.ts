// Face of modules/preferences (the only file others import): The preference center: its service, its public routes and the signed form tokens.
export { createFormTokens } from './form-token.js';
export { preferenceRoutes } from './preference.routes.js';
export { PreferenceService } from './preference.service.js';
