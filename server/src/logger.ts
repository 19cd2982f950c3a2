// The pino logger: request ids on every line; credentials, passwords, key secrets and SQL parameter values kept out.
import { pino, type DestinationStream, type Logger } from 'pino';

const REDACTED = '[redacted]';
const SECRET_PARAMETERS = new Set(['token', 'access_token', 'key', 'api_key', 'password', 'secret']);

/** A query parameter's name as Fastify's parser (fast-querystring) reads it: `+` is a space, then percent-decoded. */
function parameterName(raw: string): string {
  const name = raw.replace(/\+/g, ' ');
  try {
    return decodeURIComponent(name);
  } catch {
    return name;
  }
}

/**
 * The URL with the value of every secret query parameter replaced, its name matched as the route reads it (`%74oken` is
 * token): the usual credential names, and the route's own (`secret`).
 */
export function redactUrl(url: string | undefined, secret: readonly string[] = []): string | undefined {
  const start = url?.indexOf('?') ?? -1;
  if (url === undefined || start === -1) return url;
  const pairs = url
    .slice(start + 1)
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=');
      const name = parameterName(pair.slice(0, equals));
      if (equals === -1 || !(SECRET_PARAMETERS.has(name.toLowerCase()) || secret.includes(name))) return pair;
      return `${pair.slice(0, equals)}=${REDACTED}`;
    });
  return `${url.slice(0, start)}?${pairs.join('&')}`;
}

/** A request as the request log reads it: Fastify's, with its route's secret parameters and its parsed path parameters. */
interface LoggedRequest {
  id?: string;
  method?: string;
  url?: string;
  ip?: string;
  socket?: { remoteAddress?: string };
  params?: unknown;
  routeOptions?: { config?: { secretParams?: readonly string[] } };
}

function decoded(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** The URL as logged: the values of the route's secret path parameters (as parsed) and secret query parameters replaced. */
export function loggedUrl(request: LoggedRequest): string | undefined {
  const secret = request.routeOptions?.config?.secretParams ?? [];
  const url = redactUrl(request.url, secret);
  const params = (request.params ?? {}) as Record<string, unknown>;
  const values = new Set(secret.map((name) => params[name]).filter((value): value is string => typeof value === 'string' && value !== ''));
  if (url === undefined || values.size === 0) return url;
  const start = url.indexOf('?');
  const path = start === -1 ? url : url.slice(0, start);
  const redacted = path
    .split('/')
    .map((segment) => (values.has(decoded(segment)) ? REDACTED : segment))
    .join('/');
  return start === -1 ? redacted : redacted + url.slice(start);
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
  // Drizzle's failed query: the statement, and its parameters written into the message.
  const { query, params } = error as { query?: unknown; params?: unknown };
  const statement = typeof query === 'string' && params !== undefined ? query : undefined;
  if (!failed && statement === undefined) return pino.stdSerializers.err(error);
  return {
    type: error.constructor.name,
    message: failed ? `database error ${failed.code}` : 'Failed query',
    ...(failed && { code: failed.code }),
    ...(statement !== undefined && { statement }),
    ...(failed && Object.fromEntries((['routine', 'table', 'column', 'constraint'] as const).filter((key) => failed[key]).map((key) => [key, failed[key]]))),
    // A cause that is not PostgreSQL's answer (a lost connection) quotes no value.
    ...(!failed && error.cause instanceof Error && { cause: pino.stdSerializers.err(error.cause) }),
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
          '*.token',
          '*.acceptUrl',
          'access_token',
          '*.access_token',
          'key',
          '*.key',
          'secret',
          '*.secret',
          'jwtSecret',
          '*.jwtSecret',
          // Channel credentials, opened (a provider's settings) or as sent to PUT /projects/:id/channels/….
          'credentials',
          '*.credentials',
          'vapidPrivateKey',
          '*.vapidPrivateKey',
          '*.vapid.privateKey',
          'privateKey',
          '*.privateKey',
          // A sending domain's DKIM keys: its row (the sealed column) and its signing keys, opened.
          'privateKeys',
          '*.privateKeys',
          'ed25519.privateKey',
          '*.ed25519.privateKey',
          // An SMTP account's password (an email item's server settings).
          'pass',
          '*.pass',
        ],
        censor: REDACTED,
      },
      serializers: {
        req: (req: LoggedRequest) => ({
          id: req.id,
          method: req.method,
          url: loggedUrl(req),
          remoteAddress: req.ip ?? req.socket?.remoteAddress,
        }),
        res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
        err: serializeError,
      },
    },
    destination,
  );
}
