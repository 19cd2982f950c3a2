// The one error type services throw; the HTTP layer turns it into the error envelope (spec section 7).
export type ErrorCode =
  | 'bad_request'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'validation_failed'
  | 'rate_limited'
  | 'internal_error';

export interface FieldError {
  field: string;
  error: string;
}

export class AppError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: ErrorCode | (string & {}),
    message: string,
    readonly details?: FieldError[],
  ) {
    super(message);
    this.name = 'AppError';
  }
}

export const notFound = (what: string) => new AppError(404, 'not_found', `${what} not found`);
export const forbidden = (message: string, code = 'forbidden') => new AppError(403, code, message);
export const conflict = (message: string, code = 'conflict') => new AppError(409, code, message);
export const unauthorized = (message: string, code = 'unauthorized') => new AppError(401, code, message);
/** The 401 message of a bearer token that is unknown, expired or no longer a user's (auth and the tenancy guard). */
export const INVALID_TOKEN = 'Invalid or expired token';
export const validationFailed = (details: FieldError[]) =>
  new AppError(422, 'validation_failed', 'Validation failed', details);
