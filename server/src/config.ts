// Herald's configuration: the one schema for every setting and the sole reader of process.env.
import { isIPv4, isIPv6 } from 'node:net';
import { availableParallelism } from 'node:os';
import { z } from 'zod';
import type { Channel } from './db/schema.js';

/** Hosts the operator lets tenants connect to whatever their addresses (OUTBOUND_ALLOWED_HOSTS): a relay on localhost. */
export interface AllowedHosts {
  /** Host names, lower-case, without a trailing dot. */
  names: string[];
  /** Addresses and subnets: any resolved address inside one passes. */
  subnets: { network: string; prefix: number; family: 'ipv4' | 'ipv6' }[];
}

const durationPattern = /^(\d+)\s*(ms|s|m|h|d)?$/;
const unitSeconds = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86400 } as const;

/** Parses `900`, `15m`, `12h` or `7d` into whole seconds. */
export function parseDurationSeconds(value: string): number | undefined {
  const match = durationPattern.exec(value.trim());
  if (!match) return undefined;
  const unit = (match[2] ?? 's') as keyof typeof unitSeconds;
  const seconds = Math.floor(Number(match[1]) * unitSeconds[unit]);
  return seconds > 0 ? seconds : undefined;
}

const duration = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((value, ctx) => {
      const seconds = parseDurationSeconds(value);
      if (seconds === undefined) {
        ctx.addIssue({ code: 'custom', message: 'must be a duration such as 900, 15m, 12h or 7d' });
        return z.NEVER;
      }
      return seconds;
    });

const integer = (fallback: number, min = 1) => z.coerce.number().int().min(min).default(fallback);
const boolean = (fallback: boolean) =>
  z
    .enum(['true', 'false', '1', '0', 'yes', 'no'])
    .default(fallback ? 'true' : 'false')
    .transform((v) => v === 'true' || v === '1' || v === 'yes');

/** A comma-separated list of HTTP header names (lower-cased), e.g. `cf-ipcountry,x-vercel-ip-country`. */
const headerList = z
  .string()
  .optional()
  .transform((value, ctx) => {
    const names = (value ?? '')
      .split(',')
      .map((name) => name.trim().toLowerCase())
      .filter(Boolean);
    if (names.some((name) => !/^[a-z0-9!#$%&'*+.^_`|~-]+$/.test(name))) {
      ctx.addIssue({ code: 'custom', message: 'must be comma-separated HTTP header names' });
      return z.NEVER;
    }
    return names;
  });

/** `ip[:port]` servers, comma-separated (IPv6 with a port in brackets: `[::1]:53`), as `Resolver.setServers` takes them. */
const dnsServerList = z
  .string()
  .optional()
  .transform((value, ctx) => {
    const servers = (value ?? '')
      .split(',')
      .map((server) => server.trim())
      .filter(Boolean);
    const valid = (server: string) => {
      if (isIPv6(server)) return true;
      const match = /^(?:\[(.+)\]|([\d.]+))(?::(\d{1,5}))?$/.exec(server);
      const port = Number(match?.[3] ?? 53);
      return match !== null && (match[1] ? isIPv6(match[1]) : isIPv4(match[2]!)) && port >= 1 && port <= 65535;
    };
    if (servers.some((server) => !valid(server))) {
      ctx.addIssue({ code: 'custom', message: 'must be comma-separated IP addresses, each with an optional port: 10.0.0.2, 127.0.0.1:5353, [::1]:53' });
      return z.NEVER;
    }
    return servers;
  });

/**
 * OUTBOUND_ALLOWED_HOSTS: comma-separated host names and addresses or CIDR subnets (`relay.internal`, `127.0.0.1`,
 * `10.0.0.0/8`, `::1`, `fd00::/8`) that tenant-configured hosts may be or resolve to despite the outbound guard.
 */
const allowedHostList = z
  .string()
  .optional()
  .transform((value, ctx) => {
    const names: string[] = [];
    const subnets: AllowedHosts['subnets'] = [];
    for (const entry of (value ?? '').split(',').map((item) => item.trim().toLowerCase()).filter(Boolean)) {
      const [address = '', prefixText, extra] = entry.split('/');
      const family = isIPv4(address) ? 'ipv4' : isIPv6(address) ? 'ipv6' : undefined;
      const bits = family === 'ipv4' ? 32 : 128;
      const prefix = prefixText === undefined ? bits : /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : NaN;
      if (family && extra === undefined && prefix >= 0 && prefix <= bits) subnets.push({ network: address, prefix, family });
      else if (prefixText === undefined && /^([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9])?\.)*[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9])?\.?$/.test(entry)) names.push(entry.replace(/\.+$/, ''));
      else {
        ctx.addIssue({ code: 'custom', message: `must be comma-separated host names, addresses and CIDR subnets (127.0.0.1, relay.internal, 10.0.0.0/8): ${entry}` });
        return z.NEVER;
      }
    }
    return { names, subnets };
  });

const envSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().min(1).default('0.0.0.0'),
  PUBLIC_URL: z.url({ protocol: /^https?$/ }).optional(),
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }).optional(),
  DATA_DIR: z.string().min(1).default('./data'),
  DB_POOL_MAX: integer(10),
  JWT_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
  JWT_TTL: duration('7d'),
  HERALD_SECRET_KEY: z.string().min(32, 'must be at least 32 characters').optional(),
  HERALD_SECRET_KEY_PREVIOUS: z.string().min(32, 'must be at least 32 characters').optional(),
  ADMIN_EMAIL: z.email().optional(),
  ADMIN_PASSWORD: z.string().min(8, 'must be at least 8 characters').optional(),
  REDIS_URL: z.url({ protocol: /^rediss?$/ }).optional(),
  METRICS_TOKEN: z.string().min(32, 'must be at least 32 characters (e.g. openssl rand -hex 16)').optional(),
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  METRICS_HOST: z.string().min(1).default('127.0.0.1'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  TRUST_PROXY: boolean(false),
  RATE_LIMIT_ENABLED: boolean(true),
  RATE_LIMIT_WINDOW: duration('1m'),
  RATE_LIMIT_DEFAULT: integer(600),
  RATE_LIMIT_INGEST: integer(120),
  RATE_LIMIT_TRANSACTIONAL: integer(120),
  WORKER_CONCURRENCY: integer(4),
  SHUTDOWN_TIMEOUT: duration('30s'),
  ALLOW_INSECURE_PUSH_ENDPOINTS: boolean(false),
  OUTBOUND_ALLOWED_HOSTS: allowedHostList,
  // Several batches in flight, so claiming, encrypting, sending and recording overlap (docs/PERFORMANCE.md).
  DELIVERY_BATCH_SIZE: integer(125),
  DELIVERY_CONCURRENCY: integer(375),
  DELIVERY_EMAIL_CONCURRENCY: integer(50),
  DELIVERY_SMS_CONCURRENCY: integer(20),
  DELIVERY_WHATSAPP_CONCURRENCY: integer(20),
  DELIVERY_LEASE: duration('2m'),
  DELIVERY_MAX_ATTEMPTS: integer(5),
  DELIVERY_RETRY_BASE_MS: integer(1000),
  DELIVERY_RETRY_MAX: duration('1h'),
  DELIVERY_POLL_INTERVAL_MS: integer(1000),
  TRANSACTIONAL_RETRY_BUDGET_MS: integer(3000, 0),
  CAMPAIGN_SCHEDULE_GRACE: duration('1h'),
  // Spec 3.3 and 8: a lock expires after 5 minutes; due steps are looked for every second, within the minute's tick.
  AUTOMATION_LOCK: duration('5m'),
  AUTOMATION_POLL_INTERVAL_MS: integer(1000),
  AUTOMATION_BATCH_SIZE: integer(500),
  AUTOMATION_CONCURRENCY: integer(2),
  PUSH_CONNECTIONS_PER_ORIGIN: integer(32),
  PUSH_RATE_PER_ORIGIN: integer(0, 0),
  PUSH_TIMEOUT_MS: integer(15000),
  // Encryption beside the event loop wherever there is a second core (docs/PERFORMANCE.md, "Push delivery").
  PUSH_ENCRYPTION_THREADS: integer(availableParallelism() > 1 ? 2 : 0, 0),
  EMAIL_BOUNCE_DOMAIN: z
    .string()
    .regex(/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/i, 'must be a domain name')
    .optional(),
  EMAIL_LINK_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
  SMTP_IN_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  SMTP_IN_HOST: z.string().min(1).default('0.0.0.0'),
  SMTP_IN_MAX_BYTES: integer(10 * 1024 * 1024),
  EMAIL_LINK_SECRETS_PREVIOUS: z
    .string()
    .optional()
    .transform((value, ctx) => {
      const secrets = (value ?? '')
        .split(',')
        .map((secret) => secret.trim())
        .filter(Boolean);
      if (secrets.some((secret) => secret.length < 32)) {
        ctx.addIssue({ code: 'custom', message: 'must be comma-separated secrets of at least 32 characters each' });
        return z.NEVER;
      }
      return secrets;
    }),
  EMAIL_SMTP_CONNECTIONS: integer(5),
  EMAIL_SMTP_TIMEOUT_MS: integer(30000),
  EMAIL_SMTP_CA_FILE: z.string().min(1).optional(),
  SES_ENDPOINT: z.url({ protocol: /^https?$/ }).optional(),
  SES_TIMEOUT_MS: integer(15000),
  WHATSAPP_GRAPH_URL: z.url({ protocol: /^https?$/ }).default('https://graph.facebook.com'),
  WHATSAPP_GRAPH_VERSION: z
    .string()
    .regex(/^v\d+\.\d+$/, 'must be a Graph API version such as v21.0')
    .default('v21.0'),
  WHATSAPP_TIMEOUT_MS: integer(15000),
  TWILIO_BASE_URL: z.url({ protocol: /^https?$/ }).default('https://api.twilio.com'),
  TWILIO_TIMEOUT_MS: integer(15000),
  VAPID_SUBJECT: z
    .string()
    .regex(/^(mailto:[^@\s]+@[^@\s]+|https:\/\/\S+)$/, 'must be a mailto: address or an https: URL')
    .optional(),
  GEOIP_DB: z.string().min(1).optional(),
  GEO_COUNTRY_HEADER: headerList,
  GEO_CITY_HEADER: headerList,
  GEO_TIMEZONE_HEADER: headerList,
  DNS_SERVERS: dnsServerList,
  SES_SNS_TOPIC_ARNS: z
    .string()
    .optional()
    .transform((value) => (value ?? '').split(',').map((arn) => arn.trim()).filter(Boolean))
    .pipe(z.array(z.string().regex(/^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[\w-]{1,256}$/, 'must be SNS topic ARNs such as arn:aws:sns:us-east-1:123456789012:herald-ses'))),
  SNS_MAX_AGE: duration('1h'),
  EMAIL_SPF_INCLUDE: z
    .string()
    .trim()
    .toLowerCase()
    .regex(/^(?=.{1,253}$)([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{1,62}$/, 'must be a domain name such as _spf.mail.example.com')
    .optional(),
});

export type Env = Record<string, string | undefined>;

export interface Config {
  port: number;
  host: string;
  publicUrl: string;
  databaseUrl: string | undefined;
  dataDir: string;
  dbPoolMax: number;
  jwtSecret: string | undefined;
  jwtTtlSeconds: number;
  /** Seals channel credentials at rest; the previous key only opens (during a rotation). */
  secretKey: { current: string | undefined; previous: string | undefined };
  adminEmail: string | undefined;
  adminPassword: string | undefined;
  redisUrl: string | undefined;
  logLevel: z.infer<typeof envSchema>['LOG_LEVEL'];
  /**
   * Where Prometheus scrapes /metrics: on a listener of its own (`port`, on `host`), else on the API port only with
   * the bearer `token`; with neither, nowhere.
   */
  metrics: { token: string | undefined; port: number | undefined; host: string };
  trustProxy: boolean;
  rateLimit: {
    enabled: boolean;
    windowSeconds: number;
    default: number;
    ingest: number;
    transactional: number;
  };
  workerConcurrency: number;
  shutdownTimeoutSeconds: number;
  /** Accept http:// push endpoints on loopback hosts (local testing against a fake push service only). */
  allowInsecurePushEndpoints: boolean;
  /** Hosts tenants may point Herald at (an SMTP relay) though the outbound guard refuses their addresses. */
  outboundAllowedHosts: AllowedHosts;
  /** The delivery engine: batches, leases, retries and per-origin limits of each provider. */
  delivery: {
    batchSize: number;
    /**
     * Sends in flight per worker process, per channel: each channel is a lane of its own, so a slow provider on one
     * cannot hold the others' work back.
     */
    concurrency: Record<Channel, number>;
    leaseSeconds: number;
    maxAttempts: number;
    retryBaseMs: number;
    retryMaxSeconds: number;
    pollIntervalMs: number;
    /** How long POST /transactional/send may wait for retries before answering provider_error. */
    transactionalRetryBudgetMs: number;
  };
  campaigns: {
    /** How late a scheduled campaign may still be sent (Herald was down at its time); later it fails as schedule_missed. */
    scheduleGraceSeconds: number;
  };
  automations: {
    /** How long an executor holds the enrollments it claimed; then another may take them over (spec 8: 5 minutes). */
    lockSeconds: number;
    /** How often an idle executor looks for due steps. */
    pollIntervalMs: number;
    /** Enrollments claimed and run per pass. */
    batchSize: number;
    /** Passes in flight per process. */
    concurrency: number;
  };
  push: {
    connectionsPerOrigin: number;
    /** Requests per second per push-service origin; 0 = unlimited. */
    ratePerOrigin: number;
    timeoutMs: number;
    /** Worker threads encrypting payloads (0: on the event loop). */
    encryptionThreads: number;
    /** VAPID `sub` when the project sets none. */
    vapidSubject: string;
  };
  email: {
    /** Herald's inbound mail domain: VERP Return-Paths (`bounce+<token>@…`) and mailto unsubscribes (`unsubscribe+<token>@…`). */
    bounceDomain: string;
    /** Signs tracking and unsubscribe links; unset, the instance's JWT secret does (docs/CONTEXT.md, "Email links"). */
    linkSecret: string | undefined;
    /** Secrets links were signed with before a rotation: they still verify, never sign. */
    linkSecretsPrevious: string[];
    /** Pooled connections per SMTP server and account, per worker process. */
    smtpConnections: number;
    smtpTimeoutMs: number;
    /** A PEM file of CA certificates SMTP servers' certificates may chain to, besides Node's bundled roots. */
    smtpCaFile: string | undefined;
    /** Amazon SES: another endpoint than each region's (a VPC endpoint; a local fake in tests), and each request's timeout. */
    ses: { endpoint: string | undefined; timeoutMs: number };
    /** The inbound SMTP listener for bounces (`herald smtp-in`; in `serve` only when a port is set). */
    smtpIn: { port: number | undefined; host: string; maxBytes: number };
  };
  /** Meta's WhatsApp Cloud API: the Graph base URL (a local fake in tests) and version, and each request's timeout. */
  whatsapp: { graphUrl: string; version: string; timeoutMs: number };
  /** SMS: Twilio's API (TWILIO_BASE_URL: another base than https://api.twilio.com — a local fake in tests) and each call's timeout. */
  sms: { twilio: { baseUrl: string; timeoutMs: number } };
  /** Geo at registration: a MaxMind-format database and/or trusted edge headers (none by default). */
  geo: {
    dbPath: string | undefined;
    countryHeaders: string[];
    cityHeaders: string[];
    timezoneHeaders: string[];
  };
  /** Projects' sending domains: where their DNS records are looked up, and the SPF include they are advised to publish. */
  emailDomains: {
    /** Resolvers the verification asks (`ip[:port]`); empty: the system's. */
    dnsServers: string[];
    /** The domain whose SPF record lists the sending hosts (`include:` it); unset: `a mx` is advised instead. */
    spfInclude: string | undefined;
  };
  /** Amazon SES notifications through SNS: the topics Herald subscribed to, and how old a message may be. */
  sesWebhook: {
    topicArns: string[];
    maxAgeSeconds: number;
  };
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Reads and validates the environment; throws a ConfigError naming every bad key at once. */
export function loadConfig(env: Env = process.env): Config {
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''));
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`));
  }
  const e = parsed.data;
  const publicUrl = (e.PUBLIC_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, '');
  return {
    port: e.PORT,
    host: e.HOST,
    publicUrl,
    databaseUrl: e.DATABASE_URL,
    dataDir: e.DATA_DIR,
    dbPoolMax: e.DB_POOL_MAX,
    jwtSecret: e.JWT_SECRET,
    jwtTtlSeconds: e.JWT_TTL,
    secretKey: { current: e.HERALD_SECRET_KEY, previous: e.HERALD_SECRET_KEY_PREVIOUS },
    adminEmail: e.ADMIN_EMAIL,
    adminPassword: e.ADMIN_PASSWORD,
    redisUrl: e.REDIS_URL,
    logLevel: e.LOG_LEVEL,
    metrics: { token: e.METRICS_TOKEN, port: e.METRICS_PORT, host: e.METRICS_HOST },
    trustProxy: e.TRUST_PROXY,
    rateLimit: {
      enabled: e.RATE_LIMIT_ENABLED,
      windowSeconds: e.RATE_LIMIT_WINDOW,
      default: e.RATE_LIMIT_DEFAULT,
      ingest: e.RATE_LIMIT_INGEST,
      transactional: e.RATE_LIMIT_TRANSACTIONAL,
    },
    workerConcurrency: e.WORKER_CONCURRENCY,
    shutdownTimeoutSeconds: e.SHUTDOWN_TIMEOUT,
    allowInsecurePushEndpoints: e.ALLOW_INSECURE_PUSH_ENDPOINTS,
    outboundAllowedHosts: e.OUTBOUND_ALLOWED_HOSTS,
    delivery: {
      batchSize: e.DELIVERY_BATCH_SIZE,
      concurrency: {
        push: e.DELIVERY_CONCURRENCY,
        email: e.DELIVERY_EMAIL_CONCURRENCY,
        sms: e.DELIVERY_SMS_CONCURRENCY,
        whatsapp: e.DELIVERY_WHATSAPP_CONCURRENCY,
      },
      leaseSeconds: e.DELIVERY_LEASE,
      maxAttempts: e.DELIVERY_MAX_ATTEMPTS,
      retryBaseMs: e.DELIVERY_RETRY_BASE_MS,
      retryMaxSeconds: e.DELIVERY_RETRY_MAX,
      pollIntervalMs: e.DELIVERY_POLL_INTERVAL_MS,
      transactionalRetryBudgetMs: e.TRANSACTIONAL_RETRY_BUDGET_MS,
    },
    campaigns: { scheduleGraceSeconds: e.CAMPAIGN_SCHEDULE_GRACE },
    automations: { lockSeconds: e.AUTOMATION_LOCK, pollIntervalMs: e.AUTOMATION_POLL_INTERVAL_MS, batchSize: e.AUTOMATION_BATCH_SIZE, concurrency: e.AUTOMATION_CONCURRENCY },
    push: {
      connectionsPerOrigin: e.PUSH_CONNECTIONS_PER_ORIGIN,
      ratePerOrigin: e.PUSH_RATE_PER_ORIGIN,
      timeoutMs: e.PUSH_TIMEOUT_MS,
      encryptionThreads: e.PUSH_ENCRYPTION_THREADS,
      vapidSubject: e.VAPID_SUBJECT ?? (e.ADMIN_EMAIL ? `mailto:${e.ADMIN_EMAIL}` : publicUrl),
    },
    email: {
      bounceDomain: (e.EMAIL_BOUNCE_DOMAIN ?? new URL(publicUrl).hostname).toLowerCase(),
      linkSecret: e.EMAIL_LINK_SECRET,
      linkSecretsPrevious: e.EMAIL_LINK_SECRETS_PREVIOUS,
      smtpConnections: e.EMAIL_SMTP_CONNECTIONS,
      smtpTimeoutMs: e.EMAIL_SMTP_TIMEOUT_MS,
      smtpCaFile: e.EMAIL_SMTP_CA_FILE,
      ses: { endpoint: e.SES_ENDPOINT, timeoutMs: e.SES_TIMEOUT_MS },
      smtpIn: { port: e.SMTP_IN_PORT, host: e.SMTP_IN_HOST, maxBytes: e.SMTP_IN_MAX_BYTES },
    },
    whatsapp: { graphUrl: e.WHATSAPP_GRAPH_URL.replace(/\/+$/, ''), version: e.WHATSAPP_GRAPH_VERSION, timeoutMs: e.WHATSAPP_TIMEOUT_MS },
    sms: { twilio: { baseUrl: e.TWILIO_BASE_URL, timeoutMs: e.TWILIO_TIMEOUT_MS } },
    geo: {
      dbPath: e.GEOIP_DB,
      countryHeaders: e.GEO_COUNTRY_HEADER,
      cityHeaders: e.GEO_CITY_HEADER,
      timezoneHeaders: e.GEO_TIMEZONE_HEADER,
    },
    emailDomains: { dnsServers: e.DNS_SERVERS, spfInclude: e.EMAIL_SPF_INCLUDE },
    sesWebhook: { topicArns: e.SES_SNS_TOPIC_ARNS, maxAgeSeconds: e.SNS_MAX_AGE },
  };
}
