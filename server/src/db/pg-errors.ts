// PostgreSQL error conditions the repositories turn into domain answers.

/** PostgreSQL's foreign_key_violation, however deep the query layer wrapped it. */
export function isForeignKeyViolation(error: unknown): boolean {
  for (let e = error; e instanceof Error; e = e.cause) {
    if ((e as Error & { code?: unknown }).code === '23503') return true;
  }
  return false;
}

/** PostgreSQL's unique_violation, however deep the query layer wrapped it. */
export function isUniqueViolation(error: unknown): boolean {
  for (let e = error; e instanceof Error; e = e.cause) {
    if ((e as Error & { code?: unknown }).code === '23505') return true;
  }
  return false;
}
