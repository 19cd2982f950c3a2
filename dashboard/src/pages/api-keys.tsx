// API keys of a project (spec 5.2.5): list (prefix only), create live or test, server or publishable, the secret shown
// once; revoke.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useParams } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { api, unwrap, type Body, type Schemas } from '../api/client';
import { useMembership } from '../auth/me';
import { Confirm } from '../components/confirm';
import { Field, FormError } from '../components/field';
import { dateTime } from '../components/format';
import { QueryState } from '../components/query-state';
import { SdkSnippet } from '../components/sdk-snippet';
import { ShownOnceDialog } from '../components/shown-once';

type CreatedKey = Schemas['ApiKey'] & { key: string };

export function ApiKeysPage() {
  const { projectId } = useParams({ from: '/signed-in/projects/$projectId/keys' });
  const { isAdmin } = useMembership();
  const queryClient = useQueryClient();
  const keys = useQuery({
    queryKey: ['api-keys', projectId],
    queryFn: () => unwrap(api.GET('/projects/{projectId}/api-keys', { params: { path: { projectId } } })),
  });
  const revoke = (keyId: string) =>
    unwrap(api.DELETE('/projects/{projectId}/api-keys/{keyId}', { params: { path: { projectId, keyId } } })).then(() =>
      queryClient.invalidateQueries({ queryKey: ['api-keys', projectId] }),
    );
  return (
    <section aria-labelledby="keys-title">
      <h2 id="keys-title">API keys</h2>
      <p className="muted">
        Live keys reach real subscribers; test keys (sandbox) are accepted and recorded but never delivered. A project may have several live keys at once, so
        a key can be rotated without downtime. A server key opens every project route: keep it on your servers. A publishable key opens only what the
        browser SDK calls (registering, identifying and tagging its own subscriber), so a web page may hold it.
      </p>
      {isAdmin && <CreateKey projectId={projectId} />}
      <QueryState query={keys} isEmpty={(list) => list.data.length === 0} empty={<p>No API keys yet.</p>}>
        {(list) => (
          <table>
            <caption className="visually-hidden">API keys</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Mode</th>
                <th scope="col">Scope</th>
                <th scope="col">Key</th>
                <th scope="col">Created</th>
                <th scope="col">Last used</th>
                <th scope="col">Status</th>
                {isAdmin && <th scope="col">Actions</th>}
              </tr>
            </thead>
            <tbody>
              {list.data.map((key) => (
                <tr key={key.id}>
                  <td>{key.name}</td>
                  <td>
                    <span className={`badge ${key.mode}`}>{key.mode}</span>
                  </td>
                  <td>{key.scope}</td>
                  <td>
                    <code>
                      {key.prefix}…{key.lastFour}
                    </code>
                  </td>
                  <td>{dateTime(key.createdAt)}</td>
                  <td>{key.lastUsedAt ? dateTime(key.lastUsedAt) : 'never'}</td>
                  <td>{key.revokedAt ? `revoked ${dateTime(key.revokedAt)}` : 'active'}</td>
                  {isAdmin && (
                    <td>
                      {!key.revokedAt && (
                        <Confirm
                          trigger="Revoke"
                          label={`Revoke key ${key.name}`}
                          title={`Revoke “${key.name}”?`}
                          description="Requests with this key are refused (401) from now on. This cannot be undone."
                          confirm="Revoke key"
                          onConfirm={() => revoke(key.id)}
                        />
                      )}
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </QueryState>
    </section>
  );
}

function CreateKey({ projectId }: { projectId: string }) {
  const queryClient = useQueryClient();
  const [created, setCreated] = useState<CreatedKey>();
  const create = useMutation({
    mutationFn: (body: Body<'/projects/{projectId}/api-keys', 'post'>) =>
      unwrap(api.POST('/projects/{projectId}/api-keys', { params: { path: { projectId } }, body })),
    onSuccess: (key) => {
      setCreated(key);
      void queryClient.invalidateQueries({ queryKey: ['api-keys', projectId] });
    },
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    create.mutate({
      name: String(form.get('name')),
      mode: form.get('mode') === 'live' ? 'live' : 'test',
      scope: form.get('scope') === 'publishable' ? 'publishable' : 'server',
    });
    event.currentTarget.reset();
  };
  return (
    <>
      <form className="card inline" onSubmit={submit} aria-label="New API key">
        <Field label="Key name" field="name" error={create.error} required maxLength={200} placeholder="staging site" />
        <fieldset className="radios">
          <legend>Mode</legend>
          <label>
            <input type="radio" name="mode" value="test" defaultChecked /> Test
          </label>
          <label>
            <input type="radio" name="mode" value="live" /> Live
          </label>
        </fieldset>
        <fieldset className="radios">
          <legend>Scope</legend>
          <label>
            <input type="radio" name="scope" value="server" defaultChecked /> Server
          </label>
          <label>
            <input type="radio" name="scope" value="publishable" /> Publishable (web pages)
          </label>
        </fieldset>
        <button type="submit" className="primary" disabled={create.isPending}>
          Create key
        </button>
        <FormError error={create.error} fields={['name']} />
      </form>
      <ShownOnceDialog
        secret={created?.key}
        title={`${created?.mode === 'live' ? 'Live' : 'Test'} ${created?.scope === 'publishable' ? 'publishable ' : ''}key “${created?.name ?? ''}” created`}
        warning="Copy this secret now. It is shown once and cannot be retrieved again; if it is lost, create a new key and revoke this one."
        copyLabel="Copy secret"
        testId="api-key-secret"
        onClose={() => setCreated(undefined)}
      >
        {created?.scope === 'publishable' && <SdkSnippet projectId={projectId} publishableKey={created.key} />}
      </ShownOnceDialog>
    </>
  );
}
