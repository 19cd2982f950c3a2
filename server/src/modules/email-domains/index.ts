// Face of modules/email-domains (the only file others import): the service, its routes and tasks, DKIM resealing and the TXT lookup it verifies with.
export { createTxtLookup } from './domain-records.js';
export { listVerified } from './email-domain.repository.js';
export { emailDomainRoutes } from './email-domain.routes.js';
export { EmailDomainService, resealPrivateKeys } from './email-domain.service.js';
export { emailDomainCron, emailDomainTasks } from './email-domain.tasks.js';
