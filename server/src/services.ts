// The composition root: builds every service once from the database handle and configuration.
import type { Config } from './config.js';
import type { Db } from './db/database.js';
import { ApiKeyService } from './modules/api-keys/api-key.service.js';
import { AuthService } from './modules/auth/auth.service.js';
import { createTokenService } from './modules/auth/tokens.js';
import { OrganizationService } from './modules/organizations/organization.service.js';
import { ProjectService } from './modules/projects/project.service.js';
import { SegmentService } from './modules/segments/segment.service.js';
import { ContactService } from './modules/subscribers/contact.service.js';
import { createGeoLookup } from './modules/subscribers/geo.js';
import { SubscriberService } from './modules/subscribers/subscriber.service.js';

export interface Services {
  auth: AuthService;
  organizations: OrganizationService;
  projects: ProjectService;
  apiKeys: ApiKeyService;
  subscribers: SubscriberService;
  segments: SegmentService;
  contacts: ContactService;
}

export function createServices(db: Db, config: Pick<Config, 'jwtTtlSeconds'> & Partial<Pick<Config, 'geo'>>, jwtSecret: string): Services {
  return {
    auth: new AuthService(db, createTokenService(jwtSecret, config.jwtTtlSeconds)),
    organizations: new OrganizationService(db),
    projects: new ProjectService(db),
    apiKeys: new ApiKeyService(db),
    subscribers: new SubscriberService(db, createGeoLookup(config.geo ?? {})),
    segments: new SegmentService(db),
    contacts: new ContactService(db),
  };
}
