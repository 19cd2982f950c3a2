// CORS on the routes a publishable key may call: preflights for any origin, the origin enforced on the request itself.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { forbidden } from '../shared/errors.js';
import { allowsPublishable } from './access.js';

/** What a browser page sends the SDK's routes besides CORS-safelisted headers. */
const ALLOWED_HEADERS = 'x-api-key, content-type';
/** The answer headers the SDK reads: its retry policy waits Retry-After, and x-request-id goes in its errors. */
const EXPOSED_HEADERS = 'retry-after, x-request-id';
/** Chromium caps a preflight's cache at two hours; a longer promise would not be kept. */
const MAX_AGE_SECONDS = 7200;

const publishableRoute = (request: FastifyRequest) => allowsPublishable(request.routeOptions.config.access);

/** Whether a page of `origin` may use a key of a project with these allowed origins (none listed: any origin). */
function originAllowed(allowedOrigins: readonly string[] | undefined, origin: string): boolean {
  return !allowedOrigins?.length || allowedOrigins.includes(origin.toLowerCase());
}

function allowOrigin(request: FastifyRequest, reply: FastifyReply) {
  // The answer depends on the Origin, so a shared cache must key on it.
  reply.header('vary', 'Origin');
  const origin = request.headers.origin;
  if (origin) reply.header('access-control-allow-origin', origin);
}

/**
 * A preflight carries no key, and most of these routes name no project in their path (the subscriber token in the
 * body does, and a preflight has no body): the preflight is answered for any origin, and the origin is checked
 * against the key's project on the request itself, before anything is read or written. Dashboard and server routes
 * get no CORS header, so a browser refuses to call them from another origin.
 *
 * Call before the rate limiter (a 429 must be readable, with its Retry-After) and before the routes; call the returned
 * function once every route is registered, to add their preflights.
 */
export function registerCors(app: FastifyInstance): () => void {
  const methodsByUrl = new Map<string, Set<string>>();
  app.addHook('onRoute', (route) => {
    if (!allowsPublishable(route.config?.access)) return;
    const methods = methodsByUrl.get(route.url) ?? new Set<string>();
    for (const method of [route.method].flat()) if (method !== 'HEAD') methods.add(method);
    methodsByUrl.set(route.url, methods);
  });

  app.addHook('onRequest', async (request, reply) => {
    if (publishableRoute(request)) {
      allowOrigin(request, reply);
      reply.header('access-control-expose-headers', EXPOSED_HEADERS);
    }
  });

  // After the tenancy guard's preParsing (registered before this), so the key is known and valid.
  app.addHook('preParsing', async (request, reply) => {
    const origin = request.headers.origin;
    if (!origin || !publishableRoute(request) || request.tenant?.kind !== 'project') return;
    if (originAllowed(request.credentials.apiKey?.settings.allowedOrigins, origin)) return;
    reply.removeHeader('access-control-allow-origin');
    throw forbidden(`Origin ${origin} is not in the project's allowed origins (settings.allowedOrigins)`, 'origin_not_allowed');
  });

  return () => {
    for (const [url, methods] of methodsByUrl) {
      const allowMethods = [...methods, 'OPTIONS'].join(', ');
      // Not counted against the caller's rate limit: a browser's call would otherwise cost two of its requests.
      const config = { access: { auth: 'public' }, rateLimit: false } as const;
      app.options(url, { config, schema: { hide: true } }, async (request, reply) => {
        allowOrigin(request, reply);
        return reply
          .headers({
            'access-control-allow-methods': allowMethods,
            'access-control-allow-headers': ALLOWED_HEADERS,
            'access-control-max-age': String(MAX_AGE_SECONDS),
          })
          .status(204)
          .send();
      });
    }
  };
}
