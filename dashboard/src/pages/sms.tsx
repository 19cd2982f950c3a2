// A project's SMS: the Twilio account (secrets write-only) and its callback URLs, senders per country, the opt-out list.
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useParams } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { api, unwrap, type Body, type Schemas } from '../api/client';
import { useMembership } from '../auth/me';
import { Confirm } from '../components/confirm';
import { CopyButton } from '../components/copy-button';
import { Field, FormError, SelectField } from '../components/field';
import { dateTime, everyValue } from '../components/format';
import { Pagination } from '../components/pagination';
import { QueryState } from '../components/query-state';
import { reasonWords } from '../components/reasons';
import { termHelp, termLabel } from '../components/provider-terms';

type ChannelConfig = Schemas['ChannelConfig'];
type TwilioBody = Body<'/projects/{id}/channels/sms', 'put'>;
type SenderBody = Body<'/projects/{id}/channels/sms/senders', 'post'>;
type Kind = SenderBody['kind'];

const TWILIO_FIELDS = [
  'settings.accountSid',
  'settings.messagingServiceSid',
  'settings.messagingServiceRatePerSecond',
  'settings.helpReply',
  'credentials.authToken',
  'credentials.apiKeySid',
  'credentials.apiKeySecret',
];
const SENDER_FIELDS = ['country', 'kind', 'sender', 'ratePerSecond'];
const KINDS = everyValue<Kind>()('long_code', 'toll_free', 'short_code', 'alphanumeric');
const KIND_LABEL: Record<Kind, string> = {
  long_code: 'Long code (a phone number)',
  toll_free: 'Toll-free number',
  short_code: 'Short code',
  alphanumeric: 'Alphanumeric sender id (one-way)',
};
// ISO 3166-1 alpha-2; the browser names them.
const COUNTRY_CODES = (
  'AD AE AF AG AI AL AM AO AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BW BY BZ CA CD CF CG CH ' +
  'CI CK CL CM CN CO CR CU CV CW CY CZ DE DJ DK DM DO DZ EC EE EG ER ES ET FI FJ FK FM FO FR GA GB GD GE GF GG GH GI GL GM GN ' +
  'GP GQ GR GT GU GW GY HK HN HR HT HU ID IE IL IM IN IQ IR IS IT JE JM JO JP KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK ' +
  'LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ ' +
  'OM PA PE PF PG PH PK PL PM PR PS PT PW PY QA RE RO RS RU RW SA SB SC SD SE SG SH SI SK SL SM SN SO SR SS ST SV SX SY SZ TC ' +
  'TD TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS XK YE YT ZA ZM ZW'
).split(' ');
const regionNames = new Intl.DisplayNames(['en'], { type: 'region' });
const countryName = (code: string) => regionNames.of(code) ?? code;
const COUNTRIES = COUNTRY_CODES.map((code) => ({ code, name: countryName(code) })).sort((a, b) => a.name.localeCompare(b.name));

/** The Twilio settings its form edits (the callback URLs are the server's). */
function twilioSettings(config: ChannelConfig | undefined) {
  const settings = config?.provider === 'twilio' ? (config.settings as Partial<TwilioBody['settings']>) : {};
  return {
    accountSid: settings.accountSid ?? '',
    messagingServiceSid: settings.messagingServiceSid ?? '',
    messagingServiceRatePerSecond: settings.messagingServiceRatePerSecond,
    helpReply: settings.helpReply ?? '',
  };
}

export function SmsPage() {
  const { projectId } = useParams({ from: '/signed-in/projects/$projectId/sms' });
  const channels = useQuery({
    queryKey: ['channels', projectId],
    queryFn: () => unwrap(api.GET('/projects/{id}/channels', { params: { path: { id: projectId } } })),
  });
  // Held here: a save changes updatedAt, which remounts the form empty of the secrets it sent.
  const [saved, setSaved] = useState(false);
  return (
    <section aria-labelledby="sms-title">
      <h2 id="sms-title">SMS</h2>
      <QueryState query={channels}>
        {(list) => {
          const sms = list.data.find((config) => config.channel === 'sms');
          return (
            <>
              <Current config={sms} />
              <TwilioForm key={sms?.updatedAt ?? 'none'} projectId={projectId} config={sms} saved={saved} setSaved={setSaved} />
            </>
          );
        }}
      </QueryState>
      <Senders projectId={projectId} />
      <OptOuts projectId={projectId} />
    </section>
  );
}

function Current({ config }: { config: ChannelConfig | undefined }) {
  const settings = config?.provider === 'twilio' ? config.settings : {};
  const shown = (['accountSid', 'messagingServiceSid', 'messagingServiceRatePerSecond', 'helpReply'] as const).filter((name) => settings[name] !== undefined);
  const inboundUrl = typeof settings.inboundUrl === 'string' ? settings.inboundUrl : undefined;
  const statusCallbackUrl = typeof settings.statusCallbackUrl === 'string' ? settings.statusCallbackUrl : undefined;
  const credentials = config?.provider === 'twilio' ? config.credentials : [];
  return (
    <section className="card" aria-labelledby="sms-current-title">
      <h3 id="sms-current-title">Current configuration</h3>
      {config?.provider !== 'twilio' && <p>No SMS provider yet: live SMS fail with provider_not_configured until a Twilio account is saved.</p>}
      <dl className="details">
        <div>
          <dt>Provider</dt>
          <dd>{config?.provider ?? 'none'}</dd>
        </div>
        {shown.map((name) => (
          <div key={name}>
            <dt>{termLabel(name)}</dt>
            <dd>{String(settings[name])}</dd>
          </div>
        ))}
        {(['authToken', 'apiKeySid', 'apiKeySecret'] as const).map((name) => (
          <div key={name}>
            <dt>{termLabel(name)}</dt>
            <dd>{credentials.includes(name) ? 'set' : 'not set'}</dd>
          </div>
        ))}
        {config && (
          <div>
            <dt>Updated</dt>
            <dd>{dateTime(config.updatedAt)}</dd>
          </div>
        )}
      </dl>
      <p className="hint">Credential values are sealed at rest and never shown, here or by the API.</p>
      {inboundUrl && statusCallbackUrl && (
        <>
          <h4>Webhooks</h4>
          <dl className="details">
            <div>
              <dt>Incoming messages</dt>
              <dd>
                <code>{inboundUrl}</code> <CopyButton text={inboundUrl} label="incoming message webhook URL" />
                <span className="hint"> Paste into the numbers&apos; (or the Messaging Service&apos;s) &quot;A message comes in&quot; webhook, HTTP POST: STOP opts a number out, START back in.</span>
              </dd>
            </div>
            <div>
              <dt>Status callback</dt>
              <dd>
                <code>{statusCallbackUrl}</code> <CopyButton text={statusCallbackUrl} label="status callback URL" />
                <span className="hint"> Named in every message Herald sends: nothing to set, unless the Messaging Service asks for one.</span>
              </dd>
            </div>
          </dl>
        </>
      )}
    </section>
  );
}

function TwilioForm({ projectId, config, saved, setSaved }: { projectId: string; config: ChannelConfig | undefined; saved: boolean; setSaved: (saved: boolean) => void }) {
  const { isAdmin } = useMembership();
  const queryClient = useQueryClient();
  const initial = twilioSettings(config);
  const save = useMutation({
    mutationFn: (body: TwilioBody) => unwrap(api.PUT('/projects/{id}/channels/sms', { params: { path: { id: projectId } }, body })),
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
    const settings: TwilioBody['settings'] = { accountSid: text('settings.accountSid') };
    if (text('settings.messagingServiceSid')) settings.messagingServiceSid = text('settings.messagingServiceSid');
    if (text('settings.messagingServiceRatePerSecond')) settings.messagingServiceRatePerSecond = Number(text('settings.messagingServiceRatePerSecond'));
    if (text('settings.helpReply')) settings.helpReply = text('settings.helpReply');
    const credentials: TwilioBody['credentials'] = { authToken: text('credentials.authToken') };
    if (text('credentials.apiKeySid')) credentials.apiKeySid = text('credentials.apiKeySid');
    // Not trimmed: a secret is taken as typed.
    const apiKeySecret = String(form.get('credentials.apiKeySecret') ?? '');
    if (apiKeySecret) credentials.apiKeySecret = apiKeySecret;
    save.mutate({ provider: 'twilio', settings, credentials });
  };
  return (
    <form onSubmit={submit} className="card" aria-labelledby="twilio-title" noValidate>
      <h3 id="twilio-title">Twilio account</h3>
      {!isAdmin && <p className="notice">Only an owner or admin can change the SMS provider.</p>}
      <fieldset disabled={!isAdmin}>
        <legend>Account</legend>
        <p className="hint">Saving replaces the stored account: enter the auth token (and the API key, if you send with one) every time you save.</p>
        <Field label="Account SID" field="settings.accountSid" error={save.error} defaultValue={initial.accountSid} required autoComplete="off" placeholder="AC…" hint={termHelp('accountSid')} />
        <Field
          label="Auth token"
          field="credentials.authToken"
          error={save.error}
          type="password"
          required
          autoComplete="new-password"
          hint={`Write-only: never shown again. ${termHelp('authToken')}`}
        />
        <Field label="API key SID (optional)" field="credentials.apiKeySid" error={save.error} autoComplete="off" placeholder="SK…" hint={termHelp('apiKeySid')} />
        <Field label="API key secret (optional)" field="credentials.apiKeySecret" error={save.error} type="password" autoComplete="new-password" hint={`Write-only; sends log in with the API key when one is given. ${termHelp('apiKeySecret')}`} />
      </fieldset>
      <fieldset disabled={!isAdmin}>
        <legend>Sending</legend>
        <Field
          label="Messaging Service SID (optional)"
          field="settings.messagingServiceSid"
          error={save.error}
          defaultValue={initial.messagingServiceSid}
          autoComplete="off"
          placeholder="MG…"
          hint={`${termHelp('messagingServiceSid')} Sends to a country with no sender below go through it.`}
        />
        <Field
          label="Messaging Service sends per second (optional)"
          field="settings.messagingServiceRatePerSecond"
          error={save.error}
          type="number"
          defaultValue={initial.messagingServiceRatePerSecond}
          hint="Default 1 (one long code)."
        />
        <Field label="HELP reply (optional)" field="settings.helpReply" error={save.error} defaultValue={initial.helpReply} hint="Herald's answer to an inbound HELP; empty: none." />
      </fieldset>
      <FormError error={save.error} fields={TWILIO_FIELDS} />
      {saved && (
        <p role="status" className="success">
          SMS provider saved.
        </p>
      )}
      {isAdmin && (
        <button type="submit" className="primary" disabled={save.isPending}>
          Save SMS provider
        </button>
      )}
    </form>
  );
}

function Senders({ projectId }: { projectId: string }) {
  const { isAdmin } = useMembership();
  const queryClient = useQueryClient();
  const senders = useQuery({
    queryKey: ['sms-senders', projectId],
    queryFn: () => unwrap(api.GET('/projects/{id}/channels/sms/senders', { params: { path: { id: projectId } } })),
  });
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['sms-senders', projectId] });
  const remove = (senderId: string) =>
    unwrap(api.DELETE('/projects/{id}/channels/sms/senders/{senderId}', { params: { path: { id: projectId, senderId } } })).finally(refresh);
  return (
    <section className="card" aria-labelledby="sms-senders-title">
      <h3 id="sms-senders-title">Senders per country</h3>
      <p className="hint">
        An SMS goes from the sender provisioned for its recipient&apos;s country: a short code first, then toll-free, then a long code (or a named
        alphanumeric id, where carriers show them), else the Messaging Service.
      </p>
      <QueryState query={senders} isEmpty={(list) => list.data.length === 0} empty={<p>No senders yet.</p>}>
        {(list) => (
          <table>
            <caption className="visually-hidden">SMS senders</caption>
            <thead>
              <tr>
                <th scope="col">Country</th>
                <th scope="col">Kind</th>
                <th scope="col">Sender</th>
                <th scope="col">Sends per second</th>
                {isAdmin && <th scope="col">Actions</th>}
              </tr>
            </thead>
            <tbody>
              {list.data.map((sender) => (
                <tr key={sender.id}>
                  <td>
                    {countryName(sender.country)} ({sender.country})
                  </td>
                  <td>{KIND_LABEL[sender.kind]}</td>
                  <td>
                    <code>{sender.sender}</code>
                  </td>
                  <td>{sender.ratePerSecond}</td>
                  {isAdmin && (
                    <td>
                      <Confirm
                        trigger="Delete"
                        label={`Delete sender ${sender.sender} for ${sender.country}`}
                        title={`Delete ${sender.sender} for ${countryName(sender.country)}?`}
                        description="SMS to this country then go from its other senders, else the Messaging Service; with neither they are refused unverified_sender_id."
                        confirm="Delete sender"
                        onConfirm={() => remove(sender.id)}
                      />
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </QueryState>
      {isAdmin && <AddSender projectId={projectId} onAdded={refresh} />}
    </section>
  );
}

function AddSender({ projectId, onAdded }: { projectId: string; onAdded: () => Promise<void> }) {
  const [added, setAdded] = useState<string>();
  const add = useMutation({
    mutationFn: (body: SenderBody) => unwrap(api.POST('/projects/{id}/channels/sms/senders', { params: { path: { id: projectId } }, body })),
    onSuccess: async (sender) => {
      await onAdded();
      setAdded(`${sender.sender} added for ${countryName(sender.country)}.`);
    },
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    setAdded(undefined);
    const formElement = event.currentTarget;
    const form = new FormData(formElement);
    const text = (name: string) => String(form.get(name) ?? '').trim();
    const body: SenderBody = { country: text('country'), kind: text('kind') as Kind, sender: text('sender') };
    if (text('ratePerSecond')) body.ratePerSecond = Number(text('ratePerSecond'));
    add.mutate(body, { onSuccess: () => formElement.reset() });
  };
  return (
    <form onSubmit={submit} aria-labelledby="add-sender-title" noValidate>
      <h4 id="add-sender-title">Add a sender</h4>
      <div className="filters">
        <SelectField label="Country" field="country" error={add.error} defaultValue="" required>
          <option value="">Choose a country</option>
          {COUNTRIES.map((country) => (
            <option key={country.code} value={country.code}>
              {country.name} ({country.code})
            </option>
          ))}
        </SelectField>
        <SelectField label="Kind" field="kind" error={add.error} defaultValue="long_code">
          {KINDS.map((kind) => (
            <option key={kind} value={kind}>
              {KIND_LABEL[kind]}
            </option>
          ))}
        </SelectField>
        <Field label="Sender" field="sender" error={add.error} required autoComplete="off" hint="+14155550123, 12345 or Acme" />
        <Field label="Sends per second (optional)" field="ratePerSecond" error={add.error} type="number" hint="Default: the kind's usual rate." />
      </div>
      <FormError error={add.error} fields={SENDER_FIELDS} />
      {added && (
        <p role="status" className="success">
          {added}
        </p>
      )}
      <button type="submit" className="primary" disabled={add.isPending}>
        Add sender
      </button>
    </form>
  );
}

function OptOuts({ projectId }: { projectId: string }) {
  const [page, setPage] = useState(1);
  const optOuts = useQuery({
    queryKey: ['sms-opt-outs', projectId, page],
    queryFn: () => unwrap(api.GET('/projects/{id}/channels/sms/opt-outs', { params: { path: { id: projectId }, query: { page, pageSize: 25 } } })),
    placeholderData: keepPreviousData,
  });
  return (
    <section className="card" aria-labelledby="sms-opt-outs-title">
      <h3 id="sms-opt-outs-title">Opted-out numbers</h3>
      <p className="hint">No SMS goes to these numbers (sends answer recipient_opted_out). A START, UNSTOP or YES from the number takes it off the list.</p>
      <QueryState query={optOuts} isEmpty={(list) => list.total === 0} empty={<p>No number has opted out.</p>}>
        {(list) => (
          <>
            <table>
              <caption className="visually-hidden">Opted-out numbers</caption>
              <thead>
                <tr>
                  <th scope="col">Number</th>
                  <th scope="col">Reason</th>
                  <th scope="col">Source</th>
                  <th scope="col">Since</th>
                </tr>
              </thead>
              <tbody>
                {list.data.map((optOut) => (
                  <tr key={optOut.number}>
                    <td>{optOut.number}</td>
                    <td>{optOut.reason === null ? '—' : reasonWords(optOut.reason)}</td>
                    <td>{optOut.source ?? '—'}</td>
                    <td>{dateTime(optOut.optedOutAt)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            <Pagination label="Opted-out numbers pages" page={list.page} pageSize={list.pageSize} total={list.total} onPage={setPage} />
          </>
        )}
      </QueryState>
    </section>
  );
}
