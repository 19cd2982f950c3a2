// The campaign builders' form state and the API's campaign body, one into the other: what every channel's form holds
// (name, UTM, audience, schedule), then push's content (spec 2.2). No DOM: tested in Node (campaign-builder-model.test.ts,
// email-campaign-builder-model.test.ts) for a lossless round trip.
import type { Body, Schemas } from '../api/client';
import { EMPTY_TREE, filtersOf, treeOf, type Group } from './filters-tree-model';

export type CampaignBody = Body<'/campaigns', 'post'>;
type Campaign = Schemas['Campaign'];
export type Mode = CampaignBody['schedule']['mode'];

/** What a builder's form holds on every channel, beside its content. */
export interface CampaignFormBase<UtmKey extends string = string> {
  name: string;
  utm: Record<UtmKey, string>;
  audience: 'filters' | 'saved';
  filters: Group;
  savedSegmentId: string;
  mode: Mode;
  /** The wall-clock time in `timezone`, as a datetime-local input holds it (YYYY-MM-DDTHH:mm). */
  sendAt: string;
  timezone: string;
}

export const EMPTY_BASE: Omit<CampaignFormBase, 'utm'> = {
  name: '',
  audience: 'filters',
  filters: EMPTY_TREE,
  savedSegmentId: '',
  mode: 'draft',
  sendAt: '',
  timezone: '',
};

export const optional = (value: string) => (value.trim() === '' ? undefined : value.trim());

/** The body's name, segment, schedule and UTM, as every channel's API takes them: empty fields left out. */
export function baseBody(form: CampaignFormBase) {
  const utm = Object.fromEntries(Object.entries(form.utm).filter(([, value]) => value.trim() !== '').map(([key, value]) => [key, value.trim()]));
  return {
    name: form.name,
    segment: form.audience === 'saved' ? { savedSegmentId: form.savedSegmentId } : { filters: filtersOf(form.filters).filters },
    schedule: {
      mode: form.mode,
      ...(form.mode === 'scheduled' && { sendAt: form.sendAt }),
      ...(optional(form.timezone) && { timezone: optional(form.timezone) }),
    },
    ...(Object.keys(utm).length > 0 && { utm }),
  };
}

/** A stored campaign's name, UTM, audience and schedule in the form: its resolved sendAt as the wall clock of its zone. */
export function baseFormOf<UtmKey extends string>(
  campaign: Pick<Campaign | Schemas['EmailCampaign'], 'name' | 'segment' | 'schedule'> & { utm: Partial<Record<UtmKey, string>> | null },
  utmKeys: readonly UtmKey[],
): CampaignFormBase<UtmKey> {
  const { segment, schedule, utm } = campaign;
  return {
    name: campaign.name,
    utm: Object.fromEntries(utmKeys.map((key) => [key, utm?.[key] ?? ''])) as Record<UtmKey, string>,
    audience: 'savedSegmentId' in segment ? 'saved' : 'filters',
    filters: 'filters' in segment ? treeOf(segment.filters) : EMPTY_TREE,
    savedSegmentId: 'savedSegmentId' in segment ? segment.savedSegmentId : '',
    mode: schedule.mode,
    // `2026-12-01T09:00:00+01:00` is 09:00 in its zone: the first 16 characters are the wall clock.
    sendAt: schedule.sendAt ? schedule.sendAt.slice(0, 16) : '',
    timezone: schedule.timezone ?? '',
  };
}

const PUSH_UTM = ['source', 'medium', 'campaign'] as const;

export interface CampaignForm extends CampaignFormBase<(typeof PUSH_UTM)[number]> {
  title: string;
  body: string;
  iconUrl: string;
  imageUrl: string;
  clickUrl: string;
  /** Up to two buttons: the URL each opens and its label; an empty pair is no button. */
  actions: { action: string; title: string }[];
}

export const EMPTY_FORM: CampaignForm = {
  ...EMPTY_BASE,
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
};

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
  return { ...baseBody(form), projectId, content: contentOf(form) };
}

/** A stored draft in the form. */
export function formOf(campaign: Campaign): CampaignForm {
  const { content } = campaign;
  const actions = [...(content.actions ?? []), { action: '', title: '' }, { action: '', title: '' }].slice(0, 2);
  return {
    ...baseFormOf(campaign, PUSH_UTM),
    title: content.title,
    body: content.body,
    iconUrl: content.iconUrl ?? '',
    imageUrl: content.imageUrl ?? '',
    clickUrl: content.clickUrl ?? '',
    actions,
  };
}
