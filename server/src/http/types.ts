// The Fastify instance type every route module registers on: Zod schemas as the type provider.
import type { FastifyBaseLogger, FastifyInstance, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';

export type App = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  ZodTypeProvider
>;

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The route's path and query parameters that are credentials (a signed token, a signature, a verify token): the
     * request log writes `[redacted]` for their values, read from the parsed request (logger.ts).
     */
    secretParams?: readonly string[];
  }
}
