// An email campaign's page: its live counters and rates over the event stream (spec 6.3), its events over time as a
// chart and its top clicked links (spec 2.3), content with a preview rendered for a chosen subscriber, audience and
// schedule, a test send, and send (a draft), edit (a draft), pause, resume, cancel, archive, duplicate and re-send.
// Loaded on demand: it brings Chart.js.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate, useParams } from '@tanstack/react-router';
import { useEffect, useMemo, useState, type FormEvent } from 'react';
import { api, unwrap, type Schemas } from '../api/client';
import { useMembership } from '../auth/me';
import { session } from '../auth/session';
import { Confirm } from '../components/confirm';
import { EmailPreview, PreviewSubscriber, useEmailPreview, usePreviewSubscriber, WidthToggle, type PreviewWidth } from '../components/email-preview';
import { Field, FormError } from '../components/field';
import { dateTime } from '../components/format';
import { LineChart, type Series } from '../components/line-chart';
import { ErrorMessage, QueryState } from '../components/query-state';
import { SendingIssueBanner } from '../components/sending-issue';
import { mergeFieldsOf, parseAddresses } from './email-campaign-builder-model';

type EmailCampaign = Schemas['EmailCampaign'];
type Stats = Schemas['EmailCampaignStats'];
type Analytics = Schemas['EmailCampaignAnalytics'];
type Status = EmailCampaign['status'];

const FINAL: readonly Status[] = ['sent', 'cancelled', 'failed', 'archived'];

type Progress = Stats & { status: Status; sendingIssue: EmailCampaign['sendingIssue'] };

/**
 * The campaign's counters from its event stream while it is not final (the stream ends itself after a final
 * status). A snapshot counts for the campaign as it was read when the snapshot came: once the campaign is read again
 * (an action's answer, a refetch), the read is as new, until the next snapshot.
 */
function useEmailProgress(campaign: EmailCampaign | undefined): Progress | undefined {
  const [progress, setProgress] = useState<{ snapshot: Progress; of: string }>();
  const queryClient = useQueryClient();
  const id = campaign?.id;
  const updatedAt = campaign?.updatedAt;
  // A draft has nothing to stream until it is sent (the send's answer is a new read, which opens the stream).
  const live = campaign !== undefined && campaign.status !== 'draft' && !FINAL.includes(campaign.status);
  useEffect(() => {
    if (!id || !live || !updatedAt) return;
    const { token, orgId } = session.get();
    if (!token || !orgId) return;
    // EventSource cannot set headers: the stream takes the dashboard token and organization in its query (spec 5.1.6).
    const source = new EventSource(`/email-campaigns/${encodeURIComponent(id)}/stream?${new URLSearchParams({ token, orgId })}`);
    let status: Status | undefined;
    source.onmessage = (event: MessageEvent<string>) => {
      const snapshot = JSON.parse(event.data) as Progress;
      setProgress({ snapshot, of: updatedAt });
      // A new status brings new dates (sentAt, completedAt) and actions: the campaign is read again.
      if (status !== undefined && snapshot.status !== status) {
        void queryClient.invalidateQueries({ queryKey: ['email-campaign', id] });
        void queryClient.invalidateQueries({ queryKey: ['email-campaigns'] });
      }
      status = snapshot.status;
      if (FINAL.includes(snapshot.status)) source.close();
    };
    return () => source.close();
  }, [id, live, updatedAt, queryClient]);
  return progress && progress.of === updatedAt ? progress.snapshot : undefined;
}

const COUNTERS: [keyof Stats, string][] = [
  ['totalTargeted', 'Targeted'],
  ['sent', 'Sent'],
  ['delivered', 'Delivered'],
  ['opened', 'Opened'],
  ['clicked', 'Clicked'],
  ['bounced', 'Bounced'],
  ['complained', 'Complained'],
  ['unsubscribed', 'Unsubscribed'],
  ['failed', 'Failed'],
  ['suppressed', 'Suppressed'],
];

const RATES: [keyof Stats, string][] = [
  ['openRate', 'Open rate'],
  ['clickRate', 'Click rate'],
  ['bounceRate', 'Bounce rate'],
  ['complaintRate', 'Complaint rate'],
  ['unsubscribeRate', 'Unsubscribe rate'],
];

export function EmailCampaignPage() {
  const { projectId, campaignId } = useParams({ from: '/signed-in/projects/$projectId/email-campaigns/$campaignId' });
  const { canWrite } = useMembership();
  const campaign = useQuery({
    queryKey: ['email-campaign', campaignId],
    queryFn: () => unwrap(api.GET('/email-campaigns/{id}', { params: { path: { id: campaignId } } })),
  });
  const progress = useEmailProgress(campaign.data);
  return (
    <section aria-labelledby="campaign-title">
      <p className="breadcrumb">
        <Link to="/projects/$projectId/email-campaigns" params={{ projectId }}>
          Email campaigns
        </Link>
      </p>
      <QueryState query={campaign}>
        {(c) => {
          // The stream's snapshot, while there is one newer than the campaign as read.
          const stats: Stats = progress ?? c.stats;
          const status = progress?.status ?? c.status;
          const issue = progress ? progress.sendingIssue : c.sendingIssue;
          return (
            <>
              <h2 id="campaign-title">{c.name}</h2>
              <p>
                Status: <strong data-testid="campaign-status">{status}</strong>
                {c.sandbox && <span className="badge test"> test (sandbox)</span>}
                {c.failureReason && <span className="error"> ({c.failureReason})</span>}
              </p>
              <SendingIssueBanner issue={issue} channel="email" />
              {canWrite && <CampaignActions projectId={projectId} campaign={c} status={status} />}
              <Counters stats={stats} />
              {c.status !== 'draft' && <Activity campaignId={c.id} live={!FINAL.includes(status)} />}
              <Content projectId={projectId} campaign={c} />
              <Delivery projectId={projectId} campaign={c} />
              {canWrite && <TestSend campaignId={c.id} />}
            </>
          );
        }}
      </QueryState>
    </section>
  );
}

function Counters({ stats }: { stats: Stats }) {
  const toGo = Math.max(0, stats.totalTargeted - stats.sent - stats.failed - stats.suppressed);
  return (
    <section aria-labelledby="counters-title">
      <h3 id="counters-title">Live counters</h3>
      <dl className="details stats" aria-label="Statistics" aria-live="polite">
        {COUNTERS.map(([key, label]) => (
          <div key={key}>
            <dt>{label}</dt>
            <dd data-testid={`stat-${key}`}>{stats[key]}</dd>
          </div>
        ))}
        <div>
          <dt>Still to go</dt>
          <dd data-testid="stat-to-go">{toGo}</dd>
        </div>
        {RATES.map(([key, label]) => (
          <div key={key}>
            <dt>{label}</dt>
            <dd data-testid={`stat-${key}`}>{(stats[key] * 100).toFixed(2)} %</dd>
          </div>
        ))}
      </dl>
      <p className="hint">Rates are over the emails sent and not bounced (the bounce rate: over those sent).</p>
    </section>
  );
}

const BUCKET_NAMES: Record<Analytics['bucket'], string> = {
  '1m': 'minute',
  '5m': '5 minutes',
  '15m': '15 minutes',
  '1h': 'hour',
  '6h': '6 hours',
  '1d': 'day',
  '1w': 'week (from Monday)',
};

/** The chart's lines: a bucket's count per series, the opens and clicks counted once per recipient. */
function seriesOf(buckets: Analytics['buckets']): Series[] {
  return [
    { label: 'Sent', color: '#1d4ed8', values: buckets.map((b) => b.sent) },
    { label: 'Unique opens', color: '#15803d', values: buckets.map((b) => b.opened.unique) },
    { label: 'Human opens', color: '#86efac', values: buckets.map((b) => b.opened.human) },
    { label: 'Unique clicks', color: '#a16207', values: buckets.map((b) => b.clicked.unique) },
    { label: 'Human clicks', color: '#fcd34d', values: buckets.map((b) => b.clicked.human) },
    { label: 'Bounces', color: '#b91c1c', values: buckets.map((b) => b.bounced) },
  ];
}

/** The campaign's events per time bucket and its top links, read again every 10 s while it is not final. */
function Activity({ campaignId, live }: { campaignId: string; live: boolean }) {
  const path = { params: { path: { id: campaignId } } };
  const refetchInterval = live ? 10_000 : false;
  const analytics = useQuery({
    queryKey: ['email-campaign', campaignId, 'analytics'],
    queryFn: () => unwrap(api.GET('/email-campaigns/{id}/analytics', path)),
    refetchInterval,
  });
  const links = useQuery({
    queryKey: ['email-campaign', campaignId, 'links'],
    queryFn: () => unwrap(api.GET('/email-campaigns/{id}/links', path)),
    refetchInterval,
  });
  const chart = useMemo(() => {
    if (!analytics.data) return undefined;
    const { buckets, bucketSeconds } = analytics.data;
    // Under a day a bucket is named by its time (with its date, as a window may span days); from a day, by its date.
    const format: Intl.DateTimeFormatOptions =
      bucketSeconds < 86_400 ? { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' } : { year: 'numeric', month: 'short', day: 'numeric' };
    return { labels: buckets.map((b) => new Date(b.start).toLocaleString(undefined, format)), series: seriesOf(buckets) };
  }, [analytics.data]);
  return (
    <section aria-labelledby="activity-title">
      <h3 id="activity-title">Activity over time</h3>
      <QueryState query={analytics}>
        {(a) => (
          <>
            <p className="hint">
              Per {BUCKET_NAMES[a.bucket]}, from {dateTime(a.from)} to {dateTime(a.to)}. Unique: each recipient's first; human: without
              machine signals (mail proxies, link scanners).
            </p>
            {chart && <LineChart title={`Events per ${BUCKET_NAMES[a.bucket]}`} labels={chart.labels} series={chart.series} />}
          </>
        )}
      </QueryState>
      <h3 id="links-title">Top links</h3>
      <QueryState query={links}>
        {(l) =>
          l.data.length === 0 ? (
            <p className="muted">No link clicked yet.</p>
          ) : (
            <table aria-labelledby="links-title">
              <thead>
                <tr>
                  <th scope="col">URL</th>
                  <th scope="col">Clicks</th>
                  <th scope="col">Unique clickers</th>
                  <th scope="col">Human clickers</th>
                </tr>
              </thead>
              <tbody>
                {l.data.map((link) => (
                  <tr key={link.url}>
                    <td className="url">{link.url}</td>
                    <td>{link.clicks}</td>
                    <td>{link.uniqueClickers}</td>
                    <td>{link.humanClickers}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </QueryState>
    </section>
  );
}

function Content({ projectId, campaign }: { projectId: string; campaign: EmailCampaign }) {
  const { content } = campaign;
  const [width, setWidth] = useState<PreviewWidth>('desktop');
  const picker = usePreviewSubscriber(projectId);
  const preview = useEmailPreview(
    projectId,
    { subject: content.subject, html: content.html, preheader: content.preheader ?? null, text: content.text ?? null },
    picker.subscriber ? mergeFieldsOf(picker.subscriber) : {},
  );
  const mailbox = (box: { email: string; name?: string } | undefined) => (box ? (box.name ? `${box.name} <${box.email}>` : box.email) : '—');
  return (
    <section aria-labelledby="content-title">
      <h3 id="content-title">Content</h3>
      <dl className="details">
        <div>
          <dt>Subject</dt>
          <dd>{content.subject}</dd>
        </div>
        <div>
          <dt>Preheader</dt>
          <dd>{content.preheader ?? '—'}</dd>
        </div>
        <div>
          <dt>From</dt>
          <dd>{mailbox(content.from)}</dd>
        </div>
        <div>
          <dt>Reply-To</dt>
          <dd>{mailbox(content.replyTo)}</dd>
        </div>
        <div>
          <dt>Plain text</dt>
          <dd>{content.text === undefined ? "generated from each recipient's HTML" : 'written for this campaign'}</dd>
        </div>
        <div>
          <dt>UTM</dt>
          <dd>{campaign.utm ? Object.entries(campaign.utm).map(([key, value]) => `utm_${key}=${value}`).join(', ') : '—'}</dd>
        </div>
      </dl>
      <div className="row preview-settings">
        <PreviewSubscriber picker={picker} />
        <WidthToggle width={width} onChange={setWidth} />
      </div>
      <EmailPreview preview={preview.data} failed={preview.isError} updating={preview.isFetching} width={width} />
    </section>
  );
}

function Delivery({ projectId, campaign }: { projectId: string; campaign: EmailCampaign }) {
  const { segment, schedule } = campaign;
  return (
    <section aria-labelledby="delivery-title">
      <h3 id="delivery-title">Audience and schedule</h3>
      <dl className="details">
        <div>
          <dt>Audience</dt>
          <dd>
            {'savedSegmentId' in segment ? (
              <Link to="/projects/$projectId/segments/$segmentId" params={{ projectId, segmentId: segment.savedSegmentId }}>
                Saved segment
              </Link>
            ) : (
              <code>{JSON.stringify(segment.filters)}</code>
            )}
          </dd>
        </div>
        <div>
          <dt>Schedule</dt>
          <dd data-testid="campaign-schedule">
            {schedule.mode}
            {schedule.sendAt && ` at ${dateTime(schedule.sendAt)}${schedule.timezone ? ` (${schedule.timezone})` : ''}`}
            {schedule.localTime && ", at each recipient's local time"}
          </dd>
        </div>
        {schedule.localWindow && (
          <div>
            <dt>Local-time window</dt>
            <dd data-testid="local-window">
              from {dateTime(schedule.localWindow.from)} (UTC+14 reaches the time) to {dateTime(schedule.localWindow.to)} (UTC−12 does): 26 hours
            </dd>
          </div>
        )}
        <div>
          <dt>Created / sent / completed</dt>
          <dd>
            {dateTime(campaign.createdAt)} / {dateTime(campaign.sentAt)} / {dateTime(campaign.completedAt)}
          </dd>
        </div>
        {campaign.resentFrom && (
          <div>
            <dt>Re-sends</dt>
            <dd>
              <Link to="/projects/$projectId/email-campaigns/$campaignId" params={{ projectId, campaignId: campaign.resentFrom }}>
                the original campaign
              </Link>
            </dd>
          </div>
        )}
      </dl>
    </section>
  );
}

type Action = 'send' | 'pause' | 'resume' | 'cancel' | 'archive';

function CampaignActions({ projectId, campaign: c, status }: { projectId: string; campaign: EmailCampaign; status: Status }) {
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const [failure, setFailure] = useState<unknown>();
  const act = async (action: Action) => {
    const path = { params: { path: { id: c.id } } };
    const calls = {
      send: () => api.POST('/email-campaigns/{id}/send', path),
      pause: () => api.POST('/email-campaigns/{id}/pause', path),
      resume: () => api.POST('/email-campaigns/{id}/resume', path),
      cancel: () => api.POST('/email-campaigns/{id}/cancel', path),
      archive: () => api.POST('/email-campaigns/{id}/archive', path),
    } satisfies Record<Action, () => Promise<unknown>>;
    const updated = await unwrap<EmailCampaign>(calls[action]());
    queryClient.setQueryData(['email-campaign', c.id], updated);
    await queryClient.invalidateQueries({ queryKey: ['email-campaigns', projectId] });
  };
  // Pause and resume are undone by each other: no confirmation, an error shown here.
  const run = (action: Action) => {
    setFailure(undefined);
    act(action).catch(setFailure);
  };
  const duplicate = async () => {
    setFailure(undefined);
    try {
      const copy = await unwrap(api.POST('/email-campaigns/{id}/duplicate', { params: { path: { id: c.id } } }));
      await queryClient.invalidateQueries({ queryKey: ['email-campaigns', projectId] });
      await navigate({ to: '/projects/$projectId/email-campaigns/$campaignId/edit', params: { projectId, campaignId: copy.id } });
    } catch (error) {
      setFailure(error);
    }
  };
  const scheduled = c.schedule.mode === 'scheduled';
  return (
    <div className="actions start" role="group" aria-label="Campaign actions">
      {status === 'draft' && (
        <>
          <Link to="/projects/$projectId/email-campaigns/$campaignId/edit" params={{ projectId, campaignId: c.id }} className="button">
            Edit
          </Link>
          <Confirm
            trigger={scheduled ? 'Schedule' : 'Send'}
            title={`${scheduled ? 'Schedule' : 'Send'} “${c.name}”?`}
            description={
              scheduled && c.schedule.sendAt
                ? c.schedule.localTime
                  ? `It goes out at ${c.schedule.sendAt.slice(11, 16)} in each recipient's time zone, over 26 hours, to its audience as it is when sending starts.`
                  : `It goes out at ${dateTime(c.schedule.sendAt)} to its audience as it is then.`
                : 'It goes out now to its audience as it is now. It can be paused or cancelled while it sends, not undone.'
            }
            confirm={scheduled ? 'Schedule campaign' : 'Send campaign'}
            onConfirm={() => act('send')}
          />
        </>
      )}
      {status === 'sending' && (
        <button type="button" onClick={() => run('pause')}>
          Pause
        </button>
      )}
      {status === 'paused' && (
        <button type="button" onClick={() => run('resume')}>
          Resume
        </button>
      )}
      {(status === 'scheduled' || status === 'sending' || status === 'paused') && (
        <Confirm
          trigger="Cancel campaign"
          title={`Cancel “${c.name}”?`}
          description="Emails not yet handed to a worker are suppressed and never sent; those being sent finish. This cannot be undone."
          confirm="Cancel campaign"
          onConfirm={() => act('cancel')}
        />
      )}
      {status === 'sent' && (
        <Confirm
          trigger="Archive"
          title={`Archive “${c.name}”?`}
          description="It disappears from the list (unless the archived status is chosen) and stays readable and re-sendable."
          confirm="Archive campaign"
          onConfirm={() => act('archive')}
        />
      )}
      <button type="button" onClick={() => void duplicate()}>
        Duplicate
      </button>
      {FINAL.includes(status) && <Resend projectId={projectId} campaign={c} />}
      <ErrorMessage error={failure} />
    </div>
  );
}

/** Re-send a finished campaign as a new one, to its own segment (evaluated now) or a saved segment chosen here. */
function Resend({ projectId, campaign }: { projectId: string; campaign: EmailCampaign }) {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [segmentId, setSegmentId] = useState('');
  const segments = useQuery({
    queryKey: ['segments', projectId, 'all'],
    queryFn: () => unwrap(api.GET('/segments/project/{projectId}', { params: { path: { projectId }, query: { pageSize: 100 } } })),
  });
  const resend = async () => {
    const body = segmentId ? { segment: { savedSegmentId: segmentId } } : {};
    const created = await unwrap(api.POST('/email-campaigns/{id}/send', { params: { path: { id: campaign.id } }, body }));
    await queryClient.invalidateQueries({ queryKey: ['email-campaigns', projectId] });
    await navigate({ to: '/projects/$projectId/email-campaigns/$campaignId', params: { projectId, campaignId: created.id } });
  };
  return (
    <div className="row resend">
      <label htmlFor="resend-segment">Re-send to</label>
      <select id="resend-segment" value={segmentId} onChange={(event) => setSegmentId(event.target.value)}>
        <option value="">its own segment (evaluated now)</option>
        {segments.data?.data.map((segment) => (
          <option key={segment.id} value={segment.id}>
            saved segment: {segment.name}
          </option>
        ))}
      </select>
      <Confirm
        trigger="Re-send"
        title={`Re-send “${campaign.name}”?`}
        description="A new campaign with the same content is created and sent at once; this one and its stats stay as they are."
        confirm="Re-send now"
        onConfirm={resend}
      />
    </div>
  );
}

/** The campaign as it is stored, sent now to up to five addresses, subject marked [Test]: counted and logged nowhere. */
export function TestSend({ campaignId, hint }: { campaignId: string; hint?: string }) {
  const [typed, setTyped] = useState('');
  const send = useMutation({
    mutationFn: (emails: string[]) => unwrap(api.POST('/email-campaigns/{id}/test', { params: { path: { id: campaignId } }, body: { emails } })),
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    send.mutate(parseAddresses(typed));
  };
  return (
    <form className="card" onSubmit={submit} aria-label="Send a test" noValidate>
      <h3>Send a test</h3>
      <Field
        label="Test addresses"
        field="emails"
        error={send.error}
        value={typed}
        onChange={(event) => setTyped(event.target.value)}
        hint={`Up to 5, separated by commas or spaces. Each gets the email now, its subject marked [Test], with the merge fields of the subscriber holding that address.${hint ? ` ${hint}` : ''}`}
      />
      <FormError error={send.error} fields={['emails']} />
      <div className="actions start">
        <button type="submit" disabled={send.isPending}>
          Send test
        </button>
      </div>
      {send.data && (
        <ul className="list" aria-label="Test send results">
          {send.data.data.map((outcome) => (
            <li key={outcome.email}>
              {outcome.email}:{' '}
              {outcome.status === 'sent' ? <span className="success">sent</span> : <span className="error">failed ({outcome.reason})</span>}
            </li>
          ))}
        </ul>
      )}
    </form>
  );
}
