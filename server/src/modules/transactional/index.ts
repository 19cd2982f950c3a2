// Face of modules/transactional (the only file others import): Transactional sends (push, email, SMS, WhatsApp): their services, routes and schemas.
export { TransactionalEmailService } from './transactional-email.service.js';
export { TransactionalSmsService } from './transactional-sms.service.js';
export { SERVICE_WINDOW_MS, TransactionalWhatsAppService } from './transactional-whatsapp.service.js';
export { transactionalRoutes } from './transactional.routes.js';
export { templateComponent } from './transactional.schemas.js';
export { TransactionalService } from './transactional.service.js';
