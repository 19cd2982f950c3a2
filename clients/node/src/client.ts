// The Herald client: the server routes (subscribers, contacts, segments, campaigns, transactional) typed from OpenAPI.
import { randomUUID } from 'node:crypto';
import createClient, { type Client } from 'openapi-fetch';
import { HeraldError } from './errors.js';
import type { paths } from './generated/herald-api.js';
import { realSleep, retryingFetch, type RetryOptions, type Sleep } from './retry.js';

type Method = 'get' | 'post' | 'patch' | 'delete';
type Operation<P extends keyof paths, M extends Method> = NonNullable<paths[P][M & keyof paths[P]]>;
/** The JSON body of a route, as its OpenAPI schema declares it. */
export type Body<P extends keyof paths, M extends Method> =
  Operation<P, M> extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;
/** The query parameters of a route. */
export type Query<P extends keyof paths, M extends Method> =
  Operation<P, M> extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;

export interface HeraldOptions {
  /** Where Herald answers, e.g. `https://herald.example.com`. */
  baseUrl: string;
  /** A server API key (`hrd_live_…` or `hrd_test_…`). */
  apiKey: string;
  /** Retry policy (spec 7.3); the defaults follow the spec. */
  retry?: RetryOptions;
  /** How the client waits between retries (tests pass a fake). */
  sleep?: Sleep;
  /** The fetch implementation (default: the global fetch). */
  fetch?: (request: Request) => Promise<Response>;
}

interface Result<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** The answer's body, or a HeraldError carrying the error envelope. */
async function unwrap<T>(call: Promise<Result<T>>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok) throw HeraldError.from(response, error);
  return data as T;
}

export class Herald {
  /** The typed openapi-fetch client underneath, for any route the helpers below do not cover. */
  readonly api: Client<paths>;

  constructor(options: HeraldOptions) {
    const baseFetch = options.fetch ?? ((request: Request) => globalThis.fetch(request));
    this.api = createClient<paths>({
      baseUrl: options.baseUrl.replace(/\/+$/, ''),
      headers: { 'x-api-key': options.apiKey },
      fetch: retryingFetch(baseFetch, options.sleep ?? realSleep, options.retry),
    });
  }

  readonly subscribers = {
    register: (body: Body<'/subscribers', 'post'>) => unwrap(this.api.POST('/subscribers', { body })),
    identify: (body: Body<'/subscribers/identify', 'post'>) => unwrap(this.api.POST('/subscribers/identify', { body })),
    tag: (body: Body<'/subscribers/tag', 'post'>) => unwrap(this.api.POST('/subscribers/tag', { body })),
    untag: (body: Body<'/subscribers/untag', 'post'>) => unwrap(this.api.POST('/subscribers/untag', { body })),
    seen: (token: string) => unwrap(this.api.POST('/subscribers/seen', { body: { token } })),
    updateByToken: (body: Body<'/subscribers/update', 'post'>) => unwrap(this.api.POST('/subscribers/update', { body })),
    update: (id: string, body: Body<'/subscribers/{id}', 'patch'>) =>
      unwrap(this.api.PATCH('/subscribers/{id}', { params: { path: { id } }, body })),
    get: (id: string) => unwrap(this.api.GET('/subscribers/{id}', { params: { path: { id } } })),
    getByToken: (token: string) => unwrap(this.api.GET('/subscribers/token/{token}', { params: { path: { token } } })),
    byExternalId: (projectId: string, externalId: string) =>
      unwrap(this.api.GET('/subscribers/project/{projectId}/external-id/{externalId}', { params: { path: { projectId, externalId } } })),
    list: (projectId: string, query: Query<'/subscribers/project/{projectId}', 'get'> = {}) =>
      unwrap(this.api.GET('/subscribers/project/{projectId}', { params: { path: { projectId }, query } })),
    analytics: (projectId: string, query: Query<'/subscribers/analytics/project/{projectId}', 'get'> = {}) =>
      unwrap(this.api.GET('/subscribers/analytics/project/{projectId}', { params: { path: { projectId }, query } })),
    remove: (id: string) => unwrap(this.api.DELETE('/subscribers/{id}', { params: { path: { id } } })),
  };

  readonly contacts = {
    create: (body: Body<'/contacts', 'post'>) => unwrap(this.api.POST('/contacts', { body })),
    import: (body: Body<'/contacts/import', 'post'>) => unwrap(this.api.POST('/contacts/import', { body })),
  };

  readonly segments = {
    create: (body: Body<'/segments', 'post'>) => unwrap(this.api.POST('/segments', { body })),
    list: (projectId: string, query: Query<'/segments/project/{projectId}', 'get'> = {}) =>
      unwrap(this.api.GET('/segments/project/{projectId}', { params: { path: { projectId }, query } })),
    get: (id: string) => unwrap(this.api.GET('/segments/{id}', { params: { path: { id } } })),
    update: (id: string, body: Body<'/segments/{id}', 'patch'>) => unwrap(this.api.PATCH('/segments/{id}', { params: { path: { id } }, body })),
    remove: (id: string) => unwrap(this.api.DELETE('/segments/{id}', { params: { path: { id } } })),
    reach: (body: Body<'/segments/reach', 'post'>) => unwrap(this.api.POST('/segments/reach', { body })),
  };

  readonly campaigns = {
    create: (body: Body<'/campaigns', 'post'>) => unwrap(this.api.POST('/campaigns', { body })),
    list: (projectId: string, query: Query<'/campaigns/project/{projectId}', 'get'> = {}) =>
      unwrap(this.api.GET('/campaigns/project/{projectId}', { params: { path: { projectId }, query } })),
    get: (id: string) => unwrap(this.api.GET('/campaigns/{id}', { params: { path: { id } } })),
    update: (id: string, body: Body<'/campaigns/{id}', 'patch'>) =>
      unwrap(this.api.PATCH('/campaigns/{id}', { params: { path: { id } }, body })),
    remove: (id: string) => unwrap(this.api.DELETE('/campaigns/{id}', { params: { path: { id } } })),
    /** Sends a draft (200), or re-sends a sent or cancelled campaign as a new one (201). */
    send: (id: string, body?: Body<'/campaigns/{id}/send', 'post'>) =>
      unwrap(this.api.POST('/campaigns/{id}/send', { params: { path: { id } }, ...(body && { body }) })),
    cancel: (id: string) => unwrap(this.api.POST('/campaigns/{id}/cancel', { params: { path: { id } } })),
    archive: (id: string) => unwrap(this.api.POST('/campaigns/{id}/archive', { params: { path: { id } } })),
  };

  readonly transactional = {
    /**
     * Sends one message. Every send carries an Idempotency-Key (one is generated when not given), so the retries of
     * the policy, and yours with the same key, never send twice.
     */
    send: (body: Body<'/transactional/send', 'post'>, options: { idempotencyKey?: string } = {}) =>
      unwrap(
        this.api.POST('/transactional/send', {
          body,
          params: { header: { 'idempotency-key': options.idempotencyKey ?? randomUUID() } },
        }),
      ),
    /** Sends one email, with an Idempotency-Key as `send` does; the answer says `sent`, `queued`, `failed`, `refused` or `sandbox`. */
    email: (body: Body<'/transactional/email', 'post'>, options: { idempotencyKey?: string } = {}) =>
      unwrap(
        this.api.POST('/transactional/email', {
          body,
          params: { header: { 'idempotency-key': options.idempotencyKey ?? randomUUID() } },
        }),
      ),
    list: (projectId: string, query: Query<'/transactional/sends/project/{projectId}', 'get'> = {}) =>
      unwrap(this.api.GET('/transactional/sends/project/{projectId}', { params: { path: { projectId }, query } })),
  };
}
