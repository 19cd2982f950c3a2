// The instants Herald accepts: years 0001 to 9999 (UTC), the ISO 8601 years PostgreSQL reads back from ISO text.
export const MIN_INSTANT_MS = Date.parse('0001-01-01T00:00:00.000Z');
export const MAX_INSTANT_MS = Date.parse('9999-12-31T23:59:59.999Z');

export const INSTANT_RANGE_ERROR = 'must be between 0001-01-01 and 9999-12-31 (UTC)';

/** Whether an instant (ms since the epoch) lies within the accepted range. */
export const isStorableInstant = (ms: number): boolean => ms >= MIN_INSTANT_MS && ms <= MAX_INSTANT_MS;
