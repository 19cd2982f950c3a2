// WhatsApp templates of a project: the registry with Meta's review status, a sync from Meta showing what changed, and
// hand-written ones (with their Twilio Content SID for a project sending through Twilio).
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate, useParams } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { api, ApiError, unwrap, type Body, type Schemas } from '../api/client';
import { useMembership } from '../auth/me';
import { Confirm } from '../components/confirm';
import { Field, FormError, SelectField, TextAreaField } from '../components/field';
import { dateTime, everyValue } from '../components/format';
import { Pagination } from '../components/pagination';
import { ErrorMessage, QueryState } from '../components/query-state';

type Template = Schemas['WhatsAppTemplate'];
type Status = Template['status'];
type Category = Template['category'];
type CreateBody = Body<'/projects/{id}/whatsapp-templates', 'post'>;

const STATUSES = everyValue<Status>()('APPROVED', 'PENDING', 'REJECTED', 'PAUSED', 'DISABLED');
const CATEGORIES = everyValue<Category>()('UTILITY', 'MARKETING', 'AUTHENTICATION');
const FIELDS = ['name', 'language', 'category', 'status', 'components', 'providerTemplateId'];

/** Meta's review status in words, with the badge colour it gets: only an approved template is sent. */
const STATUS: Record<Status, { label: string; tone: string }> = {
  APPROVED: { label: 'Approved', tone: 'verified' },
  PENDING: { label: 'Pending review', tone: 'pending' },
  REJECTED: { label: 'Rejected', tone: 'failing' },
  PAUSED: { label: 'Paused', tone: 'pending' },
  DISABLED: { label: 'Disabled', tone: 'failing' },
};

const CATEGORY: Record<Category, string> = { MARKETING: 'Marketing', UTILITY: 'Utility', AUTHENTICATION: 'Authentication' };

function StatusBadge({ status }: { status: Status }) {
  return <span className={`badge ${STATUS[status].tone}`}>{STATUS[status].label}</span>;
}

const keyOf = (template: Template) => `${template.name} (${template.language})`;

/** Every template of the registry, all pages: a sync is compared with what was there before it. */
async function everyTemplate(projectId: string): Promise<Template[]> {
  const all: Template[] = [];
  for (let page = 1; ; page++) {
    const list = await unwrap(api.GET('/projects/{id}/whatsapp-templates', { params: { path: { id: projectId }, query: { page, pageSize: 100 } } }));
    all.push(...list.data);
    if (all.length >= list.total || list.data.length === 0) return all;
  }
}

interface SyncResult {
  synced: number;
  removed: number;
  changes: string[];
}

/** What a sync changed, one line per template: new ones, new statuses or categories, removed ones. */
function changesBetween(before: Template[], after: Template[]): string[] {
  const old = new Map(before.map((template) => [keyOf(template), template]));
  const changes: string[] = [];
  for (const template of after) {
    const was = old.get(keyOf(template));
    old.delete(keyOf(template));
    if (!was) changes.push(`${keyOf(template)}: new, ${STATUS[template.status].label}`);
    else if (was.status !== template.status) changes.push(`${keyOf(template)}: ${STATUS[was.status].label} → ${STATUS[template.status].label}`);
    else if (was.category !== template.category) changes.push(`${keyOf(template)}: ${CATEGORY[was.category]} → ${CATEGORY[template.category]}`);
  }
  for (const gone of old.values()) changes.push(`${keyOf(gone)}: removed (Meta no longer lists it)`);
  return changes;
}

export function WhatsAppTemplatesPage() {
  const { projectId } = useParams({ from: '/signed-in/projects/$projectId/whatsapp-templates/' });
  const { canWrite } = useMembership();
  const queryClient = useQueryClient();
  const [page, setPage] = useState(1);
  const templates = useQuery({
    queryKey: ['whatsapp-templates', projectId, page],
    queryFn: () => unwrap(api.GET('/projects/{id}/whatsapp-templates', { params: { path: { id: projectId }, query: { page, pageSize: 20 } } })),
    placeholderData: keepPreviousData,
  });
  const sync = useMutation({
    mutationFn: async (): Promise<SyncResult> => {
      const before = await everyTemplate(projectId);
      const result = await unwrap(api.POST('/projects/{id}/whatsapp-templates/sync', { params: { path: { id: projectId } } }));
      return { ...result, changes: changesBetween(before, await everyTemplate(projectId)) };
    },
    onSettled: () => queryClient.invalidateQueries({ queryKey: ['whatsapp-templates', projectId] }),
  });
  const channels = useQuery({
    queryKey: ['channels', projectId],
    queryFn: () => unwrap(api.GET('/projects/{id}/channels', { params: { path: { id: projectId } } })),
  });
  const throughTwilio = channels.data?.data.some((config) => config.channel === 'whatsapp' && config.provider === 'twilio') ?? false;
  const remove = async (id: string) => {
    await unwrap(api.DELETE('/projects/{id}/whatsapp-templates/{templateId}', { params: { path: { id: projectId, templateId: id } } }));
    await queryClient.invalidateQueries({ queryKey: ['whatsapp-templates', projectId] });
  };
  return (
    <section aria-labelledby="whatsapp-templates-title">
      <h2 id="whatsapp-templates-title">WhatsApp templates</h2>
      <div className="card">
        <p>
          Outside the 24-hour service window WhatsApp only takes templates Meta has approved. Herald keeps one per name and language: synchronise them from the
          business account, or write them here for a setup without one. Only an approved template is sent (else template_not_approved).
        </p>
        {throughTwilio && (
          <p className="notice">
            WhatsApp goes through Twilio: there is no sync. Write each template here with its Content SID (HX…) from Twilio&apos;s Content Template Builder;
            a template without one is not sent (template_not_found).
          </p>
        )}
        {canWrite && (
          <div className="actions">
            {!throughTwilio && (
              <button type="button" className="primary" disabled={sync.isPending} onClick={() => sync.mutate()}>
                {sync.isPending ? 'Synchronising…' : 'Sync from Meta'}
              </button>
            )}
            <Link to="/projects/$projectId/whatsapp-templates/new" params={{ projectId }} className="button">
              New template
            </Link>
          </div>
        )}
        {sync.data && <SyncReport result={sync.data} />}
        <SyncError error={sync.error} projectId={projectId} />
      </div>
      <QueryState
        query={templates}
        isEmpty={(list) => list.total === 0}
        empty={<p>No WhatsApp templates yet: sync them from Meta once the WhatsApp settings are saved, or write one by hand.</p>}
      >
        {(list) => (
          <>
            <table>
              <caption className="visually-hidden">WhatsApp templates</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Language</th>
                  <th scope="col">Category</th>
                  <th scope="col">Status</th>
                  <th scope="col">Source</th>
                  <th scope="col">Updated</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {list.data.map((template) => (
                  <tr key={template.id}>
                    <td>
                      <Link to="/projects/$projectId/whatsapp-templates/$templateId" params={{ projectId, templateId: template.id }}>
                        {template.name}
                      </Link>
                    </td>
                    <td>{template.language}</td>
                    <td>{CATEGORY[template.category]}</td>
                    <td>
                      <StatusBadge status={template.status} />
                    </td>
                    <td>{template.source === 'provider' ? 'From Meta' : 'By hand'}</td>
                    <td>{dateTime(template.updatedAt)}</td>
                    <td className="row">
                      {canWrite && (
                        <Confirm
                          trigger="Delete"
                          label={`Delete template ${keyOf(template)}`}
                          title={`Delete “${keyOf(template)}”?`}
                          description={
                            template.source === 'provider'
                              ? 'It leaves Herald’s registry only (sends that name it answer template_not_found); the next sync from Meta brings it back while Meta lists it.'
                              : 'The template leaves the registry for good: sends that name it answer template_not_found.'
                          }
                          confirm="Delete template"
                          onConfirm={() => remove(template.id)}
                        />
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
            <Pagination page={list.page} pageSize={list.pageSize} total={list.total} onPage={setPage} />
          </>
        )}
      </QueryState>
    </section>
  );
}

function SyncReport({ result }: { result: SyncResult }) {
  return (
    <div role="status" className="success">
      <p>
        Synchronised from Meta: {result.synced} {result.synced === 1 ? 'template' : 'templates'} read, {result.removed} removed.
        {result.changes.length === 0 && ' Nothing changed.'}
      </p>
      {result.changes.length > 0 && (
        <ul aria-label="What the sync changed">
          {result.changes.map((change) => (
            <li key={change}>{change}</li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** Meta's refusal in its own words; no settings yet links to them. */
function SyncError({ error, projectId }: { error: unknown; projectId: string }) {
  if (error instanceof ApiError && error.code === 'provider_not_configured') {
    return (
      <p role="alert" className="error">
        No WhatsApp provider yet: save Meta&apos;s settings on the{' '}
        <Link to="/projects/$projectId/whatsapp" params={{ projectId }}>
          WhatsApp
        </Link>{' '}
        tab first.
      </p>
    );
  }
  if (error instanceof ApiError && error.code === 'provider_error') {
    return (
      <p role="alert" className="error">
        Meta refused the sync: {error.message}
      </p>
    );
  }
  return <ErrorMessage error={error} />;
}

export function NewWhatsAppTemplatePage() {
  const { projectId } = useParams({ from: '/signed-in/projects/$projectId/whatsapp-templates/new' });
  return <WhatsAppTemplateEditor projectId={projectId} />;
}

export function WhatsAppTemplatePage() {
  const { projectId, templateId } = useParams({ from: '/signed-in/projects/$projectId/whatsapp-templates/$templateId' });
  const template = useQuery({
    queryKey: ['whatsapp-template', templateId],
    queryFn: () => unwrap(api.GET('/projects/{id}/whatsapp-templates/{templateId}', { params: { path: { id: projectId, templateId } } })),
  });
  return <QueryState query={template}>{(t) => <WhatsAppTemplateEditor key={t.updatedAt} projectId={projectId} template={t} />}</QueryState>;
}

/** The components as typed: empty is none; anything but a JSON list is refused beside the field, as the API would. */
function componentsOf(typed: string): CreateBody['components'] {
  if (typed.trim() === '') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(typed);
  } catch {
    parsed = undefined;
  }
  if (!Array.isArray(parsed) || !parsed.every((item) => typeof item === 'object' && item !== null && !Array.isArray(item))) {
    throw new ApiError(422, 'validation_error', 'Invalid template', [{ field: 'components', error: 'must be a JSON list of objects, e.g. [{"type": "BODY", "text": "Hello {{1}}"}]' }]);
  }
  return parsed as CreateBody['components'];
}

function WhatsAppTemplateEditor({ projectId, template }: { projectId: string; template?: Template }) {
  const { canWrite } = useMembership();
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const save = useMutation({
    mutationFn: async (form: FormData) => {
      const text = (name: string) => String(form.get(name) ?? '').trim();
      const fields = {
        category: text('category') as Category,
        status: text('status') as Status,
        components: componentsOf(String(form.get('components') ?? '')),
      };
      // A synchronised template's id is Meta's, never edited here; a hand-written one's is its Twilio Content SID.
      const contentSid = text('providerTemplateId');
      return template
        ? unwrap(
            api.PATCH('/projects/{id}/whatsapp-templates/{templateId}', {
              params: { path: { id: projectId, templateId: template.id } },
              body: template.source === 'manual' ? { ...fields, providerTemplateId: contentSid || null } : fields,
            }),
          )
        : unwrap(
            api.POST('/projects/{id}/whatsapp-templates', {
              params: { path: { id: projectId } },
              body: { name: text('name'), language: text('language'), ...fields, ...(contentSid ? { providerTemplateId: contentSid } : {}) },
            }),
          );
    },
    onSuccess: async (saved) => {
      await queryClient.invalidateQueries({ queryKey: ['whatsapp-templates', projectId] });
      queryClient.setQueryData(['whatsapp-template', saved.id], saved);
      await navigate({ to: '/projects/$projectId/whatsapp-templates', params: { projectId } });
    },
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    save.mutate(new FormData(event.currentTarget));
  };
  const title = template ? keyOf(template) : 'New WhatsApp template';
  return (
    <section aria-labelledby="whatsapp-template-title">
      <p className="breadcrumb">
        <Link to="/projects/$projectId/whatsapp-templates" params={{ projectId }}>
          WhatsApp templates
        </Link>
      </p>
      <h2 id="whatsapp-template-title">{title}</h2>
      {template?.source === 'provider' && (
        <p className="notice">Read from Meta by a sync: the next sync overwrites what is changed here. Change it in WhatsApp Manager instead.</p>
      )}
      <form onSubmit={submit} className="card" aria-label="WhatsApp template" noValidate>
        <fieldset disabled={!canWrite}>
          {template ? (
            <dl className="details">
              <div>
                <dt>Name</dt>
                <dd>{template.name}</dd>
              </div>
              <div>
                <dt>Language</dt>
                <dd>{template.language}</dd>
              </div>
              <div>
                <dt>Status now</dt>
                <dd>
                  <StatusBadge status={template.status} />
                </dd>
              </div>
            </dl>
          ) : (
            <>
              <Field label="Name" field="name" error={save.error} autoComplete="off" required hint="As in WhatsApp Manager: lower-case letters, digits and underscores." />
              <Field label="Language" field="language" error={save.error} autoComplete="off" required placeholder="en_US" hint="Meta's language code, e.g. en or en_US." />
            </>
          )}
          <SelectField label="Category" field="category" error={save.error} defaultValue={template?.category ?? 'UTILITY'}>
            {CATEGORIES.map((category) => (
              <option key={category} value={category}>
                {CATEGORY[category]}
              </option>
            ))}
          </SelectField>
          <SelectField
            label="Status"
            field="status"
            error={save.error}
            defaultValue={template?.status ?? 'APPROVED'}
            hint="Meta's review status: only an approved template is sent."
          >
            {STATUSES.map((status) => (
              <option key={status} value={status}>
                {STATUS[status].label}
              </option>
            ))}
          </SelectField>
          <TextAreaField
            label="Components (JSON, optional)"
            field="components"
            error={save.error}
            rows={8}
            defaultValue={template && template.components.length > 0 ? JSON.stringify(template.components, null, 2) : ''}
            hint="The header, body, footer and buttons as Meta describes them, for reference; each send gives its own parameters."
          />
          {template?.source !== 'provider' && (
            <Field
              label="Twilio Content SID (optional)"
              field="providerTemplateId"
              error={save.error}
              defaultValue={template?.providerTemplateId ?? ''}
              autoComplete="off"
              placeholder="HX…"
              hint="For WhatsApp through Twilio: the template's Content SID in Twilio's Content Template Builder, which sends go by."
            />
          )}
        </fieldset>
        <FormError error={save.error} fields={FIELDS} />
        {canWrite && (
          <div className="actions">
            <button type="submit" className="primary" disabled={save.isPending}>
              Save template
            </button>
          </div>
        )}
      </form>
    </section>
  );
}
