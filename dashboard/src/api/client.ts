// The typed API client: paths and bodies come from Herald's OpenAPI document (schema.d.ts), credentials from the session.
import createClient from 'openapi-fetch';
import { session } from '../auth/session';
import type { components, paths } from './schema';

export type Schemas = components['schemas'];

/** The JSON body of an operation: `Body<'/projects/{id}', 'patch'>`. */
export type Body<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends {
  requestBody?: { content: { 'application/json': infer B } };
}
  ? B
  : never;

/** The query parameters of an operation. */
export type Query<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;
export type Envelope = Schemas['Error'];

/** A non-2xx answer: the error envelope, with `details` (one entry per failing field) on a 422. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Envelope['details'] = [],
  ) {
    super(message);
    this.name = 'ApiError';
  }

  /** The 422 messages for one field (`name`, `settings.timezone` …) or its parts (`tags.0`), to show beside it. */
  fieldError(field: string): string | undefined {
    const messages = (this.details ?? []).filter((detail) => belongsTo(detail.field, field)).map((detail) => detail.error);
    return messages.length > 0 ? [...new Set(messages)].join('; ') : undefined;
  }
}

/** `tags.0` belongs to `tags`; `tagsAll` does not. */
export function belongsTo(detailField: string, field: string): boolean {
  return detailField === field || detailField.startsWith(`${field}.`) || detailField.startsWith(`${field}[`);
}

export const api = createClient<paths>({ baseUrl: window.location.origin });

api.use({
  onRequest({ request }) {
    const { token, orgId } = session.get();
    if (token && !request.headers.has('authorization')) request.headers.set('authorization', `Bearer ${token}`);
    if (orgId && !request.headers.has('x-org-id')) request.headers.set('x-org-id', orgId);
    return request;
  },
  onResponse({ request, response }) {
    // An expired or revoked token: back to the login page, which says why. A failed login is the page's own business.
    if (response.status === 401 && !new URL(request.url).pathname.startsWith('/auth/login')) session.expire();
    return response;
  },
});

/** The data of a successful answer, or an ApiError thrown for TanStack Query to hold. */
export async function unwrap<D>(request: Promise<{ data?: D; error?: unknown; response: Response }>): Promise<D> {
  const { data, error, response } = await request;
  if (response.ok) return data as D;
  const envelope = (error ?? {}) as Partial<Envelope>;
  throw new ApiError(response.status, envelope.code ?? 'http_error', envelope.message ?? response.statusText, envelope.details);
}
