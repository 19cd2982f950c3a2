// The words of a 422's field errors: what to change, said as a person would ("must be at most 200 characters"), not
// the validator's own ("Too big: expected string to have <=200 characters"). A schema's own message still wins.
import { z } from 'zod';
import type { $ZodRawIssue } from 'zod/v4/core';

const count = (n: number | bigint) => (typeof n === 'bigint' ? n.toString() : n.toLocaleString('en'));
const plural = (n: number | bigint, one: string) => `${count(n)} ${one}${Number(n) === 1 ? '' : 's'}`;

/** What a limit counts in, by what is limited. */
function measured(origin: string, n: number | bigint): string {
  switch (origin) {
    case 'string':
      return plural(n, 'character');
    case 'array':
    case 'set':
      return plural(n, 'item');
    case 'file':
      return plural(n, 'byte');
    case 'date':
      return new Date(Number(n)).toISOString();
    default:
      return count(n);
  }
}

const FORMATS: Record<string, string> = {
  email: 'an email address',
  url: 'a URL',
  uuid: 'a UUID',
  datetime: 'a date and time (ISO 8601, e.g. 2026-01-31T09:00:00Z)',
  date: 'a date (YYYY-MM-DD)',
  time: 'a time (HH:MM[:SS])',
  e164: 'a phone number in international format (+ and digits)',
};

const TYPES: Record<string, string> = { string: 'text', number: 'a number', int: 'a whole number', boolean: 'true or false', array: 'a list', object: 'an object' };

export function plainMessage(issue: $ZodRawIssue): string | undefined {
  switch (issue.code) {
    case 'invalid_type':
      return issue.input === undefined ? 'is required' : `must be ${TYPES[issue.expected] ?? issue.expected}`;
    case 'too_small': {
      if (issue.origin === 'string' && Number(issue.minimum) === 1) return 'must not be empty';
      if ((issue.origin === 'array' || issue.origin === 'set') && Number(issue.minimum) === 1) return 'must have at least one item';
      const bound = measured(issue.origin, issue.minimum);
      if (issue.origin === 'date') return `must be ${issue.inclusive ? 'at or after' : 'after'} ${bound}`;
      return issue.inclusive === false ? `must be more than ${bound}` : `must be at least ${bound}`;
    }
    case 'too_big': {
      const bound = measured(issue.origin, issue.maximum);
      if (issue.origin === 'date') return `must be ${issue.inclusive ? 'at or before' : 'before'} ${bound}`;
      return issue.inclusive === false ? `must be less than ${bound}` : `must be at most ${bound}`;
    }
    case 'invalid_format':
      return FORMATS[issue.format] ? `must be ${FORMATS[issue.format]}` : undefined;
    case 'invalid_value':
      return issue.values.length === 1 ? `must be ${JSON.stringify(issue.values[0])}` : `must be one of ${issue.values.map((value: unknown) => JSON.stringify(value)).join(', ')}`;
    case 'not_multiple_of':
      return `must be a multiple of ${count(issue.divisor as number)}`;
    default:
      return undefined;
  }
}

/** Makes every request validation in this process speak in plain words (zod's config is process-wide). */
export function usePlainValidationMessages(): void {
  z.config({ customError: plainMessage });
}
