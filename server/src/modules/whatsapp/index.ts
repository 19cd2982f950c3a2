// Face of modules/whatsapp (the only file others import): message templates and Meta's webhook, their services and routes.
export { whatsappTemplateRoutes } from './whatsapp-template.routes.js';
export { WhatsAppTemplateService } from './whatsapp-template.service.js';
export { whatsappWebhookRoutes } from './whatsapp-webhook.routes.js';
export { WhatsAppWebhookService } from './whatsapp-webhook.service.js';
