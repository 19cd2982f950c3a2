// Builds the Fastify application: schemas, request ids, logging, the tenancy guard, rate limits, docs, routes and the dashboard.
import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyBaseLogger } from 'fastify';
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import type { Logger } from 'pino';
import type { Pool } from 'pg';
import type { Registry } from 'prom-client';
import type { Config } from '../config.js';
import { apiKeyRoutes } from '../modules/api-keys/index.js';
import { authRoutes, passwordResetRoutes } from '../modules/auth/index.js';
import {
  campaignRoutes,
  emailCampaignAnalyticsRoutes,
  pushCampaignAnalyticsRoutes,
  pushTestRoutes,
  emailCampaignRoutes,
  pushCampaignRoutes,
} from '../modules/campaigns/index.js';
import { emailTemplateRoutes } from '../modules/email-templates/index.js';
import { invitationRoutes, organizationRoutes } from '../modules/organizations/index.js';
import { preferenceRoutes } from '../modules/preferences/index.js';
import { channelConfigRoutes, smsOptOutRoutes, smsSenderRoutes } from '../modules/channels/index.js';
import { emailDomainRoutes } from '../modules/email-domains/index.js';
import { projectRoutes } from '../modules/projects/index.js';
import { overviewRoutes } from '../modules/overview/index.js';
import { segmentRoutes } from '../modules/segments/index.js';
import { suppressionRoutes } from '../modules/suppressions/index.js';
import { sesWebhookRoutes } from '../modules/email-webhooks/index.js';
import { contactRoutes, subscriberRoutes } from '../modules/subscribers/index.js';
import { emailTrackingRoutes, trackingRoutes } from '../modules/tracking/index.js';
import { transactionalRoutes } from '../modules/transactional/index.js';
import { twilioWebhookRoutes } from '../modules/twilio-webhooks/index.js';
import { whatsappTemplateRoutes, whatsappWebhookRoutes } from '../modules/whatsapp/index.js';
import { automationRoutes } from '../modules/automations/index.js';
import { eventRoutes } from '../modules/events/index.js';
import type { Services } from '../services.js';
import access from '../http/access.js';
import fastifyStatic from '@fastify/static';
import { DASHBOARD_DIST, dashboardRoutes } from './dashboard.js';
import { sdkRoutes } from './sdk.js';
import { registerCors } from '../http/cors.js';
import { clientErrorHandler, frameworkErrors, registerErrorHandling } from '../http/errors.js';
import { healthRoutes } from './health.routes.js';
import { createMetricsRegistry, metricsRoute, registerMetrics } from './metrics.js';
import { refusingNul } from '../http/nul-characters.js';
import { registerOpenApi } from './openapi.js';
import { registerRateLimits } from '../http/rate-limit.js';
import type { App } from '../http/types.js';
import { usePlainValidationMessages } from '../http/validation-messages.js';

export interface AppDeps {
  config: Config;
  logger: Logger;
  pool: Pool;
  services: Services;
  redis?: Redis | undefined;
  /** The registry the request metrics go to; the caller serves it on the metrics listener (METRICS_PORT). */
  metrics?: Registry;
  /** The built dashboard served under /app/ (default: dashboard/dist); tests give a directory of their own. */
  dashboardDir?: string;
  /** The built browser SDK served under /sdk/ (default: sdk/dist). */
  sdkDir?: string;
}

const REQUEST_ID = /^[\w.:-]{1,128}$/;
/**
 * The router measures a path parameter as sent, percent-encoded: the longest externalId identify accepts (255 UTF-16
 * units) is 9 characters a unit when each is a 3-byte UTF-8 character, so every stored externalId can be looked up.
 */
const MAX_PARAM_LENGTH = 255 * 9;

export async function buildApp(deps: AppDeps): Promise<App> {
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    trustProxy: deps.config.trustProxy,
    requestIdHeader: false,
    genReqId: (request) => {
      const given = request.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    bodyLimit: 1024 * 1024,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    frameworkErrors,
    clientErrorHandler,
    ajv: { customOptions: { removeAdditional: false } },
  }).withTypeProvider<ZodTypeProvider>();

  // JSON only: a text/plain body is a wrong content type (400), not a string that then fails validation (422).
  app.removeContentTypeParser('text/plain');
  // An empty JSON body is no body: a route that requires one answers 400 (errors.ts), one whose body is optional runs.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (body === '') done(null, undefined);
    else parseJson(request, body as string, done);
  });
  usePlainValidationMessages();
  app.setValidatorCompiler(refusingNul(validatorCompiler));
  app.setSerializerCompiler(serializerCompiler);
  // Unknown fields are rejected, not dropped: a route that declares no query parameters accepts none.
  app.addHook('onRoute', (route) => {
    if (route.url === '/docs' || route.url.startsWith('/docs/')) return;
    route.schema = { ...route.schema, querystring: route.schema?.querystring ?? z.strictObject({}) };
  });
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  registerErrorHandling(app);

  const metrics = deps.metrics ?? createMetricsRegistry();
  registerMetrics(app, metrics);
  // API key lookups are served from memory only while this listener hears revocations (api-key-cache.ts); it
  // connects with the pool's settings on a connection of its own.
  let stopWatchingKeys: (() => Promise<void>) | undefined;
  app.addHook('onReady', async () => {
    stopWatchingKeys = await deps.services.apiKeys.watchChanges(deps.pool.options, app.log);
  });
  app.addHook('onClose', async () => {
    await stopWatchingKeys?.();
  });
  await app.register(access, deps.services);
  const answerPreflights = registerCors(app);
  await registerRateLimits(app, deps.config, deps.redis);
  await registerOpenApi(app, deps.config.publicUrl);

  await healthRoutes(app, deps.pool);
  // On the API port only behind its token; with METRICS_PORT, on that listener alone (runtime.ts).
  if (deps.config.metrics.token !== undefined && deps.config.metrics.port === undefined) metricsRoute(app, metrics, deps.config.metrics.token);
  await authRoutes(app, deps.services.auth);
  await passwordResetRoutes(app, deps.services.passwordResets);
  await organizationRoutes(app, deps.services.organizations);
  await invitationRoutes(app, deps.services.invitations);
  await projectRoutes(app, deps.services.projects);
  await channelConfigRoutes(app, deps.services.channels);
  await smsSenderRoutes(app, deps.services.smsSenders);
  await smsOptOutRoutes(app, deps.services.smsOptOuts);
  await emailDomainRoutes(app, deps.services.emailDomains);
  await apiKeyRoutes(app, deps.services.apiKeys);
  await subscriberRoutes(app, deps.services.subscribers, deps.config);
  await contactRoutes(app, deps.services.contacts);
  await segmentRoutes(app, deps.services.segments);
  await overviewRoutes(app, deps.services.overview);
  await suppressionRoutes(app, deps.services.suppressions);
  await sesWebhookRoutes(app, deps.services.sesWebhook);
  await campaignRoutes(app, deps.services.campaigns, pushCampaignRoutes);
  await campaignRoutes(app, deps.services.campaigns, emailCampaignRoutes);
  await emailCampaignAnalyticsRoutes(app, deps.services.emailCampaignAnalytics, deps.services.campaigns);
  await pushCampaignAnalyticsRoutes(app, deps.services.emailCampaignAnalytics);
  await pushTestRoutes(app, deps.services.campaigns, { allowInsecurePushEndpoints: deps.config.allowInsecurePushEndpoints });
  await emailTemplateRoutes(app, deps.services.emailTemplates);
  await transactionalRoutes(app, deps.services.transactional, deps.services.transactionalEmail, deps.services.transactionalSms, deps.services.transactionalWhatsApp, deps.services.idempotency);
  await twilioWebhookRoutes(app, deps.services.twilioWebhook, deps.config.publicUrl);
  await whatsappTemplateRoutes(app, deps.services.whatsappTemplates);
  await whatsappWebhookRoutes(app, deps.services.whatsappWebhook);
  await eventRoutes(app, deps.services.events);
  await automationRoutes(app, deps.services.automations);
  await trackingRoutes(app, deps.services.trackingEvents);
  await emailTrackingRoutes(app, deps.services.emailTracking);
  await preferenceRoutes(app, deps.services.preferences, deps.config.publicUrl);
  // Static files are sent by routes that declare each URL with its access and cache rules: no directory is served.
  await app.register(fastifyStatic, { root: deps.dashboardDir ?? DASHBOARD_DIST, serve: false });
  await dashboardRoutes(app, deps.dashboardDir);
  await sdkRoutes(app, deps.sdkDir);
  answerPreflights();
  return app;
}
