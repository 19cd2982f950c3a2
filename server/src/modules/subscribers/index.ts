// Face of modules/subscribers (the only file others import): Subscribers and contacts: their services and routes, geo lookup and the address schemas.
export type { EmailHolders } from './contact.repository.js';
export { contactRoutes } from './contact.routes.js';
export { email, phone } from './contact.schemas.js';
export { ContactService } from './contact.service.js';
export { createGeoLookup } from './geo.js';
export { subscriberRoutes } from './subscriber.routes.js';
export { pushSubscriptionJson } from './subscriber.schemas.js';
export { SubscriberService } from './subscriber.service.js';
