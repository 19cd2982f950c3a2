// The composition root: builds every service once from the database handle and configuration.
import { readFileSync } from 'node:fs';
import type { Agent } from 'node:https';
import type { Redis } from 'ioredis';
import type pg from 'pg';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { Db } from './db/database.js';
import {
  type ChannelProvider,
  createCloudApiProvider,
  createAccountMailer,
  createEmailAdapter,
  createEmailLinks,
  createOutboundGuard,
  createPushAdapter,
  createSandboxProvider,
  createSesProvider,
  createSmsAdapter,
  createSmtpProvider,
  createTrackingTokens,
  createTwilioProvider,
  createTwilioWhatsAppProvider,
  createWebPushProvider,
  createWhatsAppAdapter,
  DeliveryEngine,
  DeliveryRecords,
  type DkimKeys,
  type EmailLinks,
  listMessageTemplates,
  type PushItem,
  readPhoneNumber,
  readSesAccount,
  readTwilioAccount,
  redisSendRate,
  type TrackingTokens,
  twilioAccount,
} from './delivery/index.js';
import { ApiKeyService } from './modules/api-keys/index.js';
import { AccountMailService } from './modules/account-mail/index.js';
import { AuthService, createTokenService, PasswordResetService } from './modules/auth/index.js';
import { AutomationExecutor, AutomationService } from './modules/automations/index.js';
import {
  CampaignService,
  EmailCampaignAnalyticsService,
  emailCampaignKind,
  pushCampaignKind,
} from './modules/campaigns/index.js';
import { EmailTemplateService } from './modules/email-templates/index.js';
import { EventService } from './modules/events/index.js';
import { IdempotencyService } from './modules/idempotency/index.js';
import { InvitationService, OrganizationService } from './modules/organizations/index.js';
import {
  ChannelConfigService,
  createKeyring,
  type Keyring,
  SmsOptOutService,
  SmsSenderService,
} from './modules/channels/index.js';
import { createTxtLookup, EmailDomainService } from './modules/email-domains/index.js';
import { ProjectService } from './modules/projects/index.js';
import { OverviewService } from './modules/overview/index.js';
import { AttributeListService, SegmentService } from './modules/segments/index.js';
import { SuppressionService } from './modules/suppressions/index.js';
import { InboundMailService, SesWebhookService } from './modules/email-webhooks/index.js';
import { ContactService, createGeoLookup, SubscriberService } from './modules/subscribers/index.js';
import { createFormTokens, PreferenceService } from './modules/preferences/index.js';
import { EmailTrackingService, machineSignals, TrackingService } from './modules/tracking/index.js';
import {
  TransactionalEmailService,
  TransactionalService,
  TransactionalSmsService,
  TransactionalWhatsAppService,
} from './modules/transactional/index.js';
import { TwilioWebhookService } from './modules/twilio-webhooks/index.js';
import { WhatsAppTemplateService, WhatsAppWebhookService } from './modules/whatsapp/index.js';

export interface Services {
  auth: AuthService;
  organizations: OrganizationService;
  invitations: InvitationService;
  passwordResets: PasswordResetService;
  projects: ProjectService;
  /** Each project's channel providers and their sealed credentials. */
  channels: ChannelConfigService;
  /** HERALD_SECRET_KEY's box, resolved on first use. */
  keyring: Keyring;
  /** Sending domains: DKIM keys, DNS records, verification; the email sending path asks it what may send and signs with its keys. */
  emailDomains: EmailDomainService;
  apiKeys: ApiKeyService;
  subscribers: SubscriberService;
  segments: SegmentService;
  overview: OverviewService;
  suppressions: SuppressionService;
  sesWebhook: SesWebhookService;
  inboundMail: InboundMailService;
  campaigns: CampaignService;
  /** Email campaigns' chart series, clicked links and recipient outcomes, from their deliveries and events log. */
  emailCampaignAnalytics: EmailCampaignAnalyticsService;
  /** Email templates with merge tags; `render` is what an email send calls. */
  emailTemplates: EmailTemplateService;
  contacts: ContactService;
  /** Sends deliveries: the transactional path calls it directly; worker roles also start its claim loop. */
  delivery: DeliveryEngine;
  tracking: TrackingTokens;
  /** Signs and verifies email open, click, unsubscribe and bounce links. */
  emailLinks: EmailLinks;
  /** Delivered, clicked and dismissed reports from service workers. */
  trackingEvents: TrackingService;
  /** Opens and clicks of email's signed links. */
  emailTracking: EmailTrackingService;
  /** The preference center of email's unsubscribe links; `unsubscribeByToken` is also the mailto entry's. */
  preferences: PreferenceService;
  transactional: TransactionalService;
  /** POST /transactional/email: renders, checks the sender and the recipient, and sends through the engine inline. */
  transactionalEmail: TransactionalEmailService;
  /** POST /transactional/sms: checks the number, chooses the sender per country, and sends through the engine inline. */
  transactionalSms: TransactionalSmsService;
  /** SMS senders provisioned per project and destination country. */
  smsSenders: SmsSenderService;
  /** The numbers opted out of a project's SMS. */
  smsOptOuts: SmsOptOutService;
  /** Twilio's signed callbacks: status changes of sent SMS, and STOP/START/HELP from people. */
  twilioWebhook: TwilioWebhookService;
  /** POST /transactional/whatsapp: templates, the customer-service window, opt-outs, an inline send through the engine. */
  transactionalWhatsApp: TransactionalWhatsAppService;
  /** Each project's WhatsApp templates, synchronised from Meta or written by hand. */
  whatsappTemplates: WhatsAppTemplateService;
  /** Meta's callbacks: verification, statuses, inbound messages (window, STOP/START). */
  whatsappWebhook: WhatsAppWebhookService;
  idempotency: IdempotencyService;
  /** Automations: flows, states, starters, stats, enrollments; the minute tick of schedule and inactivity triggers. */
  automations: AutomationService;
  /** Runs due enrollments' steps; worker roles start its loop. */
  automationExecutor: AutomationExecutor;
  /** POST /events: stored, and enrolling in event automations. */
  events: EventService;
  /** Closes provider connection pools; called on shutdown after the engine stopped. */
  close(): Promise<void>;
}

export type ServicesConfig = Pick<
  Config,
  'jwtTtlSeconds' | 'geo' | 'delivery' | 'push' | 'email' | 'publicUrl' | 'allowInsecurePushEndpoints' | 'outboundAllowedHosts' | 'campaigns' | 'automations' | 'secretKey' | 'emailDomains' | 'sesWebhook' | 'sms' | 'whatsapp'
>;

export interface ServicesOptions {
  /** Replaces the real providers (the benchmark's baselines; tests use the real ones against local peers). */
  providers?: { push: ChannelProvider<PushItem>; sandbox: ChannelProvider<PushItem> };
  logger?: Logger;
  /** With REDIS_URL: the providers' send rates are held in it (else in PostgreSQL). */
  redis?: Redis | undefined;
  /** The time the delivery policy and campaign schedules read (quiet hours, cap windows, sendAt); tests inject one. */
  clock?: () => Date;
  /** The agent SNS certificates and subscription confirmations go through (tests give one trusting their own SNS). */
  snsAgent?: Agent | undefined;
  /** The DKIM key of a project's sending domain; tests inject a generated one. */
  dkimKeys?: DkimKeys;
}

/** Mail is signed with the key of the verified sending domain that covers its From domain (itself or a parent). */
function signingKeysOf(domains: EmailDomainService): DkimKeys {
  return async (projectId, domain) => {
    const covering = await domains.verifiedDomainFor(projectId, `postmaster@${domain}`);
    const keys = covering && (await domains.signingKeys(projectId, covering.domain));
    return (
      keys && {
        domainName: keys.domainName,
        keySelector: keys.selector,
        privateKey: keys.privateKey,
        ed25519: keys.ed25519 && { keySelector: keys.ed25519.selector, privateKey: keys.ed25519.privateKey },
      }
    );
  };
}

/** EMAIL_SMTP_CA_FILE's certificates; a file that cannot be read stops the start, naming the setting. */
function readCaFile(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new Error(`EMAIL_SMTP_CA_FILE: cannot read ${path}: ${(error as Error).message}`);
  }
}

export function createServices(db: Db, config: ServicesConfig, jwtSecret: string, options: ServicesOptions = {}): Services {
  const providers = options.providers ?? {
    push: createWebPushProvider({ ...config.push, allowInsecureEndpoints: config.allowInsecurePushEndpoints }),
    sandbox: createSandboxProvider(),
  };
  const tracking = createTrackingTokens(jwtSecret);
  // Tenants' own servers (SMTP): public addresses only, and those the operator allowed.
  const outboundGuard = createOutboundGuard({ allowedHosts: config.outboundAllowedHosts });
  const keyring = createKeyring(db, config.secretKey);
  const apiKeys = new ApiKeyService(db);
  const clock = options.clock ?? (() => new Date());
  const records = new DeliveryRecords(db);
  const attributes = new AttributeListService(db);
  const segments = new SegmentService(db, attributes);
  const suppressions = new SuppressionService(db, records);
  const emailKind = emailCampaignKind({
    validate: (content) => delivery.validate('email', content),
    senderVerified: async (projectId, address) => (await emailDomains.verifiedDomainFor(projectId, address)) !== undefined,
    template: (scope, id) => emailTemplates.find(scope, id),
  });
  const forget = (projectId: string) => {
    apiKeys.forgetProject(projectId);
    delivery.forgetProject(projectId);
  };
  const channels = new ChannelConfigService(db, keyring, {
    forget,
    readSesAccount: (account) => readSesAccount(account, config.email.ses),
    publicUrl: config.publicUrl,
    readPhoneNumber: (account) => readPhoneNumber(config.whatsapp, account),
    readTwilioAccount: ({ accountSid, credentials }) => readTwilioAccount(config.sms.twilio, twilioAccount(accountSid, credentials)),
    outboundGuard,
  });
  const emailDomains = new EmailDomainService(db, keyring, {
    lookupTxt: createTxtLookup(config.emailDomains.dnsServers),
    spfInclude: config.emailDomains.spfInclude,
    clock,
    forget,
  });
  const emailTemplates = new EmailTemplateService(db, forget);
  const push = createPushAdapter({ publicUrl: config.publicUrl, tracking, vapidSubject: config.push.vapidSubject, live: providers.push, sandbox: providers.sandbox });
  const dkimKeys = options.dkimKeys ?? signingKeysOf(emailDomains);
  const emailLinkSecret = config.email.linkSecret ?? jwtSecret;
  const emailLinks = createEmailLinks(config.publicUrl, { current: emailLinkSecret, previous: config.email.linkSecretsPrevious });
  const email = createEmailAdapter({
    links: emailLinks,
    bounceDomain: config.email.bounceDomain,
    live: {
      smtp: createSmtpProvider({
        dkimKeys,
        connections: config.email.smtpConnections,
        timeoutMs: config.email.smtpTimeoutMs,
        guard: outboundGuard,
        extraCa: config.email.smtpCaFile === undefined ? undefined : readCaFile(config.email.smtpCaFile),
      }),
      ses: createSesProvider({ dkimKeys, ...config.email.ses }),
    },
    sandbox: createSandboxProvider(),
    sesCallbacks: { ...config.sesWebhook, agent: options.snsAgent, clock, machineSignals },
  });
  const sms = createSmsAdapter({ publicUrl: config.publicUrl, live: createTwilioProvider(config.sms.twilio), sandbox: createSandboxProvider(), clock });
  const whatsapp = createWhatsAppAdapter({
    publicUrl: config.publicUrl,
    live: { meta: createCloudApiProvider(config.whatsapp), twilio: createTwilioWhatsAppProvider(config.sms.twilio) },
    sandbox: createSandboxProvider(),
    clock,
  });
  const delivery: DeliveryEngine = new DeliveryEngine({
    db,
    config,
    adapters: [push, email, sms, whatsapp],
    sendRate: options.redis && redisSendRate(options.redis),
    openCredentials: (sealed) => channels.open(sealed),
    logger: options.logger?.child({ component: 'delivery' }),
    clock,
    onBatchRecorded: (messages) => campaigns.onDeliveriesRecorded(messages),
    onCapReached: (messages, until) => campaigns.onCapReached(messages, until),
    projectCaches: [emailDomains, emailTemplates],
  });
  const campaigns = new CampaignService(
    db,
    segments,
    { push: pushCampaignKind((content) => delivery.validate('push', content)), email: emailKind },
    { clock, scheduleGraceSeconds: config.campaigns.scheduleGraceSeconds, delivery },
  );
  const contacts = new ContactService(db, records, attributes);
  const whatsappTemplates = new WhatsAppTemplateService(db, channels, (account) => listMessageTemplates(config.whatsapp, account));
  const preferences = new PreferenceService(db, records, emailLinks, contacts, { publicUrl: config.publicUrl, formTokens: createFormTokens(emailLinkSecret), clock });
  // Drizzle's handle exposes its pg pool as $client: registrations are written on it directly.
  const pool = (db as Db & { $client: pg.Pool }).$client;
  const smsSenders = new SmsSenderService(db);
  const whatsappWebhook = new WhatsAppWebhookService(records, channels, whatsapp.webhooks.meta);
  const automations = new AutomationService(db, { delivery, email: emailKind });
  const accountMail = new AccountMailService(
    db,
    createAccountMailer(email, async (projectId) => (await delivery.sendingProjects([projectId])).get(projectId)),
    options.logger?.child({ component: 'account-mail' }),
  );
  const passwordResets = new PasswordResetService(db, { publicUrl: config.publicUrl, clock, accountMail, logger: options.logger?.child({ component: 'password-reset' }) });
  const automationExecutor = new AutomationExecutor(
    db,
    { delivery, senders: smsSenders, whatsappTemplates },
    config.automations,
    options.logger?.child({ component: 'automations' }),
  );
  return {
    auth: new AuthService(db, createTokenService(jwtSecret, config.jwtTtlSeconds)),
    organizations: new OrganizationService(db),
    invitations: new InvitationService(db, { publicUrl: config.publicUrl, clock, accountMail }),
    passwordResets,
    projects: new ProjectService(db, keyring, forget),
    channels,
    keyring,
    emailDomains,
    apiKeys,
    subscribers: new SubscriberService(db, pool, attributes, createGeoLookup(config.geo), (client, registered) => automations.enrollRegistered(client, registered)),
    segments,
    overview: new OverviewService(db, clock),
    suppressions,
    sesWebhook: new SesWebhookService(records, email.webhooks.ses, clock),
    inboundMail: new InboundMailService(records, emailLinks, (token) => preferences.unsubscribeByToken(token, 'mailto'), clock),
    campaigns,
    emailCampaignAnalytics: new EmailCampaignAnalyticsService(db, clock),
    emailTemplates,
    contacts,
    delivery,
    tracking,
    emailLinks,
    trackingEvents: new TrackingService(records, tracking),
    emailTracking: new EmailTrackingService(records, emailLinks, clock),
    preferences,
    transactional: new TransactionalService(db, delivery),
    transactionalEmail: new TransactionalEmailService(db, delivery, { templates: emailTemplates, domains: emailDomains, contacts, suppressions }),
    transactionalSms: new TransactionalSmsService(db, delivery, { contacts, senders: smsSenders }),
    smsSenders,
    smsOptOuts: new SmsOptOutService(db),
    twilioWebhook: new TwilioWebhookService(records, {
      webhooks: { sms: sms.webhooks.twilio, whatsapp: whatsapp.webhooks.twilio },
      configOf: async (projectId, channel) => (await delivery.sendingProjects([projectId])).get(projectId)?.channels[channel],
      whatsappInbound: (projectId, message) => whatsappWebhook.inbound(projectId, message),
    }),
    transactionalWhatsApp: new TransactionalWhatsAppService(db, delivery, { templates: whatsappTemplates, contacts }, clock),
    whatsappTemplates,
    whatsappWebhook,
    idempotency: new IdempotencyService(db),
    automations,
    automationExecutor,
    events: new EventService(db, automations, () => automationExecutor.notify()),
    close: async () => {
      // Reset mails still being sent go before the pools close.
      await passwordResets.settled();
      await Promise.all([push.close(), email.close(), sms.close(), whatsapp.close()]);
    },
  };
}
