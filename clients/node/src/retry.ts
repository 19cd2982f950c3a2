// The retry policy of spec 7.3 as a fetch wrapper: Retry-After then doubling on 429, backoff on 502/503/504.
export type Sleep = (ms: number) => Promise<void>;

export interface RetryOptions {
  /** Retries after a 429 (spec 7.3: the first after Retry-After, then each wait doubled). Default 3. */
  maxRateLimitRetries?: number;
  /** Retries after 502, 503 or 504. Default 3. */
  maxGatewayRetries?: number;
  /** The first wait after a 502/503/504 without Retry-After, doubled at each retry. Default 500 ms. */
  gatewayBackoffMs?: number;
  /** The wait after a 429 that carries no Retry-After. Default 1000 ms. */
  defaultRetryAfterMs?: number;
  /**
   * Whether a request may be sent again after a 502/503/504 (its first attempt may have been carried out). Default: any
   * method but POST, and a POST with an Idempotency-Key. The browser SDK, whose calls are all safe to repeat, says yes.
   */
  repeatable?: (request: Request) => boolean;
}

const GATEWAY = new Set([502, 503, 504]);

export const realSleep: Sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Retry-After as milliseconds: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(response: Response, now = Date.now()): number | undefined {
  const value = response.headers.get('retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * A POST without an Idempotency-Key may have been carried out before the gateway failed, so only it is not retried on
 * 502/503/504; a 429 means Herald did nothing, so every request is retried.
 */
const safeToRepeat = (request: Request) => request.method !== 'POST' || request.headers.has('idempotency-key');

export function retryingFetch(fetchImpl: (request: Request) => Promise<Response>, sleep: Sleep, options: RetryOptions = {}) {
  const maxRateLimited = options.maxRateLimitRetries ?? 3;
  const maxGateway = options.maxGatewayRetries ?? 3;
  const gatewayBackoff = options.gatewayBackoffMs ?? 500;
  const defaultRetryAfter = options.defaultRetryAfterMs ?? 1000;
  const repeatable = options.repeatable ?? safeToRepeat;
  return async (request: Request): Promise<Response> => {
    let rateLimited = 0;
    let gateway = 0;
    let lastWait = 0;
    for (;;) {
      // A request's body can be read once: each attempt sends a copy.
      const response = await fetchImpl(request.clone());
      let wait: number | undefined;
      if (response.status === 429 && rateLimited < maxRateLimited) {
        const told = retryAfterMs(response) ?? defaultRetryAfter;
        // Spec 7.3: wait Retry-After and retry once; on another 429 double the wait (a longer Retry-After wins).
        wait = rateLimited === 0 ? told : Math.max(lastWait * 2, told);
        rateLimited++;
      } else if (GATEWAY.has(response.status) && gateway < maxGateway && repeatable(request)) {
        wait = retryAfterMs(response) ?? gatewayBackoff * 2 ** gateway;
        gateway++;
      }
      if (wait === undefined) return response;
      lastWait = wait;
      await response.body?.cancel();
      await sleep(wait);
    }
  };
}
