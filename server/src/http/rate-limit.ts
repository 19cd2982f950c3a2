// Per-IP rate limits (spec 8): default, ingest and one counter per transactional route, declared on each route,
// optionally shared via Redis.
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import type { Config } from '../config.js';
import { AppError } from '../shared/errors.js';

type Group = 'default' | 'ingest' | 'transactional';

/** A route's rate-limit counter, declared beside its access: `ingest`, or `transactional:<route>` (one counter each). */
export type RateLimitCounter = 'ingest' | `transactional:${string}`;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Routes that declare none draw from the default counter (`rateLimit` is the plugin's own per-route option). */
    rateLimitCounter?: RateLimitCounter;
  }
}

/** The group (whose limit applies) and the counter a route's declaration means. */
export function rateLimitGroup(declared: RateLimitCounter | undefined): { group: Group; counter: string } {
  if (!declared) return { group: 'default', counter: 'default' };
  return { group: declared === 'ingest' ? 'ingest' : 'transactional', counter: declared };
}

export async function registerRateLimits(app: FastifyInstance, config: Config, redis: Redis | undefined) {
  if (!config.rateLimit.enabled) return;
  const limits = config.rateLimit;
  const groupOf = (request: FastifyRequest) => rateLimitGroup(request.routeOptions.config?.rateLimitCounter);
  await app.register(rateLimit, {
    global: true,
    timeWindow: limits.windowSeconds * 1000,
    ...(redis && { redis, nameSpace: 'herald:rate:', skipOnError: true }),
    keyGenerator: (request) => `${groupOf(request).counter}|${request.ip}`,
    max: (request) => {
      const { group } = groupOf(request);
      const raised = request.credentials?.apiKey?.settings.rateLimits?.[group] ?? 0;
      return Math.max(limits[group], raised);
    },
    errorResponseBuilder: () => new AppError(429, 'rate_limited', 'Rate limit exceeded'),
  });
}
