// Shared display formats.
export function dateTime(value: string | null | undefined): string {
  return value ? new Date(value).toLocaleString() : '—';
}

/** Every value of a string union, checked by the compiler: a value the API adds and this list lacks fails to compile. */
export function everyValue<T extends string>() {
  return <const A extends readonly T[]>(...values: A & ([T] extends [A[number]] ? unknown : { missing: Exclude<T, A[number]> })) => values;
}
