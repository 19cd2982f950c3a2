// One project: its frame (sidebar, name, the page) and its settings form.
import { queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, Outlet, useNavigate, useParams } from '@tanstack/react-router';
import { useEffect, useState, type FormEvent } from 'react';
import { api, unwrap, type Body, type Schemas } from '../api/client';
import { useMembership } from '../auth/me';
import { Confirm } from '../components/confirm';
import { ErrorMessage } from '../components/query-state';
import { Field, FormError, TextAreaField } from '../components/field';
import { QueryState } from '../components/query-state';
import { termHelp } from '../components/provider-terms';
import { SdkSnippet } from '../components/sdk-snippet';
import { allows, ProjectNav, useCurrentPlace } from '../components/project-nav';

/** A project's request: its pages read it, and the project routes' loader starts it before the frame renders. */
export function projectQuery(projectId: string) {
  return queryOptions({ queryKey: ['project', projectId], queryFn: () => unwrap(api.GET('/projects/{id}', { params: { path: { id: projectId } } })) });
}

export function useProject(projectId: string) {
  return useQuery(projectQuery(projectId));
}

export function ProjectLayout() {
  const { projectId } = useParams({ from: '/signed-in/projects/$projectId' });
  const project = useProject(projectId);
  const { role } = useMembership();
  const place = useCurrentPlace();
  const name = project.data?.name;
  useEffect(() => {
    document.title = [place?.item.label, name, 'Herald'].filter(Boolean).join(' · ');
  }, [place, name]);
  // The frame and the page render while the project is read: the page's own requests start at once, not after it.
  return (
    <div className="project-frame">
      <ProjectNav projectId={projectId} />
      <section className="project-page">
        <p className="breadcrumb">
          <Link to="/projects">Projects</Link> / {name}
        </p>
        <h1>{name ?? 'Project'}</h1>
        {project.isError ? (
          <QueryState query={project}>{() => null}</QueryState>
        ) : place?.item.minRole && role === undefined ? (
          // A page kept from some roles waits for the user's: it must not ask the server what the role forbids.
          <p role="status" className="muted">
            Loading…
          </p>
        ) : place && !allows(role, place.item) ? (
          <p className="notice">
            {place.item.label} is for {place.item.minRole === 'ADMIN' ? 'owners and admins' : 'members, admins and owners'} of the organization; your role is{' '}
            {role?.toLowerCase()}.
          </p>
        ) : (
          <Outlet />
        )}
      </section>
    </div>
  );
}

type Project = Schemas['Project'];
type Patch = Body<'/projects/{id}', 'patch'>;
type Settings = NonNullable<Patch['settings']>;
type Policy = NonNullable<Settings['deliveryPolicy']>;

/** The stored settings are an open record in the API (later capabilities add keys); read the ones this form edits. */
function currentSettings(project: Project) {
  const settings = project.settings as Partial<Settings>;
  const policy: Policy = settings.deliveryPolicy ?? {};
  return {
    timezone: settings.timezone ?? '',
    vapidSubject: settings.vapidSubject ?? '',
    cap: policy.frequencyCap ?? null,
    quiet: policy.quietHours ?? null,
    identityVerification: settings.identityVerification ?? false,
    allowedOrigins: settings.allowedOrigins ?? [],
  };
}

const SETTINGS_FIELDS = [
  'name',
  'settings.timezone',
  'settings.vapidSubject',
  'settings.deliveryPolicy.frequencyCap.max',
  'settings.deliveryPolicy.frequencyCap.windowSeconds',
  'settings.deliveryPolicy.quietHours.start',
  'settings.deliveryPolicy.quietHours.end',
  'settings.identityVerification',
  'settings.allowedOrigins',
];

export function ProjectSettingsPage() {
  const { projectId } = useParams({ from: '/signed-in/projects/$projectId/settings' });
  const project = useProject(projectId);
  // Held here: a save changes updatedAt, which gives the form a fresh start from the stored values.
  const [saved, setSaved] = useState(false);
  return (
    <QueryState query={project}>
      {(p) => (
        <>
          <SettingsForm key={p.updatedAt} project={p} saved={saved} setSaved={setSaved} />
          <DeleteProject project={p} />
        </>
      )}
    </QueryState>
  );
}

/** OWNER and ADMIN only, as the server decides: the project and everything in it go, after its name is typed. */
function DeleteProject({ project }: { project: Project }) {
  const { isAdmin } = useMembership();
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  if (!isAdmin) return null;
  const remove = async () => {
    await unwrap(api.DELETE('/projects/{id}', { params: { path: { id: project.id } } }));
    // The lists are read again when shown: a cached page would still hold the deleted project.
    queryClient.removeQueries({ queryKey: ['projects'] });
    await navigate({ to: '/projects' });
    queryClient.removeQueries({ queryKey: ['project', project.id] });
  };
  return (
    <section className="card" aria-labelledby="delete-project-title">
      <h2 id="delete-project-title">Delete this project</h2>
      <p>Its subscribers, campaigns, templates, sending domains, API keys and send history are deleted with it, at once and for good.</p>
      <Confirm
        trigger="Delete project"
        title={`Delete the project ${project.name}?`}
        description="Everything in it is deleted and its API keys stop working at once. This cannot be undone."
        confirm="Delete project"
        typeToConfirm={project.name}
        onConfirm={remove}
      />
    </section>
  );
}

function SettingsForm({ project, saved, setSaved }: { project: Project; saved: boolean; setSaved: (saved: boolean) => void }) {
  const { isAdmin } = useMembership();
  const queryClient = useQueryClient();
  const initial = currentSettings(project);
  const [capOn, setCapOn] = useState(initial.cap !== null);
  const [quietOn, setQuietOn] = useState(initial.quiet !== null);
  const save = useMutation({
    mutationFn: (body: Patch) => unwrap(api.PATCH('/projects/{id}', { params: { path: { id: project.id } }, body })),
    onSuccess: (updated) => {
      queryClient.setQueryData(['project', project.id], updated);
      void queryClient.invalidateQueries({ queryKey: ['projects'] });
      setSaved(true);
    },
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    setSaved(false);
    const form = new FormData(event.currentTarget);
    const text = (name: string) => String(form.get(name) ?? '').trim();
    const settings: Settings = {
      deliveryPolicy: {
        frequencyCap: capOn ? { max: Number(text('settings.deliveryPolicy.frequencyCap.max')), windowSeconds: Number(text('settings.deliveryPolicy.frequencyCap.windowSeconds')) } : null,
        quietHours: quietOn ? { start: text('settings.deliveryPolicy.quietHours.start'), end: text('settings.deliveryPolicy.quietHours.end') } : null,
      },
    };
    if (text('settings.timezone')) settings.timezone = text('settings.timezone');
    if (text('settings.vapidSubject')) settings.vapidSubject = text('settings.vapidSubject');
    settings.identityVerification = form.get('settings.identityVerification') === 'on';
    // One origin a line; an empty box allows any origin.
    settings.allowedOrigins = text('settings.allowedOrigins').split(/\s+/).filter(Boolean);
    save.mutate({ name: text('name'), settings });
  };
  const error = save.error;
  return (
    <form onSubmit={submit} className="card" aria-labelledby="settings-title">
      <h2 id="settings-title">Settings</h2>
      {!isAdmin && <p className="notice">Only an owner or admin can change these settings.</p>}
      <fieldset disabled={!isAdmin}>
        <legend>General</legend>
        <Field label="Name" field="name" error={error} defaultValue={project.name} required maxLength={200} />
        <Field label="Time zone" field="settings.timezone" error={error} defaultValue={initial.timezone} placeholder="Europe/Paris" hint="IANA zone used for subscribers whose own is unknown." />
      </fieldset>
      <fieldset disabled={!isAdmin}>
        <legend>Delivery policy</legend>
        <div className="check">
          <input id="cap-on" type="checkbox" checked={capOn} onChange={(event) => setCapOn(event.target.checked)} />
          <label htmlFor="cap-on">Frequency cap</label>
        </div>
        {capOn && (
          <div className="row">
            <Field label="At most (pushes)" field="settings.deliveryPolicy.frequencyCap.max" error={error} type="number" min={1} max={1000} defaultValue={initial.cap?.max ?? 3} required />
            <Field label="Per window (seconds)" field="settings.deliveryPolicy.frequencyCap.windowSeconds" error={error} type="number" min={60} defaultValue={initial.cap?.windowSeconds ?? 86400} required />
          </div>
        )}
        <div className="check">
          <input id="quiet-on" type="checkbox" checked={quietOn} onChange={(event) => setQuietOn(event.target.checked)} />
          <label htmlFor="quiet-on">Quiet hours</label>
        </div>
        {quietOn && (
          <div className="row">
            <Field label="From (HH:mm)" field="settings.deliveryPolicy.quietHours.start" error={error} defaultValue={initial.quiet?.start ?? '22:00'} required />
            <Field label="To (HH:mm)" field="settings.deliveryPolicy.quietHours.end" error={error} defaultValue={initial.quiet?.end ?? '07:00'} required />
          </div>
        )}
      </fieldset>
      <fieldset disabled={!isAdmin} id="web-push">
        <legend>Web push</legend>
        <div className="field">
          <span className="label">VAPID public key</span>
          <code className="secret">{project.vapidPublicKey}</code>
        </div>
        <Field label="VAPID subject" field="settings.vapidSubject" error={error} defaultValue={initial.vapidSubject} placeholder="mailto:ops@example.com" hint={termHelp('vapidSubject')} />
      </fieldset>
      <fieldset disabled={!isAdmin}>
        <legend>Browser SDK</legend>
        <div className="check">
          <input id="identity-verification" name="settings.identityVerification" type="checkbox" defaultChecked={initial.identityVerification} />
          <label htmlFor="identity-verification">Identity verification (recommended)</label>
        </div>
        <p className="hint">
          With it, a web page may identify a visitor only with the externalIdHash your server computes from the identity secret below, so nobody can
          claim another user’s externalId.
        </p>
        <TextAreaField
          label="Allowed origins"
          field="settings.allowedOrigins"
          error={error}
          defaultValue={initial.allowedOrigins.join('\n')}
          rows={3}
          placeholder="https://www.example.com"
          hint="One origin a line (scheme://host[:port]) whose pages may use a publishable key. Empty: any origin."
        />
        {isAdmin && <IdentitySecret projectId={project.id} />}
        <SdkSnippet projectId={project.id} />
      </fieldset>
      <FormError error={error} fields={SETTINGS_FIELDS} />
      {saved && (
        <p role="status" className="success">
          Settings saved.
        </p>
      )}
      {isAdmin && (
        <button type="submit" className="primary" disabled={save.isPending}>
          Save settings
        </button>
      )}
    </form>
  );
}

/** The key of externalIdHash: read again at will by an OWNER or ADMIN (as Intercom and OneSignal do), rotated if it leaks. */
function IdentitySecret({ projectId }: { projectId: string }) {
  const queryClient = useQueryClient();
  const [shown, setShown] = useState(false);
  const secret = useQuery({
    queryKey: ['identity-secret', projectId],
    queryFn: () => unwrap(api.GET('/projects/{id}/identity-secret', { params: { path: { id: projectId } } })),
    enabled: shown,
  });
  const rotate = () =>
    unwrap(api.POST('/projects/{id}/identity-secret/rotate', { params: { path: { id: projectId } } })).then((rotated) => {
      queryClient.setQueryData(['identity-secret', projectId], rotated);
      setShown(true);
    });
  return (
    <div className="field">
      <span className="label">Identity secret</span>
      {shown && secret.data ? (
        <code className="secret" data-testid="identity-secret">
          {secret.data.identitySecret}
        </code>
      ) : (
        <button type="button" onClick={() => setShown(true)}>
          Reveal identity secret
        </button>
      )}
      <ErrorMessage error={secret.error} />
      <span className="hint">Keep it on your servers: they compute externalIdHash = hex(HMAC-SHA256(secret, externalId)) for the signed-in user.</span>
      <Confirm
        trigger="Rotate identity secret"
        title="Rotate the identity secret?"
        description="Hashes made with the current secret stop verifying at once: update your servers with the new one."
        confirm="Rotate secret"
        onConfirm={rotate}
      />
    </div>
  );
}
