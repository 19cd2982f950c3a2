// Face of modules/email-webhooks (the only file others import): Email feedback: SES callbacks (read by the email adapter's webhook), inbound mail (bounces, complaints, replies) and their routes.
export { inboundAddress, InboundMailService } from './inbound-mail.service.js';
export { sesWebhookRoutes } from './ses-webhook.routes.js';
export { SesWebhookService } from './ses-webhook.service.js';
