// Face of modules/channels (the only file others import): Channel configurations, SMS senders and opt-outs: their services and routes, the secret keyring and VAPID keys.
export { channelConfigRoutes } from './channel-config.routes.js';
export { ChannelConfigService } from './channel-config.service.js';
export { createKeyring, type Keyring } from './secret-keyring.js';
export { smsOptOutRoutes } from './sms-opt-out.routes.js';
export { SmsOptOutService } from './sms-opt-out.service.js';
export { smsSenderRoutes } from './sms-sender.routes.js';
export { messagingServiceOf, SmsSenderService } from './sms-sender.service.js';
