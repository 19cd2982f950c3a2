// The pino logger: request ids on every line, and credentials, passwords and key secrets redacted.
import type { IncomingMessage } from 'node:http';
import { pino, type DestinationStream, type Logger } from 'pino';

const REDACTED = '[redacted]';
const SECRET_QUERY = /([?&](?:token|access_token|key|api_key|password|secret)=)[^&]*/gi;

export function redactUrl(url: string | undefined): string | undefined {
  return url?.replace(SECRET_QUERY, `$1${REDACTED}`);
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
        err: pino.stdSerializers.err,
      },
    },
    destination,
  );
}
