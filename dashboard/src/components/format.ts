// Shared display formats.
export function dateTime(value: string | null | undefined): string {
  return value ? new Date(value).toLocaleString() : '—';
}

/** Every value of a string union, checked by the compiler: a value the API adds and this list lacks fails to compile. */
export function everyValue<T extends string>() {
  return <const A extends readonly T[]>(...values: A & ([T] extends [A[number]] ? unknown : { missing: Exclude<T, A[number]> })) => values;
}

/** "a", "a or b", "a, b or c" (or "and"). */
export function listWords(items: readonly string[], joiner: 'or' | 'and' = 'or'): string {
  if (items.length <= 1) return items[0] ?? '';
  return `${items.slice(0, -1).join(', ')} ${joiner} ${items[items.length - 1]}`;
}

/** A value as read aloud (a condition's, an event property's): text in quotes, a list with "or", an object as its keys and values. */
export function valueWords(value: unknown): string {
  if (typeof value === 'string') return `“${value}”`;
  if (value === null || value === undefined) return 'empty';
  if (Array.isArray(value)) return listWords(value.map(valueWords));
  if (typeof value === 'object') return Object.entries(value).map(([key, item]) => `${key} ${valueWords(item)}`).join(', ');
  return String(value);
}
