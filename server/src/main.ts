// The `herald` command line: serve | api | worker | migrate | admin …
import v8 from 'node:v8';
import { ConfigError, loadConfig, type Config } from './config.js';
import { joinDatabase } from './db/connect.js';
import { openDatabase } from './db/database.js';
import { DataDirLockedError } from './db/embedded-postgres.js';
import { openApiDocument } from './app/openapi-document.js';
import { createLogger } from './logger.js';
import { runAdminCommand } from './cli/admin.js';
import { createKeyring } from './modules/channels/index.js';
import { migrateAll, startHerald, type Herald, type ProcessRole } from './runtime.js';
import type { FirstRun } from './modules/organizations/index.js';

const USAGE = `Usage: herald <command>

Commands:
  serve     API, dashboard, docs and workers in one process (embedded PostgreSQL unless DATABASE_URL is set)
  api       the HTTP API only (needs DATABASE_URL)
  worker    background jobs only (needs DATABASE_URL)
  smtp-in   the inbound SMTP listener for bounces at EMAIL_BOUNCE_DOMAIN only (needs DATABASE_URL; serve runs it
            too when SMTP_IN_PORT is set)
  migrate   apply database migrations and exit
  admin     create users, organizations, projects and API keys (herald admin --help)
  openapi   print the OpenAPI document (what /docs/json serves) without a database
`;

/**
 * A stop signal repeated this soon is one signal delivered twice, not a person insisting: a terminal's Ctrl-C,
 * `systemctl stop` and `kill -TERM -<pgid>` signal the whole process group, and npm passes on to Herald what it got
 * too, within a millisecond. Later, a repeat (Ctrl-C again on a stop that hangs) forces the exit.
 */
const REPEATED_SIGNAL_GRACE_MS = 3_000;

function printFirstRun(firstRun: FirstRun, config: Config) {
  const lines = [
    '',
    '  Herald is set up. These credentials are shown once and never again:',
    '',
    `    Dashboard login   ${firstRun.email}`,
    `    Password          ${firstRun.generatedPassword ?? '(ADMIN_PASSWORD)'}`,
    `    Organization      ${firstRun.organizationId}`,
    `    Project "Demo"    ${firstRun.projectId}`,
    `    Live API key      ${firstRun.liveKey}`,
    `    Test API key      ${firstRun.testKey}`,
    `    Publishable key   ${firstRun.publishableKey}   (for web pages: the browser SDK's routes only)`,
    '',
    `  Dashboard: ${config.publicUrl}/app/`,
    `  API docs:  ${config.publicUrl}/docs`,
    '',
  ];
  process.stdout.write(lines.join('\n') + '\n');
}

async function runRole(role: ProcessRole, config: Config) {
  // V8 tenures the objects of an allocation site once most of a sample survive a scavenge, and keeps that decision:
  // after a few reach and analytics calls, the rows of every later CSV export were allocated in the old space, 24 MB
  // of garbage per 100,000 rows until a full collection. Without it the HTTP roles stay within their memory bound, for
  // ~5% more CPU per registration (docs/PERFORMANCE.md, Export memory).
  if (role !== 'worker') v8.setFlagsFromString('--no-allocation-site-pretenuring');
  const logger = createLogger(config.logLevel);
  const starting = startHerald(role, config, logger, { onFirstRun: (firstRun) => printFirstRun(firstRun, config) });
  let stopAskedAt: number | undefined;
  const stop = (running: Herald) =>
    running.stop().then(
      () => {
        logger.info('herald stopped');
        process.exit(0);
      },
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  // A forced exit and the shutdown timeout leave the graceful stop unfinished: the embedded PostgreSQL's exit hook
  // (db/embedded-postgres.ts) still stops it before the process is gone.
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopAskedAt === undefined) {
      stopAskedAt = Date.now();
      logger.info({ signal }, 'shutting down');
      const timer = setTimeout(() => {
        logger.error('shutdown timed out');
        process.exit(1);
      }, config.shutdownTimeoutSeconds * 1000);
      timer.unref();
      // A failed start is main's to report.
      void starting.then(stop, () => undefined);
      return;
    }
    if (Date.now() - stopAskedAt < REPEATED_SIGNAL_GRACE_MS) {
      logger.info({ signal }, 'already shutting down: signal ignored');
      return;
    }
    logger.warn({ signal }, 'signal repeated while shutting down: exiting now');
    process.exit(1);
  };
  // From the start on: Ctrl-C during a long migration stops Herald once it is up, or forces the exit if repeated.
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const herald = await starting;
  logger.info({ role, url: herald.url, metricsUrl: herald.metricsUrl, smtpIn: herald.smtpInAddress }, 'herald started');
}

async function runMigrate(config: Config) {
  const logger = createLogger(config.logLevel);
  const server = await joinDatabase(config, (message) => logger.info(message));
  try {
    await migrateAll(server.connectionString, logger);
    logger.info('migrations applied');
  } finally {
    await server.release();
  }
}

async function main(argv: string[]) {
  const [command, ...rest] = argv;
  if (!command || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(USAGE);
    return;
  }
  const config = loadConfig();
  switch (command) {
    case 'serve':
    case 'api':
    case 'worker':
    case 'smtp-in':
      return runRole(command, config);
    case 'migrate':
      return runMigrate(config);
    case 'admin': {
      const logger = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel);
      const server = await joinDatabase(config, (message) => logger.info(message));
      await migrateAll(server.connectionString, logger);
      const database = openDatabase(server.connectionString, 2);
      try {
        process.exitCode = await runAdminCommand(database.db, createKeyring(database.db, config.secretKey), rest);
      } finally {
        await database.close();
        await server.release();
      }
      return;
    }
    case 'openapi':
      process.stdout.write(`${JSON.stringify(await openApiDocument(config), null, 2)}\n`);
      return;
    default:
      process.stderr.write(`Unknown command: ${command}\n\n${USAGE}`);
      process.exitCode = 2;
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof ConfigError) {
    process.stderr.write(`${error.message}\n`);
    process.exit(2);
  }
  if (error instanceof DataDirLockedError) {
    process.stderr.write(`${error.message}\n`);
    process.exit(3);
  }
  process.stderr.write(`herald: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
