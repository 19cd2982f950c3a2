// SMTP through nodemailer: a connection pool per server and account, each message DKIM-signed with its From domain's key.
import { createHash } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { rootCertificates } from 'node:tls';
import nodemailer, { type SMTPPoolOptions, type Transporter } from 'nodemailer';
import { ProviderError, type ChannelProvider, type SendOutcome } from '../../channel.js';
import { BLOCKED_ENDPOINT_CODE, type OutboundGuard } from '../../outbound-guard.js';
import type { EmailItem, SmtpAccount, SmtpTls } from './email-item.js';
import { batchKeys, composeSigned, DKIM_SIGNED_HEADERS, type DkimKeys } from './mail-composition.js';

export interface SmtpProviderOptions {
  dkimKeys: DkimKeys;
  /** Connections per SMTP server and account, per worker process. */
  connections: number;
  /** Connecting, the greeting, and each command's answer. */
  timeoutMs: number;
  /** Where servers may be: checked again at every connection, on the addresses the name resolves to then. */
  guard: OutboundGuard;
  /** CA certificates (PEM) a server's certificate may chain to besides Node's bundled roots (EMAIL_SMTP_CA_FILE). */
  extraCa?: string | undefined;
}

/** Failures without a reply that a new connection may not meet: the connection or the server's session broke. */
const TRANSIENT_CODES = new Set(['ECONNECTION', 'ESOCKET', 'ETIMEDOUT', 'EDNS', 'ETLS', 'EPROTOCOL', 'EMAXLIMIT']);

interface SmtpError extends Error {
  code?: string;
  responseCode?: number;
  command?: string;
}

/**
 * What an SMTP failure means for the engine: a 4xx reply may pass later (retryable), a 5xx reply to RCPT TO is the
 * address itself refused (a hard bounce: final, and the address becomes unreachable), any other 5xx is final for
 * this message; a broken connection is retryable. 503 (bad sequence of commands) is the session's fault, not the
 * message's: retryable.
 */
export function smtpFailure(error: SmtpError): ProviderError {
  const status = error.responseCode;
  const message = error.message;
  if (error.code === BLOCKED_ENDPOINT_CODE) {
    return new ProviderError(`SMTP server refused by the outbound guard: ${message}`, { reason: 'provider_error', retryable: false, providerCode: 'blocked_host' });
  }
  // Asked for under `tls: required`, whether the server offers it or not: a server (or a network) without it gets no message.
  if (error.command === 'STARTTLS' && status !== undefined) {
    return new ProviderError(`the SMTP server does not offer STARTTLS and this account requires TLS (tls: required): ${message}`, {
      reason: 'provider_error',
      retryable: false,
      providerCode: 'smtp_tls_unavailable',
    });
  }
  if (status !== undefined && status >= 500 && status !== 503) {
    if (error.command === 'RCPT TO') {
      return new ProviderError(message, { reason: 'recipient_bounced', retryable: false, providerCode: `smtp_${status}`, deadRecipient: 'gone' });
    }
    return new ProviderError(message, { reason: 'provider_error', retryable: false, providerCode: `smtp_${status}` });
  }
  if (status !== undefined) return new ProviderError(message, { reason: 'provider_error', retryable: true, providerCode: `smtp_${status}` });
  const code = error.code ?? 'smtp_error';
  return new ProviderError(message, { reason: 'provider_error', retryable: TRANSIENT_CODES.has(code), providerCode: code.toLowerCase() });
}

/** A pool per server, account and password: a project's new password opens a new pool rather than closing one in use. */
const poolKey = (smtp: SmtpAccount, tls: SmtpTls) =>
  createHash('sha256')
    .update(JSON.stringify([smtp.host, smtp.port, tls, smtp.auth?.user ?? null, smtp.auth?.pass ?? null]))
    .digest('base64url');

/** nodemailer's options for each way of encrypting (it verifies certificates against the host name either way). */
const TLS_OPTIONS: Record<SmtpTls, Pick<SMTPPoolOptions, 'secure' | 'requireTLS'>> = {
  implicit: { secure: true },
  required: { secure: false, requireTLS: true },
  opportunistic: { secure: false },
};

export function createSmtpProvider(options: SmtpProviderOptions): ChannelProvider<EmailItem> {
  // Pools close their connections once idle; a pool left by a changed password holds none for long.
  const pools = new Map<string, Transporter>();
  const { guard } = options;
  const ca = options.extraCa === undefined ? undefined : [...rootCertificates, options.extraCa];

  /**
   * nodemailer resolves and connects by itself, with no lookup of ours: the pool is handed a socket this opens through
   * the guard instead, so every connection goes to an address checked when it is made (no DNS rebinding). nodemailer
   * runs the session on it (TLS from the first byte, or STARTTLS) with the host name as the certificate's name.
   */
  const guardedSocket = (smtp: SmtpAccount) => (_options: unknown, callback: (error: Error | null, socket?: { connection: Socket }) => void) => {
    const refusal = guard.hostRefusal(smtp.host);
    if (refusal) return callback(Object.assign(new Error(`${smtp.host} ${refusal}`), { code: BLOCKED_ENDPOINT_CODE }));
    const socket = connect({ host: smtp.host, port: smtp.port, lookup: guard.lookup });
    const timer = setTimeout(() => socket.destroy(Object.assign(new Error(`Connection timeout to ${smtp.host}:${smtp.port}`), { code: 'ETIMEDOUT' })), options.timeoutMs);
    const failed = (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      // The codes nodemailer gives the same failures when it connects itself: a refused or reset connection and a
      // failed DNS answer are tried again.
      if (error.code !== BLOCKED_ENDPOINT_CODE && error.code !== 'ETIMEDOUT') error.code = error.syscall === 'getaddrinfo' ? 'EDNS' : 'ESOCKET';
      callback(error);
    };
    socket.once('error', failed);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.off('error', failed);
      callback(null, { connection: socket });
    });
  };

  const poolFor = (smtp: SmtpAccount): Transporter => {
    // Settings saved before `tls` existed: required, unless the operator allowed the host (a relay of its own).
    const tls = smtp.tls ?? (guard.allows(smtp.host) ? 'opportunistic' : 'required');
    const key = poolKey(smtp, tls);
    const pooled = pools.get(key);
    if (pooled) return pooled;
    const settings: SMTPPoolOptions & { pool: true } = {
      pool: true,
      host: smtp.host,
      port: smtp.port,
      ...TLS_OPTIONS[tls],
      ...(ca && { tls: { ca } }),
      getSocket: guardedSocket(smtp),
      auth: smtp.auth,
      maxConnections: options.connections,
      // A message whose connection dropped fails here and the engine decides: providers never retry.
      maxRequeues: 0,
      connectionTimeout: options.timeoutMs,
      greetingTimeout: options.timeoutMs,
      socketTimeout: options.timeoutMs,
      // Content comes from API callers: nothing in it may make Herald read a file or fetch a URL.
      disableFileAccess: true,
      disableUrlAccess: true,
    };
    const transport = nodemailer.createTransport(settings);
    pools.set(key, transport);
    return transport;
  };

  return {
    name: 'smtp',
    async send(items) {
      const keyFor = batchKeys(options.dkimKeys);
      const sendOne = async (item: EmailItem): Promise<SendOutcome> => {
        const { email, account: smtp } = item;
        if (smtp?.provider !== 'smtp') return { ok: false, error: new ProviderError('no SMTP server for this message', { reason: 'provider_not_configured', retryable: false, providerCode: 'no_server' }) };
        try {
          const raw = await composeSigned(email, await keyFor(item), DKIM_SIGNED_HEADERS);
          const info = await poolFor(smtp).sendMail({ envelope: { from: email.returnPath, to: [email.to] }, raw });
          const status = /^\d{3}/.exec(info.response ?? '')?.[0] ?? '250';
          return { ok: true, providerCode: `smtp_${status}`, providerMessageId: email.messageId };
        } catch (error) {
          return { ok: false, error: smtpFailure(error as SmtpError) };
        }
      };
      // Handed to the pool two per connection at a time: a message queued behind the pool's connections lives long
      // enough (a batch's worth of round trips) to be promoted to V8's old space, and a worker's memory grows with the
      // batch (docs/PERFORMANCE.md, "Email campaign of 1,000,000").
      const outcomes: SendOutcome[] = [];
      let next = 0;
      await Promise.all(
        Array.from({ length: Math.min(items.length, options.connections * 2) }, async () => {
          for (let i = next++; i < items.length; i = next++) outcomes[i] = await sendOne(items[i]!);
        }),
      );
      return outcomes;
    },
    close: async () => {
      for (const transport of pools.values()) transport.close();
      pools.clear();
    },
  };
}
