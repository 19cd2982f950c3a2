// SMTP through nodemailer: a connection pool per server and account, each message DKIM-signed with its From domain's key.
import { createHash } from 'node:crypto';
import nodemailer, { type SMTPPoolOptions, type Transporter } from 'nodemailer';
import { ProviderError, type ChannelProvider, type SendOutcome } from '../../channel.js';
import type { EmailItem, SmtpAccount } from './email-item.js';
import { batchKeys, composeSigned, DKIM_SIGNED_HEADERS, type DkimKeys } from './mail-composition.js';

export interface SmtpProviderOptions {
  dkimKeys: DkimKeys;
  /** Connections per SMTP server and account, per worker process. */
  connections: number;
  /** Connecting, the greeting, and each command's answer. */
  timeoutMs: number;
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
const poolKey = (smtp: SmtpAccount) =>
  createHash('sha256')
    .update(JSON.stringify([smtp.host, smtp.port, smtp.secure, smtp.auth?.user ?? null, smtp.auth?.pass ?? null]))
    .digest('base64url');

export function createSmtpProvider(options: SmtpProviderOptions): ChannelProvider<EmailItem> {
  // Pools close their connections once idle; a pool left by a changed password holds none for long.
  const pools = new Map<string, Transporter>();

  const poolFor = (smtp: SmtpAccount): Transporter => {
    const key = poolKey(smtp);
    const pooled = pools.get(key);
    if (pooled) return pooled;
    const settings: SMTPPoolOptions & { pool: true } = {
      pool: true,
      host: smtp.host,
      port: smtp.port,
      secure: smtp.secure,
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
