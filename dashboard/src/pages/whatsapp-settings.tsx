// A project's WhatsApp settings: the Meta Cloud API account (secrets write-only, OWNER/ADMIN) and the webhook to set up in Meta's console.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useParams } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { api, unwrap, type Body, type Schemas } from '../api/client';
import { useMembership } from '../auth/me';
import { CopyButton } from '../components/copy-button';
import { Field, FormError } from '../components/field';
import { dateTime } from '../components/format';
import { QueryState } from '../components/query-state';

type ChannelConfig = Schemas['ChannelConfig'];
type WhatsAppBody = Body<'/projects/{id}/channels/whatsapp', 'put'>;
type Secret = keyof WhatsAppBody['credentials'];

const FIELDS = ['settings.phoneNumberId', 'settings.wabaId', 'credentials.accessToken', 'credentials.appSecret', 'credentials.verifyToken'];

const SECRETS: Record<Secret, string> = { accessToken: 'Access token', appSecret: 'App secret', verifyToken: 'Verify token' };

/** The stored settings are an open record in the API; read the ones Meta's account has. */
function metaSettings(config: ChannelConfig | undefined) {
  const settings = config?.provider === 'meta' ? config.settings : {};
  const text = (value: unknown) => (typeof value === 'string' ? value : '');
  return { phoneNumberId: text(settings.phoneNumberId), wabaId: text(settings.wabaId), webhookUrl: text(settings.webhookUrl) };
}

export function WhatsAppSettingsPage() {
  const { projectId } = useParams({ from: '/signed-in/projects/$projectId/whatsapp' });
  const channels = useQuery({
    queryKey: ['channels', projectId],
    queryFn: () => unwrap(api.GET('/projects/{id}/channels', { params: { path: { id: projectId } } })),
  });
  // Held here: a save changes updatedAt, which remounts the form empty of the secrets it sent.
  const [saved, setSaved] = useState(false);
  return (
    <section aria-labelledby="whatsapp-title">
      <h2 id="whatsapp-title">WhatsApp</h2>
      <QueryState query={channels}>
        {(list) => {
          const whatsapp = list.data.find((config) => config.channel === 'whatsapp');
          return (
            <>
              <Current config={whatsapp} projectId={projectId} />
              <Webhook config={whatsapp} />
              <SettingsForm key={whatsapp?.updatedAt ?? 'none'} projectId={projectId} config={whatsapp} saved={saved} setSaved={setSaved} />
            </>
          );
        }}
      </QueryState>
    </section>
  );
}

function Current({ config, projectId }: { config: ChannelConfig | undefined; projectId: string }) {
  const configured = config?.provider === 'meta';
  const settings = metaSettings(config);
  return (
    <section className="card" aria-labelledby="whatsapp-current-title">
      <h3 id="whatsapp-current-title">Current configuration</h3>
      {!configured && <p>No WhatsApp provider yet: live WhatsApp sends fail with provider_not_configured until Meta&apos;s settings are saved.</p>}
      <dl className="details">
        <div>
          <dt>Provider</dt>
          <dd>{configured ? "Meta's WhatsApp Cloud API" : 'none'}</dd>
        </div>
        {configured && (
          <>
            <div>
              <dt>Phone number id</dt>
              <dd>{settings.phoneNumberId}</dd>
            </div>
            <div>
              <dt>WhatsApp Business Account id</dt>
              <dd>{settings.wabaId}</dd>
            </div>
          </>
        )}
        {(Object.keys(SECRETS) as Secret[]).map((secret) => (
          <div key={secret}>
            <dt>{SECRETS[secret]}</dt>
            <dd>{configured && config.credentials.includes(secret) ? 'set' : 'not set'}</dd>
          </div>
        ))}
        {config && (
          <div>
            <dt>Updated</dt>
            <dd>{dateTime(config.updatedAt)}</dd>
          </div>
        )}
      </dl>
      <p className="hint">
        Secrets are sealed at rest and never shown, here or by the API. Templates are read from the business account on the{' '}
        <Link to="/projects/$projectId/whatsapp-templates" params={{ projectId }}>
          WhatsApp templates
        </Link>{' '}
        tab.
      </p>
    </section>
  );
}

function Webhook({ config }: { config: ChannelConfig | undefined }) {
  const { webhookUrl } = metaSettings(config);
  return (
    <section className="card" aria-labelledby="whatsapp-webhook-title">
      <h3 id="whatsapp-webhook-title">Webhook in Meta&apos;s console</h3>
      {webhookUrl ? (
        <>
          <p>
            Meta reports deliveries, reads, failures and the messages people send (STOP and START included) to this callback URL. Without it, statuses never
            come back and the 24-hour service window never opens.
          </p>
          <dl className="details">
            <div>
              <dt>Callback URL</dt>
              <dd>
                <code>{webhookUrl}</code> <CopyButton text={webhookUrl} label="callback URL" />
              </dd>
            </div>
          </dl>
          <ol>
            <li>In your Meta app, open WhatsApp, then Configuration, and edit the webhook.</li>
            <li>Paste the callback URL above.</li>
            <li>
              Type the same verify token as in the form below. Herald never shows it again: if it is lost, save a new one here and type that one in
              Meta&apos;s console.
            </li>
            <li>Verify and save, then subscribe the webhook to the messages field.</li>
          </ol>
        </>
      ) : (
        <p>Save Meta&apos;s settings below: the callback URL to paste into Meta&apos;s console appears here.</p>
      )}
    </section>
  );
}

function SettingsForm({ projectId, config, saved, setSaved }: { projectId: string; config: ChannelConfig | undefined; saved: boolean; setSaved: (saved: boolean) => void }) {
  const { isAdmin } = useMembership();
  const queryClient = useQueryClient();
  const initial = metaSettings(config);
  const save = useMutation({
    mutationFn: (body: WhatsAppBody) => unwrap(api.PUT('/projects/{id}/channels/whatsapp', { params: { path: { id: projectId } }, body })),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: ['channels', projectId] });
      setSaved(true);
    },
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    setSaved(false);
    const form = new FormData(event.currentTarget);
    const text = (name: string) => String(form.get(name) ?? '').trim();
    // Secrets are not trimmed: one may end in a space.
    const secret = (name: Secret) => String(form.get(`credentials.${name}`) ?? '');
    save.mutate({
      provider: 'meta',
      settings: { phoneNumberId: text('settings.phoneNumberId'), wabaId: text('settings.wabaId') },
      credentials: { accessToken: secret('accessToken'), appSecret: secret('appSecret'), verifyToken: secret('verifyToken') },
    });
  };
  return (
    <form onSubmit={submit} className="card" aria-labelledby="whatsapp-form-title" noValidate>
      <h3 id="whatsapp-form-title">Meta Cloud API</h3>
      {!isAdmin && <p className="notice">Only an owner or admin can change the WhatsApp settings.</p>}
      <fieldset disabled={!isAdmin}>
        <legend>Phone number</legend>
        <Field
          label="Phone number id"
          field="settings.phoneNumberId"
          error={save.error}
          defaultValue={initial.phoneNumberId}
          inputMode="numeric"
          autoComplete="off"
          required
          hint="The business phone number's id in WhatsApp Manager or the app's API setup (not the number itself)."
        />
        <Field
          label="WhatsApp Business Account id"
          field="settings.wabaId"
          error={save.error}
          defaultValue={initial.wabaId}
          inputMode="numeric"
          autoComplete="off"
          required
          hint="The account whose message templates are synchronised."
        />
      </fieldset>
      <fieldset disabled={!isAdmin}>
        <legend>Secrets</legend>
        <p className="hint">Saving replaces the stored settings: enter all three secrets every time you save. They are write-only and never shown again.</p>
        <Field
          label="Access token"
          field="credentials.accessToken"
          error={save.error}
          type="password"
          autoComplete="new-password"
          required
          hint="A system user's token with whatsapp_business_messaging and whatsapp_business_management."
        />
        <Field
          label="App secret"
          field="credentials.appSecret"
          error={save.error}
          type="password"
          autoComplete="new-password"
          required
          hint="The Meta app's secret (App settings, Basic): Herald checks every callback's signature with it."
        />
        <Field
          label="Verify token"
          field="credentials.verifyToken"
          error={save.error}
          type="password"
          autoComplete="new-password"
          required
          hint="Any secret of your choosing, at least 8 characters: type the same one in Meta's webhook settings."
        />
      </fieldset>
      <FormError error={save.error} fields={FIELDS} />
      {saved && (
        <p role="status" className="success">
          WhatsApp settings saved.
        </p>
      )}
      {isAdmin && (
        <button type="submit" className="primary" disabled={save.isPending}>
          Save WhatsApp settings
        </button>
      )}
    </form>
  );
}
