// HeraldError: a non-2xx answer from Herald, carrying its error envelope.
export interface FieldError {
  field: string;
  error: string;
}

/** Herald's error envelope (every non-2xx answer): statusCode, code, message, requestId, and details on 422. */
interface Envelope {
  statusCode?: number;
  code?: string;
  message?: string;
  requestId?: string;
  details?: FieldError[];
}

export class HeraldError extends Error {
  override readonly name = 'HeraldError';
  readonly statusCode: number;
  /** Stable machine-readable code, e.g. `validation_failed`, `rate_limited`, `publishable_key_forbidden`. */
  readonly code: string;
  readonly requestId: string | undefined;
  /** The fields that failed validation (422). */
  readonly details: FieldError[] | undefined;
  /** The whole answer body, e.g. the existing `subscriber` of a 409 `subscriber_exists`. */
  readonly body: unknown;

  constructor(statusCode: number, envelope: Envelope, body: unknown, requestId?: string) {
    super(envelope.message ?? `Herald answered HTTP ${statusCode}`);
    this.statusCode = envelope.statusCode ?? statusCode;
    this.code = envelope.code ?? 'http_error';
    this.requestId = envelope.requestId ?? requestId;
    this.details = envelope.details;
    this.body = body;
  }

  /** From a failed response and its parsed body (a proxy's HTML error page becomes an envelope-less error). */
  static from(response: Response, body: unknown): HeraldError {
    const envelope = body !== null && typeof body === 'object' ? (body as Envelope) : { message: typeof body === 'string' && body !== '' ? body : undefined };
    return new HeraldError(response.status, envelope, body, response.headers.get('x-request-id') ?? undefined);
  }
}
