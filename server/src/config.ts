// Herald's configuration: the one schema for every setting and the sole reader of process.env.
import { availableParallelism } from 'node:os';
import { z } from 'zod';

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

const envSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().min(1).default('0.0.0.0'),
  PUBLIC_URL: z.url({ protocol: /^https?$/ }).optional(),
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }).optional(),
  DATA_DIR: z.string().min(1).default('./data'),
  DB_POOL_MAX: integer(10),
  JWT_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
  JWT_TTL: duration('7d'),
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
  // Several batches in flight, so claiming, encrypting, sending and recording overlap (docs/PERFORMANCE.md).
  DELIVERY_BATCH_SIZE: integer(125),
  DELIVERY_CONCURRENCY: integer(375),
  DELIVERY_LEASE: duration('2m'),
  DELIVERY_MAX_ATTEMPTS: integer(5),
  DELIVERY_RETRY_BASE_MS: integer(1000),
  DELIVERY_RETRY_MAX: duration('1h'),
  DELIVERY_POLL_INTERVAL_MS: integer(1000),
  TRANSACTIONAL_RETRY_BUDGET_MS: integer(3000, 0),
  CAMPAIGN_SCHEDULE_GRACE: duration('1h'),
  PUSH_CONNECTIONS_PER_ORIGIN: integer(32),
  PUSH_RATE_PER_ORIGIN: integer(0, 0),
  PUSH_TIMEOUT_MS: integer(15000),
  // Encryption beside the event loop wherever there is a second core (docs/PERFORMANCE.md, "Push delivery").
  PUSH_ENCRYPTION_THREADS: integer(availableParallelism() > 1 ? 2 : 0, 0),
  VAPID_SUBJECT: z
    .string()
    .regex(/^(mailto:[^@\s]+@[^@\s]+|https:\/\/\S+)$/, 'must be a mailto: address or an https: URL')
    .optional(),
  GEOIP_DB: z.string().min(1).optional(),
  GEO_COUNTRY_HEADER: headerList,
  GEO_CITY_HEADER: headerList,
  GEO_TIMEZONE_HEADER: headerList,
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
  /** The delivery engine: batches, leases, retries and per-origin limits of each provider. */
  delivery: {
    batchSize: number;
    /** Sends in flight per worker process. */
    concurrency: number;
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
  /** Geo at registration: a MaxMind-format database and/or trusted edge headers (none by default). */
  geo: {
    dbPath: string | undefined;
    countryHeaders: string[];
    cityHeaders: string[];
    timezoneHeaders: string[];
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
    delivery: {
      batchSize: e.DELIVERY_BATCH_SIZE,
      concurrency: e.DELIVERY_CONCURRENCY,
      leaseSeconds: e.DELIVERY_LEASE,
      maxAttempts: e.DELIVERY_MAX_ATTEMPTS,
      retryBaseMs: e.DELIVERY_RETRY_BASE_MS,
      retryMaxSeconds: e.DELIVERY_RETRY_MAX,
      pollIntervalMs: e.DELIVERY_POLL_INTERVAL_MS,
      transactionalRetryBudgetMs: e.TRANSACTIONAL_RETRY_BUDGET_MS,
    },
    campaigns: { scheduleGraceSeconds: e.CAMPAIGN_SCHEDULE_GRACE },
    push: {
      connectionsPerOrigin: e.PUSH_CONNECTIONS_PER_ORIGIN,
      ratePerOrigin: e.PUSH_RATE_PER_ORIGIN,
      timeoutMs: e.PUSH_TIMEOUT_MS,
      encryptionThreads: e.PUSH_ENCRYPTION_THREADS,
      vapidSubject: e.VAPID_SUBJECT ?? (e.ADMIN_EMAIL ? `mailto:${e.ADMIN_EMAIL}` : publicUrl),
    },
    geo: {
      dbPath: e.GEOIP_DB,
      countryHeaders: e.GEO_COUNTRY_HEADER,
      cityHeaders: e.GEO_CITY_HEADER,
      timezoneHeaders: e.GEO_TIMEZONE_HEADER,
    },
  };
}
