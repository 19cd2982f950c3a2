// The campaign builder on any channel: name and the channel's content (with what it shows beside the form), UTM,
// audience (inline filters or a saved segment) with its live reach on the channel, and schedule. New campaigns are sent,
// scheduled or kept as drafts; a draft is edited here and stays a draft (spec 3.1) until its page sends it.
import { keepPreviousData, useMutation, useQuery, useQueryClient, type UseMutationResult } from '@tanstack/react-query';
import { useNavigate, useParams } from '@tanstack/react-router';
import { useState, type FormEvent, type ReactNode } from 'react';
import { api, unwrap } from '../api/client';
import { useMembership } from '../auth/me';
import { Field, FormError, SelectField } from '../components/field';
import { QueryState } from '../components/query-state';
import { ConditionBuilder, treeError, useSegments } from '../components/condition-builder';
import { useDebounced } from '../components/segment-filter-fields';
import type { CampaignFormBase, Mode } from './campaign-builder-model';
import { CampaignsBreadcrumb } from './campaign-list';
import type { AnyCampaign, CampaignChannel } from './campaign-channel';
import { useProject } from './project';
import { filtersOf, problemsOf } from './filters-tree-model';

const SUBMIT: Record<Mode, string> = { draft: 'Save draft', immediate: 'Send now', scheduled: 'Schedule' };
const MODE_LABELS: Record<Mode, string> = { draft: 'Draft (send later)', immediate: 'Send immediately', scheduled: 'Schedule' };
const ZONES = Intl.supportedValuesOf('timeZone');

/** What the channel's content hook is given: the form, its setter, the save and the campaign being edited. */
export interface ContentProps<C extends AnyCampaign, F extends CampaignFormBase> {
  projectId: string;
  campaign: C | undefined;
  form: F;
  set: (patch: Partial<F>) => void;
  save: UseMutationResult<C, Error, F>;
}

/** What the channel puts in the builder. */
export interface BuilderContent<F extends CampaignFormBase> {
  /** Its content fields, after the campaign's name. */
  content: ReactNode;
  /** Its fieldsets after the content (email's senders). */
  fieldsets?: ReactNode;
  /** What stands beside the form (email's preview); without it, the form is the page's width. */
  aside?: ReactNode;
  /** What the schedule fieldset adds when scheduled (email's local time), and the time zone's hint. */
  schedule?: ReactNode;
  timezoneHint?: string;
  /** The form as it is saved (email: the first verified domain for an address without one). */
  saved?: F;
  /** Told of every change of the form, of a save and of a failed save. */
  onChange?: (patch: Partial<F>) => void;
  onSave?: () => void;
  onError?: (error: Error) => void;
}

/** A channel's builder: its form, the body its API takes, its words, and its content. */
export interface BuilderChannel<C extends AnyCampaign, F extends CampaignFormBase, B = unknown> {
  campaigns: CampaignChannel<C, B>;
  empty: F;
  formOf: (campaign: C) => F;
  toBody: (form: F, projectId: string) => B;
  /** The form's accessible name. */
  formLabel: string;
  /** The fields whose API errors are shown beside them; the rest are listed under the form. */
  fields: string[];
  utmLegend: string;
  /** The reach's unit: "push subscriber(s)", "email address(es)". */
  reachUnit: (count: number) => string;
  audienceHint?: string;
  useContent: (props: ContentProps<C, F>) => BuilderContent<F>;
}

export function NewCampaignPage<C extends AnyCampaign, F extends CampaignFormBase>({ channel }: { channel: BuilderChannel<C, F> }) {
  const { projectId } = useParams({ strict: false }) as { projectId: string };
  const project = useProject(projectId);
  return (
    <QueryState query={project}>
      {(p) => <CampaignBuilder channel={channel} projectId={projectId} initial={{ ...channel.empty, timezone: (p.settings as { timezone?: string }).timezone ?? '' }} />}
    </QueryState>
  );
}

export function EditCampaignPage<C extends AnyCampaign, F extends CampaignFormBase>({ channel }: { channel: BuilderChannel<C, F> }) {
  const { projectId, campaignId } = useParams({ strict: false }) as { projectId: string; campaignId: string };
  const campaign = useQuery({ queryKey: [channel.campaigns.itemKey, campaignId], queryFn: () => channel.campaigns.get(campaignId) });
  return (
    <QueryState query={campaign}>
      {(c) =>
        c.status === 'draft' ? (
          <CampaignBuilder key={c.updatedAt} channel={channel} projectId={projectId} campaign={c} initial={channel.formOf(c)} />
        ) : (
          <p className="notice">Only a draft can be edited; this campaign is {c.status}.</p>
        )
      }
    </QueryState>
  );
}

function CampaignBuilder<C extends AnyCampaign, F extends CampaignFormBase>({
  channel,
  projectId,
  campaign,
  initial,
}: {
  channel: BuilderChannel<C, F>;
  projectId: string;
  campaign?: C;
  initial: F;
}) {
  const { campaigns } = channel;
  const { canWrite } = useMembership();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [form, setForm] = useState(initial);
  const save = useMutation({
    mutationFn: (saved: F) => campaigns.save(channel.toBody(saved, projectId), campaign?.id),
    onSuccess: async (saved) => {
      await queryClient.invalidateQueries({ queryKey: [campaigns.listKey, projectId] });
      queryClient.removeQueries({ queryKey: [campaigns.itemKey, saved.id] });
      await navigate({ to: campaigns.routes.page, params: { projectId, campaignId: saved.id } });
    },
    onError: (error) => content.onError?.(error),
  });
  const set = (patch: Partial<F>) => {
    setForm({ ...form, ...patch });
    content.onChange?.(patch);
  };
  const content = channel.useContent({ projectId, campaign, form, set, save });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    content.onSave?.();
    save.mutate(content.saved ?? form);
  };
  const error = save.error;

  const body = (
    // The API checks every field and its 422 is shown beside each: no second, different check in the browser.
    <form onSubmit={submit} aria-label={channel.formLabel} noValidate>
      <fieldset disabled={!canWrite} className="card">
        <legend>Content</legend>
        <Field label="Campaign name" field="name" error={error} value={form.name} onChange={(e) => set({ name: e.target.value } as Partial<F>)} required maxLength={200} />
        {content.content}
      </fieldset>
      {content.fieldsets}
      <fieldset disabled={!canWrite} className="card">
        <legend>{channel.utmLegend}</legend>
        <div className="row">
          {Object.keys(form.utm).map((key) => (
            <Field key={key} label={`utm_${key}`} field={`utm.${key}`} error={error} value={form.utm[key]} onChange={(e) => set({ utm: { ...form.utm, [key]: e.target.value } } as Partial<F>)} />
          ))}
        </div>
      </fieldset>
      <Audience channel={channel} projectId={projectId} form={form} set={set} error={error} />
      <fieldset disabled={!canWrite} className="card">
        <legend>Schedule</legend>
        <div className="radios">
          {(['draft', 'immediate', 'scheduled'] as const).map((mode) => (
            <label key={mode}>
              <input type="radio" name="mode" checked={form.mode === mode} onChange={() => set({ mode } as Partial<F>)} /> {MODE_LABELS[mode]}
            </label>
          ))}
        </div>
        {form.mode === 'scheduled' && (
          <>
            <div className="row">
              <Field label="Send at" field="schedule.sendAt" error={error} type="datetime-local" value={form.sendAt} onChange={(e) => set({ sendAt: e.target.value } as Partial<F>)} required />
              <Field
                label="Time zone"
                field="schedule.timezone"
                error={error}
                list="time-zones"
                value={form.timezone}
                onChange={(e) => set({ timezone: e.target.value } as Partial<F>)}
                placeholder="Europe/Paris"
                hint={content.timezoneHint}
              />
              <datalist id="time-zones">
                {ZONES.map((zone) => (
                  <option key={zone} value={zone} />
                ))}
              </datalist>
            </div>
            {content.schedule}
          </>
        )}
        {campaign && <p className="hint">A draft stays a draft when saved: send or schedule it from its page.</p>}
      </fieldset>

      <FormError error={error} fields={channel.fields} />
      {canWrite && (
        <div className="actions">
          <button type="submit" className="primary" disabled={save.isPending}>
            {/* A draft being edited stays a draft whatever its mode: its page sends it. */}
            {campaign ? 'Save draft' : SUBMIT[form.mode]}
          </button>
        </div>
      )}
    </form>
  );

  return (
    <section aria-labelledby="builder-title">
      <CampaignsBreadcrumb channel={campaigns} projectId={projectId} />
      <h2 id="builder-title">{campaign ? `Edit “${campaign.name}”` : campaigns.newTitle}</h2>
      {!canWrite && <p className="notice">A viewer cannot create or edit campaigns.</p>}
      {content.aside ? (
        <div className="template-editor">
          {body}
          <div>{content.aside}</div>
        </div>
      ) : (
        body
      )}
    </section>
  );
}

/** Who receives it, with its live reach on the channel (counted now; the audience is read again when it is sent). */
function Audience<C extends AnyCampaign, F extends CampaignFormBase>({
  channel,
  projectId,
  form,
  set,
  error,
}: {
  channel: BuilderChannel<C, F>;
  projectId: string;
  form: F;
  set: (patch: Partial<F>) => void;
  error: unknown;
}) {
  const { canWrite } = useMembership();
  const { channel: name } = channel.campaigns;
  const segments = useSegments(projectId);
  // Inline conditions are counted once none is left to fill in: a half-typed one would only be a 422.
  const complete = form.audience === 'saved' || problemsOf(form.filters, 'segment.filters').length === 0;
  const audience = useDebounced(form.audience === 'saved' ? { segmentId: form.savedSegmentId } : { filters: filtersOf(form.filters).filters }, 400);
  const reach = useQuery({
    queryKey: ['reach', projectId, name, audience],
    queryFn: () => unwrap(api.POST('/segments/reach', { body: { projectId, channel: name, ...audience } })),
    placeholderData: keepPreviousData,
    enabled: canWrite && complete && !('segmentId' in audience && audience.segmentId === ''),
  });
  return (
    <fieldset disabled={!canWrite} className="card">
      <legend>Audience</legend>
      <div className="radios">
        <label>
          <input type="radio" name="audience" checked={form.audience === 'filters'} onChange={() => set({ audience: 'filters' } as Partial<F>)} /> Filters
        </label>
        <label>
          <input type="radio" name="audience" checked={form.audience === 'saved'} onChange={() => set({ audience: 'saved' } as Partial<F>)} /> A saved segment
        </label>
      </div>
      {form.audience === 'saved' ? (
        <SelectField label="Saved segment" field="segment.savedSegmentId" error={error} value={form.savedSegmentId} onChange={(e) => set({ savedSegmentId: e.target.value } as Partial<F>)}>
          <option value="">choose one</option>
          {segments.data?.data.map((segment) => (
            <option key={segment.id} value={segment.id}>
              {segment.name}
            </option>
          ))}
        </SelectField>
      ) : (
        <ConditionBuilder
          projectId={projectId}
          tree={form.filters}
          setTree={(filters) => set({ filters } as Partial<F>)}
          error={treeError(form.filters, 'segment.filters', error !== null && error !== undefined, error ?? reach.error)}
          prefix="segment.filters"
        />
      )}
      <p className="reach" role="status" aria-live="polite">
        {!complete ? (
          <span className="muted">Reach: counted once every condition is filled in.</span>
        ) : reach.isError ? (
          <span className="error">Reach: the audience is not valid yet.</span>
        ) : reach.data ? (
          <>
            Reach: <strong data-testid="campaign-reach">{reach.data.count}</strong> {channel.reachUnit(reach.data.count)}
            {reach.isFetching && <span className="muted"> (updating…)</span>}
          </>
        ) : (
          'Reach: choose an audience.'
        )}
      </p>
      {channel.audienceHint && <p className="hint">{channel.audienceHint}</p>}
    </fieldset>
  );
}
