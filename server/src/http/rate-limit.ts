// Per-IP rate limits (spec 8): default, ingest and one counter per transactional route, optionally shared via Redis.
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import type { Config } from '../config.js';
import { AppError } from '../shared/errors.js';

type Group = 'default' | 'ingest' | 'transactional';

/** Which counter a route draws from, decided by its path so no route can be left out. */
export function rateLimitGroup(url: string): { group: Group; counter: string } {
  // The send log (/transactional/sends/…) is a read, not a send: it stays in the default group.
  const transactional = /^\/transactional\/(?!sends(?:\/|$))([^/]+)/.exec(url);
  if (transactional) return { group: 'transactional', counter: `transactional:${transactional[1]}` };
  if (url === '/subscribers' || url.startsWith('/subscribers/')) return { group: 'ingest', counter: 'ingest' };
  return { group: 'default', counter: 'default' };
}

export async function registerRateLimits(app: FastifyInstance, config: Config, redis: Redis | undefined) {
  if (!config.rateLimit.enabled) return;
  const limits = config.rateLimit;
  const groupOf = (request: FastifyRequest) => rateLimitGroup(request.routeOptions.url ?? request.url);
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
