// A segment's filters (or a campaign's inline audience) said in words: "Desktop · Chrome · Germany or France · not tagged trial".
import { CONSENT_LABELS, type SegmentFilters } from '../pages/segment-builder-model';
import { listWords } from './format';

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

/** Each filter as a phrase, in the order the builder shows them. */
export function audienceParts(filters: SegmentFilters | null | undefined): string[] {
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
  return parts;
}

/** The whole audience in a line; no filter is everyone subscribed. */
export function audienceSentence(filters: SegmentFilters | null | undefined): string {
  const parts = audienceParts(filters);
  return parts.length === 0 ? EVERYONE : parts.join(' · ');
}
