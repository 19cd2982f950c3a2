// The error envelope (spec 7.1) for every non-2xx answer, whatever raised it.
import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { AppError, type FieldError } from '../shared/errors.js';

const contextName: Record<string, string> = { body: 'body', querystring: 'query', params: 'params', headers: 'headers' };

/** A field's name in the envelope: body fields by their path, others prefixed `query.`, `params.`, `headers.`. */
export function fieldName(part: string, path: readonly string[]): string {
  const context = contextName[part] ?? 'body';
  return path.length === 0 ? context : context === 'body' ? path.join('.') : `${context}.${path.join('.')}`;
}

/** One {field, error} per failing field, named by fieldName. */
function fieldErrors(error: FastifyError): FieldError[] {
  if (!hasZodFastifySchemaValidationErrors(error)) return [];
  const part = (error as { validationContext?: string }).validationContext ?? 'body';
  const name = (path: string[]) => fieldName(part, path);
  return error.validation.flatMap((issue) => {
    const path = issue.instancePath.split('/').filter(Boolean);
    const keys = (issue.params as { keys?: unknown }).keys;
    if (issue.keyword === 'unrecognized_keys' && Array.isArray(keys)) {
      return keys.map((key) => ({ field: name([...path, String(key)]), error: 'is not an allowed field' }));
    }
    return [{ field: name(path), error: issue.message }];
  });
}

function toAppError(error: FastifyError, request: FastifyRequest): AppError {
  if (error instanceof AppError) return error;
  if (hasZodFastifySchemaValidationErrors(error)) {
    // No body at all (or JSON null) where the route requires one is malformed at protocol level (spec 7.2), not a field.
    if ((error as { validationContext?: string }).validationContext === 'body' && request.body == null) {
      return new AppError(400, 'body_required', 'Request body is required: send a JSON object');
    }
    return new AppError(422, 'validation_failed', 'Validation failed', fieldErrors(error));
  }
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new AppError(400, 'invalid_json', 'Request body is not valid JSON');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new AppError(400, 'unsupported_content_type', 'Unsupported Content-Type: send application/json');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError(413, 'body_too_large', 'Request body is too large');
  }
  if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
    return new AppError(error.statusCode, 'bad_request', error.message);
  }
  return new AppError(500, 'internal_error', 'Internal server error');
}

/** The envelope of an error Fastify's router raises before any hook runs: a bad percent-encoding, an overlong parameter. */
export function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const appError =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? new AppError(414, 'uri_too_long', 'A path parameter of the URL is too long')
      : error.code === 'FST_ERR_BAD_URL'
        ? new AppError(400, 'bad_url', 'The URL path is not valid percent-encoding')
        : new AppError(500, 'internal_error', 'Internal server error');
  return reply
    .status(appError.statusCode)
    .header('x-request-id', request.id)
    .type('application/json; charset=utf-8')
    .send({ statusCode: appError.statusCode, code: appError.code, message: appError.message, requestId: request.id });
}

const clientErrors: Record<string, [status: number, code: string, message: string]> = {
  HPE_HEADER_OVERFLOW: [431, 'headers_too_large', 'Request headers are too large (16 KB in all)'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'request_timeout', 'The request took too long to arrive'],
};

/**
 * What Node's HTTP parser refuses before Fastify sees a request (headers over 16 KB, a request that is not HTTP, a
 * timeout): the envelope written on the socket, with a generated request id since no header could be read.
 */
export function clientErrorHandler(this: FastifyInstance, error: Error & { code?: string }, socket: Duplex) {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [statusCode, code, message] = clientErrors[error.code ?? ''] ?? [400, 'bad_request', 'Malformed HTTP request'];
  const requestId = randomUUID();
  this.log.debug({ err: error, requestId }, 'HTTP parser refused a request');
  if (socket.writable) {
    const body = JSON.stringify({ statusCode, code, message, requestId });
    socket.write(
      `HTTP/1.1 ${statusCode} ${STATUS_CODES[statusCode]}\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nx-request-id: ${requestId}\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}

export function registerErrorHandling(app: FastifyInstance) {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const appError = toAppError(error, request);
    if (appError.statusCode >= 500) request.log.error({ err: error }, 'request failed');
    // JSON whatever the route produces on success (a CSV export may have set its type before it failed).
    return reply.status(appError.statusCode).type('application/json; charset=utf-8').send({
      statusCode: appError.statusCode,
      code: appError.code,
      message: appError.message,
      requestId: request.id,
      ...(appError.statusCode === 422 && { details: appError.details ?? [] }),
    });
  });

  app.setNotFoundHandler((request, reply) =>
    reply.status(404).send({
      statusCode: 404,
      code: 'route_not_found',
      message: `Route ${request.method} ${request.url.split('?')[0]} not found`,
      requestId: request.id,
    }),
  );
}
