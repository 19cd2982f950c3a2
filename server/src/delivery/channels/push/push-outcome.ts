// What a push service's answer (RFC 8030 §5–8) or a failed connection means for one delivery.
import { ProviderError, type SendOutcome } from '../../channel.js';
import { BLOCKED_ENDPOINT_CODE } from '../../outbound-guard.js';

/** A 429 without Retry-After still must not be hammered. */
const DEFAULT_RETRY_AFTER_MS = 60_000;

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT']);

export const refused = (providerCode: string, message: string): SendOutcome => ({
  ok: false,
  error: new ProviderError(message, { reason: 'provider_error', retryable: false, providerCode }),
});

/** The endpoint guard's refusal: final, and the subscription is never offered again. */
export const blocked = (message: string): SendOutcome => ({
  ok: false,
  error: new ProviderError(message, { reason: 'provider_error', retryable: false, providerCode: 'blocked_endpoint', deadRecipient: 'refused' }),
});

export const tooLarge = (message: string): SendOutcome => ({
  ok: false,
  error: new ProviderError(message, { reason: 'payload_too_large', retryable: false, providerCode: 'payload_too_large' }),
});

const retryable = (providerCode: string, message: string, retryAfterMs?: number): SendOutcome => ({
  ok: false,
  error: new ProviderError(message, { reason: 'provider_error', retryable: true, providerCode, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) }),
});

/** Retry-After as delta-seconds or an HTTP-date (RFC 9110 §10.2.3), in ms from `now`; undefined when absent or unreadable. */
function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!text) return undefined;
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

export function outcomeOfStatus(status: number, retryAfter: string | string[] | undefined): SendOutcome {
  const code = `http_${status}`;
  if (status >= 200 && status < 300) return { ok: true, providerCode: code };
  if (status === 404 || status === 410) {
    return {
      ok: false,
      error: new ProviderError(`push subscription is gone (${status})`, {
        reason: 'subscriber_unsubscribed',
        retryable: false,
        providerCode: code,
        deadRecipient: 'gone',
      }),
    };
  }
  if (status === 413) return { ok: false, error: new ProviderError('push service refused the payload size', { reason: 'payload_too_large', retryable: false, providerCode: code }) };
  if (status === 429) return retryable(code, 'push service is rate limiting', parseRetryAfter(retryAfter) ?? DEFAULT_RETRY_AFTER_MS);
  if (status >= 500) return retryable(code, `push service failed (${status})`, parseRetryAfter(retryAfter));
  // 3xx too: a push endpoint that redirects is not followed (the target would escape the endpoint guard).
  return refused(code, `push service refused the request (${status})`);
}

/** A request that got no answer: refused by the guard (final), or a timeout or broken connection (tried again). */
export function outcomeOfError(error: unknown): SendOutcome {
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  if (code === BLOCKED_ENDPOINT_CODE) return blocked(message);
  if (typeof code === 'string' && TIMEOUT_CODES.has(code)) return retryable('timeout', message);
  if (code === 'UND_ERR_SOCKET') return retryable('socket_closed', message);
  return retryable(typeof code === 'string' ? code : 'network_error', message);
}
