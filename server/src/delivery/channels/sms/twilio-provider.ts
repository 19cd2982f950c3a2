// Twilio Programmable Messaging: one Messages API call per message, form-encoded, HTTP Basic; answers read into
// outcomes. SMS sends through it here, WhatsApp senders through the same call (channels/whatsapp/twilio-whatsapp.ts).
import { ProviderError, type ChannelProvider, type SendOutcome } from '../../channel.js';
import type { SmsItem, TwilioAccount } from './sms-item.js';
import { twilioRefusal, type TwilioRefusal } from './twilio-errors.js';

export interface TwilioProviderOptions {
  /** TWILIO_BASE_URL: https://api.twilio.com, or a local peer in tests — the same code path either way. */
  baseUrl: string;
  timeoutMs: number;
}

/** The account of a Twilio configuration (SMS or WhatsApp): sends log in with its API key when it has one. */
export function twilioAccount(accountSid: string, credentials: Record<string, string>): TwilioAccount {
  const { authToken, apiKeySid, apiKeySecret } = credentials;
  return apiKeySid !== undefined && apiKeySecret !== undefined
    ? { accountSid, username: apiKeySid, password: apiKeySecret }
    : { accountSid, username: accountSid, password: authToken! };
}

const retryAfterMs = (header: string | null): number | undefined => {
  const seconds = header === null ? NaN : Number(header);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : undefined;
};

const accountUrl = (options: TwilioProviderOptions, account: TwilioAccount) =>
  `${options.baseUrl.replace(/\/+$/, '')}/2010-04-01/Accounts/${encodeURIComponent(account.accountSid)}`;

const headers = (account: TwilioAccount) => ({
  authorization: `Basic ${Buffer.from(`${account.username}:${account.password}`).toString('base64')}`,
  accept: 'application/json',
});

/**
 * Posts one message to the Messages API and reads the answer: accepted with its sid, or refused — 429 and Twilio's
 * own failures retryable, anything else final, its code read by `refusal` into a reason.
 */
export async function postTwilioMessage(
  options: TwilioProviderOptions,
  account: TwilioAccount,
  form: URLSearchParams,
  refusal: (code: number | undefined) => TwilioRefusal,
): Promise<SendOutcome> {
  let response: Response;
  try {
    response = await fetch(`${accountUrl(options, account)}/Messages.json`, {
      method: 'POST',
      headers: { ...headers(account), 'content-type': 'application/x-www-form-urlencoded' },
      body: form,
      signal: AbortSignal.timeout(options.timeoutMs),
    });
  } catch (error) {
    const timedOut = (error as Error).name === 'TimeoutError';
    return { ok: false, error: new ProviderError(`Twilio unreachable: ${(error as Error).message}`, { reason: 'provider_error', retryable: true, providerCode: timedOut ? 'timeout' : 'network' }) };
  }
  const answer = (await response.json().catch(() => ({}))) as { sid?: string; status?: string; code?: number; message?: string };
  if (response.ok && typeof answer.sid === 'string') return { ok: true, providerCode: `twilio_${answer.status ?? 'queued'}`, providerMessageId: answer.sid };
  const code = typeof answer.code === 'number' ? answer.code : undefined;
  const providerCode = code === undefined ? `http_${response.status}` : `twilio_${code}`;
  const message = `Twilio ${response.status}${code === undefined ? '' : ` ${code}`}: ${answer.message ?? response.statusText}`;
  // Too many requests (20429) and Twilio's own failures pass; what it refused about this message stays refused.
  if (response.status === 429 || response.status >= 500) {
    return { ok: false, error: new ProviderError(message, { reason: 'provider_error', retryable: true, providerCode, retryAfterMs: retryAfterMs(response.headers.get('retry-after')) }) };
  }
  const refused = refusal(code);
  return { ok: false, error: new ProviderError(message, { reason: refused.reason, retryable: false, providerCode, deadRecipient: refused.deadRecipient }) };
}

/** What reading an account said: its status, or who refused — Twilio the credentials, or the network Twilio. */
export type TwilioAccountCheck = { ok: true; status: string } | { ok: false; refused: 'credentials' | 'unreachable'; message: string };

/**
 * Reads an account with its credentials (`GET /2010-04-01/Accounts/{AccountSid}.json`): a 401 or 404 (20003, 20404)
 * is Twilio refusing the account SID with that token or API key.
 */
export async function readTwilioAccount(options: TwilioProviderOptions, account: TwilioAccount): Promise<TwilioAccountCheck> {
  let response: Response;
  try {
    response = await fetch(`${accountUrl(options, account)}.json`, { headers: headers(account), signal: AbortSignal.timeout(options.timeoutMs) });
  } catch (error) {
    return { ok: false, refused: 'unreachable', message: `Twilio unreachable: ${(error as Error).message}` };
  }
  const answer = (await response.json().catch(() => ({}))) as { status?: string; code?: number; message?: string };
  if (response.ok) return { ok: true, status: answer.status ?? 'active' };
  const message = `Twilio ${response.status}${answer.code === undefined ? '' : ` ${answer.code}`}: ${answer.message ?? response.statusText}`;
  return { ok: false, refused: response.status === 401 || response.status === 403 || response.status === 404 ? 'credentials' : 'unreachable', message };
}

export function createTwilioProvider(options: TwilioProviderOptions): ChannelProvider<SmsItem> {
  const sendOne = (item: SmsItem): Promise<SendOutcome> => {
    const form = new URLSearchParams({ To: item.to, Body: item.body, StatusCallback: item.statusCallback });
    if (item.from !== undefined) form.set('From', item.from);
    else form.set('MessagingServiceSid', item.messagingServiceSid!);
    return postTwilioMessage(options, item.account!, form, twilioRefusal);
  };
  return {
    name: 'twilio',
    send: (items) => Promise.all(items.map(sendOne)),
    close: async () => {},
  };
}
