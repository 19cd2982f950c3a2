// Idempotency-Key rules: the first response of a key is answered again for 24 hours; a reuse with another request is refused.
import { createHash } from 'node:crypto';
import type { Db } from '../../db/database.js';
import { AppError, validationFailed } from '../../shared/errors.js';
import * as repo from './idempotency.repository.js';

/** How long a key and its first response are kept. */
const IDEMPOTENCY_TTL_SECONDS = 24 * 60 * 60;
/**
 * A claim still unanswered after this long belongs to a request whose process died: a retry takes it over. Far
 * beyond any request's duration (a transactional send waits at most its retry budget plus the provider timeout).
 */
const ABANDONED_SECONDS = 10 * 60;

/** The field 422 details name for this header (request headers are matched in lower case). */
const IDEMPOTENCY_KEY_FIELD = 'headers.idempotency-key';

export interface Response {
  statusCode: number;
  body: unknown;
}

/** JSON with object keys sorted, so two requests differing only in key order are the same request. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined);
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

export class IdempotencyService {
  constructor(private readonly db: Db) {}

  /**
   * Runs `handle` once per key: a repeat of the same request gets the stored first response (`replayed`), a repeat
   * with a different request → 422, a repeat while the first is still running → 409. When `handle` throws, the
   * key is released, so a retry is processed.
   */
  async run(ref: repo.KeyRef, request: unknown, handle: () => Promise<Response>): Promise<Response & { replayed: boolean }> {
    const requestHash = createHash('sha256').update(canonical(request)).digest('base64url');
    const claim = await repo.claimKey(this.db, ref, requestHash, IDEMPOTENCY_TTL_SECONDS, ABANDONED_SECONDS);
    if (claim.state !== 'claimed' && claim.requestHash !== requestHash) {
      throw validationFailed([{ field: IDEMPOTENCY_KEY_FIELD, error: 'was already used with a different request within 24 hours' }]);
    }
    if (claim.state === 'in_flight') {
      throw new AppError(409, 'idempotency_key_in_use', 'A request with this Idempotency-Key is still being processed; retry shortly');
    }
    if (claim.state === 'replay') return { statusCode: claim.statusCode, body: claim.response, replayed: true };
    let response: Response;
    try {
      response = await handle();
    } catch (error) {
      // The request's own error is the one to report; a key left unreleased is taken over once abandoned.
      await repo.releaseKey(this.db, ref, requestHash).catch(() => undefined);
      throw error;
    }
    await repo.completeKey(this.db, ref, requestHash, response.statusCode, response.body);
    return { ...response, replayed: false };
  }

  /** Deletes expired keys of every project (the hourly maintenance job); returns how many. */
  expire(): Promise<number> {
    return repo.deleteExpiredKeys(this.db, IDEMPOTENCY_TTL_SECONDS);
  }
}
