// Prometheus metrics: process defaults plus request counts and latencies by route, served only to a scraper.
import { createHash, timingSafeEqual } from 'node:crypto';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import type { Logger } from 'pino';
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';
import { z } from 'zod';
import type { Config } from '../config.js';
import { AppError } from '../shared/errors.js';
import { clientErrorHandler, frameworkErrors, registerErrorHandling } from '../http/errors.js';
import { errorEnvelope } from '../http/schemas.js';

export function createMetricsRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'herald_' });
  return registry;
}

export function registerMetrics(app: FastifyInstance, registry: Registry) {
  const requests = new Counter({
    name: 'herald_http_requests_total',
    help: 'HTTP requests by method, route and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'herald_http_request_duration_seconds',
    help: 'HTTP request latency by method and route',
    labelNames: ['method', 'route'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    requests.inc({ method: request.method, route, status: reply.statusCode });
    duration.observe({ method: request.method, route }, reply.elapsedTime / 1000);
  });
}

const digest = (value: string) => createHash('sha256').update(value).digest();

/** Refuses a request whose `Authorization: Bearer` is not `token`, comparing digests in constant time. */
function requireBearer(token: string) {
  const expected = digest(token);
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const given = /^Bearer (\S+)$/i.exec(request.headers.authorization ?? '')?.[1];
    if (given === undefined || !timingSafeEqual(digest(given), expected)) {
      reply.header('www-authenticate', 'Bearer');
      throw new AppError(401, 'unauthorized', 'Invalid or missing metrics token');
    }
  };
}

/**
 * GET /metrics on `app`. Public to whoever reaches the listener when `token` is undefined (the loopback metrics
 * listener), else only with `Authorization: Bearer <token>`.
 */
export function metricsRoute(app: FastifyInstance, registry: Registry, token: string | undefined) {
  app.get(
    '/metrics',
    {
      config: { access: { auth: 'public' }, rateLimit: false },
      ...(token !== undefined && { onRequest: requireBearer(token) }),
      schema: {
        tags: ['Operations'],
        summary: 'Prometheus metrics (needs METRICS_TOKEN)',
        description:
          'Served on the API port only when `METRICS_TOKEN` is set and `METRICS_PORT` is not, to `Authorization: Bearer ' +
          '<METRICS_TOKEN>`; with `METRICS_PORT` it is served on that listener instead (127.0.0.1 by default), and with ' +
          'neither it is not served.',
        produces: ['text/plain'],
        ...(token !== undefined && { security: [{ metricsToken: [] }] }),
        response: { 200: z.string().describe('Prometheus text exposition format'), 401: errorEnvelope },
      },
    },
    async (_request, reply) => reply.type(registry.contentType).send(await registry.metrics()),
  );
}

/** The listener of METRICS_PORT: /metrics alone (bearer-checked too when METRICS_TOKEN is set), answers in the envelope. */
export async function buildMetricsApp(registry: Registry, config: Config, logger: Logger): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: logger.child({ listener: 'metrics' }) as FastifyBaseLogger,
    disableRequestLogging: true,
    frameworkErrors,
    clientErrorHandler,
  });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  registerErrorHandling(app);
  metricsRoute(app, registry, config.metrics.token);
  await app.ready();
  return app;
}
