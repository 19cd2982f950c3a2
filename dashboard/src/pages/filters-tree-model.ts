// The condition builder's tree (groups of attribute, event, segment and device/location rows) and the filters object of
// docs/TARGETING.md, one into the other, with the problems to fix before sending. No DOM: tested in Node
// (filters-tree-model.test.ts); a filters object read and written back unedited is the same JSON.
import type { Comparing, Condition, EventCondition, EventProperty, Filters, Operator, ValueType } from '../api/targeting';
import { fromFilters, toFilters, type BuilderState } from './segment-builder-model';

export const VALUE_TYPES: readonly ValueType[] = ['text', 'number', 'boolean', 'date'];
export const TYPE_LABELS: Record<ValueType, string> = { text: 'Text', number: 'Number', boolean: 'Yes / no', date: 'Date' };

/** The operators each type takes (docs/TARGETING.md, "Attribute conditions"), in the order the builder offers them. */
export const OPERATORS: Record<ValueType, readonly Operator[]> = {
  text: ['eq', 'neq', 'in', 'contains', 'starts_with', 'exists', 'not_exists'],
  number: ['eq', 'neq', 'in', 'gt', 'gte', 'lt', 'lte', 'between', 'exists', 'not_exists'],
  boolean: ['eq', 'neq', 'exists', 'not_exists'],
  date: ['gt', 'gte', 'lt', 'lte', 'between', 'within_last_days', 'more_than_days_ago', 'exists', 'not_exists'],
};
/** First and last times: the date operators but exists / not_exists. */
export const TIME_OPERATORS = OPERATORS.date.filter((op) => op !== 'exists' && op !== 'not_exists');
export const COUNT_OPERATORS = ['gte', 'lte', 'eq'] as const;
type CountOperator = (typeof COUNT_OPERATORS)[number];

/** An operator as the builder and the sentences say it, per type ("is more than" a number, "is after" a date). */
export function operatorWords(operator: Operator, type: ValueType): string {
  const date = type === 'date';
  switch (operator) {
    case 'eq':
      return 'is';
    case 'neq':
      return 'is not';
    case 'in':
      return 'is one of';
    case 'contains':
      return 'contains';
    case 'starts_with':
      return 'starts with';
    case 'exists':
      return 'is set';
    case 'not_exists':
      return 'is not set';
    case 'gt':
      return date ? 'is after' : 'is more than';
    case 'gte':
      return date ? 'is on or after' : 'is at least';
    case 'lt':
      return date ? 'is before' : 'is less than';
    case 'lte':
      return date ? 'is on or before' : 'is at most';
    case 'between':
      return 'is between';
    case 'within_last_days':
      return 'is in the last';
    case 'more_than_days_ago':
      return 'is more than';
  }
}
export const COUNT_WORDS: Record<CountOperator, string> = { gte: 'at least', lte: 'at most', eq: 'exactly' };

/** The spec's device, location and consent fields, each a row of its own. */
export const FIELD_KEYS = [
  'platform',
  'browser',
  'os',
  'country',
  'city',
  'device',
  'language',
  'tags',
  'lastSeenDays',
  'emailStatus',
  'emailConsent',
  'smsConsent',
  'whatsappConsent',
  'subscriptionDate',
] as const;
export type FieldKey = (typeof FIELD_KEYS)[number];
export const FIELD_LABELS: Record<FieldKey, string> = {
  platform: 'Platform',
  browser: 'Browser',
  os: 'Operating system',
  country: 'Country',
  city: 'City',
  device: 'Device',
  language: 'Language',
  tags: 'Tags',
  lastSeenDays: 'Last seen',
  emailStatus: 'Email status',
  emailConsent: 'Email marketing',
  smsConsent: 'SMS marketing',
  whatsappConsent: 'WhatsApp marketing',
  subscriptionDate: 'Subscription date',
};
const isFieldKey = (key: string): key is FieldKey => (FIELD_KEYS as readonly string[]).includes(key);

/** A comparison as typed: values as text (`in` comma-separated, `between` in two), converted by `type` when written. */
export interface Comparison {
  type: ValueType;
  operator: Operator;
  value: string;
  value2: string;
}
export type Row =
  | { id: string; kind: 'attribute'; name: string; comparison: Comparison }
  | {
      id: string;
      kind: 'event';
      event: string;
      /** Left out of the JSON while undefined (the default, performed). */
      performed: boolean | undefined;
      /** Left out while undefined (the default, at least once). */
      count: { operator: CountOperator; value: string } | undefined;
      window: 'all' | 'days' | 'between';
      days: string;
      from: string;
      to: string;
      where: { id: string; property: string; comparison: Comparison }[];
      first: Comparison | undefined;
      last: Comparison | undefined;
    }
  | { id: string; kind: 'segment'; negate: boolean; segmentId: string }
  /** One spec field; `raw` is the value as read, written back as it was until the row is edited. */
  | { id: string; kind: 'field'; field: FieldKey; state: BuilderState; raw?: unknown }
  | { id: string; kind: 'group'; group: Group };
export type EventRow = Extract<Row, { kind: 'event' }>;

export interface Group {
  match: 'all' | 'any';
  rows: Row[];
  /** Read from its parent's own `any` key (beside other keys) and written back there. */
  anyOfParent?: boolean;
}

export const MAX_DEPTH = 3;
/** An "any" group written as its parent's own `any` key: not a level of its own. */
export const isInline = (group: Group) => group.anyOfParent === true && group.match === 'any';
const MAX_CONDITIONS = 50;
export const EMPTY_TREE: Group = { match: 'all', rows: [] };

let made = 0;
/** A new row's id; rows read from filters are named by their place, so reading the same filters twice gives equal trees. */
const newId = () => `n${++made}`;

const EMPTY_COMPARISON = (type: ValueType): Comparison => ({ type, operator: OPERATORS[type][0]!, value: '', value2: '' });
export function newRow(kind: 'attribute' | 'event' | 'segment' | 'group' | FieldKey): Row {
  const id = newId();
  switch (kind) {
    case 'attribute':
      return { id, kind, name: '', comparison: EMPTY_COMPARISON('text') };
    case 'event':
      return { id, kind, event: '', performed: undefined, count: undefined, window: 'all', days: '', from: '', to: '', where: [], first: undefined, last: undefined };
    case 'segment':
      return { id, kind, negate: false, segmentId: '' };
    case 'group':
      return { id, kind, group: { match: 'any', rows: [] } };
    default:
      return { id, kind: 'field', field: kind, state: fromFilters({}) };
  }
}
export const newWhere = () => ({ id: newId(), property: '', comparison: EMPTY_COMPARISON('text') });
export const newTime = (): Comparison => EMPTY_COMPARISON('date');

/** The type a `where` on an event property compares as: its most frequent JSON type's (none for objects, lists, null). */
export function propertyType(property: EventProperty): ValueType | undefined {
  const json = property.types[0]?.type;
  return json === 'string' ? 'text' : json === 'number' || json === 'boolean' ? json : undefined;
}

/** A comparison with another type: the operator kept when the new type takes it. */
export function retype(comparison: Comparison, type: ValueType): Comparison {
  return { ...comparison, type, operator: OPERATORS[type].includes(comparison.operator) ? comparison.operator : OPERATORS[type][0]! };
}
/** A field row edited: from now on written from the form. */
export function editField(row: Extract<Row, { kind: 'field' }>, state: BuilderState): Row {
  return { id: row.id, kind: 'field', field: row.field, state };
}

// ——— reading ———

const DATE_TEXT = /^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/;
const DAYS_OPERATORS: readonly Operator[] = ['within_last_days', 'more_than_days_ago'];

/** The type a stored condition's value says (an attribute's declared type may re-type the row when it is picked). */
function typeOf(operator: Operator, value: unknown): ValueType {
  if (DAYS_OPERATORS.includes(operator)) return 'date';
  const first = Array.isArray(value) ? value[0] : value;
  if (typeof first === 'number') return 'number';
  if (typeof first === 'boolean') return 'boolean';
  if (typeof first === 'string' && DATE_TEXT.test(first) && !OPERATORS.text.includes(operator)) return 'date';
  return 'text';
}

function comparisonOf({ operator, value }: { operator: Operator; value?: unknown }, type = typeOf(operator, value)): Comparison {
  if (operator === 'between' && Array.isArray(value)) return { type, operator, value: String(value[0] ?? ''), value2: String(value[1] ?? '') };
  if (operator === 'in' && Array.isArray(value)) return { type, operator, value: value.map(String).join(', '), value2: '' };
  return { type, operator, value: value === undefined ? '' : String(value), value2: '' };
}

function readEvent(id: string, c: EventCondition): EventRow {
  return {
    id,
    kind: 'event',
    event: c.event,
    performed: c.performed,
    count: c.count && { operator: c.count.operator, value: String(c.count.value) },
    window: c.withinLastDays !== undefined ? 'days' : c.between ? 'between' : 'all',
    days: c.withinLastDays === undefined ? '' : String(c.withinLastDays),
    from: c.between?.from ?? '',
    to: c.between?.to ?? '',
    where: (c.where ?? []).map((w, i) => ({ id: `${id}.w${i}`, property: w.property, comparison: comparisonOf(w) })),
    first: c.first && comparisonOf(c.first, 'date'),
    last: c.last && comparisonOf(c.last, 'date'),
  };
}

const fieldRow = (id: string, field: FieldKey, raw: unknown): Row => ({ id, kind: 'field', field, state: fromFilters({ [field]: raw } as Filters), raw });

function readCondition(id: string, c: Condition, inAny: boolean): Row {
  if ('attribute' in c) return { id, kind: 'attribute', name: c.attribute, comparison: comparisonOf(c) };
  if ('event' in c) return readEvent(id, c);
  if ('inSegment' in c) return { id, kind: 'segment', negate: false, segmentId: c.inSegment };
  if ('notInSegment' in c) return { id, kind: 'segment', negate: true, segmentId: c.notInSegment };
  const keys = Object.keys(c);
  // In an "any" list a one-field object is that field's row; in an "all" list it stays a group so it is written back there.
  if (inAny && keys.length === 1 && isFieldKey(keys[0]!)) return fieldRow(id, keys[0], (c as Record<string, unknown>)[keys[0]]);
  return { id, kind: 'group', group: treeOf(c as Filters, id) };
}

/** A filters object (a segment's, a campaign's inline audience, a condition step's) as the builder's tree. */
export function treeOf(filters: Filters | null | undefined, id = 'r'): Group {
  const { all, any, ...fields } = filters ?? {};
  const fieldRows = Object.entries(fields)
    .filter(([key, value]) => isFieldKey(key) && value !== undefined)
    .map(([key, value], i) => fieldRow(`${id}.f${i}`, key as FieldKey, value));
  const anyRows = (any ?? []).map((c, i) => readCondition(`${id}.any${i}`, c, true));
  if (fieldRows.length === 0 && !all && any) return { match: 'any', rows: anyRows };
  const rows = [...fieldRows, ...(all ?? []).map((c, i) => readCondition(`${id}.all${i}`, c, false))];
  if (any) rows.push({ id: `${id}.any`, kind: 'group', group: { match: 'any', rows: anyRows, anyOfParent: true } });
  return { match: 'all', rows };
}

// ——— writing ———

const list = (text: string) =>
  text
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);

function typed(text: string, type: ValueType): string | number | boolean {
  if (type === 'number') return text.trim() === '' ? Number.NaN : Number(text.trim());
  if (type === 'boolean') return text === 'true';
  return type === 'date' ? text.trim() : text;
}

/** The `{ operator, value }` part of a comparison as the API takes it (no value for exists / not_exists). */
export function comparisonJson({ type, operator, value, value2 }: Comparison): Comparing {
  if (operator === 'exists' || operator === 'not_exists') return { operator };
  if (DAYS_OPERATORS.includes(operator)) return { operator, value: typed(value, 'number') as number };
  if (operator === 'in') return { operator, value: list(value).map((item) => typed(item, type) as string | number) };
  if (operator === 'between') return { operator, value: [typed(value, type) as string | number, typed(value2, type) as string | number] };
  return { operator, value: typed(value, type) };
}

type EventTime = NonNullable<EventCondition['first']>;

function eventJson(row: EventRow): EventCondition {
  const between = { ...(row.from.trim() && { from: row.from.trim() }), ...(row.to.trim() && { to: row.to.trim() }) };
  return {
    event: row.event.trim(),
    ...(row.performed !== undefined && { performed: row.performed }),
    ...(row.count && { count: { operator: row.count.operator, value: typed(row.count.value, 'number') as number } }),
    ...(row.window === 'days' && { withinLastDays: typed(row.days, 'number') as number }),
    ...(row.window === 'between' && { between }),
    ...(row.where.length > 0 && { where: row.where.map((w) => ({ property: w.property.trim(), ...comparisonJson(w.comparison) })) }),
    // The time operators exclude exists / not_exists (TIME_OPERATORS); a wrong one is the API's 422 to say.
    ...(row.first && { first: comparisonJson(row.first) as EventTime }),
    ...(row.last && { last: comparisonJson(row.last) as EventTime }),
  };
}

const fieldValue = (row: Extract<Row, { kind: 'field' }>): unknown => ('raw' in row && row.raw !== undefined ? row.raw : toFilters(row.state)[row.field]);

/** Where each row sits in the request body: a condition's path, or for a field row the object that holds its key. */
export type Paths = Record<string, string>;

function conditionJson(row: Row, path: string, paths: Paths, depth: number): Condition {
  paths[row.id] = path;
  switch (row.kind) {
    case 'attribute':
      return { attribute: row.name.trim(), ...comparisonJson(row.comparison) };
    case 'event':
      return eventJson(row);
    case 'segment':
      return row.negate ? { notInSegment: row.segmentId } : { inSegment: row.segmentId };
    case 'field':
      return { [row.field]: fieldValue(row) } as Filters;
    case 'group':
      return write(row.group, path, paths, depth + 1);
  }
}

function write(group: Group, path: string, paths: Paths, depth: number): Filters {
  if (group.match === 'any') {
    return group.rows.length ? { any: group.rows.map((row, i) => conditionJson(row, `${path}.any.${i}`, paths, depth)) } : {};
  }
  const filters: Record<string, unknown> = {};
  const all: Condition[] = [];
  let any: Condition[] | undefined;
  for (const row of group.rows) {
    if (row.kind === 'field' && !(row.field in filters)) {
      paths[row.id] = path;
      const value = fieldValue(row);
      if (value !== undefined) filters[row.field] = value;
    } else if (row.kind === 'group' && isInline(row.group) && any === undefined && row.group.rows.length > 0) {
      paths[row.id] = path;
      any = row.group.rows.map((r, i) => conditionJson(r, `${path}.any.${i}`, paths, depth));
    } else {
      all.push(conditionJson(row, `${path}.all.${all.length}`, paths, depth));
    }
  }
  if (all.length) filters.all = all;
  if (any) filters.any = any;
  return filters as Filters;
}

/** The filters object of a tree, and where each row's values sit in a body whose filters are at `prefix`. */
export function filtersOf(tree: Group, prefix = 'filters'): { filters: Filters; paths: Paths } {
  const paths: Paths = {};
  return { filters: write(tree, prefix, paths, 1), paths };
}

// ——— problems ———

/** A problem in the envelope's shape, so it shows beside its control as the API's 422 would. */
interface Problem {
  field: string;
  error: string;
}

const ISO_DATE = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})?)?$/;
function valueProblem(text: string, type: ValueType): string | undefined {
  if (text.trim() === '') return 'Enter a value.';
  if (type === 'number' && !Number.isFinite(Number(text.trim()))) return 'Enter a number, such as 42 or 3.5.';
  if (type === 'date' && (!ISO_DATE.test(text.trim()) || Number.isNaN(Date.parse(text.trim())))) return 'Enter a date, such as 2026-01-31.';
  return undefined;
}
function wholeProblem(text: string, min: number, max: number, what: string): string | undefined {
  const n = Number(text.trim());
  if (text.trim() === '' || !Number.isInteger(n) || n < min || n > max) return `Enter a whole number of ${what} from ${min} to ${max.toLocaleString('en')}.`;
  return undefined;
}

function comparisonProblems(c: Comparison, path: string, out: Problem[]) {
  if (!OPERATORS[c.type].includes(c.operator)) out.push({ field: `${path}.operator`, error: `A ${TYPE_LABELS[c.type].toLowerCase()} value cannot be compared with “${operatorWords(c.operator, c.type)}”.` });
  else if (DAYS_OPERATORS.includes(c.operator)) {
    const problem = wholeProblem(c.value, 1, 36500, 'days');
    if (problem) out.push({ field: `${path}.value`, error: problem });
  } else if (c.operator === 'in') {
    const items = list(c.value);
    const bad = items.map((item) => valueProblem(item, c.type)).find(Boolean);
    if (items.length === 0) out.push({ field: `${path}.value`, error: 'Enter one value or more, separated by commas.' });
    else if (items.length > 500) out.push({ field: `${path}.value`, error: 'Enter at most 500 values.' });
    else if (bad) out.push({ field: `${path}.value`, error: bad });
  } else if (c.operator === 'between') {
    const low = valueProblem(c.value, c.type);
    const high = valueProblem(c.value2, c.type);
    if (low) out.push({ field: `${path}.value.0`, error: low });
    if (high) out.push({ field: `${path}.value.1`, error: high });
  } else if (c.operator !== 'exists' && c.operator !== 'not_exists') {
    const problem = valueProblem(c.value, c.type);
    if (problem) out.push({ field: `${path}.value`, error: problem });
  }
}

function rowProblems(row: Row, paths: Paths, depth: number, inAny: boolean, out: Problem[]) {
  const path = paths[row.id]!;
  switch (row.kind) {
    case 'attribute':
      if (!row.name.trim()) out.push({ field: `${path}.attribute`, error: 'Choose an attribute.' });
      comparisonProblems(row.comparison, path, out);
      return;
    case 'event': {
      if (!row.event.trim()) out.push({ field: `${path}.event`, error: 'Choose an event.' });
      const count = row.count && wholeProblem(row.count.value, 0, 1_000_000, 'times');
      if (count) out.push({ field: `${path}.count.value`, error: count });
      const days = row.window === 'days' && wholeProblem(row.days, 1, 36500, 'days');
      if (days) out.push({ field: `${path}.withinLastDays`, error: days });
      if (row.window === 'between' && !row.from.trim() && !row.to.trim()) out.push({ field: `${path}.between.from`, error: 'Enter a first day, a last day or both.' });
      row.where.forEach((w, i) => {
        if (!w.property.trim()) out.push({ field: `${path}.where.${i}.property`, error: 'Choose a property.' });
        comparisonProblems(w.comparison, `${path}.where.${i}`, out);
      });
      if (row.first) comparisonProblems(row.first, `${path}.first`, out);
      if (row.last) comparisonProblems(row.last, `${path}.last`, out);
      return;
    }
    case 'segment':
      if (!row.segmentId) out.push({ field: `${path}.${row.negate ? 'notInSegment' : 'inSegment'}`, error: 'Choose a segment.' });
      return;
    case 'field':
      if (fieldValue(row) === undefined) out.push({ field: `${path}.${row.field}`, error: 'Choose or enter a value, or remove this condition.' });
      // In an "any" group a field is an object of its own: one level deeper.
      else if (inAny && depth >= MAX_DEPTH) out.push({ field: `${path}.${row.field}`, error: `At this depth a field in an “any” group is a group too deep (at most ${MAX_DEPTH} levels): move it up a level.` });
      return;
    case 'group':
      groupProblems(row.group, paths, isInline(row.group) ? depth : depth + 1, path, out);
  }
}

function groupProblems(group: Group, paths: Paths, depth: number, path: string, out: Problem[]) {
  if (depth > MAX_DEPTH) out.push({ field: path, error: `Groups nest at most ${MAX_DEPTH} levels deep.` });
  if (depth > 1 && group.rows.length === 0) out.push({ field: path, error: 'Add a condition to this group, or remove it.' });
  if (group.rows.length > MAX_CONDITIONS) out.push({ field: path, error: `A group holds at most ${MAX_CONDITIONS} conditions.` });
  for (const row of group.rows) rowProblems(row, paths, depth, group.match === 'any', out);
}

/** What to fix before the tree is worth sending, on the paths the rows' controls carry. */
export function problemsOf(tree: Group, prefix = 'filters'): Problem[] {
  const { paths } = filtersOf(tree, prefix);
  const out: Problem[] = [];
  groupProblems(tree, paths, 1, prefix, out);
  return out;
}

// ——— editing by id ———

/** The tree with one row replaced (or removed, with `undefined`), wherever it is nested. */
export function updateRow(group: Group, id: string, next: Row | undefined): Group {
  const rows: Row[] = [];
  for (const row of group.rows) {
    if (row.id === id) {
      if (next) rows.push(next);
    } else rows.push(row.kind === 'group' ? { ...row, group: updateRow(row.group, id, next) } : row);
  }
  return { ...group, rows };
}
