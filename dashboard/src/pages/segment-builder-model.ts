// The segment builder's form state and the API's filter object (spec 2.4's 11 filters and the marketing consent
// filters), one into the other.
// No DOM: tested in Node (segment-builder-model.test.ts) for a lossless round trip.
import type { Schemas } from '../api/client';
import { everyValue } from '../components/format';

export type SegmentFilters = Schemas['SegmentFilters'];
type Values<K extends keyof SegmentFilters> = Extract<NonNullable<SegmentFilters[K]>, readonly unknown[]>[number];

export const PLATFORMS = everyValue<Values<'platform'>>()('desktop', 'mobile', 'tablet');
export const BROWSERS = everyValue<Values<'browser'>>()('Chrome', 'Safari', 'Firefox', 'Edge');
export const OSES = everyValue<Values<'os'>>()('macOS', 'Windows', 'iOS', 'Android');
export const EMAIL_STATUSES = everyValue<Values<'emailStatus'>>()('none', 'active', 'verified', 'unsubscribed', 'bounced', 'complained');
export const CONSENTS = everyValue<Values<'emailConsent'>>()('subscribed', 'transactional', 'unsubscribed');
/** Marketing consent in plain words (docs/CONTEXT.md, "Marketing consent"). */
export const CONSENT_LABELS: Record<Values<'emailConsent'>, string> = {
  subscribed: 'Subscribed',
  transactional: 'Transactional only',
  unsubscribed: 'Unsubscribed',
};
export const CONSENT_KEYS = ['emailConsent', 'smsConsent', 'whatsappConsent'] as const;

/** What the form edits: choices as arrays, free values as comma-separated text, numbers and dates as text. */
export interface BuilderState {
  platform: Values<'platform'>[];
  browser: Values<'browser'>[];
  os: Values<'os'>[];
  emailStatus: Values<'emailStatus'>[];
  emailConsent: Values<'emailConsent'>[];
  smsConsent: Values<'smsConsent'>[];
  whatsappConsent: Values<'whatsappConsent'>[];
  country: string;
  city: string;
  device: string;
  language: string;
  tagsAny: string;
  tagsAll: string;
  tagsNone: string;
  lastSeenDays: string;
  subscribedFrom: string;
  subscribedTo: string;
}

export const EMPTY: BuilderState = {
  platform: [],
  browser: [],
  os: [],
  emailStatus: [],
  emailConsent: [],
  smsConsent: [],
  whatsappConsent: [],
  country: '',
  city: '',
  device: '',
  language: '',
  tagsAny: '',
  tagsAll: '',
  tagsNone: '',
  lastSeenDays: '',
  subscribedFrom: '',
  subscribedTo: '',
};

const list = (text: string) =>
  text
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
const text = <T>(value: T | T[] | undefined) => (value === undefined ? '' : (Array.isArray(value) ? value : [value]).join(', '));
const array = <T>(value: T | T[] | undefined): T[] => (value === undefined ? [] : Array.isArray(value) ? value : [value]);

/** The filter object the API takes: an empty field is no filter; lists are arrays ("any of"). */
export function toFilters(state: BuilderState): SegmentFilters {
  const filters: SegmentFilters = {};
  if (state.platform.length) filters.platform = state.platform;
  if (state.browser.length) filters.browser = state.browser;
  if (state.os.length) filters.os = state.os;
  if (state.emailStatus.length) filters.emailStatus = state.emailStatus;
  for (const key of CONSENT_KEYS) if (state[key].length) filters[key] = state[key];
  for (const key of ['country', 'city', 'device', 'language'] as const) {
    const values = list(state[key]);
    if (values.length) filters[key] = values;
  }
  const [any, all, none] = [list(state.tagsAny), list(state.tagsAll), list(state.tagsNone)];
  if (any.length || all.length || none.length) {
    filters.tags = { ...(any.length && { any }), ...(all.length && { all }), ...(none.length && { none }) };
  }
  // Sent as typed (a number or not): the API's 422 says what is wrong beside the field.
  if (state.lastSeenDays.trim()) filters.lastSeenDays = Number(state.lastSeenDays.trim());
  if (state.subscribedFrom || state.subscribedTo) {
    filters.subscriptionDate = { ...(state.subscribedFrom && { from: state.subscribedFrom }), ...(state.subscribedTo && { to: state.subscribedTo }) };
  }
  return filters;
}

/** A saved segment's filters as the form shows them (a single value or a plain tags array included). */
export function fromFilters(filters: SegmentFilters): BuilderState {
  const tags = filters.tags;
  const tagSets = Array.isArray(tags) ? { any: tags } : (tags ?? {});
  return {
    platform: array(filters.platform),
    browser: array(filters.browser),
    os: array(filters.os),
    emailStatus: array(filters.emailStatus),
    emailConsent: array(filters.emailConsent),
    smsConsent: array(filters.smsConsent),
    whatsappConsent: array(filters.whatsappConsent),
    country: text(filters.country),
    city: text(filters.city),
    device: text(filters.device),
    language: text(filters.language),
    tagsAny: text(tagSets.any),
    tagsAll: text(tagSets.all),
    tagsNone: text(tagSets.none),
    lastSeenDays: filters.lastSeenDays === undefined ? '' : String(filters.lastSeenDays),
    subscribedFrom: filters.subscriptionDate?.from ?? '',
    subscribedTo: filters.subscriptionDate?.to ?? '',
  };
}

/** The envelope's name of the field each form control edits (a 422 on `filters.tags.all.0` lands beside tagsAll). */
const FIELD_OF: Record<keyof BuilderState, string> = {
  platform: 'filters.platform',
  browser: 'filters.browser',
  os: 'filters.os',
  emailStatus: 'filters.emailStatus',
  emailConsent: 'filters.emailConsent',
  smsConsent: 'filters.smsConsent',
  whatsappConsent: 'filters.whatsappConsent',
  country: 'filters.country',
  city: 'filters.city',
  device: 'filters.device',
  language: 'filters.language',
  tagsAny: 'filters.tags.any',
  tagsAll: 'filters.tags.all',
  tagsNone: 'filters.tags.none',
  lastSeenDays: 'filters.lastSeenDays',
  subscribedFrom: 'filters.subscriptionDate.from',
  subscribedTo: 'filters.subscriptionDate.to',
};

/** A filter's name in the error envelope when the filters sit at `prefix` of the body (`segment.filters` in a campaign). */
export const fieldOf = (key: keyof BuilderState, prefix = 'filters') => FIELD_OF[key].replace(/^filters/, prefix);
