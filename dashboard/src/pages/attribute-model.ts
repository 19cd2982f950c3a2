// A subscriber's attributes as editable rows (key, type, value as typed) and back as the merge PATCH sends; no DOM, so tested in Node.

export const ATTRIBUTE_TYPES = ['string', 'number', 'boolean', 'json'] as const;
export type AttributeType = (typeof ATTRIBUTE_TYPES)[number];

export const TYPE_LABEL: Record<AttributeType, string> = { string: 'Text', number: 'Number', boolean: 'Yes / no', json: 'JSON' };

export interface AttributeRow {
  /** Stable across edits, for React's keys and the focus. */
  id: number;
  key: string;
  type: AttributeType;
  /** As typed: text, a number's digits, 'true' / 'false', or JSON. */
  value: string;
}

export interface RowErrors {
  key?: string;
  value?: string;
}

const typeOf = (value: unknown): AttributeType =>
  typeof value === 'string' ? 'string' : typeof value === 'number' ? 'number' : typeof value === 'boolean' ? 'boolean' : 'json';

export function rowsFromAttributes(attributes: Record<string, unknown>): AttributeRow[] {
  return Object.entries(attributes).map(([key, value], id) => {
    const type = typeOf(value);
    return { id, key, type, value: type === 'string' ? (value as string) : type === 'json' ? JSON.stringify(value) : String(value) };
  });
}

/** A row's value as its type reads it, or the words saying why it cannot be read. */
export function parseValue(row: Pick<AttributeRow, 'type' | 'value'>): { value: unknown } | { error: string } {
  switch (row.type) {
    case 'string':
      return { value: row.value };
    case 'number': {
      const text = row.value.trim();
      const number = Number(text);
      return text !== '' && Number.isFinite(number) ? { value: number } : { error: 'Enter a number, such as 42 or 3.5.' };
    }
    case 'boolean':
      return row.value === 'true' || row.value === 'false' ? { value: row.value === 'true' } : { error: 'Choose yes or no.' };
    case 'json':
      try {
        const value: unknown = JSON.parse(row.value);
        return value === null ? { error: 'Enter a value: an empty one removes nothing, remove the row instead.' } : { value };
      } catch {
        return { error: 'Enter valid JSON, such as {"plan": "pro"} or [1, 2].' };
      }
  }
}

/** A value converted when its row's type changes: kept when it reads as the new type, else a sensible start. */
export function retype(row: AttributeRow, type: AttributeType): AttributeRow {
  if (type === 'boolean') return { ...row, type, value: row.value === 'true' ? 'true' : 'false' };
  if (type === 'number') return { ...row, type, value: Number.isFinite(Number(row.value.trim())) && row.value.trim() !== '' ? row.value.trim() : '' };
  if (type === 'json' && row.type === 'string') return { ...row, type, value: JSON.stringify(row.value) };
  return { ...row, type };
}

/**
 * The attributes PATCH for these rows against what was stored: changed and new keys with their typed values, removed
 * (or renamed) keys as null, unchanged keys left out. Or the problems of each row, in words, by row id.
 */
export function attributesPatch(
  stored: Record<string, unknown>,
  rows: readonly AttributeRow[],
): { patch: Record<string, unknown> } | { errors: Map<number, RowErrors> } {
  const errors = new Map<number, RowErrors>();
  const seen = new Set<string>();
  const patch: Record<string, unknown> = {};
  for (const row of rows) {
    const problems: RowErrors = {};
    const key = row.key.trim();
    if (key === '') problems.key = 'Enter a name for this attribute.';
    else if (key.length > 100) problems.key = 'Use at most 100 characters.';
    else if (seen.has(key)) problems.key = 'Another attribute already has this name.';
    seen.add(key);
    const parsed = parseValue(row);
    if ('error' in parsed) problems.value = parsed.error;
    if (problems.key || problems.value) {
      errors.set(row.id, problems);
      continue;
    }
    if ('value' in parsed && JSON.stringify(stored[key]) !== JSON.stringify(parsed.value)) patch[key] = parsed.value;
  }
  if (errors.size > 0) return { errors };
  for (const key of Object.keys(stored)) if (!seen.has(key)) patch[key] = null;
  return { patch };
}
