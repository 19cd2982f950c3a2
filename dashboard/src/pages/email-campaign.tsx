// Email campaigns' pages: the builder's content (from a saved template or written here, merge tags inserted at the
// cursor, plain text generated or written) with a live preview rendered for a chosen subscriber, senders on verified
// domains and the local-time schedule; the campaign's page adds its events over time as a chart, its top clicked links,
// its content previewed for a chosen subscriber, and a test send. The rest is the campaign pages every channel shares.
// Loaded on demand: it brings Chart.js.
import * as Tabs from '@radix-ui/react-tabs';
import { useMutation, useQuery } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { useRef, useState, type FormEvent } from 'react';
import { api, ApiError, belongsTo, unwrap, type Schemas } from '../api/client';
import { useMembership } from '../auth/me';
import { EmailBodyEditor } from '../components/email-body-editor';
import { EmailPreview, PreviewSubscriber, useEmailPreview, usePreviewSubscriber, WidthToggle, type PreviewWidth } from '../components/email-preview';
import { Field, FormError, SelectField, TextAreaField } from '../components/field';
import { dateTime } from '../components/format';
import type { Series } from '../components/line-chart';
import { ErrorMessage, QueryState } from '../components/query-state';
import { reasonWords } from '../components/reasons';
import { ActivityChart, BUCKET_NAMES } from './campaign-activity';
import { EditCampaignPage, NewCampaignPage, type BuilderChannel } from './campaign-builder';
import { emailCampaigns } from './campaign-channel';
import { CampaignPage } from './campaign-page';
import {
  COMMON_MERGE_TAGS,
  EMPTY_FORM,
  formOf,
  insertAt,
  mergeFieldsOf,
  mergeTag,
  parseAddresses,
  partsOf,
  toEmailCampaignBody,
  type EmailCampaignBody,
  type EmailCampaignForm,
} from './email-campaign-builder-model';

type EmailCampaign = Schemas['EmailCampaign'];
type Analytics = Schemas['EmailCampaignAnalytics'];

const PARTS = ['subject', 'preheader', 'html', 'text', 'design'] as const;

/** The live preview's 422 named as the campaign body names the parts (`html` → `content.html`), to show beside them. */
function asContentError(error: unknown): ApiError | undefined {
  if (!(error instanceof ApiError) || error.status !== 422) return undefined;
  return new ApiError(error.status, error.code, error.message, error.details?.map((detail) => ({ ...detail, field: `content.${detail.field}` })));
}

const builder: BuilderChannel<EmailCampaign, EmailCampaignForm, EmailCampaignBody> = {
  campaigns: emailCampaigns,
  empty: EMPTY_FORM,
  formOf,
  toBody: toEmailCampaignBody,
  formLabel: 'Email campaign',
  fields: [
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
  ],
  utmLegend: 'UTM parameters (added to every web link of the HTML)',
  reachUnit: (count) => `email address${count === 1 ? '' : 'es'}`,
  audienceHint: 'Counted now; the audience is read again when the campaign is sent, leaving out suppressed and unsubscribed addresses.',
  useContent: function useEmailContent({ projectId, campaign, form, set, save }) {
    const { canWrite } = useMembership();
    const [tab, setTab] = useState<'html' | 'text'>('html');
    const [width, setWidth] = useState<PreviewWidth>('desktop');
    // A template picked replaces the body: the body editor opens again in the mode that suits it.
    const [picked, setPicked] = useState(0);
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
    const previewError = asContentError(preview.error);
    const partsError = partsEdited ? previewError : (save.error ?? previewError);
    const names = [...COMMON_MERGE_TAGS, ...Object.keys(picker.subscriber?.attributes ?? {}), ...(preview.data?.variables.map((variable) => variable.name) ?? [])];
    const error = save.error;
    return {
      saved: addressed,
      onSave: () => setPartsEdited(false),
      onError: (failure) => {
        // A message about the plain text would be out of sight behind the HTML tab.
        if (failure instanceof ApiError && failure.fieldError('content.text') && !failure.fieldError('content.html')) setTab('text');
      },
      onChange: (patch) => {
        if (!PARTS.some((part) => part in patch) && !('textMode' in patch)) return;
        setPartsEdited(true);
        // A save refused for its parts alone has nothing left to say once they change.
        if (save.error instanceof ApiError && save.error.details?.every((detail) => PARTS.some((part) => belongsTo(detail.field, `content.${part}`)))) save.reset();
      },
      content: (
        <>
          <TemplatePicker projectId={projectId} onPick={(parts) => (set(parts), setPicked(picked + 1))} />
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
              <EmailBodyEditor
                key={picked}
                design={form.design}
                html={form.html}
                onChange={(body) => set(body)}
                mergeTags={names}
                error={partsError}
                fieldPrefix="content.design"
                disabled={!canWrite}
                htmlEditor={<HtmlEditor html={form.html} onChange={(html) => set({ html })} error={partsError} names={names} />}
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
        </>
      ),
      fieldsets: <Senders form={addressed} set={set} error={error} verified={verified} projectId={projectId} loaded={domains.isSuccess} />,
      aside: (
        <>
          <section className="card" aria-label="Preview settings">
            <PreviewSubscriber picker={picker} />
            <WidthToggle width={width} onChange={setWidth} />
          </section>
          <EmailPreview preview={preview.data} failed={preview.isError} updating={preview.isFetching} width={width} />
          {campaign && canWrite && <TestSend campaignId={campaign.id} hint="Sends the draft as last saved." />}
        </>
      ),
      timezoneHint: form.localTime ? 'For recipients with no zone of their own when the project has none.' : undefined,
      schedule: (
        <>
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
      ),
    };
  },
};

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
        design: template.design,
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

/** The chart's lines: a bucket's count per series, the opens and clicks counted once per recipient. */
function seriesOf(buckets: Analytics['buckets']): Series[] {
  return [
    { label: 'Sent', color: '#1d4ed8', values: buckets.map((b) => b.sent) },
    { label: 'Unique opens', color: '#15803d', values: buckets.map((b) => b.opened.unique) },
    { label: 'Human opens', color: '#86efac', values: buckets.map((b) => b.opened.human) },
    { label: 'Unique clicks', color: '#a16207', values: buckets.map((b) => b.clicked.unique) },
    { label: 'Human clicks', color: '#fcd34d', values: buckets.map((b) => b.clicked.human) },
    { label: 'Bounces', color: '#b91c1c', values: buckets.map((b) => b.bounced) },
  ];
}

/** The campaign's events per time bucket and its top links, read again every 10 s while it is not final. */
function Activity({ campaignId, live }: { campaignId: string; live: boolean }) {
  const path = { params: { path: { id: campaignId } } };
  const refetchInterval = live ? 10_000 : false;
  const analytics = useQuery({
    queryKey: ['email-campaign', campaignId, 'analytics'],
    queryFn: () => unwrap(api.GET('/email-campaigns/{id}/analytics', path)),
    refetchInterval,
  });
  const links = useQuery({
    queryKey: ['email-campaign', campaignId, 'links'],
    queryFn: () => unwrap(api.GET('/email-campaigns/{id}/links', path)),
    refetchInterval,
  });
  return (
    <section aria-labelledby="activity-title">
      <h3 id="activity-title">Activity over time</h3>
      <QueryState query={analytics}>
        {(a) => (
          <>
            <p className="hint">
              Per {BUCKET_NAMES[a.bucket]}, from {dateTime(a.from)} to {dateTime(a.to)}. Unique: each recipient's first; human: without
              machine signals (mail proxies, link scanners).
            </p>
            <ActivityChart analytics={a} seriesOf={seriesOf} />
          </>
        )}
      </QueryState>
      <h3 id="links-title">Top links</h3>
      <QueryState query={links}>
        {(l) =>
          l.data.length === 0 ? (
            <p className="muted">No link clicked yet.</p>
          ) : (
            <table aria-labelledby="links-title">
              <thead>
                <tr>
                  <th scope="col">URL</th>
                  <th scope="col">Clicks</th>
                  <th scope="col">Unique clickers</th>
                  <th scope="col">Human clickers</th>
                </tr>
              </thead>
              <tbody>
                {l.data.map((link) => (
                  <tr key={link.url}>
                    <td className="url">{link.url}</td>
                    <td>{link.clicks}</td>
                    <td>{link.uniqueClickers}</td>
                    <td>{link.humanClickers}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </QueryState>
    </section>
  );
}

function Content({ projectId, campaign }: { projectId: string; campaign: EmailCampaign }) {
  const { content } = campaign;
  const [width, setWidth] = useState<PreviewWidth>('desktop');
  const picker = usePreviewSubscriber(projectId);
  const preview = useEmailPreview(
    projectId,
    { subject: content.subject, html: content.html, preheader: content.preheader ?? null, text: content.text ?? null },
    picker.subscriber ? mergeFieldsOf(picker.subscriber) : {},
  );
  const mailbox = (box: { email: string; name?: string } | undefined) => (box ? (box.name ? `${box.name} <${box.email}>` : box.email) : '—');
  return (
    <section aria-labelledby="content-title">
      <h3 id="content-title">Content</h3>
      <dl className="details">
        <div>
          <dt>Subject</dt>
          <dd>{content.subject}</dd>
        </div>
        <div>
          <dt>Preheader</dt>
          <dd>{content.preheader ?? '—'}</dd>
        </div>
        <div>
          <dt>From</dt>
          <dd>{mailbox(content.from)}</dd>
        </div>
        <div>
          <dt>Reply-To</dt>
          <dd>{mailbox(content.replyTo)}</dd>
        </div>
        <div>
          <dt>Plain text</dt>
          <dd>{content.text === undefined ? "generated from each recipient's HTML" : 'written for this campaign'}</dd>
        </div>
        <div>
          <dt>UTM</dt>
          <dd>{campaign.utm ? Object.entries(campaign.utm).map(([key, value]) => `utm_${key}=${value}`).join(', ') : '—'}</dd>
        </div>
      </dl>
      <div className="row preview-settings">
        <PreviewSubscriber picker={picker} />
        <WidthToggle width={width} onChange={setWidth} />
      </div>
      <EmailPreview preview={preview.data} failed={preview.isError} updating={preview.isFetching} width={width} />
    </section>
  );
}

/** The campaign as it is stored, sent now to up to five addresses, subject marked [Test]: counted and logged nowhere. */
export function TestSend({ campaignId, hint }: { campaignId: string; hint?: string }) {
  const [typed, setTyped] = useState('');
  const send = useMutation({
    mutationFn: (emails: string[]) => unwrap(api.POST('/email-campaigns/{id}/test', { params: { path: { id: campaignId } }, body: { emails } })),
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    send.mutate(parseAddresses(typed));
  };
  return (
    <form className="card" onSubmit={submit} aria-label="Send a test" noValidate>
      <h3>Send a test</h3>
      <Field
        label="Test addresses"
        field="emails"
        error={send.error}
        value={typed}
        onChange={(event) => setTyped(event.target.value)}
        hint={`Up to 5, separated by commas or spaces. Each gets the email now, its subject marked [Test], with the merge fields of the subscriber holding that address.${hint ? ` ${hint}` : ''}`}
      />
      <FormError error={send.error} fields={['emails']} />
      <div className="actions start">
        <button type="submit" disabled={send.isPending}>
          Send test
        </button>
      </div>
      {send.data && (
        <ul className="list" aria-label="Test send results">
          {send.data.data.map((outcome) => (
            <li key={outcome.email}>
              {outcome.email}:{' '}
              {outcome.status === 'sent' ? <span className="success">sent</span> : <span className="error">failed: {reasonWords(outcome.reason)}</span>}
            </li>
          ))}
        </ul>
      )}
    </form>
  );
}

export const NewEmailCampaignPage = () => <NewCampaignPage channel={builder} />;
export const EditEmailCampaignPage = () => <EditCampaignPage channel={builder} />;
export function EmailCampaignPage() {
  const { canWrite } = useMembership();
  return (
    <CampaignPage
      channel={emailCampaigns}
      details={(c, status) => (
        <>
          {c.status !== 'draft' && <Activity campaignId={c.id} live={!['sent', 'cancelled', 'failed', 'archived'].includes(status)} />}
          <Content projectId={c.projectId} campaign={c} />
        </>
      )}
      after={(c) => canWrite && <TestSend campaignId={c.id} />}
    />
  );
}
