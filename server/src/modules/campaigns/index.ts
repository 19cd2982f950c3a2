// Face of modules/campaigns (the only file others import): the push and email campaign kinds, the campaign and analytics services, their routes, tasks and schemas.
export type { CampaignKind } from './campaign-kind.js';
export { campaignRoutes } from './campaign.routes.js';
export { pushContent } from './campaign.schemas.js';
export { CampaignService } from './campaign.service.js';
export { campaignCron, campaignTasks } from './campaign.tasks.js';
export { emailCampaignAnalyticsRoutes } from './email-campaign-analytics.routes.js';
export { EmailCampaignAnalyticsService } from './email-campaign-analytics.service.js';
export { emailCampaignRoutes } from './email-campaign.routes.js';
export { mailbox } from './email-campaign.schemas.js';
export { type EmailCampaign, type EmailCampaignInput, emailCampaignKind } from './email-campaign.js';
export { pushCampaignAnalyticsRoutes } from './push-campaign-analytics.routes.js';
export { pushCampaignKind } from './push-campaign.js';
export { pushTestRoutes } from './push-test.routes.js';
export { pushCampaignRoutes } from './push-campaign.routes.js';
