// @herald/client: a typed Node.js client for the Herald API.
export { Herald, type Body, type HeraldOptions, type Query } from './client.js';
export { HeraldError, type FieldError } from './errors.js';
export { retryAfterMs, type RetryOptions, type Sleep } from './retry.js';
export type { components, paths } from './generated/herald-api.js';
