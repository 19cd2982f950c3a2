// The error envelope (spec 7.1) for every non-2xx answer, whatever raised it.
import type { FastifyError, FastifyInstance, FastifyRequest } from 'fastify';
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
