// Twilio Programmable Messaging: one Messages API call per SMS, form-encoded, HTTP Basic; answers read into outcomes.
import { ProviderError, type ChannelProvider, type SendOutcome } from '../../channel.js';
import type { SmsItem } from './sms-item.js';
import { twilioRefusal } from './twilio-errors.js';

export interface TwilioProviderOptions {
  /** TWILIO_BASE_URL: https://api.twilio.com, or a local peer in tests — the same code path either way. */
  baseUrl: string;
  timeoutMs: number;
}

const retryAfterMs = (header: string | null): number | undefined => {
  const seconds = header === null ? NaN : Number(header);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : undefined;
};

export function createTwilioProvider(options: TwilioProviderOptions): ChannelProvider<SmsItem> {
  const base = options.baseUrl.replace(/\/+$/, '');

  async function sendOne(item: SmsItem): Promise<SendOutcome> {
    const account = item.account!;
    const form = new URLSearchParams({ To: item.to, Body: item.body, StatusCallback: item.statusCallback });
    if (item.from !== undefined) form.set('From', item.from);
    else form.set('MessagingServiceSid', item.messagingServiceSid!);
    let response: Response;
    try {
      response = await fetch(`${base}/2010-04-01/Accounts/${encodeURIComponent(account.accountSid)}/Messages.json`, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${account.username}:${account.password}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
        },
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
    const refusal = twilioRefusal(code);
    return { ok: false, error: new ProviderError(message, { reason: refusal.reason, retryable: false, providerCode, deadRecipient: refusal.deadRecipient }) };
  }

  return {
    name: 'twilio',
    send: (items) => Promise.all(items.map(sendOne)),
    close: async () => {},
  };
}
