// Face of modules/twilio-webhooks (the only file others import): Twilio callbacks (SMS and WhatsApp status, inbound messages): the service and its routes.
export { twilioWebhookRoutes } from './twilio-webhook.routes.js';
export { TwilioWebhookService } from './twilio-webhook.service.js';
