// A segment's filters (or a campaign's inline audience) said in words: "Desktop · Chrome · Germany or France · not tagged trial",
// and the tree's conditions: "plan is “pro” · performed order.completed at least once in the last 30 days".
import type { Comparing, Condition, EventCondition, Filters as SegmentFilters } from '../api/targeting';
import { COUNT_WORDS, operatorWords } from '../pages/filters-tree-model';
import { CONSENT_LABELS } from '../pages/segment-builder-model';
import { listWords, valueWords } from './format';

/** A saved segment's name by its id, where the page knows it (for "in segment “VIPs”"). */
export type SegmentNames = (id: string) => string | undefined;
const NO_NAMES: SegmentNames = () => undefined;

/** What an audience with no filter reaches. */
export const EVERYONE = 'Everyone subscribed';

type EmailStatus = Extract<NonNullable<SegmentFilters['emailStatus']>, readonly unknown[]>[number];

const PLATFORM_WORDS: Record<string, string> = { desktop: 'Desktop', mobile: 'Mobile', tablet: 'Tablet' };
const CONSENT_CHANNEL = { emailConsent: 'Email', smsConsent: 'SMS', whatsappConsent: 'WhatsApp' } as const;

const many = <T>(value: T | readonly T[] | undefined): T[] => (value === undefined ? [] : Array.isArray(value) ? [...(value as readonly T[])] : [value as T]);


function displayNames(type: 'region' | 'language') {
  try {
    return new Intl.DisplayNames(['en'], { type, fallback: 'code' });
  } catch {
    return undefined;
  }
}
const REGIONS = displayNames('region');
const LANGUAGES = displayNames('language');

/** DE → Germany; a code no name is known for stays as it is. */
export function countryName(code: string): string {
  try {
    return REGIONS?.of(code.toUpperCase()) ?? code;
  } catch {
    return code;
  }
}

/** pt-BR → Brazilian Portuguese; a tag no name is known for stays as it is. */
export function languageName(tag: string): string {
  try {
    return LANGUAGES?.of(tag) ?? tag;
  } catch {
    return tag;
  }
}

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
/** A date of the filter as written: a day (the whole UTC day) or an instant, both in UTC so every reader sees the same. */
function dateWords(value: string): string {
  const date = new Date(DATE_ONLY.test(value) ? `${value}T00:00:00Z` : value);
  if (Number.isNaN(date.getTime())) return value;
  return DATE_ONLY.test(value)
    ? date.toLocaleDateString('en-GB', { day: 'numeric', month: 'short', year: 'numeric', timeZone: 'UTC' })
    : `${date.toLocaleString('en-GB', { day: 'numeric', month: 'short', year: 'numeric', hour: '2-digit', minute: '2-digit', timeZone: 'UTC' })} UTC`;
}

/** A comparison's operator and value: "is more than 50", "is one of “a” or “b”", "is in the last 30 days". */
function comparisonWords({ operator, value }: Comparing, date = false): string {
  const sample = Array.isArray(value) ? value[0] : value;
  const type = date || (typeof sample === 'string' && DATE_ONLY.test(sample.slice(0, 10))) ? 'date' : 'text';
  const words = operatorWords(operator, type);
  const one = (item: unknown) => (type === 'date' && typeof item === 'string' ? dateWords(item) : valueWords(item));
  if (operator === 'exists' || operator === 'not_exists') return words;
  if (operator === 'within_last_days') return `${words} ${value === 1 ? 'day' : `${String(value)} days`}`;
  if (operator === 'more_than_days_ago') return `${words} ${value === 1 ? '1 day' : `${String(value)} days`} ago`;
  if (operator === 'between' && Array.isArray(value)) return `${words} ${one(value[0])} and ${one(value[1])}`;
  if (Array.isArray(value)) return `${words} ${listWords(value.map(one))}`;
  return `${words} ${one(value)}`;
}

const times = (n: number) => (n === 1 ? 'once' : `${n} times`);

/** "performed order.completed at least 2 times in the last 30 days, where total is more than 50". */
function eventWords(c: EventCondition): string {
  const words = [c.performed === false ? `did not perform ${c.event}` : `performed ${c.event}`];
  if (c.count && !(c.count.operator === 'gte' && c.count.value === 1)) words.push(`${COUNT_WORDS[c.count.operator]} ${times(c.count.value)}`);
  if (c.withinLastDays !== undefined) words.push(c.withinLastDays === 1 ? 'in the last day' : `in the last ${c.withinLastDays} days`);
  else if (c.between?.from && c.between.to) words.push(`between ${dateWords(c.between.from)} and ${dateWords(c.between.to)}`);
  else if (c.between?.from) words.push(`since ${dateWords(c.between.from)}`);
  else if (c.between?.to) words.push(`until ${dateWords(c.between.to)}`);
  let sentence = words.join(' ');
  const where = (c.where ?? []).filter((w) => w.property);
  if (where.length) sentence += `, where ${listWords(where.map((w) => `${w.property} ${comparisonWords(w)}`), 'and')}`;
  if (c.first) sentence += `, first ${comparisonWords(c.first, true)}`;
  if (c.last) sentence += `, last ${comparisonWords(c.last, true)}`;
  return sentence;
}

const segmentWords = (id: string, names: SegmentNames) => {
  const name = names(id);
  return name === undefined ? 'a saved segment' : `segment “${name}”`;
};

/**
 * One condition of `all` or `any` as a phrase; a group of several parts in brackets. A condition still being filled in
 * (no attribute, event or segment chosen yet; an empty group) says nothing yet.
 */
function conditionWords(c: Condition, names: SegmentNames): string | undefined {
  if ('attribute' in c) return c.attribute ? `${c.attribute} ${comparisonWords(c)}` : undefined;
  if ('event' in c) return c.event ? eventWords(c) : undefined;
  if ('inSegment' in c) return c.inSegment ? `in ${segmentWords(c.inSegment, names)}` : undefined;
  if ('notInSegment' in c) return c.notInSegment ? `not in ${segmentWords(c.notInSegment, names)}` : undefined;
  const parts = audienceParts(c, names);
  if (parts.length <= 1) return parts[0];
  // A group of only "any" is already "a or b"; a group of several parts is "a and b".
  return `(${parts.join(' and ')})`;
}

/** Each filter as a phrase, in the order the builder shows them. */
export function audienceParts(filters: SegmentFilters | null | undefined, names: SegmentNames = NO_NAMES): string[] {
  if (!filters) return [];
  const parts: string[] = [];
  const platforms = many(filters.platform).map((p) => PLATFORM_WORDS[p] ?? p);
  if (platforms.length) parts.push(listWords(platforms));
  const browsers = many(filters.browser);
  if (browsers.length) parts.push(listWords(browsers));
  const oses = many(filters.os);
  if (oses.length) parts.push(listWords(oses));
  const countries = many(filters.country).map(countryName);
  if (countries.length) parts.push(listWords(countries));
  const cities = many(filters.city);
  if (cities.length) parts.push(`city ${listWords(cities)}`);
  const devices = many(filters.device);
  if (devices.length) parts.push(`device ${listWords(devices)}`);
  const languages = many(filters.language).map(languageName);
  if (languages.length) parts.push(`speaks ${listWords(languages)}`);
  const tags = filters.tags;
  if (tags !== undefined) {
    const sets = Array.isArray(tags) ? { any: tags } : (tags as { any?: string[]; all?: string[]; none?: string[] });
    if (sets.any?.length) parts.push(`tagged ${listWords(sets.any)}`);
    if (sets.all?.length) parts.push(`tagged ${listWords(sets.all, 'and')}`);
    if (sets.none?.length) parts.push(`not tagged ${listWords(sets.none)}`);
  }
  // A number still being typed (the builder's live sentence) says nothing yet.
  if (filters.lastSeenDays !== undefined && Number.isFinite(filters.lastSeenDays)) parts.push(filters.lastSeenDays === 1 ? 'seen in the last day' : `seen in the last ${filters.lastSeenDays} days`);
  const statuses = many<EmailStatus>(filters.emailStatus);
  if (statuses.length) {
    const withAddress = statuses.filter((status) => status !== 'none');
    const words = withAddress.length ? [`email ${listWords(withAddress)}`] : [];
    parts.push(statuses.includes('none') ? [...words, 'no email address'].join(' or ') : words[0]!);
  }
  for (const key of ['emailConsent', 'smsConsent', 'whatsappConsent'] as const) {
    const consents = many(filters[key]).map((consent) => (CONSENT_LABELS[consent] ?? consent).toLowerCase());
    if (consents.length) parts.push(`${CONSENT_CHANNEL[key]} marketing ${listWords(consents)}`);
  }
  const range = filters.subscriptionDate;
  if (range?.from && range.to) parts.push(`subscribed ${dateWords(range.from)} – ${dateWords(range.to)}`);
  else if (range?.from) parts.push(`subscribed since ${dateWords(range.from)}`);
  else if (range?.to) parts.push(`subscribed until ${dateWords(range.to)}`);
  for (const condition of filters.all ?? []) {
    const words = conditionWords(condition, names);
    if (words) parts.push(words);
  }
  const either = (filters.any ?? []).map((condition) => conditionWords(condition, names)).filter((words) => words !== undefined);
  if (either.length) parts.push(either.length > 1 && parts.length > 0 ? `(${listWords(either)})` : listWords(either));
  return parts;
}

/** The whole audience in a line; no filter is everyone subscribed. */
export function audienceSentence(filters: SegmentFilters | null | undefined, names: SegmentNames = NO_NAMES): string {
  const parts = audienceParts(filters, names);
  return parts.length === 0 ? EVERYONE : parts.join(' · ');
}
