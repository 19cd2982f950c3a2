// The email campaign builder's form state and the API's campaign body (spec 2.3), one into the other, with the merge
// fields a recipient's email is rendered with and the merge-tag insertion. No DOM: tested in Node
// (email-campaign-builder-model.test.ts).
import type { Body, Schemas } from '../api/client';
import type { EmailDesign } from '../components/email-design-model';
import { baseBody, baseFormOf, EMPTY_BASE, optional, type CampaignFormBase } from './campaign-builder-model';

export type EmailCampaignBody = Body<'/email-campaigns', 'post'>;
type EmailCampaign = Schemas['EmailCampaign'];
type Subscriber = Schemas['Subscriber'];

const EMAIL_UTM = ['source', 'medium', 'campaign', 'content'] as const;

export interface EmailCampaignForm extends CampaignFormBase<(typeof EMAIL_UTM)[number]> {
  subject: string;
  preheader: string;
  html: string;
  /** auto: each recipient's plain text is generated from its rendered HTML; custom: `text` as written. */
  textMode: 'auto' | 'custom';
  text: string;
  fromName: string;
  /** An address is a local part and one of the project's verified sending domains. */
  fromLocal: string;
  fromDomain: string;
  replyToName: string;
  /** Empty: no Reply-To. */
  replyToLocal: string;
  replyToDomain: string;
  /** With a schedule: `sendAt` is each recipient's own wall-clock time. */
  localTime: boolean;
  /** The visual editor's document `html` is rendered from; null: HTML written by hand. */
  design: EmailDesign | null;
}

export const EMPTY_FORM: EmailCampaignForm = {
  ...EMPTY_BASE,
  subject: '',
  preheader: '',
  html: '',
  textMode: 'auto',
  text: '',
  fromName: '',
  fromLocal: '',
  fromDomain: '',
  replyToName: '',
  replyToLocal: '',
  replyToDomain: '',
  utm: { source: '', medium: '', campaign: '', content: '' },
  localTime: false,
  design: null,
};

/** The parts with merge tags, as the preview and the API read them: an empty preheader is none, auto text is none. */
export function partsOf(form: EmailCampaignForm): { subject: string; html: string; preheader?: string; text?: string } {
  return {
    subject: form.subject,
    html: form.html,
    ...(form.preheader !== '' && { preheader: form.preheader }),
    ...(form.textMode === 'custom' && { text: form.text }),
  };
}

export function toEmailCampaignBody(form: EmailCampaignForm, projectId: string): EmailCampaignBody {
  const replyTo = optional(form.replyToLocal);
  const base = baseBody(form);
  return {
    ...base,
    projectId,
    content: {
      ...partsOf(form),
      // Sent as typed, an empty part included: the API's 422 names content.from.email beside the field.
      from: { email: `${form.fromLocal.trim()}@${form.fromDomain}`, ...(optional(form.fromName) && { name: optional(form.fromName) }) },
      ...(replyTo && { replyTo: { email: `${replyTo}@${form.replyToDomain}`, ...(optional(form.replyToName) && { name: optional(form.replyToName) }) } }),
      ...(form.design && { design: form.design }),
    },
    schedule: { ...base.schedule, ...(form.mode === 'scheduled' && form.localTime && { localTime: true }) },
  };
}

/** `hello@news.example.com` → [`hello`, `news.example.com`]; the domain is what follows the last `@`. */
function splitAddress(address: string | undefined): [string, string] {
  if (!address) return ['', ''];
  const at = address.lastIndexOf('@');
  return at < 0 ? [address, ''] : [address.slice(0, at), address.slice(at + 1)];
}

/** A stored draft in the form. */
export function formOf(campaign: EmailCampaign): EmailCampaignForm {
  const { content } = campaign;
  const [fromLocal, fromDomain] = splitAddress(content.from.email);
  const [replyToLocal, replyToDomain] = splitAddress(content.replyTo?.email);
  return {
    ...baseFormOf(campaign, EMAIL_UTM),
    subject: content.subject,
    preheader: content.preheader ?? '',
    html: content.html,
    textMode: content.text === undefined ? 'auto' : 'custom',
    text: content.text ?? '',
    fromName: content.from.name ?? '',
    fromLocal,
    fromDomain,
    replyToName: content.replyTo?.name ?? '',
    replyToLocal,
    replyToDomain,
    localTime: campaign.schedule.localTime,
    design: content.design ?? null,
  };
}

/** Names every recipient has (its subscriber's standard fields) and the attribute most emails greet with. */
export const COMMON_MERGE_TAGS = ['first_name', 'email', 'external_id', 'country', 'city', 'language', 'timezone'] as const;

/**
 * The variables a campaign email is rendered with for this subscriber, as the server builds them (email-render.ts,
 * recipientVariables): the standard fields it has, under their merge-tag names, then its attributes over them.
 */
export function mergeFieldsOf(subscriber: Pick<Subscriber, 'email' | 'externalId' | 'country' | 'city' | 'language' | 'timezone' | 'attributes'>): Record<string, unknown> {
  const standard = {
    email: subscriber.email,
    external_id: subscriber.externalId,
    country: subscriber.country,
    city: subscriber.city,
    language: subscriber.language,
    timezone: subscriber.timezone,
  };
  return { ...Object.fromEntries(Object.entries(standard).filter(([, value]) => value !== null)), ...subscriber.attributes };
}

/** A merge tag that renders empty rather than failing the send when the recipient lacks the variable. */
export function mergeTag(name: string): string {
  return `{{ ${name.trim()} | default: "" }}`;
}

/** `text` with `insertion` replacing the selection [start, end), and where the cursor goes: right after it. */
export function insertAt(text: string, start: number, end: number, insertion: string): { text: string; cursor: number } {
  return { text: text.slice(0, start) + insertion + text.slice(end), cursor: start + insertion.length };
}

/** Test addresses as typed (commas, semicolons, spaces or lines between them), each once. */
export function parseAddresses(typed: string): string[] {
  return [...new Set(typed.split(/[\s,;]+/).filter(Boolean))];
}
