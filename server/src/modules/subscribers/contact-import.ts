// Bulk import input: CSV to contact objects, and the validation of every row before anything is written.
import { CsvError, parse } from 'csv-parse/sync';
import { AppError, validationFailed, type FieldError } from '../../shared/errors.js';
import { contactRow, type ContactInput, type UpsertKey } from './contact.schemas.js';

const SIMPLE_COLUMNS = new Set(['externalId', 'email', 'phone', 'timezone', 'language', 'tags']);
const CHANNELS = new Set(['email', 'push', 'sms', 'whatsapp']);
const CONSENT_CHANNELS = new Set(['email', 'sms', 'whatsapp']);
const BOOLEAN: Record<string, boolean> = { true: true, false: false, yes: true, no: false, '1': true, '0': false };
/** At most this many row errors are listed in one 422. */
const MAX_REPORTED_ERRORS = 500;

/**
 * Turns a CSV upload (header row first) into contact objects. Columns: externalId, email, phone, timezone,
 * language, tags (separated by `,` or `|`), attributes.<name>, preferences.channels.<email|push|sms|whatsapp>
 * (true/false/yes/no/1/0), marketingConsent.<email|sms|whatsapp> (subscribed/transactional/unsubscribed). Empty cells are left out; every other cell is kept verbatim (a cell like `=SUM(A1)`
 * is stored as text, never interpreted). Malformed CSV → 400; unknown or repeated columns → 422.
 */
export function contactsFromCsv(text: string): Record<string, unknown>[] {
  let records: string[][];
  try {
    records = parse(text, { bom: true, skip_empty_lines: true, relax_column_count: false }) as string[][];
  } catch (error) {
    if (error instanceof CsvError) throw new AppError(400, 'invalid_csv', `Invalid CSV: ${error.message}`);
    throw error;
  }
  const [header, ...rows] = records;
  if (!header) return [];
  const columns = header.map((name) => name.trim());
  const problems: FieldError[] = [];
  const seen = new Set<string>();
  columns.forEach((column) => {
    const known =
      SIMPLE_COLUMNS.has(column) ||
      /^attributes\.[^.].{0,99}$/s.test(column) ||
      (column.startsWith('preferences.channels.') && CHANNELS.has(column.slice('preferences.channels.'.length))) ||
      (column.startsWith('marketingConsent.') && CONSENT_CHANNELS.has(column.slice('marketingConsent.'.length)));
    if (!known) problems.push({ field: `columns.${column}`, error: 'is not a known column' });
    else if (seen.has(column)) problems.push({ field: `columns.${column}`, error: 'appears more than once' });
    seen.add(column);
  });
  if (problems.length > 0) throw validationFailed(problems);

  return rows.map((cells) => {
    const contact: Record<string, unknown> = {};
    const attributes: Record<string, unknown> = {};
    const channels: Record<string, unknown> = {};
    const consent: Record<string, unknown> = {};
    columns.forEach((column, i) => {
      const cell = cells[i] ?? '';
      if (cell === '') return;
      if (column.startsWith('attributes.')) attributes[column.slice('attributes.'.length)] = cell;
      else if (column.startsWith('marketingConsent.')) consent[column.slice('marketingConsent.'.length)] = cell.trim().toLowerCase();
      else if (column.startsWith('preferences.channels.')) {
        // Left as the raw text when it is not a boolean, so the row fails validation naming the cell.
        channels[column.slice('preferences.channels.'.length)] = BOOLEAN[cell.trim().toLowerCase()] ?? cell;
      } else if (column === 'tags') {
        contact.tags = cell
          .split(/[,|]/)
          .map((t) => t.trim())
          .filter((t) => t !== '');
      } else contact[column] = cell;
    });
    if (Object.keys(attributes).length > 0) contact.attributes = attributes;
    if (Object.keys(channels).length > 0) contact.preferences = { channels };
    if (Object.keys(consent).length > 0) contact.marketingConsent = consent;
    return contact;
  });
}

/** The key a row is matched on: the externalId as given, or the email lower-cased. */
export const upsertKeyOf = (row: ContactInput, by: UpsertKey) => (by === 'email' ? row.email?.toLowerCase() : row.externalId);

/**
 * Validates every row (fields, the upsert key present, no key twice in the upload). Any problem → 422 listing
 * `rows[<index>].<field>` (0-based index into the upload; for CSV the first row after the header is 0).
 */
export function validateRows(raw: unknown[], by: UpsertKey): ContactInput[] {
  const problems: FieldError[] = [];
  const rows: ContactInput[] = [];
  const firstRowOfKey = new Map<string, number>();
  raw.forEach((value, index) => {
    const result = contactRow.safeParse(value);
    if (!result.success) {
      for (const issue of result.error.issues) {
        const keys = (issue as { keys?: string[] }).keys;
        const paths = issue.code === 'unrecognized_keys' && keys ? keys.map((key) => [...issue.path, key]) : [issue.path];
        for (const path of paths) {
          const suffix = path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('');
          problems.push({
            field: `rows[${index}]${suffix}`,
            error: issue.code === 'unrecognized_keys' ? 'is not an allowed field' : issue.message,
          });
        }
      }
      return;
    }
    const row = result.data;
    const key = upsertKeyOf(row, by);
    if (key === undefined) {
      problems.push({ field: `rows[${index}].${by}`, error: `is required when upserting by ${by}` });
      return;
    }
    const first = firstRowOfKey.get(key);
    if (first !== undefined) {
      problems.push({ field: `rows[${index}].${by}`, error: `repeats rows[${first}].${by}` });
      return;
    }
    firstRowOfKey.set(key, index);
    rows.push(row);
  });
  if (problems.length > 0) {
    const shown = problems.slice(0, MAX_REPORTED_ERRORS);
    const message =
      problems.length > shown.length ? `Validation failed: ${problems.length} errors, the first ${shown.length} listed` : 'Validation failed';
    throw new AppError(422, 'validation_failed', message, shown);
  }
  return rows;
}
