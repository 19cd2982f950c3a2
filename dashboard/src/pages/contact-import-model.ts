// A CSV file's header and first rows read in the browser, each column's guessed destination and type, and the
// import's mapping and types query parameters; no DOM, so tested in Node.

export const ATTRIBUTE_TYPES = ['text', 'number', 'boolean', 'date'] as const;
export type AttributeType = (typeof ATTRIBUTE_TYPES)[number];
export const TYPE_LABEL: Record<AttributeType, string> = { text: 'Text', number: 'Number', boolean: 'Yes / no', date: 'Date' };

/** Where a column goes: a contact field, an attribute, skipped, or (for preferences.* and marketingConsent.* headers) as its header says. */
export type Destination = 'email' | 'phone' | 'externalId' | 'tags' | 'timezone' | 'language' | 'attribute' | 'skip' | 'header';

export const DESTINATION_LABEL: Record<Exclude<Destination, 'header'>, string> = {
  email: 'Email',
  phone: 'Phone',
  externalId: 'External id',
  tags: 'Tags',
  timezone: 'Time zone',
  language: 'Language',
  attribute: 'Attribute…',
  skip: 'Skip',
};

export interface ColumnMapping {
  header: string;
  samples: string[];
  destination: Destination;
  /** The attribute's name, when the destination is an attribute. */
  attribute: string;
  type: AttributeType;
}

/**
 * The first `rows + 1` records of a CSV text (RFC 4180: quoted fields, doubled quotes, line breaks inside quotes,
 * CRLF, a leading byte order mark), each as its cells. The server reads the whole file again: this is a preview.
 */
export function readCsv(text: string, rows: number): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let cell = '';
  let quoted = false;
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const endRecord = () => {
    record.push(cell);
    // Blank lines are skipped, as the server does.
    if (record.length > 1 || record[0] !== '') records.push(record);
    record = [];
    cell = '';
  };
  for (; i < text.length && records.length <= rows; i++) {
    const char = text[i]!;
    if (quoted) {
      if (char === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (char === '"') quoted = false;
      else cell += char;
    } else if (char === '"') quoted = true;
    else if (char === ',') {
      record.push(cell);
      cell = '';
    } else if (char === '\n' || char === '\r') {
      if (char === '\r' && text[i + 1] === '\n') i++;
      endRecord();
    } else cell += char;
  }
  if (records.length <= rows && (cell !== '' || record.length > 0)) endRecord();
  return records.slice(0, rows + 1);
}

const FIELD_NAMES: Record<string, Destination> = {
  email: 'email',
  emailaddress: 'email',
  mail: 'email',
  phone: 'phone',
  phonenumber: 'phone',
  mobile: 'phone',
  mobilephone: 'phone',
  cellphone: 'phone',
  telephone: 'phone',
  tel: 'phone',
  externalid: 'externalId',
  id: 'externalId',
  userid: 'externalId',
  customerid: 'externalId',
  tags: 'tags',
  tag: 'tags',
  labels: 'tags',
  timezone: 'timezone',
  tz: 'timezone',
  language: 'language',
  lang: 'language',
  locale: 'language',
};

/** `First name` → `first_name`; `attributes.plan` → `plan`; letters and digits kept, everything else one underscore. */
export function attributeName(header: string): string {
  const name = header
    .replace(/^attributes\./, '')
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '_')
    .replace(/^_+|_+$/g, '');
  return name.slice(0, 100);
}

const BOOLEAN = /^(true|false|yes|no)$/i;
const NUMBER = /^[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?$/;
const DATE = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})?)?$/i;

/** The type every sample reads as (yes/no words, numbers, ISO dates), else text; text without samples. */
export function guessType(samples: readonly string[]): AttributeType {
  const values = samples.map((sample) => sample.trim()).filter((sample) => sample !== '');
  if (values.length === 0) return 'text';
  if (values.every((value) => BOOLEAN.test(value))) return 'boolean';
  if (values.every((value) => NUMBER.test(value))) return 'number';
  if (values.every((value) => DATE.test(value))) return 'date';
  return 'text';
}

/** A column's likely destination from its header (`E-mail` → Email, `First name` → the attribute first_name), and its samples' type. */
export function guessColumn(header: string, samples: string[]): ColumnMapping {
  const trimmed = header.trim();
  const known = FIELD_NAMES[trimmed.toLowerCase().replace(/[^a-z]/g, '')];
  const asHeader = /^(preferences\.channels\.(email|push|sms|whatsapp)|marketingConsent\.(email|sms|whatsapp))$/.test(trimmed);
  const name = attributeName(trimmed);
  const destination: Destination = known ?? (asHeader ? 'header' : name === '' ? 'skip' : 'attribute');
  return { header: trimmed, samples, destination, attribute: name, type: guessType(samples) };
}

/** The header and sample rows of a CSV, each column with its guesses. */
export function columnsOf(text: string, sampleRows = 3): ColumnMapping[] {
  const [header = [], ...rows] = readCsv(text, sampleRows);
  return header.map((name, i) => guessColumn(name, rows.map((row) => row[i] ?? '')));
}

/**
 * An attribute column whose name the project's attribute list already holds takes the list's type (rather than its
 * samples' guess), so an import does not declare a listed attribute anew by accident; the user may still change it.
 */
export function withListedType(column: ColumnMapping, listed: ReadonlyMap<string, AttributeType>): ColumnMapping {
  const type = column.destination === 'attribute' ? listed.get(column.attribute.trim()) : undefined;
  return type === undefined ? column : { ...column, type };
}

/** The field a column goes to on the wire, or null when skipped. */
export function target(column: ColumnMapping): string | null {
  switch (column.destination) {
    case 'skip':
      return null;
    case 'header':
      return column.header;
    case 'attribute':
      return `attributes.${column.attribute.trim()}`;
    default:
      return column.destination;
  }
}

/** Problems the page can name before uploading, by column index: an attribute without a name, two columns to one place. */
export function mappingProblems(columns: readonly ColumnMapping[]): Map<number, string> {
  const problems = new Map<number, string>();
  const first = new Map<string, number>();
  columns.forEach((column, i) => {
    if (column.destination === 'attribute' && column.attribute.trim() === '') {
      problems.set(i, 'Enter a name for this attribute.');
      return;
    }
    if (column.destination === 'attribute' && column.attribute.trim().length > 100) {
      problems.set(i, 'Use at most 100 characters.');
      return;
    }
    const to = target(column);
    if (to === null) return;
    const earlier = first.get(to);
    if (earlier !== undefined) problems.set(i, `Column “${columns[earlier]!.header}” already goes there: choose another place or Skip.`);
    else first.set(to, i);
  });
  return problems;
}

/** The query parameters of the upload: every column's destination, and the type of every attribute column (as chosen, so declared). */
export function importParams(columns: readonly ColumnMapping[]): { mapping: string; types: string } {
  const mapping: Record<string, string | null> = {};
  const types: Record<string, AttributeType> = {};
  for (const column of columns) {
    mapping[column.header] = target(column);
    if (column.destination === 'attribute') types[column.attribute.trim()] = column.type;
  }
  return { mapping: JSON.stringify(mapping), types: JSON.stringify(types) };
}

/** A row error's field in the words of the file: `attributes.score` → the column that went there. */
export function columnOfField(columns: readonly ColumnMapping[], field: string): string | undefined {
  return columns.find((column) => {
    const to = target(column);
    return to !== null && (field === to || field.startsWith(`${to}.`));
  })?.header;
}
