// Herald's OpenAPI document, built from the server's routes as `herald serve` would serve it at /docs/json, with no database.
import { loadConfig } from '../../../server/src/config.js';
import { openDatabase } from '../../../server/src/db/database.js';
import { buildApp } from '../../../server/src/http/app.js';
import { createLogger } from '../../../server/src/logger.js';
import { createServices } from '../../../server/src/services.js';

export async function heraldOpenApiDocument(): Promise<Record<string, unknown>> {
  // Nothing is queried: the pool connects lazily, and the API key listener retries in the background until closed.
  const config = loadConfig({
    DATABASE_URL: 'postgres://herald@127.0.0.1:1/openapi',
    JWT_SECRET: 'openapi-document-only-openapi-document-only',
    PUBLIC_URL: 'http://localhost:3000',
    LOG_LEVEL: 'silent',
  });
  const database = openDatabase(config.databaseUrl!, 1);
  const services = createServices(database.db, config, config.jwtSecret!);
  const app = await buildApp({ config, logger: createLogger('silent'), pool: database.pool, services });
  try {
    await app.ready();
    return app.swagger() as unknown as Record<string, unknown>;
  } finally {
    await app.close();
    await database.close();
  }
}
