// The email campaign builder: content (from a saved template or written here, merge tags inserted at the cursor,
// plain text generated or written) with a live preview rendered for a chosen subscriber, senders on verified
// domains, UTM, audience with its live email reach, and schedule (at each recipient's local time on request). New
// campaigns are sent, scheduled or kept as drafts; a draft is edited here and stays a draft until its page sends it.
import * as Tabs from '@radix-ui/react-tabs';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate, useParams } from '@tanstack/react-router';
import { useRef, useState, type FormEvent } from 'react';
import { api, ApiError, belongsTo, unwrap, type Schemas } from '../api/client';
import { useMembership } from '../auth/me';
import { EmailPreview, PreviewSubscriber, useEmailPreview, usePreviewSubscriber, WidthToggle, type PreviewWidth } from '../components/email-preview';
import { Field, FormError, SelectField, TextAreaField } from '../components/field';
import { ErrorMessage, QueryState } from '../components/query-state';
import { SegmentFilterFields, useDebounced } from '../components/segment-filter-fields';
import {
  COMMON_MERGE_TAGS,
  EMPTY_FORM,
  formOf,
  insertAt,
  mergeFieldsOf,
  mergeTag,
  partsOf,
  toEmailCampaignBody,
  type EmailCampaignForm,
  type Mode,
} from './email-campaign-builder-model';
import { TestSend } from './email-campaign';
import { useProject } from './project';
import { toFilters } from './segment-builder-model';

type EmailCampaign = Schemas['EmailCampaign'];

const PARTS = ['subject', 'preheader', 'html', 'text'] as const;
const FIELDS = [
  'name',
  ...PARTS.map((part) => `content.${part}`),
  'content.from',
  'content.replyTo',
  'segment.filters',
  'segment.savedSegmentId',
  'schedule.sendAt',
  'schedule.timezone',
  'schedule.localTime',
  'utm',
];
const SUBMIT: Record<Mode, string> = { draft: 'Save draft', immediate: 'Send now', scheduled: 'Schedule' };
const MODE_LABELS: Record<Mode, string> = { draft: 'Draft (send later)', immediate: 'Send immediately', scheduled: 'Schedule' };
const ZONES = Intl.supportedValuesOf('timeZone');

export function NewEmailCampaignPage() {
  const { projectId } = useParams({ from: '/signed-in/projects/$projectId/email-campaigns/new' });
  const project = useProject(projectId);
  return (
    <QueryState query={project}>
      {(p) => <EmailCampaignBuilder projectId={projectId} initial={{ ...EMPTY_FORM, timezone: (p.settings as { timezone?: string }).timezone ?? '' }} />}
    </QueryState>
  );
}

export function EditEmailCampaignPage() {
  const { projectId, campaignId } = useParams({ from: '/signed-in/projects/$projectId/email-campaigns/$campaignId/edit' });
  const campaign = useQuery({
    queryKey: ['email-campaign', campaignId],
    queryFn: () => unwrap(api.GET('/email-campaigns/{id}', { params: { path: { id: campaignId } } })),
  });
  return (
    <QueryState query={campaign}>
      {(c) =>
        c.status === 'draft' ? (
          <EmailCampaignBuilder key={c.updatedAt} projectId={projectId} campaign={c} initial={formOf(c)} />
        ) : (
          <p className="notice">Only a draft can be edited; this campaign is {c.status}.</p>
        )
      }
    </QueryState>
  );
}

/** The live preview's 422 named as the campaign body names the parts (`html` → `content.html`), to show beside them. */
function asContentError(error: unknown): ApiError | undefined {
  if (!(error instanceof ApiError) || error.status !== 422) return undefined;
  return new ApiError(error.status, error.code, error.message, error.details?.map((detail) => ({ ...detail, field: `content.${detail.field}` })));
}

function EmailCampaignBuilder({ projectId, campaign, initial }: { projectId: string; campaign?: EmailCampaign; initial: EmailCampaignForm }) {
  const { canWrite } = useMembership();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [form, setForm] = useState(initial);
  const [tab, setTab] = useState<'html' | 'text'>('html');
  const [width, setWidth] = useState<PreviewWidth>('desktop');
  // After an edit of a part, the live preview checks the parts again: its verdict replaces the last save's.
  const [partsEdited, setPartsEdited] = useState(false);

  const domains = useQuery({
    queryKey: ['email-domains', projectId],
    queryFn: () => unwrap(api.GET('/projects/{projectId}/email-domains', { params: { path: { projectId } } })),
  });
  const verified = domains.data?.data.filter((domain) => domain.status === 'verified').map((domain) => domain.domain) ?? [];
  // Until one is picked, an address is on the first verified domain.
  const addressed: EmailCampaignForm = { ...form, fromDomain: form.fromDomain || (verified[0] ?? ''), replyToDomain: form.replyToDomain || (verified[0] ?? '') };

  const picker = usePreviewSubscriber(projectId);
  const variables = picker.subscriber ? mergeFieldsOf(picker.subscriber) : {};
  const preview = useEmailPreview(projectId, partsOf(form), variables);

  const segments = useQuery({
    queryKey: ['segments', projectId, 'all'],
    queryFn: () => unwrap(api.GET('/segments/project/{projectId}', { params: { path: { projectId }, query: { pageSize: 100 } } })),
  });
  const audience = useDebounced(form.audience === 'saved' ? { segmentId: form.savedSegmentId } : { filters: toFilters(form.filters) }, 400);
  const reach = useQuery({
    queryKey: ['reach', projectId, 'email', audience],
    queryFn: () => unwrap(api.POST('/segments/reach', { body: { projectId, channel: 'email', ...audience } })),
    placeholderData: keepPreviousData,
    enabled: canWrite && !('segmentId' in audience && audience.segmentId === ''),
  });

  const save = useMutation({
    mutationFn: (body: ReturnType<typeof toEmailCampaignBody>) =>
      campaign
        ? unwrap(api.PATCH('/email-campaigns/{id}', { params: { path: { id: campaign.id } }, body }))
        : unwrap(api.POST('/email-campaigns', { body })),
    onSuccess: async (saved) => {
      await queryClient.invalidateQueries({ queryKey: ['email-campaigns', projectId] });
      queryClient.removeQueries({ queryKey: ['email-campaign', saved.id] });
      await navigate({ to: '/projects/$projectId/email-campaigns/$campaignId', params: { projectId, campaignId: saved.id } });
    },
    onError: (error) => {
      // A message about the plain text would be out of sight behind the HTML tab.
      if (error instanceof ApiError && error.fieldError('content.text') && !error.fieldError('content.html')) setTab('text');
    },
  });
  const set = (patch: Partial<EmailCampaignForm>) => {
    setForm({ ...form, ...patch });
    if (!PARTS.some((part) => part in patch) && !('textMode' in patch)) return;
    setPartsEdited(true);
    // A save refused for its parts alone has nothing left to say once they change.
    if (save.error instanceof ApiError && save.error.details?.every((detail) => PARTS.some((part) => belongsTo(detail.field, `content.${part}`)))) save.reset();
  };
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    setPartsEdited(false);
    save.mutate(toEmailCampaignBody(addressed, projectId));
  };
  const previewError = asContentError(preview.error);
  const partsError = partsEdited ? previewError : (save.error ?? previewError);
  const error = save.error;

  return (
    <section aria-labelledby="builder-title">
      <p className="breadcrumb">
        <Link to="/projects/$projectId/email-campaigns" params={{ projectId }}>
          Email campaigns
        </Link>
      </p>
      <h2 id="builder-title">{campaign ? `Edit “${campaign.name}”` : 'New email campaign'}</h2>
      {!canWrite && <p className="notice">A viewer cannot create or edit campaigns.</p>}
      <div className="template-editor">
        {/* The API checks every field and its 422 is shown beside each: no second, different check in the browser. */}
        <form onSubmit={submit} aria-label="Email campaign" noValidate>
          <fieldset disabled={!canWrite} className="card">
            <legend>Content</legend>
            <Field label="Campaign name" field="name" error={error} value={form.name} onChange={(e) => set({ name: e.target.value })} />
            <TemplatePicker projectId={projectId} onPick={(parts) => set(parts)} />
            <Field label="Subject" field="content.subject" error={partsError} value={form.subject} onChange={(e) => set({ subject: e.target.value })} />
            <Field
              label="Preheader"
              field="content.preheader"
              error={partsError}
              hint="Optional: the line inboxes show after the subject."
              value={form.preheader}
              onChange={(e) => set({ preheader: e.target.value })}
            />
            <Tabs.Root value={tab} onValueChange={(value) => setTab(value as 'html' | 'text')}>
              <Tabs.List className="tab-list" aria-label="Body">
                <Tabs.Trigger value="html">HTML</Tabs.Trigger>
                <Tabs.Trigger value="text">Plain text</Tabs.Trigger>
              </Tabs.List>
              <Tabs.Content value="html" className="tab-panel">
                <HtmlEditor
                  html={form.html}
                  onChange={(html) => set({ html })}
                  error={partsError}
                  names={[...COMMON_MERGE_TAGS, ...Object.keys(picker.subscriber?.attributes ?? {}), ...(preview.data?.variables.map((variable) => variable.name) ?? [])]}
                />
              </Tabs.Content>
              <Tabs.Content value="text" className="tab-panel">
                <fieldset className="radios">
                  <legend>Plain-text part</legend>
                  <label>
                    <input type="radio" name="textMode" checked={form.textMode === 'auto'} onChange={() => set({ textMode: 'auto' })} /> Generated from each
                    recipient&apos;s HTML
                  </label>
                  <label>
                    <input type="radio" name="textMode" checked={form.textMode === 'custom'} onChange={() => set({ textMode: 'custom' })} /> Written here
                  </label>
                </fieldset>
                {form.textMode === 'custom' ? (
                  <TextAreaField label="Plain-text version" field="content.text" error={partsError} rows={10} value={form.text} onChange={(e) => set({ text: e.target.value })} />
                ) : (
                  <pre className="json" aria-label="Generated plain text">
                    {preview.data?.text ?? 'Write an HTML body to see the text generated from it.'}
                  </pre>
                )}
              </Tabs.Content>
            </Tabs.Root>
          </fieldset>

          <Senders form={addressed} set={set} error={error} verified={verified} projectId={projectId} loaded={domains.isSuccess} />

          <fieldset disabled={!canWrite} className="card">
            <legend>UTM parameters (added to every web link of the HTML)</legend>
            <div className="row">
              {(['source', 'medium', 'campaign', 'content'] as const).map((key) => (
                <Field key={key} label={`utm_${key}`} field={`utm.${key}`} error={error} value={form.utm[key]} onChange={(e) => set({ utm: { ...form.utm, [key]: e.target.value } })} />
              ))}
            </div>
          </fieldset>

          <fieldset disabled={!canWrite} className="card">
            <legend>Audience</legend>
            <div className="radios">
              <label>
                <input type="radio" name="audience" checked={form.audience === 'filters'} onChange={() => set({ audience: 'filters' })} /> Filters
              </label>
              <label>
                <input type="radio" name="audience" checked={form.audience === 'saved'} onChange={() => set({ audience: 'saved' })} /> A saved segment
              </label>
            </div>
            {form.audience === 'saved' ? (
              <SelectField label="Saved segment" field="segment.savedSegmentId" error={error} value={form.savedSegmentId} onChange={(e) => set({ savedSegmentId: e.target.value })}>
                <option value="">choose one</option>
                {segments.data?.data.map((segment) => (
                  <option key={segment.id} value={segment.id}>
                    {segment.name}
                  </option>
                ))}
              </SelectField>
            ) : (
              <SegmentFilterFields state={form.filters} setState={(filters) => set({ filters })} error={error ?? reach.error} prefix="segment.filters" />
            )}
            <p className="reach" role="status" aria-live="polite">
              {reach.isError ? (
                <span className="error">Reach: the audience is not valid yet.</span>
              ) : reach.data ? (
                <>
                  Reach: <strong data-testid="campaign-reach">{reach.data.count}</strong> email address{reach.data.count === 1 ? '' : 'es'}
                  {reach.isFetching && <span className="muted"> (updating…)</span>}
                </>
              ) : (
                'Reach: choose an audience.'
              )}
            </p>
            <p className="hint">Counted now; the audience is read again when the campaign is sent, leaving out suppressed and unsubscribed addresses.</p>
          </fieldset>

          <fieldset disabled={!canWrite} className="card">
            <legend>Schedule</legend>
            <div className="radios">
              {(['draft', 'immediate', 'scheduled'] as const).map((mode) => (
                <label key={mode}>
                  <input type="radio" name="mode" checked={form.mode === mode} onChange={() => set({ mode })} /> {MODE_LABELS[mode]}
                </label>
              ))}
            </div>
            {form.mode === 'scheduled' && (
              <>
                <div className="row">
                  <Field label="Send at" field="schedule.sendAt" error={error} type="datetime-local" value={form.sendAt} onChange={(e) => set({ sendAt: e.target.value })} />
                  <Field
                    label="Time zone"
                    field="schedule.timezone"
                    error={error}
                    list="time-zones"
                    value={form.timezone}
                    onChange={(e) => set({ timezone: e.target.value })}
                    placeholder="Europe/Paris"
                    hint={form.localTime ? "For recipients with no zone of their own when the project has none." : undefined}
                  />
                  <datalist id="time-zones">
                    {ZONES.map((zone) => (
                      <option key={zone} value={zone} />
                    ))}
                  </datalist>
                </div>
                <label className="check">
                  <input type="checkbox" name="schedule.localTime" checked={form.localTime} onChange={(e) => set({ localTime: e.target.checked })} aria-describedby="local-time-hint" />
                  Send at each recipient&apos;s local time
                </label>
                <p id="local-time-hint" className="hint">
                  The time above is read in each recipient&apos;s own time zone (its subscriber&apos;s, else the project&apos;s). Sending starts when the first zone on
                  Earth (UTC+14) reaches it and goes on for 26 hours, until the last one (UTC−12) does; recipients whose time has already passed when it
                  starts get it at once.
                </p>
                {error instanceof ApiError && error.fieldError('schedule.localTime') && (
                  <p className="field-error" role="alert">
                    {error.fieldError('schedule.localTime')}
                  </p>
                )}
              </>
            )}
            {campaign && <p className="hint">A draft stays a draft when saved: send or schedule it from its page.</p>}
          </fieldset>

          <FormError error={error} fields={FIELDS} />
          {canWrite && (
            <div className="actions">
              <button type="submit" className="primary" disabled={save.isPending}>
                {campaign ? 'Save draft' : SUBMIT[form.mode]}
              </button>
            </div>
          )}
        </form>
        <div>
          <section className="card" aria-label="Preview settings">
            <PreviewSubscriber picker={picker} />
            <WidthToggle width={width} onChange={setWidth} />
          </section>
          <EmailPreview preview={preview.data} failed={preview.isError} updating={preview.isFetching} width={width} />
          {campaign && canWrite && <TestSend campaignId={campaign.id} hint="Sends the draft as last saved." />}
        </div>
      </div>
    </section>
  );
}

/** Fills the parts from a saved template: the campaign keeps its own copy, later template edits do not reach it. */
function TemplatePicker({ projectId, onPick }: { projectId: string; onPick: (parts: Partial<EmailCampaignForm>) => void }) {
  const [templateId, setTemplateId] = useState('');
  const [failure, setFailure] = useState<unknown>();
  const templates = useQuery({
    queryKey: ['email-templates', projectId, 'all'],
    queryFn: () => unwrap(api.GET('/email-templates/project/{projectId}', { params: { path: { projectId }, query: { pageSize: 100 } } })),
  });
  const use = async () => {
    setFailure(undefined);
    try {
      const template = await unwrap(api.GET('/email-templates/{id}', { params: { path: { id: templateId } } }));
      onPick({
        subject: template.subject,
        preheader: template.preheader ?? '',
        html: template.html,
        textMode: template.text === null ? 'auto' : 'custom',
        text: template.text ?? '',
      });
    } catch (error) {
      setFailure(error);
    }
  };
  if (!templates.data || templates.data.total === 0) return null;
  return (
    <div className="row align-end">
      <SelectField label="Start from a saved template" field="templateId" error={undefined} value={templateId} onChange={(e) => setTemplateId(e.target.value)}>
        <option value="">choose one</option>
        {templates.data.data.map((template) => (
          <option key={template.id} value={template.id}>
            {template.name}
          </option>
        ))}
      </SelectField>
      <button type="button" className="field-button" disabled={templateId === ''} onClick={() => void use()}>
        Use template
      </button>
      <ErrorMessage error={failure} />
    </div>
  );
}

/** The HTML body and the control that inserts a merge tag where the cursor is. */
function HtmlEditor({ html, onChange, error, names }: { html: string; onChange: (html: string) => void; error: unknown; names: string[] }) {
  const editor = useRef<HTMLTextAreaElement>(null);
  const [name, setName] = useState('first_name');
  const insert = () => {
    const textarea = editor.current;
    if (!textarea || name.trim() === '') return;
    const { text, cursor } = insertAt(html, textarea.selectionStart, textarea.selectionEnd, mergeTag(name));
    onChange(text);
    // Once the new value is in the textarea, the cursor goes back after the tag, ready to type on.
    requestAnimationFrame(() => {
      textarea.focus();
      textarea.setSelectionRange(cursor, cursor);
    });
  };
  return (
    <>
      <div className="row align-end">
        <Field label="Merge tag" field="mergeTag" error={undefined} list="merge-tags" value={name} onChange={(e) => setName(e.target.value)} hint="A subscriber field or attribute name" />
        <datalist id="merge-tags">
          {[...new Set(names)].map((tag) => (
            <option key={tag} value={tag} />
          ))}
        </datalist>
        <button type="button" className="field-button" onClick={insert} disabled={name.trim() === ''}>
          Insert merge tag
        </button>
      </div>
      <TextAreaField
        ref={editor}
        label="HTML body"
        field="content.html"
        error={error}
        hint={'Merge tags render per recipient: {{ first_name | default: "there" }}, {% if vip %}…{% endif %}. Values are HTML-escaped.'}
        rows={16}
        value={html}
        onChange={(e) => onChange(e.target.value)}
      />
    </>
  );
}

interface SendersProps {
  form: EmailCampaignForm;
  set: (patch: Partial<EmailCampaignForm>) => void;
  error: unknown;
  verified: string[];
  projectId: string;
  loaded: boolean;
}

/** From and Reply-To: a local part on one of the project's verified sending domains (the only ones the API takes). */
function Senders({ form, set, error, verified, projectId, loaded }: SendersProps) {
  const { canWrite } = useMembership();
  // A stored address on a subdomain of a verified domain stays choosable.
  const options = (current: string) => (current && !verified.includes(current) ? [...verified, current] : verified);
  const domainSelect = (label: string, field: string, value: string, onChange: (domain: string) => void) => (
    <SelectField label={label} field={field} error={undefined} value={value} onChange={(e) => onChange(e.target.value)}>
      {options(value).length === 0 && <option value="">no verified domain</option>}
      {options(value).map((domain) => (
        <option key={domain} value={domain}>
          @{domain}
        </option>
      ))}
    </SelectField>
  );
  return (
    <fieldset disabled={!canWrite} className="card">
      <legend>Sender</legend>
      {loaded && verified.length === 0 && (
        <p className="notice">
          The project has no verified sending domain: email is sent only from one.{' '}
          <Link to="/projects/$projectId/domains" params={{ projectId }}>
            Add and verify a domain
          </Link>
          .
        </p>
      )}
      <div className="row align-end">
        <Field label="From name" field="content.from.name" error={error} value={form.fromName} onChange={(e) => set({ fromName: e.target.value })} />
        <Field label="From address" field="content.from.email" error={error} value={form.fromLocal} onChange={(e) => set({ fromLocal: e.target.value })} placeholder="hello" />
        {domainSelect('From domain', 'content.from.domain', form.fromDomain, (fromDomain) => set({ fromDomain }))}
      </div>
      <div className="row align-end">
        <Field label="Reply-To name" field="content.replyTo.name" error={error} value={form.replyToName} onChange={(e) => set({ replyToName: e.target.value })} />
        <Field
          label="Reply-To address"
          field="content.replyTo.email"
          error={error}
          value={form.replyToLocal}
          onChange={(e) => set({ replyToLocal: e.target.value })}
          hint="Optional: replies go to the From address without one."
        />
        {domainSelect('Reply-To domain', 'content.replyTo.domain', form.replyToDomain, (replyToDomain) => set({ replyToDomain }))}
      </div>
    </fieldset>
  );
}
