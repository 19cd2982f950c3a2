// Bulk import input: CSV to contact objects, and the validation of every row before anything is written.
import { CsvError, parse } from 'csv-parse/sync';
import { z } from 'zod';
import { AppError, validationFailed, type FieldError } from '../../shared/errors.js';
import { isoDate, isoDateTime, writtenInstant } from '../../shared/instants.js';
import type { AttributeType } from '../../db/schema.js';
import { contactRow, isImportColumn, type ContactInput, type CsvMapping, type CsvTypes, type UpsertKey } from './contact.schemas.js';

const BOOLEAN: Record<string, boolean> = { true: true, false: false, yes: true, no: false, '1': true, '0': false };
/** A decimal number, commas allowed only as thousands separators (1,234,567.89); never a decimal comma. */
const NUMBER = /^[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?$/;
const DATE = z.union([isoDate, isoDateTime({ local: true })]);
/** At most this many row errors are listed in one 422. */
const MAX_REPORTED_ERRORS = 500;

const TYPE_WORDS: Record<Exclude<AttributeType, 'text'>, string> = {
  number: 'a number (such as 1234.5 or 1,234.5)',
  boolean: 'true/false, yes/no or 1/0',
  date: 'an ISO 8601 date or date-time (such as 2024-03-01 or 2024-03-01T09:30:00Z)',
};

/** A typed cell that does not read as its type: kept in the row so validateRows reports it with the row's other errors. */
class UnreadableCell {
  constructor(
    readonly column: string,
    readonly type: Exclude<AttributeType, 'text'>,
    readonly cell: string,
  ) {}

  get error() {
    return `column "${this.column}": "${this.cell.slice(0, 100)}" is not ${TYPE_WORDS[this.type]}`;
  }
}

/** A cell as its attribute's type: a JSON number, boolean or ISO UTC timestamp; text as written. */
function convert(cell: string, type: AttributeType, column: string): unknown {
  const text = cell.trim();
  switch (type) {
    case 'text':
      return cell;
    case 'number': {
      const number = NUMBER.test(text) ? Number(text.replaceAll(',', '')) : NaN;
      return Number.isFinite(number) ? number : new UnreadableCell(column, type, cell);
    }
    case 'boolean':
      return BOOLEAN[text.toLowerCase()] ?? new UnreadableCell(column, type, cell);
    case 'date': {
      const ms = DATE.safeParse(text).success ? writtenInstant(text) : NaN;
      return Number.isFinite(ms) ? new Date(ms).toISOString() : new UnreadableCell(column, type, cell);
    }
  }
}

/**
 * Turns a CSV upload (header row first) into contact objects. A column goes to the field its header names —
 * externalId, email, phone, timezone, language, tags (separated by `,` or `|`), attributes.<name>,
 * preferences.channels.<email|push|sms|whatsapp> (true/false/yes/no/1/0), marketingConsent.<email|sms|whatsapp>
 * (subscribed/transactional/unsubscribed) — or to the one `mapping` gives it (null: skipped). Empty cells are left
 * out; an attribute cell is converted to its type in `types` (text by default: kept verbatim, so a cell like
 * `=SUM(A1)` is stored as text, never interpreted). Malformed CSV → 400; unknown, unmapped or repeated columns,
 * mapping keys that are no header, types of no column → 422.
 */
export function contactsFromCsv(text: string, { mapping = {}, types = {} }: { mapping?: CsvMapping; types?: CsvTypes } = {}): Record<string, unknown>[] {
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
  const mapped = Object.keys(mapping).length > 0;
  const targets = columns.map((column) => (Object.hasOwn(mapping, column) ? mapping[column]! : column));
  const problems: FieldError[] = [];
  const columnOf = new Map<string, string>();
  targets.forEach((target, i) => {
    const column = columns[i]!;
    if (target === null) return;
    const first = columnOf.get(target);
    if (!isImportColumn(target)) {
      problems.push({ field: `columns.${column}`, error: mapped ? 'is not a known column: map it to a field or skip it' : 'is not a known column' });
    } else if (first === undefined) columnOf.set(target, column);
    else if (first === column) problems.push({ field: `columns.${column}`, error: 'appears more than once' });
    else problems.push({ field: `columns.${column}`, error: `goes to ${target}, as column "${first}" does` });
  });
  for (const key of Object.keys(mapping)) {
    if (!columns.includes(key)) problems.push({ field: `query.mapping.${key}`, error: 'is not a column of the file' });
  }
  for (const name of Object.keys(types)) {
    if (!columnOf.has(`attributes.${name}`)) problems.push({ field: `query.types.${name}`, error: `no column goes to attributes.${name}` });
  }
  if (problems.length > 0) throw validationFailed(problems);

  return rows.map((cells) => {
    const contact: Record<string, unknown> = {};
    const attributes: Record<string, unknown> = {};
    const channels: Record<string, unknown> = {};
    const consent: Record<string, unknown> = {};
    targets.forEach((target, i) => {
      const cell = cells[i] ?? '';
      if (cell === '' || target === null) return;
      if (target.startsWith('attributes.')) {
        const name = target.slice('attributes.'.length);
        attributes[name] = convert(cell, types[name] ?? 'text', columns[i]!);
      } else if (target.startsWith('marketingConsent.')) consent[target.slice('marketingConsent.'.length)] = cell.trim().toLowerCase();
      else if (target.startsWith('preferences.channels.')) {
        // Left as the raw text when it is not a boolean, so the row fails validation naming the cell.
        channels[target.slice('preferences.channels.'.length)] = BOOLEAN[cell.trim().toLowerCase()] ?? cell;
      } else if (target === 'tags') {
        contact.tags = cell
          .split(/[,|]/)
          .map((t) => t.trim())
          .filter((t) => t !== '');
      } else contact[target] = cell;
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
    const attributes = (value as { attributes?: unknown } | null)?.attributes;
    const unreadable = Object.entries(attributes instanceof Object ? attributes : {}).flatMap(([name, cell]) =>
      cell instanceof UnreadableCell ? [{ field: `rows[${index}].attributes.${name}`, error: cell.error }] : [],
    );
    problems.push(...unreadable);
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
    if (unreadable.length > 0) return;
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
