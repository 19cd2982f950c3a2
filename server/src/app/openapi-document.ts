// The OpenAPI document without a database: the app is built on a pool that never connects and asked for its document.
import type { Config } from '../config.js';
import { openDatabase } from '../db/database.js';
import { createLogger } from '../logger.js';
import { createServices } from '../services.js';
import { buildApp } from './app.js';

/** What GET /docs/json answers, for tools that run at build time (the dashboard's API types, client generators). */
export async function openApiDocument(config: Config): Promise<Record<string, unknown>> {
  // Routes need their services to be registered, never to be called; pg connects on the first query only.
  const database = openDatabase('postgres://herald@127.0.0.1:1/openapi-document', 1);
  const services = createServices(database.db, { ...config, push: { ...config.push, encryptionThreads: 0 } }, 'openapi-document');
  const app = await buildApp({ config, logger: createLogger('silent'), pool: database.pool, services });
  try {
    // ready() also starts the API key listener, whose refused connection is retried until close() stops it.
    await app.ready();
    return app.swagger() as unknown as Record<string, unknown>;
  } finally {
    await app.close();
    await services.close();
    await database.close();
  }
}
