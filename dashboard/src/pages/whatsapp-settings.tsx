// A project's WhatsApp settings: its provider — Meta's Cloud API or a Twilio WhatsApp sender — (secrets write-only,
// OWNER/ADMIN) and the webhook to set up in the provider's console.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useParams } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { api, unwrap, type Body, type Schemas } from '../api/client';
import { useMembership } from '../auth/me';
import { CopyButton } from '../components/copy-button';
import { Field, FormError } from '../components/field';
import { dateTime } from '../components/format';
import { termHelp } from '../components/provider-terms';
import { QueryState } from '../components/query-state';

type ChannelConfig = Schemas['ChannelConfig'];
type WhatsAppBody = Body<'/projects/{id}/channels/whatsapp', 'put'>;
type Provider = WhatsAppBody['provider'];
type MetaBody = Extract<WhatsAppBody, { provider: 'meta' }>;
type TwilioBody = Extract<WhatsAppBody, { provider: 'twilio' }>;

const PROVIDER_NAME: Record<Provider, string> = { meta: "Meta's WhatsApp Cloud API", twilio: 'Twilio WhatsApp sender' };
const FORM_TITLE: Record<Provider, string> = { meta: 'Meta Cloud API', twilio: 'Twilio WhatsApp sender' };

const FIELDS: Record<Provider, string[]> = {
  meta: ['settings.phoneNumberId', 'settings.wabaId', 'credentials.accessToken', 'credentials.appSecret', 'credentials.verifyToken'],
  twilio: ['settings.accountSid', 'settings.from', 'settings.messagingServiceSid', 'credentials.authToken', 'credentials.apiKeySid', 'credentials.apiKeySecret'],
};

/** Each provider's secrets, shown only as set or not set. */
const SECRETS: Record<Provider, Record<string, string>> = {
  meta: { accessToken: 'Access token', appSecret: 'App secret', verifyToken: 'Verify token' },
  twilio: { authToken: 'Auth token', apiKeySid: 'API key SID', apiKeySecret: 'API key secret' },
};

const isProvider = (provider: string | undefined): provider is Provider => provider === 'meta' || provider === 'twilio';

/** The stored settings are an open record in the API; read the ones its provider has. */
function storedSettings(config: ChannelConfig | undefined) {
  const settings = config?.settings ?? {};
  const text = (name: string) => (typeof settings[name] === 'string' ? (settings[name] as string) : '');
  return {
    phoneNumberId: text('phoneNumberId'),
    wabaId: text('wabaId'),
    displayPhoneNumber: text('displayPhoneNumber'),
    verifiedName: text('verifiedName'),
    webhookUrl: text('webhookUrl'),
    accountSid: text('accountSid'),
    from: text('from'),
    messagingServiceSid: text('messagingServiceSid'),
    inboundUrl: text('inboundUrl'),
  };
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
  const provider = isProvider(config?.provider) ? config.provider : undefined;
  const settings = storedSettings(config);
  const rows: [string, string][] = [['Provider', provider ? PROVIDER_NAME[provider] : 'none']];
  if (provider === 'meta') {
    rows.push(['Phone number id', settings.phoneNumberId]);
    if (settings.displayPhoneNumber) rows.push(['Phone number', settings.verifiedName ? `${settings.displayPhoneNumber} (${settings.verifiedName})` : settings.displayPhoneNumber]);
    rows.push(['WhatsApp Business Account id', settings.wabaId]);
  }
  if (provider === 'twilio') {
    rows.push(['Account SID', settings.accountSid]);
    rows.push(['Sender', settings.from || `Messaging Service ${settings.messagingServiceSid}`]);
  }
  if (provider) for (const [secret, label] of Object.entries(SECRETS[provider])) rows.push([label, config!.credentials.includes(secret) ? 'set' : 'not set']);
  if (config) rows.push(['Updated', dateTime(config.updatedAt)]);
  return (
    <section className="card" aria-labelledby="whatsapp-current-title">
      <h3 id="whatsapp-current-title">Current configuration</h3>
      {!provider && <p>No WhatsApp provider yet: live WhatsApp sends fail with provider_not_configured until a provider&apos;s settings are saved.</p>}
      <dl className="details">
        {rows.map(([term, value]) => (
          <div key={term}>
            <dt>{term}</dt>
            <dd>{value}</dd>
          </div>
        ))}
      </dl>
      <p className="hint">
        Secrets are sealed at rest and never shown, here or by the API. Templates are on the{' '}
        <Link to="/projects/$projectId/whatsapp-templates" params={{ projectId }}>
          WhatsApp templates
        </Link>{' '}
        tab: read from Meta&apos;s business account, or written by hand with their Twilio Content SID.
      </p>
    </section>
  );
}

function Webhook({ config }: { config: ChannelConfig | undefined }) {
  const { webhookUrl, inboundUrl } = storedSettings(config);
  if (config?.provider === 'twilio' && inboundUrl) {
    return (
      <section className="card" aria-labelledby="whatsapp-webhook-title">
        <h3 id="whatsapp-webhook-title">Webhook in Twilio&apos;s console</h3>
        <p>
          Twilio posts the messages people send the WhatsApp sender (STOP and START included) to this URL. Without it the 24-hour service window never
          opens. Delivery and read statuses need no setting: each message names its own status callback.
        </p>
        <dl className="details">
          <div>
            <dt>Incoming message URL</dt>
            <dd>
              <code>{inboundUrl}</code> <CopyButton text={inboundUrl} label="incoming message URL" />
            </dd>
          </div>
        </dl>
        <ol>
          <li>In Twilio&apos;s console, open Messaging, then Senders, then WhatsApp senders, and edit the sender.</li>
          <li>Paste the URL above as the webhook for incoming messages (HTTP POST), and save.</li>
        </ol>
      </section>
    );
  }
  return (
    <section className="card" aria-labelledby="whatsapp-webhook-title">
      <h3 id="whatsapp-webhook-title">Webhook in Meta&apos;s console</h3>
      {config?.provider === 'meta' && webhookUrl ? (
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
        <p>Save a provider&apos;s settings below: the URL to paste into its console appears here.</p>
      )}
    </section>
  );
}

function SettingsForm({ projectId, config, saved, setSaved }: { projectId: string; config: ChannelConfig | undefined; saved: boolean; setSaved: (saved: boolean) => void }) {
  const { isAdmin } = useMembership();
  const queryClient = useQueryClient();
  const [provider, setProvider] = useState<Provider>(config?.provider === 'twilio' ? 'twilio' : 'meta');
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
    const secret = (name: string) => String(form.get(`credentials.${name}`) ?? '');
    if (provider === 'meta') {
      const body: MetaBody = {
        provider: 'meta',
        settings: { phoneNumberId: text('settings.phoneNumberId'), wabaId: text('settings.wabaId') },
        credentials: { accessToken: secret('accessToken'), appSecret: secret('appSecret'), verifyToken: secret('verifyToken') },
      };
      save.mutate(body);
      return;
    }
    const settings: TwilioBody['settings'] = { accountSid: text('settings.accountSid') };
    if (text('settings.from')) settings.from = text('settings.from');
    if (text('settings.messagingServiceSid')) settings.messagingServiceSid = text('settings.messagingServiceSid');
    const credentials: TwilioBody['credentials'] = { authToken: text('credentials.authToken') };
    if (text('credentials.apiKeySid')) credentials.apiKeySid = text('credentials.apiKeySid');
    if (secret('apiKeySecret')) credentials.apiKeySecret = secret('apiKeySecret');
    save.mutate({ provider: 'twilio', settings, credentials });
  };
  return (
    <form onSubmit={submit} className="card" aria-labelledby="whatsapp-form-title" noValidate>
      <h3 id="whatsapp-form-title">{FORM_TITLE[provider]}</h3>
      {!isAdmin && <p className="notice">Only an owner or admin can change the WhatsApp settings.</p>}
      <fieldset disabled={!isAdmin}>
        <legend>Provider</legend>
        {(['meta', 'twilio'] as const).map((choice) => (
          <div className="check" key={choice}>
            <input id={`whatsapp-provider-${choice}`} type="radio" name="provider" checked={provider === choice} onChange={() => setProvider(choice)} />
            <label htmlFor={`whatsapp-provider-${choice}`}>{PROVIDER_NAME[choice]}</label>
          </div>
        ))}
      </fieldset>
      {provider === 'meta' ? <MetaFields config={config} error={save.error} /> : <TwilioFields config={config} error={save.error} />}
      <p className="hint">Herald asks {provider === 'meta' ? 'Meta' : 'Twilio'} before saving: what it refuses is shown beside the field, and nothing is saved.</p>
      <FormError error={save.error} fields={FIELDS[provider]} />
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

function MetaFields({ config, error }: { config: ChannelConfig | undefined; error: unknown }) {
  const { isAdmin } = useMembership();
  const initial = config?.provider === 'meta' ? storedSettings(config) : storedSettings(undefined);
  return (
    <>
      <fieldset disabled={!isAdmin}>
        <legend>Phone number</legend>
        <Field
          label="Phone number id"
          field="settings.phoneNumberId"
          error={error}
          defaultValue={initial.phoneNumberId}
          inputMode="numeric"
          autoComplete="off"
          required
          hint={termHelp('phoneNumberId')}
        />
        <Field
          label="WhatsApp Business Account id"
          field="settings.wabaId"
          error={error}
          defaultValue={initial.wabaId}
          inputMode="numeric"
          autoComplete="off"
          required
          hint={termHelp('wabaId')}
        />
      </fieldset>
      <fieldset disabled={!isAdmin}>
        <legend>Secrets</legend>
        <p className="hint">Saving replaces the stored settings: enter all three secrets every time you save. They are write-only and never shown again.</p>
        <Field
          label="Access token"
          field="credentials.accessToken"
          error={error}
          type="password"
          autoComplete="new-password"
          required
          hint={termHelp('accessToken')}
        />
        <Field
          label="App secret"
          field="credentials.appSecret"
          error={error}
          type="password"
          autoComplete="new-password"
          required
          hint={termHelp('appSecret')}
        />
        <Field
          label="Verify token"
          field="credentials.verifyToken"
          error={error}
          type="password"
          autoComplete="new-password"
          required
          hint={termHelp('verifyToken')}
        />
      </fieldset>
    </>
  );
}

function TwilioFields({ config, error }: { config: ChannelConfig | undefined; error: unknown }) {
  const { isAdmin } = useMembership();
  const initial = config?.provider === 'twilio' ? storedSettings(config) : storedSettings(undefined);
  return (
    <>
      <fieldset disabled={!isAdmin}>
        <legend>Account</legend>
        <p className="hint">Saving replaces the stored settings: enter the auth token (and the API key, if you send with one) every time you save.</p>
        <Field label="Account SID" field="settings.accountSid" error={error} defaultValue={initial.accountSid} required autoComplete="off" placeholder="AC…" hint={termHelp('accountSid')} />
        <Field
          label="Auth token"
          field="credentials.authToken"
          error={error}
          type="password"
          required
          autoComplete="new-password"
          hint={`Write-only: never shown again. ${termHelp('authToken')}`}
        />
        <Field label="API key SID (optional)" field="credentials.apiKeySid" error={error} autoComplete="off" placeholder="SK…" hint={termHelp('apiKeySid')} />
        <Field label="API key secret (optional)" field="credentials.apiKeySecret" error={error} type="password" autoComplete="new-password" hint={`Write-only; sends log in with the API key when one is given. ${termHelp('apiKeySecret')}`} />
      </fieldset>
      <fieldset disabled={!isAdmin}>
        <legend>Sender</legend>
        <p className="hint">The WhatsApp sender&apos;s number, or the Messaging Service whose sender pool holds it: one of the two.</p>
        <Field
          label="Sender number"
          field="settings.from"
          error={error}
          defaultValue={initial.from}
          autoComplete="off"
          inputMode="tel"
          placeholder="+14155238886"
          hint={termHelp('from')}
        />
        <Field label="Messaging Service SID" field="settings.messagingServiceSid" error={error} defaultValue={initial.messagingServiceSid} autoComplete="off" placeholder="MG…" hint={termHelp('messagingServiceSid')} />
      </fieldset>
    </>
  );
}
