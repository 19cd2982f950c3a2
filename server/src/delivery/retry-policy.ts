// When a failed delivery is tried again: exponential backoff with jitter, a provider's Retry-After first.
import type { ProviderError } from './channel.js';

export interface RetrySettings {
  maxAttempts: number;
  retryBaseMs: number;
  retryMaxSeconds: number;
}

/**
 * Milliseconds to wait before the next attempt, or undefined when the failure is final: not retryable, or
 * `attempts` (already made) reached the maximum. Backoff doubles per attempt with "equal jitter" (half fixed,
 * half random) so a burst of failures does not come back as a burst; Retry-After is honoured as a floor.
 */
export function retryDelayMs(error: ProviderError, attempts: number, settings: RetrySettings, random = Math.random): number | undefined {
  if (!error.retryable || attempts >= settings.maxAttempts) return undefined;
  const cap = settings.retryMaxSeconds * 1000;
  const exponential = Math.min(cap, settings.retryBaseMs * 2 ** Math.max(0, attempts - 1));
  const backoff = exponential / 2 + random() * (exponential / 2);
  return Math.round(Math.max(backoff, Math.min(cap, error.retryAfterMs ?? 0)));
}
