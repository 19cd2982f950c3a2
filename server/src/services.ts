// The composition root: builds every service once from the database handle and configuration.
import type pg from 'pg';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { Db } from './db/database.js';
import { createSandboxProvider } from './delivery/channels/sandbox.js';
import { createWebPushProvider } from './delivery/channels/push/web-push-provider.js';
import { DeliveryEngine, type DeliveryProviders } from './delivery/delivery-engine.js';
import { createTrackingTokens, type TrackingTokens } from './delivery/tracking-token.js';
import { ApiKeyService } from './modules/api-keys/api-key.service.js';
import { AuthService } from './modules/auth/auth.service.js';
import { CampaignService } from './modules/campaigns/campaign.service.js';
import { createTokenService } from './modules/auth/tokens.js';
import { IdempotencyService } from './modules/idempotency/idempotency.service.js';
import { InvitationService } from './modules/organizations/invitation.service.js';
import { OrganizationService } from './modules/organizations/organization.service.js';
import { ProjectService } from './modules/projects/project.service.js';
import { SegmentService } from './modules/segments/segment.service.js';
import { ContactService } from './modules/subscribers/contact.service.js';
import { createGeoLookup } from './modules/subscribers/geo.js';
import { SubscriberService } from './modules/subscribers/subscriber.service.js';
import { TrackingService } from './modules/tracking/tracking.service.js';
import { TransactionalService } from './modules/transactional/transactional.service.js';

export interface Services {
  auth: AuthService;
  organizations: OrganizationService;
  invitations: InvitationService;
  projects: ProjectService;
  apiKeys: ApiKeyService;
  subscribers: SubscriberService;
  segments: SegmentService;
  campaigns: CampaignService;
  contacts: ContactService;
  /** Sends deliveries: the transactional path calls it directly; worker roles also start its claim loop. */
  delivery: DeliveryEngine;
  tracking: TrackingTokens;
  /** Delivered, clicked and dismissed reports from service workers. */
  trackingEvents: TrackingService;
  transactional: TransactionalService;
  idempotency: IdempotencyService;
  /** Closes provider connection pools; called on shutdown after the engine stopped. */
  close(): Promise<void>;
}

export type ServicesConfig = Pick<
  Config,
  'jwtTtlSeconds' | 'geo' | 'delivery' | 'push' | 'publicUrl' | 'allowInsecurePushEndpoints' | 'campaigns'
>;

export interface ServicesOptions {
  /** Replaces the real providers (the benchmark's baselines; tests use the real ones against local peers). */
  providers?: DeliveryProviders;
  logger?: Logger;
  /** The time the delivery policy and campaign schedules read (quiet hours, cap windows, sendAt); tests inject one. */
  clock?: () => Date;
}

export function createServices(db: Db, config: ServicesConfig, jwtSecret: string, options: ServicesOptions = {}): Services {
  const providers = options.providers ?? {
    push: createWebPushProvider({ ...config.push, allowInsecureEndpoints: config.allowInsecurePushEndpoints }),
    sandbox: createSandboxProvider(),
  };
  const tracking = createTrackingTokens(jwtSecret);
  const clock = options.clock ?? (() => new Date());
  const segments = new SegmentService(db);
  const campaigns = new CampaignService(db, segments, {
    clock,
    scheduleGraceSeconds: config.campaigns.scheduleGraceSeconds,
    publicUrl: config.publicUrl,
  });
  const delivery = new DeliveryEngine({
    db,
    config,
    providers,
    tracking,
    logger: options.logger?.child({ component: 'delivery' }),
    clock,
    onBatchRecorded: (messages) => campaigns.onDeliveriesRecorded(messages),
  });
  const apiKeys = new ApiKeyService(db);
  // Drizzle's handle exposes its pg pool as $client: registrations are written on it directly.
  const pool = (db as Db & { $client: pg.Pool }).$client;
  return {
    auth: new AuthService(db, createTokenService(jwtSecret, config.jwtTtlSeconds)),
    organizations: new OrganizationService(db),
    invitations: new InvitationService(db, { publicUrl: config.publicUrl, clock }),
    projects: new ProjectService(db, (projectId) => {
      apiKeys.forgetProject(projectId);
      delivery.forgetProject(projectId);
    }),
    apiKeys,
    subscribers: new SubscriberService(db, pool, createGeoLookup(config.geo)),
    segments,
    campaigns,
    contacts: new ContactService(db),
    delivery,
    tracking,
    trackingEvents: new TrackingService(db, tracking),
    transactional: new TransactionalService(db, delivery, {
      leaseSeconds: config.delivery.leaseSeconds,
      clock,
    }),
    idempotency: new IdempotencyService(db),
    close: async () => {
      await Promise.all([providers.push.close(), providers.sandbox.close()]);
    },
  };
}
