// Starts and stops Herald's process roles: `serve` (everything), `api` (HTTP only), `worker` (jobs only) and `smtp-in`
// (inbound bounces only).
import { Redis } from 'ioredis';
import type { Runner } from 'graphile-worker';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import { acquireDatabase, type DatabaseServer } from './db/connect.js';
import { migrateDatabase, openDatabase, type Database } from './db/database.js';
import { buildApp } from './app/app.js';
import { buildMetricsApp, createMetricsRegistry } from './app/metrics.js';
import type { App } from './http/types.js';
import { createTaskList, cronItems } from './app/task-list.js';
import { migrateWorkerSchema, startWorker } from './jobs/worker.js';
import { resolveJwtSecret } from './modules/auth/index.js';
import { bootstrapFirstRun, type FirstRun } from './modules/organizations/index.js';
import { createServices } from './services.js';
import { startSmtpIn } from './smtp-in/smtp-in-server.js';

export type ProcessRole = 'serve' | 'api' | 'worker' | 'smtp-in';

export interface Herald {
  app: App | undefined;
  /** The address the HTTP server listens on, when this role serves HTTP. */
  url: string | undefined;
  /** The address of the metrics listener, when METRICS_PORT is set. */
  metricsUrl: string | undefined;
  /** The inbound SMTP listener's `host:port`, when this process runs one. */
  smtpInAddress: string | undefined;
  stop(): Promise<void>;
}

export interface StartOptions {
  /** Shown the first-run credentials once; they are never logged. */
  onFirstRun?: (firstRun: FirstRun) => void;
}

export async function migrateAll(connectionString: string, logger: Logger): Promise<void> {
  await migrateDatabase(connectionString);
  const database = openDatabase(connectionString, 2);
  try {
    await migrateWorkerSchema(database.pool, logger);
  } finally {
    await database.close();
  }
}

export async function startHerald(role: ProcessRole, config: Config, logger: Logger, options: StartOptions = {}): Promise<Herald> {
  if (role !== 'serve' && !config.databaseUrl) {
    throw new Error(`herald ${role} needs DATABASE_URL: split roles share one external PostgreSQL (use herald serve for the embedded one)`);
  }
  const cleanups: (() => Promise<void>)[] = [];
  const stopAll = async () => {
    for (const cleanup of cleanups.splice(0).reverse()) {
      await cleanup().catch((error: unknown) => logger.error({ err: error }, 'error during shutdown'));
    }
  };

  try {
    const server: DatabaseServer = await acquireDatabase(config, (message) => logger.info(message));
    cleanups.push(() => server.release());
    await migrateAll(server.connectionString, logger);

    const database: Database = openDatabase(server.connectionString, config.dbPoolMax);
    cleanups.push(() => database.close());
    // With REDIS_URL, API instances share rate-limit counters in it and workers the providers' send rates.
    const redis = config.redisUrl ? new Redis(config.redisUrl, { maxRetriesPerRequest: 1, connectTimeout: 2000 }) : undefined;
    if (redis) {
      redis.on('error', (error) => logger.warn({ err: error }, 'redis error'));
      cleanups.push(async () => void (await redis.quit()));
    }
    const services = createServices(database.db, config, await resolveJwtSecret(database.db, config.jwtSecret), { logger, redis });
    cleanups.push(() => services.close());
    // Credentials a migration copied in the clear are sealed before anything reads them.
    const sealed = await services.channels.sealUnsealed();
    if (sealed > 0) logger.info({ sealed }, 'sealed channel credentials with HERALD_SECRET_KEY');

    let smtpInAddress: string | undefined;
    if (role === 'smtp-in' || (role === 'serve' && config.email.smtpIn.port !== undefined)) {
      const smtpIn = await startSmtpIn(
        services.inboundMail,
        { ...config.email.smtpIn, port: config.email.smtpIn.port ?? 25, bounceDomain: config.email.bounceDomain },
        logger.child({ component: 'smtp-in' }),
      );
      cleanups.push(() => smtpIn.close());
      smtpInAddress = smtpIn.address;
    }
    if (role === 'smtp-in') return { app: undefined, url: undefined, metricsUrl: undefined, smtpInAddress, stop: stopAll };

    let runner: Runner | undefined;
    if (role !== 'api') {
      runner = await startWorker({
        pool: database.pool,
        logger,
        concurrency: config.workerConcurrency,
        taskList: createTaskList(services),
        cronItems,
      });
      cleanups.push(() => runner!.stop());
      services.delivery.start();
      const unlisten = await services.delivery.watchChanges(database.pool.options);
      cleanups.push(async () => {
        await unlisten();
        await services.delivery.stop();
      });
      services.automationExecutor.start();
      cleanups.push(() => services.automationExecutor.stop());
    } else {
      // No loop here, but transactional sends go through the engine inline: their projects' sending settings and
      // domains are kept in memory while this listener hears of their changes.
      const unlisten = await services.delivery.watchChanges(database.pool.options, { deliveries: false });
      cleanups.push(unlisten);
    }

    let app: App | undefined;
    let url: string | undefined;
    let metricsUrl: string | undefined;
    if (role !== 'worker') {
      const firstRun = await bootstrapFirstRun(database.db, services.keyring, { email: config.adminEmail, password: config.adminPassword });
      if (firstRun) options.onFirstRun?.(firstRun);
      const metrics = createMetricsRegistry();
      app = await buildApp({ config, logger, pool: database.pool, services, redis, metrics });
      // Closing the app stops accepting connections and waits for in-flight requests; it runs before the pool closes.
      cleanups.push(() => app!.close());
      url = await app.listen({ port: config.port, host: config.host });
      if (config.metrics.port !== undefined) {
        const metricsApp = await buildMetricsApp(metrics, config, logger);
        cleanups.push(() => metricsApp.close());
        metricsUrl = await metricsApp.listen({ port: config.metrics.port, host: config.metrics.host });
      }
    }
    return { app, url, metricsUrl, smtpInAddress, stop: stopAll };
  } catch (error) {
    await stopAll();
    throw error;
  }
}
