// The Idempotency-Key header on API-key POST routes: its schema, and answering a repeat with the first response.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { projectOf } from './access.js';

/** Route headers declaring the optional key (unknown headers pass through untouched). */
export const idempotencyHeaders = z.looseObject({
  'idempotency-key': z
    .string()
    .min(1)
    .max(255)
    .regex(/^[\x20-\x7e]+$/, 'must be printable ASCII')
    .optional()
    .describe(
      'Optional, at most 255 characters. The first response to a key is answered again, without processing, to every ' +
        'repeat of the same request for 24 hours (with the header Idempotent-Replayed: true). Keys are scoped per project, ' +
        'route and environment (live or test key). The same key with a different body → 422; a repeat while the first ' +
        'request is still running → 409 idempotency_key_in_use.',
    ),
});

const IDEMPOTENT_REPLAYED = 'idempotent-replayed';

/** A request's first response, kept per key; filled by the app with the idempotency module's service. */
export interface IdempotencyStore {
  /**
   * Runs `handle` for the first request with this key and keeps its response; a repeat of the same request gets that
   * response with `replayed`, a different request under the key a 422, one while the first still runs a 409.
   */
  run(
    ref: { projectId: string; scope: string; key: string },
    request: unknown,
    handle: () => Promise<{ statusCode: number; body: unknown }>,
  ): Promise<{ statusCode: number; body: unknown; replayed: boolean }>;
}

/**
 * Answers the request through `handle` once per Idempotency-Key (see `idempotencyHeaders`), or directly without a
 * key. `handle` receives the key, to record it with what it did.
 */
export async function idempotent<T>(
  request: FastifyRequest,
  reply: FastifyReply,
  service: IdempotencyStore,
  handle: (key: string | undefined) => Promise<T>,
): Promise<T> {
  const header = request.headers['idempotency-key'];
  const key = typeof header === 'string' ? header : undefined;
  if (key === undefined) return handle(undefined);
  const project = projectOf(request);
  const ref = {
    projectId: project.projectId,
    scope: `${project.sandbox ? 'test' : 'live'} ${request.method} ${request.routeOptions.url}`,
    key,
  };
  const result = await service.run(ref, request.body, async () => {
    const body = await handle(key);
    return { statusCode: reply.statusCode, body };
  });
  if (result.replayed) reply.header(IDEMPOTENT_REPLAYED, 'true');
  reply.status(result.statusCode);
  return result.body as T;
}
