// The inbound SMTP listener (`herald smtp-in`, or in `herald serve` with SMTP_IN_PORT): accepts mail only for Herald's
// own addresses at EMAIL_BOUNCE_DOMAIN and hands it to the inbound mail service; it relays nothing.
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { SMTPServer, type SMTPServerDataStream } from 'smtp-server';
import { inboundAddress, type InboundMailService } from '../modules/email-webhooks/index.js';

export interface SmtpInOptions {
  host: string;
  port: number;
  bounceDomain: string;
  /** Larger messages are refused (552) before they are read whole. */
  maxBytes: number;
}

export interface SmtpIn {
  address: string;
  close(): Promise<void>;
}

class SmtpReply extends Error {
  constructor(
    readonly responseCode: number,
    message: string,
  ) {
    super(message);
  }
}

export async function startSmtpIn(service: InboundMailService, options: SmtpInOptions, logger?: Logger): Promise<SmtpIn> {
  const server = new SMTPServer({
    // A mail exchanger for bounces: no authentication, no relaying, no TLS of its own (a front MTA may add it).
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    size: options.maxBytes,
    logger: false,
    onRcptTo(address, _session, callback) {
      if (!inboundAddress(address.address, options.bounceDomain)) return callback(new SmtpReply(550, '5.1.1 No such recipient here'));
      callback();
    },
    onData(stream: SMTPServerDataStream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        if (stream.sizeExceeded) return callback(new SmtpReply(552, '5.3.4 Message too big'));
        const to = session.envelope.rcptTo.flatMap((r) => inboundAddress(r.address, options.bounceDomain) ?? []);
        service.receive(to, Buffer.concat(chunks)).then(
          () => callback(),
          (error: unknown) => {
            logger?.error({ err: error }, 'inbound mail could not be recorded');
            callback(new SmtpReply(451, '4.3.0 Try again later'));
          },
        );
      });
    },
  });
  server.on('error', (error) => logger?.warn({ err: error }, 'inbound SMTP error'));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const { address, port } = server.server.address() as AddressInfo;
  return { address: `${address}:${port}`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
