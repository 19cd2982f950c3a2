// Email templates of a project (list with name search, delete) and the editor: merge-tag variables and a live preview.
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate, useParams } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { api, unwrap, type Schemas } from '../api/client';
import { useMembership } from '../auth/me';
import { Confirm } from '../components/confirm';
import { EmailBodyEditor } from '../components/email-body-editor';
import type { EmailDesign } from '../components/email-design-model';
import { EmailPreview, useEmailPreview } from '../components/email-preview';
import { Field, FormError, TextAreaField } from '../components/field';
import { dateTime } from '../components/format';
import { Pagination } from '../components/pagination';
import { QueryState } from '../components/query-state';
import { useDebounced } from '../components/segment-filter-fields';

const FIELDS = ['name', 'subject', 'preheader', 'html', 'text', 'design'];

interface TemplateForm {
  name: string;
  subject: string;
  preheader: string;
  html: string;
  text: string;
  /** The visual editor's document the HTML is rendered from; null: HTML written by hand. */
  design: EmailDesign | null;
}

const EMPTY: TemplateForm = { name: '', subject: '', preheader: '', html: '', text: '', design: null };

const formOf = (template: Schemas['EmailTemplate']): TemplateForm => ({
  name: template.name,
  subject: template.subject,
  preheader: template.preheader ?? '',
  html: template.html,
  text: template.text ?? '',
  design: template.design,
});

/** An empty text or preheader is none: the text part is then generated from the HTML. */
const content = (form: TemplateForm) => ({
  subject: form.subject,
  html: form.html,
  text: form.text === '' ? null : form.text,
  preheader: form.preheader === '' ? null : form.preheader,
});

/** A sample value as typed: JSON when it reads as an object or a list (`{"total": 12}`), else the text itself. */
function sampleValue(typed: string): unknown {
  if (!/^\s*[[{]/.test(typed)) return typed;
  try {
    return JSON.parse(typed) as unknown;
  } catch {
    return typed;
  }
}

export function EmailTemplatesPage() {
  const { projectId } = useParams({ from: '/signed-in/projects/$projectId/email-templates/' });
  const { canWrite } = useMembership();
  const queryClient = useQueryClient();
  const [page, setPage] = useState(1);
  const [search, setSearch] = useState('');
  const q = useDebounced(search.trim(), 300);
  const templates = useQuery({
    queryKey: ['email-templates', projectId, page, q],
    queryFn: () =>
      unwrap(api.GET('/email-templates/project/{projectId}', { params: { path: { projectId }, query: { page, pageSize: 20, ...(q && { q }) } } })),
    placeholderData: keepPreviousData,
  });
  const remove = async (id: string) => {
    await unwrap(api.DELETE('/email-templates/{id}', { params: { path: { id } } }));
    await queryClient.invalidateQueries({ queryKey: ['email-templates', projectId] });
  };
  return (
    <section aria-labelledby="email-templates-title">
      <h2 id="email-templates-title">Email templates</h2>
      <div className="filters card">
        <Field label="Search by name" field="q" error={undefined} type="search" value={search} onChange={(event) => (setSearch(event.target.value), setPage(1))} />
        {canWrite && (
          <div className="actions">
            <Link to="/projects/$projectId/email-templates/new" params={{ projectId }} className="button primary">
              New template
            </Link>
          </div>
        )}
      </div>
      <QueryState query={templates} isEmpty={(list) => list.total === 0} empty={<p>{q ? 'No template has that name.' : 'No email templates yet.'}</p>}>
        {(list) => (
          <>
            <table>
              <caption className="visually-hidden">Email templates</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Subject</th>
                  <th scope="col">Variables</th>
                  <th scope="col">Updated</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {list.data.map((template) => (
                  <tr key={template.id}>
                    <td>
                      <Link to="/projects/$projectId/email-templates/$templateId" params={{ projectId, templateId: template.id }}>
                        {template.name}
                      </Link>{' '}
                      {template.sandbox && <span className="badge test">sandbox</span>}
                    </td>
                    <td>{template.subject}</td>
                    <td>
                      <code>{template.variables.map((variable) => variable.name).join(', ')}</code>
                    </td>
                    <td>{dateTime(template.updatedAt)}</td>
                    <td className="row">
                      {canWrite && (
                        <Confirm
                          trigger="Delete"
                          label={`Delete template ${template.name}`}
                          title={`Delete “${template.name}”?`}
                          description="The template is deleted for good: sends that name it will answer template_not_found. This cannot be undone."
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

export function NewEmailTemplatePage() {
  const { projectId } = useParams({ from: '/signed-in/projects/$projectId/email-templates/new' });
  return <EmailTemplateEditor projectId={projectId} />;
}

export function EmailTemplatePage() {
  const { projectId, templateId } = useParams({ from: '/signed-in/projects/$projectId/email-templates/$templateId' });
  const template = useQuery({
    queryKey: ['email-template', templateId],
    queryFn: () => unwrap(api.GET('/email-templates/{id}', { params: { path: { id: templateId } } })),
  });
  return <QueryState query={template}>{(t) => <EmailTemplateEditor key={t.updatedAt} projectId={projectId} template={t} />}</QueryState>;
}

function EmailTemplateEditor({ projectId, template }: { projectId: string; template?: Schemas['EmailTemplate'] }) {
  const { canWrite } = useMembership();
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const [form, setForm] = useState(template ? formOf(template) : EMPTY);
  const [samples, setSamples] = useState<Record<string, string>>({});
  const variables = Object.fromEntries(Object.entries(samples).map(([name, typed]) => [name, sampleValue(typed)]));
  const preview = useEmailPreview(projectId, content(form), variables);
  const save = useMutation({
    mutationFn: () =>
      template
        ? unwrap(api.PATCH('/email-templates/{id}', { params: { path: { id: template.id } }, body: { name: form.name, ...content(form), design: form.design } }))
        : unwrap(api.POST('/email-templates', { body: { projectId, name: form.name, ...content(form), design: form.design } })),
    onSuccess: async (saved) => {
      await queryClient.invalidateQueries({ queryKey: ['email-templates', projectId] });
      queryClient.setQueryData(['email-template', saved.id], saved);
      await navigate({ to: '/projects/$projectId/email-templates', params: { projectId } });
    },
  });
  // An edit makes the last save's errors stale: from then on the live preview checks the parts.
  const set = (patch: Partial<TemplateForm>) => {
    setForm({ ...form, ...patch });
    if (save.isError) save.reset();
  };
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    save.mutate();
  };
  // Errors beside the parts: the save's if there is one, else the live preview's (the same checks, as you type).
  const error = save.error ?? preview.error;
  const used = preview.data?.variables ?? template?.variables ?? [];
  return (
    <section aria-labelledby="email-template-title">
      <p className="breadcrumb">
        <Link to="/projects/$projectId/email-templates" params={{ projectId }}>
          Email templates
        </Link>
      </p>
      <h2 id="email-template-title">{template ? template.name : 'New email template'}</h2>
      <div className="template-editor">
        <form onSubmit={submit} className="card" aria-label="Email template" noValidate>
          <fieldset disabled={!canWrite}>
            <Field label="Template name" field="name" error={save.error} value={form.name} onChange={(event) => set({ name: event.target.value })} />
            <Field label="Subject" field="subject" error={error} value={form.subject} onChange={(event) => set({ subject: event.target.value })} />
            <Field
              label="Preheader"
              field="preheader"
              error={error}
              hint="Optional: the line inboxes show after the subject."
              value={form.preheader}
              onChange={(event) => set({ preheader: event.target.value })}
            />
            <EmailBodyEditor
              design={form.design}
              html={form.html}
              onChange={(body) => set(body)}
              mergeTags={['first_name', ...used.map((variable) => variable.name)]}
              error={error}
              fieldPrefix="design"
              disabled={!canWrite}
              htmlEditor={
                <TextAreaField
                  label="HTML body"
                  field="html"
                  error={error}
                  hint={'Merge tags: {{ first_name }}, {{ first_name | default: "there" }}, {% if vip %}…{% endif %}. Values are HTML-escaped.'}
                  rows={14}
                  value={form.html}
                  onChange={(event) => set({ html: event.target.value })}
                />
              }
            />
            <TextAreaField
              label="Plain-text version"
              field="text"
              error={error}
              hint="Optional: left empty, it is generated from the HTML."
              rows={6}
              value={form.text}
              onChange={(event) => set({ text: event.target.value })}
            />
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
        <div>
          <fieldset className="card">
            <legend>Variables</legend>
            {used.length === 0 ? (
              <p className="muted">The template uses no variables.</p>
            ) : (
              used.map((variable) => (
                <Field
                  key={variable.name}
                  label={variable.name}
                  field={`variables.${variable.name}`}
                  error={undefined}
                  hint={variable.hasDefault ? 'Has a default: may be left out.' : 'Required: a send without it is refused.'}
                  placeholder="Sample value (text, or JSON)"
                  value={samples[variable.name] ?? ''}
                  onChange={(event) => setSamples({ ...samples, [variable.name]: event.target.value })}
                />
              ))
            )}
          </fieldset>
          <EmailPreview preview={preview.data} failed={preview.isError} updating={preview.isFetching} />
        </div>
      </div>
    </section>
  );
}
