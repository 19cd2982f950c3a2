// Amazon SES (API v2, AWS SDK): each message composed and DKIM-signed by Herald, sent raw; SES's answers read for the engine.
import { createHash } from 'node:crypto';
import { GetAccountCommand, SendEmailCommand, SESv2Client } from '@aws-sdk/client-sesv2';
import { ProviderError, type ChannelProvider, type SendOutcome } from '../../channel.js';
import type { EmailItem, SesAccount } from './email-item.js';
import { batchKeys, composeSigned, DKIM_SIGNED_HEADERS, type DkimKeys } from './mail-composition.js';

export interface SesProviderOptions {
  dkimKeys: DkimKeys;
  /** SES_ENDPOINT: another endpoint than the region's (a VPC endpoint, or a local fake in tests). */
  endpoint: string | undefined;
  /** Connecting, and each request's answer. */
  timeoutMs: number;
}

/** What a project's SES account says of itself (GetAccount): read when the project chooses it. */
export interface SesAccountFacts {
  /** Not yet granted production access: SES holds it to verified recipients, 200 messages a day and 1 per second. */
  sandbox: boolean;
  ratePerSecond: number;
  per24Hours: number;
  sendingEnabled: boolean;
}

/**
 * SES replaces Message-ID and Date with its own (docs: "Amazon SES header fields"), so a signature over them would
 * break: they are left out of the signed headers, as its manual-signing guide says.
 */
const SES_SIGNED_HEADERS = { ...DKIM_SIGNED_HEADERS, names: DKIM_SIGNED_HEADERS.names.filter((name) => name !== 'Message-ID' && name !== 'Date') };

/** SES's answers that mean "later": its rate, a paused account, its own faults. */
const RETRYABLE = new Set(['TooManyRequestsException', 'ThrottlingException', 'LimitExceededException', 'SendingPausedException', 'InternalServiceErrorException']);

interface SesError extends Error {
  code?: string;
  $metadata?: { httpStatusCode?: number };
}

/** `TooManyRequestsException` → `ses_too_many_requests`. */
const codeOf = (name: string) =>
  `ses_${name
    .replace(/Exception$/, '')
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()}`;

/**
 * What an SES failure means for the engine: its rate or quota, a paused account, a 5xx or a broken connection may
 * pass later (retryable, with the engine's backoff: the SDK itself never retries); any other refusal (a rejected
 * message, an unverified sender, bad credentials) is final for this message.
 */
export function sesFailure(error: SesError): ProviderError {
  const status = error.$metadata?.httpStatusCode;
  if (status === undefined) {
    return new ProviderError(error.message, { reason: 'provider_error', retryable: true, providerCode: (error.code ?? 'network_error').toLowerCase() });
  }
  const retryable = RETRYABLE.has(error.name) || status === 429 || status >= 500;
  return new ProviderError(`${error.name}: ${error.message}`, { reason: 'provider_error', retryable, providerCode: codeOf(error.name) });
}

function clientFor(account: Pick<SesAccount, 'region' | 'accessKeyId' | 'secretAccessKey'>, options: Omit<SesProviderOptions, 'dkimKeys'>): SESv2Client {
  return new SESv2Client({
    region: account.region,
    endpoint: options.endpoint,
    credentials: { accessKeyId: account.accessKeyId, secretAccessKey: account.secretAccessKey },
    // Retries are the engine's: it records each attempt and spaces them by its own policy.
    maxAttempts: 1,
    requestHandler: { connectionTimeout: options.timeoutMs, requestTimeout: options.timeoutMs },
  });
}

/** Reads an account's sandbox state and quotas; a refusal (bad credentials, unknown region) is thrown as SES gave it. */
export async function readSesAccount(
  account: Pick<SesAccount, 'region' | 'accessKeyId' | 'secretAccessKey'>,
  options: Omit<SesProviderOptions, 'dkimKeys'>,
): Promise<SesAccountFacts> {
  const client = clientFor(account, options);
  try {
    const answer = await client.send(new GetAccountCommand({}));
    return {
      sandbox: answer.ProductionAccessEnabled !== true,
      ratePerSecond: answer.SendQuota?.MaxSendRate ?? 1,
      per24Hours: answer.SendQuota?.Max24HourSend ?? 200,
      sendingEnabled: answer.SendingEnabled !== false,
    };
  } finally {
    client.destroy();
  }
}

/** A client per region, account and secret: a project's new secret gets a new client rather than closing one in use. */
const clientKey = (account: SesAccount) =>
  createHash('sha256').update(JSON.stringify([account.region, account.accessKeyId, account.secretAccessKey])).digest('base64url');

export function createSesProvider(options: SesProviderOptions): ChannelProvider<EmailItem> {
  const clients = new Map<string, SESv2Client>();
  const clientOf = (account: SesAccount) => {
    const key = clientKey(account);
    let client = clients.get(key);
    if (!client) clients.set(key, (client = clientFor(account, options)));
    return client;
  };

  return {
    name: 'ses',
    // SES's bulk call (SendBulkEmail) takes only its stored templates: per-recipient links signed by Herald go one by one.
    async send(items) {
      const keyFor = batchKeys(options.dkimKeys);
      return Promise.all(
        items.map(async (item): Promise<SendOutcome> => {
          const { email, account } = item;
          if (account?.provider !== 'ses') return { ok: false, error: new ProviderError('no SES account for this message', { reason: 'provider_not_configured', retryable: false, providerCode: 'no_account' }) };
          const dkim = await keyFor(item).catch((error: unknown) => error as Error);
          if (dkim instanceof Error) return { ok: false, error: new ProviderError(dkim.message, { reason: 'provider_error', retryable: true, providerCode: 'dkim_key_unavailable' }) };
          let raw: Buffer;
          try {
            raw = await composeSigned(email, dkim, SES_SIGNED_HEADERS);
          } catch (error) {
            // The same message would fail the same way again.
            return { ok: false, error: new ProviderError((error as Error).message, { reason: 'provider_error', retryable: false, providerCode: 'compose_failed' }) };
          }
          try {
            const answer = await clientOf(account).send(
              new SendEmailCommand({
                FromEmailAddress: email.from.email,
                Destination: { ToAddresses: [email.to] },
                Content: { Raw: { Data: raw } },
                ConfigurationSetName: account.configurationSet,
              }),
            );
            return { ok: true, providerCode: 'ses_200', providerMessageId: answer.MessageId };
          } catch (error) {
            return { ok: false, error: sesFailure(error as SesError) };
          }
        }),
      );
    },
    close: async () => {
      for (const client of clients.values()) client.destroy();
      clients.clear();
    },
  };
}
