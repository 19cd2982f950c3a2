// The pino logger: request ids on every line; credentials, passwords, key secrets and query parameters kept out.
import type { IncomingMessage } from 'node:http';
import { pino, type DestinationStream, type Logger } from 'pino';

const REDACTED = '[redacted]';
const SECRET_QUERY = /([?&](?:token|access_token|key|api_key|password|secret)=)[^&]*/gi;

export function redactUrl(url: string | undefined): string | undefined {
  return url?.replace(SECRET_QUERY, `$1${REDACTED}`);
}

/** A PostgreSQL error as pg raises it: a five-character SQLSTATE and the server's fields. */
interface PgError extends Error {
  code: string;
  severity?: string;
  routine?: string;
  table?: string;
  column?: string;
  constraint?: string;
}

const isPgError = (error: unknown): error is PgError =>
  error instanceof Error && typeof (error as { code?: unknown }).code === 'string' && /^[0-9A-Z]{5}$/.test((error as PgError).code) && 'severity' in error;

/**
 * A failed query logged by its SQLSTATE and statement only: its parameters, and the server's message and detail
 * (which quote the offending value), can hold personal data.
 */
function serializeError(error: Error) {
  const failed = [error, error.cause].find(isPgError);
  if (!failed) return pino.stdSerializers.err(error);
  const statement = (error as { query?: unknown }).query;
  return {
    type: error.constructor.name,
    message: `database error ${failed.code}`,
    code: failed.code,
    ...(typeof statement === 'string' && { statement }),
    ...Object.fromEntries((['routine', 'table', 'column', 'constraint'] as const).filter((key) => failed[key]).map((key) => [key, failed[key]])),
    stack: (error.stack ?? '').split('\n').filter((line) => line.trimStart().startsWith('at ')).join('\n'),
  };
}

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      redact: {
        paths: [
          'req.headers.authorization',
          'req.headers["x-api-key"]',
          'req.headers.cookie',
          // Headers logged outside a request serializer, e.g. an outgoing provider call.
          'headers.authorization',
          'headers.Authorization',
          'headers["x-api-key"]',
          'headers.cookie',
          '*.headers.authorization',
          '*.headers.Authorization',
          '*.headers["x-api-key"]',
          '*.headers.cookie',
          'password',
          '*.password',
          '*.newPassword',
          '*.currentPassword',
          '*.temporaryPassword',
          'access_token',
          '*.access_token',
          'key',
          '*.key',
          'secret',
          '*.secret',
          'jwtSecret',
          '*.jwtSecret',
        ],
        censor: REDACTED,
      },
      serializers: {
        req: (req: IncomingMessage & { id?: string; ip?: string }) => ({
          id: req.id,
          method: req.method,
          url: redactUrl(req.url),
          remoteAddress: req.ip ?? req.socket?.remoteAddress,
        }),
        res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
        err: serializeError,
      },
    },
    destination,
  );
}
