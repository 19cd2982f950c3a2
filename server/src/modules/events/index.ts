// Face of modules/events (the only file others import): Custom events: the service that records them (and starts automations) and its routes.
export { eventRoutes } from './event.routes.js';
export { EventService } from './event.service.js';
