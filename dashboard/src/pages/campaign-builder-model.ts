// The push campaign builder's form state and the API's campaign body (spec 2.2), one into the other.
// No DOM: tested in Node (campaign-builder-model.test.ts) for a lossless round trip.
import type { Body, Schemas } from '../api/client';
import { EMPTY as NO_FILTERS, fromFilters, toFilters, type BuilderState } from './segment-builder-model';

export type CampaignBody = Body<'/campaigns', 'post'>;
type Campaign = Schemas['Campaign'];
export type Mode = CampaignBody['schedule']['mode'];

export interface CampaignForm {
  name: string;
  title: string;
  body: string;
  iconUrl: string;
  imageUrl: string;
  clickUrl: string;
  /** Up to two buttons: the URL each opens and its label; an empty pair is no button. */
  actions: { action: string; title: string }[];
  utm: { source: string; medium: string; campaign: string };
  audience: 'filters' | 'saved';
  filters: BuilderState;
  savedSegmentId: string;
  mode: Mode;
  /** The wall-clock time in `timezone`, as a datetime-local input holds it (YYYY-MM-DDTHH:mm). */
  sendAt: string;
  timezone: string;
}

export const EMPTY_FORM: CampaignForm = {
  name: '',
  title: '',
  body: '',
  iconUrl: '',
  imageUrl: '',
  clickUrl: '',
  actions: [
    { action: '', title: '' },
    { action: '', title: '' },
  ],
  utm: { source: '', medium: '', campaign: '' },
  audience: 'filters',
  filters: NO_FILTERS,
  savedSegmentId: '',
  mode: 'draft',
  sendAt: '',
  timezone: '',
};

const optional = (value: string) => (value.trim() === '' ? undefined : value.trim());

/** The content as the preview and the API see it: empty fields left out. */
export function contentOf(form: CampaignForm): CampaignBody['content'] {
  const actions = form.actions.filter((a) => a.action.trim() !== '' || a.title.trim() !== '').map((a) => ({ action: a.action.trim(), title: a.title.trim() }));
  return {
    title: form.title,
    body: form.body,
    ...(optional(form.iconUrl) && { iconUrl: optional(form.iconUrl) }),
    ...(optional(form.imageUrl) && { imageUrl: optional(form.imageUrl) }),
    ...(optional(form.clickUrl) && { clickUrl: optional(form.clickUrl) }),
    ...(actions.length > 0 && { actions }),
  };
}

export function toCampaignBody(form: CampaignForm, projectId: string): CampaignBody {
  const utm = Object.fromEntries(Object.entries(form.utm).filter(([, value]) => value.trim() !== '').map(([key, value]) => [key, value.trim()]));
  return {
    name: form.name,
    projectId,
    content: contentOf(form),
    segment: form.audience === 'saved' ? { savedSegmentId: form.savedSegmentId } : { filters: toFilters(form.filters) },
    schedule: {
      mode: form.mode,
      ...(form.mode === 'scheduled' && { sendAt: form.sendAt }),
      ...(optional(form.timezone) && { timezone: optional(form.timezone) }),
    },
    ...(Object.keys(utm).length > 0 && { utm }),
  };
}

/** A stored draft in the form: its resolved sendAt shown as the wall-clock time of its zone. */
export function formOf(campaign: Campaign): CampaignForm {
  const { content, segment, schedule, utm } = campaign;
  const actions = [...(content.actions ?? []), { action: '', title: '' }, { action: '', title: '' }].slice(0, 2);
  return {
    name: campaign.name,
    title: content.title,
    body: content.body,
    iconUrl: content.iconUrl ?? '',
    imageUrl: content.imageUrl ?? '',
    clickUrl: content.clickUrl ?? '',
    actions,
    utm: { source: utm?.source ?? '', medium: utm?.medium ?? '', campaign: utm?.campaign ?? '' },
    audience: 'savedSegmentId' in segment ? 'saved' : 'filters',
    filters: 'filters' in segment ? fromFilters(segment.filters) : NO_FILTERS,
    savedSegmentId: 'savedSegmentId' in segment ? segment.savedSegmentId : '',
    mode: schedule.mode,
    // `2026-12-01T09:00:00+01:00` is 09:00 in its zone: the first 16 characters are the wall clock.
    sendAt: schedule.sendAt ? schedule.sendAt.slice(0, 16) : '',
    timezone: schedule.timezone ?? '',
  };
}
