// The push campaign builder: content with a live notification preview, UTM, audience (inline filters or a saved
// segment) with its live push reach, and schedule. New campaigns are sent, scheduled or kept as drafts; a draft is
// edited here and stays a draft (spec 3.1) until its page sends it.
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate, useParams } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { api, unwrap, type Schemas } from '../api/client';
import { useMembership } from '../auth/me';
import { Field, FormError, SelectField, TextAreaField } from '../components/field';
import { NotificationPreview } from '../components/notification-preview';
import { QueryState } from '../components/query-state';
import { SegmentFilterFields, useDebounced } from '../components/segment-filter-fields';
import { contentOf, EMPTY_FORM, formOf, toCampaignBody, type CampaignForm, type Mode } from './campaign-builder-model';
import { useProject } from './project';
import { toFilters } from './segment-builder-model';

const FIELDS = ['name', 'content', 'segment', 'schedule', 'utm'];
const SUBMIT: Record<Mode, string> = { draft: 'Save draft', immediate: 'Send now', scheduled: 'Schedule' };
const ZONES = Intl.supportedValuesOf('timeZone');

export function NewCampaignPage() {
  const { projectId } = useParams({ from: '/signed-in/projects/$projectId/campaigns/new' });
  const project = useProject(projectId);
  return (
    <QueryState query={project}>
      {(p) => <CampaignBuilder projectId={projectId} initial={{ ...EMPTY_FORM, timezone: (p.settings as { timezone?: string }).timezone ?? '' }} />}
    </QueryState>
  );
}

export function EditCampaignPage() {
  const { projectId, campaignId } = useParams({ from: '/signed-in/projects/$projectId/campaigns/$campaignId/edit' });
  const campaign = useQuery({ queryKey: ['campaign', campaignId], queryFn: () => unwrap(api.GET('/campaigns/{id}', { params: { path: { id: campaignId } } })) });
  return (
    <QueryState query={campaign}>
      {(c) =>
        c.status === 'draft' ? (
          <CampaignBuilder key={c.updatedAt} projectId={projectId} campaign={c} initial={formOf(c)} />
        ) : (
          <p className="notice">Only a draft can be edited; this campaign is {c.status}.</p>
        )
      }
    </QueryState>
  );
}

function CampaignBuilder({ projectId, campaign, initial }: { projectId: string; campaign?: Schemas['Campaign']; initial: CampaignForm }) {
  const { canWrite } = useMembership();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [form, setForm] = useState(initial);
  const set = (patch: Partial<CampaignForm>) => setForm({ ...form, ...patch });
  const segments = useQuery({
    queryKey: ['segments', projectId, 'all'],
    queryFn: () => unwrap(api.GET('/segments/project/{projectId}', { params: { path: { projectId }, query: { pageSize: 100 } } })),
  });
  const audience = useDebounced(form.audience === 'saved' ? { segmentId: form.savedSegmentId } : { filters: toFilters(form.filters) }, 400);
  const reach = useQuery({
    queryKey: ['reach', projectId, 'push', audience],
    queryFn: () => unwrap(api.POST('/segments/reach', { body: { projectId, channel: 'push', ...audience } })),
    placeholderData: keepPreviousData,
    enabled: canWrite && !('segmentId' in audience && audience.segmentId === ''),
  });
  const save = useMutation({
    mutationFn: (body: ReturnType<typeof toCampaignBody>) =>
      campaign ? unwrap(api.PATCH('/campaigns/{id}', { params: { path: { id: campaign.id } }, body })) : unwrap(api.POST('/campaigns', { body })),
    onSuccess: async (saved) => {
      await queryClient.invalidateQueries({ queryKey: ['campaigns', projectId] });
      queryClient.removeQueries({ queryKey: ['campaign', saved.id] });
      await navigate({ to: '/projects/$projectId/campaigns/$campaignId', params: { projectId, campaignId: saved.id } });
    },
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    save.mutate(toCampaignBody(form, projectId));
  };
  const error = save.error;
  const content = contentOf(form);
  const action = (index: number, patch: Partial<CampaignForm['actions'][number]>) =>
    set({ actions: form.actions.map((item, i) => (i === index ? { ...item, ...patch } : item)) });
  // A draft being edited stays a draft whatever its mode: its page sends it.
  const submitLabel = campaign ? 'Save draft' : SUBMIT[form.mode];

  return (
    <section aria-labelledby="builder-title">
      <p className="breadcrumb">
        <Link to="/projects/$projectId/campaigns" params={{ projectId }}>
          Campaigns
        </Link>
      </p>
      <h2 id="builder-title">{campaign ? `Edit “${campaign.name}”` : 'New campaign'}</h2>
      {!canWrite && <p className="notice">A viewer cannot create or edit campaigns.</p>}
      {/* The API checks every field and its 422 is shown beside each: no second, different check in the browser. */}
      <form onSubmit={submit} aria-label="Campaign" noValidate>
        <fieldset disabled={!canWrite} className="card">
          <legend>Content</legend>
          <Field label="Campaign name" field="name" error={error} value={form.name} onChange={(e) => set({ name: e.target.value })} required maxLength={200} />
          <div className="row">
            <div>
              <Field label="Title" field="content.title" error={error} value={form.title} onChange={(e) => set({ title: e.target.value })} required maxLength={250} />
              <TextAreaField label="Body" field="content.body" error={error} value={form.body} onChange={(e) => set({ body: e.target.value })} required rows={3} maxLength={2000} />
              <Field label="Click URL" field="content.clickUrl" error={error} type="url" value={form.clickUrl} onChange={(e) => set({ clickUrl: e.target.value })} placeholder="https://" />
              <Field label="Icon URL" field="content.iconUrl" error={error} type="url" value={form.iconUrl} onChange={(e) => set({ iconUrl: e.target.value })} />
              <Field label="Image URL" field="content.imageUrl" error={error} type="url" value={form.imageUrl} onChange={(e) => set({ imageUrl: e.target.value })} />
            </div>
            <NotificationPreview content={{ ...content, title: content.title || 'Title', body: content.body || 'Body' }} origin={originOf(form.clickUrl)} />
          </div>
          {form.actions.map((item, index) => (
            <div className="row" key={index}>
              <Field label={`Button ${index + 1} label`} field={`content.actions.${index}.title`} error={error} value={item.title} onChange={(e) => action(index, { title: e.target.value })} maxLength={64} />
              <Field label={`Button ${index + 1} URL`} field={`content.actions.${index}.action`} error={error} type="url" value={item.action} onChange={(e) => action(index, { action: e.target.value })} />
            </div>
          ))}
        </fieldset>

        <fieldset disabled={!canWrite} className="card">
          <legend>UTM parameters (added to the click URL and every button URL)</legend>
          <div className="row">
            {(['source', 'medium', 'campaign'] as const).map((key) => (
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
                Reach: <strong data-testid="campaign-reach">{reach.data.count}</strong> push subscriber{reach.data.count === 1 ? '' : 's'}
                {reach.isFetching && <span className="muted"> (updating…)</span>}
              </>
            ) : (
              'Reach: choose an audience.'
            )}
          </p>
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
            <div className="row">
              <Field label="Send at" field="schedule.sendAt" error={error} type="datetime-local" value={form.sendAt} onChange={(e) => set({ sendAt: e.target.value })} required />
              <Field label="Time zone" field="schedule.timezone" error={error} list="time-zones" value={form.timezone} onChange={(e) => set({ timezone: e.target.value })} placeholder="Europe/Paris" />
              <datalist id="time-zones">
                {ZONES.map((zone) => (
                  <option key={zone} value={zone} />
                ))}
              </datalist>
            </div>
          )}
          {campaign && <p className="hint">A draft stays a draft when saved: send or schedule it from its page.</p>}
        </fieldset>

        <FormError error={error} fields={FIELDS} />
        {canWrite && (
          <div className="actions">
            <button type="submit" className="primary" disabled={save.isPending}>
              {submitLabel}
            </button>
          </div>
        )}
      </form>
    </section>
  );
}

const MODE_LABELS: Record<Mode, string> = { draft: 'Draft (send later)', immediate: 'Send immediately', scheduled: 'Schedule' };

function originOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'your site';
  }
}
