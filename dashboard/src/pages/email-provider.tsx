// A project's email provider: what is configured (credentials by name only) and the SMTP or Amazon SES form (OWNER/ADMIN).
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useParams } from '@tanstack/react-router';
import { useId, useState, type FormEvent } from 'react';
import { api, unwrap, type Body, type Schemas } from '../api/client';
import { useMembership } from '../auth/me';
import { Field, FormError, SelectField } from '../components/field';
import { dateTime, valueWords } from '../components/format';
import { termHelp, termLabel } from '../components/provider-terms';
import { QueryState } from '../components/query-state';

type ChannelConfig = Schemas['ChannelConfig'];
type EmailBody = Body<'/projects/{id}/channels/email', 'put'>;
type SmtpBody = Extract<EmailBody, { provider: 'smtp' }>;
type SesBody = Extract<EmailBody, { provider: 'ses' }>;
type Provider = EmailBody['provider'];
type SmtpTls = NonNullable<SmtpBody['settings']['tls']>;

const SMTP_FIELDS = ['settings.host', 'settings.port', 'settings.tls', 'settings.ratePerSecond', 'settings.sandbox', 'credentials.user', 'credentials.pass'];
// A refusal by SES names `credentials` as a whole: shown above the button, with SES's words.
const SES_FIELDS = ['settings.region', 'settings.configurationSet', 'settings.ratePerSecond', 'credentials.accessKeyId', 'credentials.secretAccessKey'];

/** The stored settings are an open record in the API; read the SMTP ones its form edits. */
function smtpSettings(config: ChannelConfig | undefined) {
  const settings = config?.provider === 'smtp' ? (config.settings as Partial<SmtpBody['settings']>) : {};
  // Settings saved before `tls` existed: `secure: true` was TLS from the first byte; otherwise the server requires TLS now.
  const tls: SmtpTls = settings.tls ?? (settings.secure === true ? 'implicit' : 'required');
  return { host: settings.host ?? '', port: settings.port ?? 587, tls, ratePerSecond: settings.ratePerSecond, sandbox: settings.sandbox ?? false };
}

/** The SES settings its form edits (the rest is what SES reported). */
function sesSettings(config: ChannelConfig | undefined) {
  const settings = config?.provider === 'ses' ? (config.settings as Partial<SesBody['settings']>) : {};
  return { region: settings.region ?? '', configurationSet: settings.configurationSet ?? '' };
}

export function EmailProviderPage() {
  const { projectId } = useParams({ from: '/signed-in/projects/$projectId/email-provider' });
  const channels = useQuery({
    queryKey: ['channels', projectId],
    queryFn: () => unwrap(api.GET('/projects/{id}/channels', { params: { path: { id: projectId } } })),
  });
  // Held here: a save changes updatedAt, which remounts the form empty of the password it sent.
  const [saved, setSaved] = useState(false);
  return (
    <section aria-labelledby="email-provider-title">
      <h2 id="email-provider-title">Email provider</h2>
      <QueryState query={channels}>
        {(list) => {
          const email = list.data.find((config) => config.channel === 'email');
          return (
            <>
              <Current config={email} />
              <ProviderForm key={email?.updatedAt ?? 'none'} projectId={projectId} config={email} saved={saved} setSaved={setSaved} />
            </>
          );
        }}
      </QueryState>
    </section>
  );
}

const TLS_WORDS: Record<string, string> = { required: 'always (STARTTLS)', opportunistic: 'when the server offers it (STARTTLS)', implicit: 'from the first byte (TLS)' };

/** A stored setting as read: yes / no, the encryption in words, anything else as it is. */
function settingWords(name: string, value: unknown): string {
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (name === 'tls' && typeof value === 'string') return TLS_WORDS[value] ?? value;
  return typeof value === 'string' || typeof value === 'number' ? String(value) : valueWords(value);
}

function Current({ config }: { config: ChannelConfig | undefined }) {
  const settings = Object.entries(config?.settings ?? {});
  return (
    <section className="card" aria-labelledby="email-current-title">
      <h3 id="email-current-title">Current configuration</h3>
      {(!config || config.provider === 'none') && <p>No email provider yet: live email deliveries fail with provider_not_configured until one is saved.</p>}
      {config?.settings.sandbox === true && (
        <p className="notice">
          The account is in its provider&apos;s sandbox: Herald sends at most 200 messages per 24 hours and 1 per second through it; what is over waits
          (sandbox_limit_reached). {config.provider === 'ses' && 'Save the provider again once SES grants production access.'}
        </p>
      )}
      <dl className="details">
        <div>
          <dt>Provider</dt>
          <dd>{config?.provider ?? 'none'}</dd>
        </div>
        {settings.map(([name, value]) => (
          <div key={name}>
            <dt>{termLabel(name)}</dt>
            <dd>{settingWords(name, value)}</dd>
          </div>
        ))}
        <div>
          <dt>Credentials set</dt>
          <dd>{config && config.credentials.length > 0 ? config.credentials.map(termLabel).join(', ') : 'none'}</dd>
        </div>
        {config && (
          <div>
            <dt>Updated</dt>
            <dd>{dateTime(config.updatedAt)}</dd>
          </div>
        )}
      </dl>
      <p className="hint">Credential values are sealed at rest and never shown, here or by the API.</p>
    </section>
  );
}

function ProviderForm({ projectId, config, saved, setSaved }: { projectId: string; config: ChannelConfig | undefined; saved: boolean; setSaved: (saved: boolean) => void }) {
  const { isAdmin } = useMembership();
  const queryClient = useQueryClient();
  const [provider, setProvider] = useState<Provider>(config?.provider === 'ses' ? 'ses' : 'smtp');
  const save = useMutation({
    mutationFn: (body: EmailBody) => unwrap(api.PUT('/projects/{id}/channels/email', { params: { path: { id: projectId } }, body })),
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
    const rate = text('settings.ratePerSecond') ? { ratePerSecond: Number(text('settings.ratePerSecond')) } : {};
    if (provider === 'ses') {
      const configurationSet = text('settings.configurationSet');
      save.mutate({
        provider: 'ses',
        settings: { region: text('settings.region'), ...(configurationSet ? { configurationSet } : {}), ...rate },
        credentials: { accessKeyId: text('credentials.accessKeyId'), secretAccessKey: String(form.get('credentials.secretAccessKey') ?? '') },
      });
      return;
    }
    const settings: SmtpBody['settings'] = { host: text('settings.host'), port: Number(text('settings.port')), tls: text('settings.tls') as SmtpTls, ...rate };
    if (form.get('settings.sandbox') === 'on') settings.sandbox = true;
    const user = text('credentials.user');
    // Not trimmed: a password may end in a space.
    const pass = String(form.get('credentials.pass') ?? '');
    save.mutate({ provider: 'smtp', settings, ...(user || pass ? { credentials: { user, pass } } : {}) });
  };
  return (
    <form onSubmit={submit} className="card" aria-labelledby="provider-title" noValidate>
      <h3 id="provider-title">{provider === 'ses' ? 'Amazon SES' : 'SMTP server'}</h3>
      {!isAdmin && <p className="notice">Only an owner or admin can change the email provider.</p>}
      <fieldset disabled={!isAdmin}>
        <legend>Provider</legend>
        <div className="check">
          <input id="provider-smtp" type="radio" name="provider" checked={provider === 'smtp'} onChange={() => setProvider('smtp')} />
          <label htmlFor="provider-smtp">SMTP server</label>
        </div>
        <div className="check">
          <input id="provider-ses" type="radio" name="provider" checked={provider === 'ses'} onChange={() => setProvider('ses')} />
          <label htmlFor="provider-ses">Amazon SES</label>
        </div>
      </fieldset>
      {provider === 'ses' ? <SesFields config={config} error={save.error} /> : <SmtpFields config={config} error={save.error} />}
      <FormError error={save.error} fields={provider === 'ses' ? SES_FIELDS : SMTP_FIELDS} />
      {saved && (
        <p role="status" className="success">
          Email provider saved.
        </p>
      )}
      {isAdmin && (
        <button type="submit" className="primary" disabled={save.isPending}>
          Save email provider
        </button>
      )}
    </form>
  );
}

function RateField({ error, value, hint }: { error: unknown; value: number | undefined; hint: string }) {
  return <Field label="Sends per second (optional)" field="settings.ratePerSecond" error={error} type="number" step="any" defaultValue={value} hint={hint} />;
}

function SmtpFields({ config, error }: { config: ChannelConfig | undefined; error: unknown }) {
  const { isAdmin } = useMembership();
  const sandboxId = useId();
  const initial = smtpSettings(config);
  return (
    <>
      <fieldset disabled={!isAdmin}>
        <legend>Server</legend>
        <Field label="Host" field="settings.host" error={error} defaultValue={initial.host} required placeholder="smtp.example.com" hint={termHelp('host')} />
        <Field label="Port" field="settings.port" error={error} type="number" defaultValue={initial.port} required hint="Usually 587 (STARTTLS) or 465 (TLS)." />
        <SelectField
          label="Encryption"
          field="settings.tls"
          error={error}
          defaultValue={initial.tls}
          hint="Unencrypted mail can be read and changed by anyone on the network between Herald and the server."
        >
          <option value="required">Always encrypt (STARTTLS): no email goes out if the server cannot encrypt — recommended</option>
          <option value="opportunistic">Encrypt when the server offers it (STARTTLS), otherwise send unencrypted</option>
          <option value="implicit">Encrypted from the first byte (TLS, usually port 465)</option>
        </SelectField>
        <RateField error={error} value={initial.ratePerSecond} hint="The account's documented rate, if it has one; sends over it wait in the queue." />
        <div className="check">
          <input id={sandboxId} name="settings.sandbox" type="checkbox" defaultChecked={initial.sandbox} />
          <label htmlFor={sandboxId}>The account is in its provider&apos;s sandbox (200 messages per 24 hours, 1 per second)</label>
        </div>
      </fieldset>
      <fieldset disabled={!isAdmin}>
        <legend>Account</legend>
        <p className="hint">
          Saving replaces the stored account: enter the user and password every time you save. Leave both empty for a relay that takes mail without logging
          in (any stored account is then removed).
        </p>
        <Field label="User" field="credentials.user" error={error} autoComplete="off" hint={termHelp('user')} />
        <Field label="Password" field="credentials.pass" error={error} type="password" autoComplete="new-password" hint={`Write-only: never shown again. ${termHelp('pass')}`} />
      </fieldset>
    </>
  );
}

function SesFields({ config, error }: { config: ChannelConfig | undefined; error: unknown }) {
  const { isAdmin } = useMembership();
  const initial = sesSettings(config);
  return (
    <>
      <fieldset disabled={!isAdmin}>
        <legend>Account</legend>
        <p className="hint">
          Herald reads the account with these keys before saving (its sandbox state, send rate and daily quota) and signs every message with your sending
          domain&apos;s DKIM key. The keys need ses:SendEmail, ses:SendRawEmail and ses:GetAccount.
        </p>
        <Field label="Region" field="settings.region" error={error} defaultValue={initial.region} required placeholder="eu-west-1" hint={termHelp('region')} />
        <Field label="Access key id" field="credentials.accessKeyId" error={error} autoComplete="off" required hint={termHelp('accessKeyId')} />
        <Field label="Secret access key" field="credentials.secretAccessKey" error={error} type="password" autoComplete="new-password" required hint={`Write-only: never shown again; enter it every time you save. ${termHelp('secretAccessKey')}`} />
      </fieldset>
      <fieldset disabled={!isAdmin}>
        <legend>Sending</legend>
        <Field
          label="Configuration set (optional)"
          field="settings.configurationSet"
          error={error}
          defaultValue={initial.configurationSet}
          hint={termHelp('configurationSet')}
        />
        <RateField error={error} value={undefined} hint="Below the account's maximum send rate, if you want one; SES's own maximum is used otherwise." />
      </fieldset>
    </>
  );
}
