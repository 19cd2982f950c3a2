// Herald's HTTP API as the SDK and its service worker call it: spec 7.3 retries, and results instead of exceptions.
import { HeraldError } from '@herald/client/errors';
import { realSleep, retryingFetch } from '@herald/client/retry';

export { HeraldError };

/** Every SDK call resolves, never rejects: either `data` or an `error` carrying Herald's error envelope. */
export type Result<T> = { data: T; error: null } | { data: null; error: HeraldError };

export interface Connection {
  baseUrl: string;
  key: string;
}

// Every call the SDK makes is safe to repeat (a repeated registration answers 409 with the same subscriber), so a
// 502/503/504 is retried for POSTs too, unlike the server client's default.
const send = retryingFetch((request) => fetch(request), realSleep, { repeatable: () => true });

export const failure = (code: string, message: string, statusCode = 0): Result<never> => ({
  data: null,
  error: new HeraldError(statusCode, { code, message }, null),
});

export async function call<T>(connection: Connection | undefined, method: 'GET' | 'POST', path: string, body?: unknown): Promise<Result<T>> {
  const url = connection ? `${connection.baseUrl}${path}` : path;
  const headers: Record<string, string> = connection ? { 'x-api-key': connection.key } : {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  try {
    const response = await send(new Request(url, { method, headers, body: body === undefined ? null : JSON.stringify(body) }));
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // not JSON: a proxy's error page, kept as text
    }
    return response.ok ? { data: parsed as T, error: null } : { data: null, error: HeraldError.from(response, parsed) };
  } catch (error) {
    // The browser refused or lost the request: offline, DNS, or CORS (an origin missing from settings.allowedOrigins).
    return failure('network_error', `Could not reach Herald at ${url}: ${(error as Error).message}`);
  }
}
