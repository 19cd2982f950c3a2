// The transactional send log of a project (push, email, SMS, WhatsApp): every send with its recipient, outcome, reason in
// words and, for SMS and WhatsApp, what the provider said of its delivery; filtered and paged.
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useNavigate, useParams, useSearch } from '@tanstack/react-router';
import type { FormEvent } from 'react';
import { api, unwrap, type Query, type Schemas } from '../api/client';
import { Field, FilterActions, SelectField } from '../components/field';
import { dateTime, everyValue } from '../components/format';
import { Pagination } from '../components/pagination';
import { QueryState } from '../components/query-state';
import { reasonWords } from '../components/reasons';
import { PUSH_DELIVERED } from './campaign-channel';

type SendQuery = Query<'/transactional/sends/project/{projectId}', 'get'>;
export type SendFilters = Pick<SendQuery, 'channel' | 'reason' | 'delivered' | 'from' | 'to' | 'page'>;
type Send = Schemas['TransactionalSend'];

const CHANNELS = everyValue<NonNullable<SendQuery['channel']>>()('push', 'email', 'sms', 'whatsapp');

const REASONS = everyValue<NonNullable<Send['reason']>>()(
  'subscriber_not_found',
  'subscriber_unsubscribed',
  'subscriber_inactive',
  'recipient_bounced',
  'recipient_complained',
  'recipient_unsubscribed',
  'recipient_suppressed',
  'template_not_found',
  'template_variables_missing',
  'template_render_failed',
  'frequency_capped',
  'quiet_hours',
  'monthly_cap_reached',
  'sandbox_limit_reached',
  'provider_error',
  'provider_not_configured',
  'payload_too_large',
  'invalid_phone',
  'carrier_rejected',
  'unverified_sender_id',
  'template_not_approved',
  'outside_service_window',
  'recipient_opted_out',
  'sandbox',
);

/** How the request named its recipient: the address itself, else "external id …" or "push token …". */
const RECIPIENT_LABEL: Record<string, string> = { to: '', externalId: 'external id ', token: 'push token ' };
const recipientWords = ({ recipient }: Send) =>
  Object.entries(recipient)
    .map(([key, value]) => `${RECIPIENT_LABEL[key] ?? `${key} `}${value}`)
    .join(', ') || '(deleted subscriber)';

/** A reason in words, its code in brackets for whoever matches it with the API's answer. */
export const reasonCell = (reason: string) => `${capitalised(reasonWords(reason))} (${reason})`;
const capitalised = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

/** A push says whether it was delivered; an email, SMS or WhatsApp message, what became of it (sent is not delivered yet). */
const outcomeOf = ({ outcome }: Send) => ('status' in outcome ? outcome.status : outcome.delivered ? 'delivered' : 'not delivered');

/** A WhatsApp send says whether it was (or would have been) the free-form text or the template. */
const messageTypeOf = ({ outcome }: Send) => ('messageType' in outcome && outcome.messageType ? ` (${outcome.messageType})` : '');

/** An SMS's parts (what carriers bill) and encoding, beside its outcome. */
const partsOf = ({ outcome }: Send) => ('segments' in outcome ? ` · ${outcome.segments} ${outcome.segments === 1 ? 'segment' : 'segments'} (${outcome.encoding})` : '');

/** An SMS's or WhatsApp message's delivery as the provider last spoke of it: its code, and its words with a refusal. */
const providerOf = ({ delivery }: Send) => {
  if (!delivery?.providerCode) return '—';
  return delivery.providerError ? `${delivery.providerCode}: ${delivery.providerError}` : delivery.providerCode;
};

/** Search parameters (or the filter form) as the log's query; anything unknown is dropped. */
export function sendFiltersFromSearch(search: Record<string, unknown>): SendFilters {
  const filters: SendFilters = {};
  const channel = String(search.channel ?? search['query.channel'] ?? '');
  if ((CHANNELS as readonly string[]).includes(channel)) filters.channel = channel as SendFilters['channel'];
  const reason = String(search.reason ?? search['query.reason'] ?? '');
  if ((REASONS as readonly string[]).includes(reason)) filters.reason = reason as SendFilters['reason'];
  const delivered = String(search.delivered ?? search['query.delivered'] ?? '');
  if (delivered === 'true' || delivered === 'false') filters.delivered = delivered;
  for (const key of ['from', 'to'] as const) {
    const value = search[key] ?? search[`query.${key}`];
    if (typeof value === 'string' && value !== '') filters[key] = value;
  }
  const page = Number(search.page);
  if (Number.isInteger(page) && page > 1) filters.page = page;
  return filters;
}

export function TransactionalPage() {
  const { projectId } = useParams({ from: '/signed-in/projects/$projectId/transactional' });
  const filters = useSearch({ from: '/signed-in/projects/$projectId/transactional' });
  const navigate = useNavigate({ from: '/projects/$projectId/transactional' });
  const sends = useQuery({
    queryKey: ['transactional-sends', projectId, filters],
    queryFn: () => unwrap(api.GET('/transactional/sends/project/{projectId}', { params: { path: { projectId }, query: { ...filters, pageSize: 25 } } })),
    placeholderData: keepPreviousData,
    // A log: new sends arrive all the time.
    refetchInterval: 15_000,
  });
  const apply = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    void navigate({ search: sendFiltersFromSearch(Object.fromEntries(new FormData(event.currentTarget))) });
  };
  return (
    <section aria-labelledby="sends-title">
      <h2 id="sends-title">Transactional sends</h2>
      <form className="card filters" onSubmit={apply} aria-label="Filters" key={JSON.stringify(filters)}>
        <SelectField label="Channel" field="query.channel" error={sends.error} defaultValue={filters.channel ?? ''}>
          <option value="">any</option>
          {CHANNELS.map((channel) => (
            <option key={channel}>{channel}</option>
          ))}
        </SelectField>
        <SelectField label="Outcome" field="query.delivered" error={sends.error} defaultValue={filters.delivered ?? ''}>
          <option value="">any</option>
          <option value="true">went (push delivered, email or WhatsApp sent)</option>
          <option value="false">did not go</option>
        </SelectField>
        <SelectField label="Reason" field="query.reason" error={sends.error} defaultValue={filters.reason ?? ''}>
          <option value="">any</option>
          {REASONS.map((reason) => (
            <option key={reason} value={reason}>
              {reasonCell(reason)}
            </option>
          ))}
        </SelectField>
        <Field label="Sent from" field="query.from" error={sends.error} type="date" defaultValue={filters.from ?? ''} />
        <Field label="Sent before" field="query.to" error={sends.error} type="date" defaultValue={filters.to ?? ''} />
        <FilterActions onClear={() => void navigate({ search: {} })} />
      </form>
      <QueryState query={sends} isEmpty={(list) => list.total === 0} empty={<p>No transactional sends match.</p>}>
        {(list) => (
          <>
            <table>
              <caption className="visually-hidden">Transactional sends</caption>
              <thead>
                <tr>
                  <th scope="col">Sent</th>
                  <th scope="col">Recipient</th>
                  <th scope="col">Outcome</th>
                  <th scope="col">Reason</th>
                  <th scope="col">Channel</th>
                  <th scope="col">Provider</th>
                </tr>
              </thead>
              <tbody>
                {list.data.map((send) => (
                  <tr key={send.id}>
                    <td>{dateTime(send.createdAt)}</td>
                    <td>{recipientWords(send)}</td>
                    <td>
                      {outcomeOf(send)}
                      {messageTypeOf(send)}
                      {send.sandbox && outcomeOf(send) !== 'sandbox' ? ' (sandbox)' : ''}
                      {partsOf(send)}
                    </td>
                    <td>{send.reason ? reasonCell(send.reason) : '—'}</td>
                    <td>{send.channel}</td>
                    <td>{providerOf(send)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            {list.data.some((send) => send.channel === 'push') && (
              <p className="hint">
                A push's outcome here is what its push service answered (delivered: it took the push for the device). The device's own confirmation —{' '}
                {PUSH_DELIVERED} — shows on the person's timeline.
              </p>
            )}
            <Pagination page={list.page} pageSize={list.pageSize} total={list.total} onPage={(page) => void navigate({ search: { ...filters, page } })} />
          </>
        )}
      </QueryState>
    </section>
  );
}
