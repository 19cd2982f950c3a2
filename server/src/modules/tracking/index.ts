// Face of modules/tracking (the only file others import): push reports and email opens and clicks, their services and public routes.
export { emailTrackingRoutes } from './email-tracking.routes.js';
export { EmailTrackingService } from './email-tracking.service.js';
export { machineSignals } from './machine-signals.js';
export { trackingRoutes } from './tracking.routes.js';
export { TrackingService } from './tracking.service.js';
