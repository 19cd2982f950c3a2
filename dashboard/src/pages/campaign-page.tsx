// A campaign's page on any channel: its status and live counters over the event stream (spec 6.3), its actions (send
// or edit a draft, pause and resume where the channel has them, cancel, archive, duplicate, re-send), its audience and
// schedule; what the channel shows of its content (and more) comes from the channel's own page.
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate, useParams } from '@tanstack/react-router';
import { useEffect, useState, type ReactNode } from 'react';
import { api, unwrap } from '../api/client';
import { useMembership } from '../auth/me';
import { session } from '../auth/session';
import { audienceSentence } from '../components/audience-sentence';
import { useSegmentNames } from '../components/condition-builder';
import { Confirm } from '../components/confirm';
import { dateTime } from '../components/format';
import { ErrorMessage, QueryState } from '../components/query-state';
import { SendingIssueBanner } from '../components/sending-issue';
import type { Action, AnyCampaign, CampaignChannel, Status } from './campaign-channel';
import { CampaignsBreadcrumb } from './campaign-list';

const FINAL: readonly Status[] = ['sent', 'cancelled', 'failed', 'archived'];

type Stats = Record<string, number>;
type Progress = Stats & { status: Status; sendingIssue: AnyCampaign['sendingIssue'] };

/**
 * The campaign's counters from its event stream while it is not final (the stream ends itself after a final
 * status). A snapshot counts for the campaign as it was read when the snapshot came: once the campaign is read again
 * (an action's answer, a refetch), the read is as new, until the next snapshot.
 */
function useProgress<C extends AnyCampaign>(channel: CampaignChannel<C>, campaign: C | undefined): Progress | undefined {
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
    const source = new EventSource(`${channel.streamPath(id)}?${new URLSearchParams({ token, orgId })}`);
    let status: Status | undefined;
    source.onmessage = (event: MessageEvent<string>) => {
      const snapshot = JSON.parse(event.data) as Progress;
      setProgress({ snapshot, of: updatedAt });
      // A new status brings new dates (sentAt, completedAt) and actions: the campaign is read again.
      if (status !== undefined && snapshot.status !== status) {
        void queryClient.invalidateQueries({ queryKey: [channel.itemKey, id] });
        void queryClient.invalidateQueries({ queryKey: [channel.listKey] });
      }
      status = snapshot.status;
      if (FINAL.includes(snapshot.status)) source.close();
    };
    return () => source.close();
  }, [channel, id, live, updatedAt, queryClient]);
  return progress && progress.of === updatedAt ? progress.snapshot : undefined;
}

/** The page: `details` is what the channel shows below the counters (its content, its analytics …), `after` below the schedule. */
export function CampaignPage<C extends AnyCampaign>({
  channel,
  details,
  after,
}: {
  channel: CampaignChannel<C>;
  details: (campaign: C, status: Status) => ReactNode;
  after?: (campaign: C) => ReactNode;
}) {
  const { projectId, campaignId } = useParams({ strict: false }) as { projectId: string; campaignId: string };
  const { canWrite } = useMembership();
  const campaign = useQuery({ queryKey: [channel.itemKey, campaignId], queryFn: () => channel.get(campaignId) });
  const progress = useProgress(channel, campaign.data);
  return (
    <section aria-labelledby="campaign-title">
      <CampaignsBreadcrumb channel={channel} projectId={projectId} />
      <QueryState query={campaign}>
        {(c) => {
          // The stream's snapshot, while there is one newer than the campaign as read.
          const stats: Stats = progress ?? (c.stats as unknown as Stats);
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
              <SendingIssueBanner issue={issue} channel={channel.channel} />
              {canWrite && <CampaignActions channel={channel} projectId={projectId} campaign={c} status={status} />}
              <Counters channel={channel} stats={stats} />
              {details(c, status)}
              <Delivery channel={channel} projectId={projectId} campaign={c} />
              {after?.(c)}
            </>
          );
        }}
      </QueryState>
    </section>
  );
}

function Counters<C extends AnyCampaign>({ channel, stats }: { channel: CampaignChannel<C>; stats: Stats }) {
  const toGo = channel.total && Math.max(0, stats[channel.total]! - stats.sent! - stats.failed! - stats.suppressed!);
  return (
    <section aria-labelledby="counters-title">
      <h3 id="counters-title">Live counters</h3>
      <dl className="details stats" aria-label="Statistics" aria-live="polite">
        {channel.counters.map(([key, label]) => (
          <div key={key}>
            <dt>{label}</dt>
            <dd data-testid={`stat-${key}`}>{stats[key]}</dd>
          </div>
        ))}
        {channel.total && (
          <div>
            <dt>Still to go</dt>
            <dd data-testid="stat-to-go">{toGo}</dd>
          </div>
        )}
        {channel.rates.map(([key, label]) => (
          <div key={key}>
            <dt>{label}</dt>
            <dd data-testid={`stat-${key}`}>{channel.rateInWords?.(key, stats) ?? `${(stats[key]! * 100).toFixed(2)} %`}</dd>
          </div>
        ))}
      </dl>
      {channel.ratesHint && <p className="hint">{channel.ratesHint}</p>}
    </section>
  );
}

const SCHEDULE_WORDS: Record<AnyCampaign['schedule']['mode'], string> = { immediate: 'Sent as soon as it is started', scheduled: 'Scheduled', draft: 'Not scheduled yet (a draft)' };

/** A saved segment by its name and what it holds, linked to it; one deleted since is said so. */
function SavedSegment({ projectId, segmentId }: { projectId: string; segmentId: string }) {
  const segment = useQuery({ queryKey: ['segment', segmentId], queryFn: () => unwrap(api.GET('/segments/{id}', { params: { path: { id: segmentId } } })), retry: false });
  const names = useSegmentNames(projectId);
  if (segment.isError) return <span className="muted">A saved segment that no longer exists</span>;
  return (
    <span data-testid="audience-sentence">
      <Link to="/projects/$projectId/segments/$segmentId" params={{ projectId, segmentId }}>
        {segment.data ? `Saved segment “${segment.data.name}”` : 'Saved segment'}
      </Link>
      {segment.data && `: ${audienceSentence(segment.data.filters, names)}`}
    </span>
  );
}

function Delivery<C extends AnyCampaign>({ channel, projectId, campaign }: { channel: CampaignChannel<C>; projectId: string; campaign: C }) {
  const { segment, schedule } = campaign;
  const local = 'localTime' in schedule ? schedule : undefined;
  const names = useSegmentNames(projectId);
  return (
    <section aria-labelledby="delivery-title">
      <h3 id="delivery-title">Audience and schedule</h3>
      <dl className="details">
        <div>
          <dt>Audience</dt>
          <dd>
            {'savedSegmentId' in segment ? (
              <SavedSegment projectId={projectId} segmentId={segment.savedSegmentId} />
            ) : (
              <span data-testid="audience-sentence">{audienceSentence(segment.filters, names)}</span>
            )}
          </dd>
        </div>
        <div>
          <dt>Schedule</dt>
          <dd data-testid="campaign-schedule">
            {SCHEDULE_WORDS[schedule.mode]}
            {schedule.sendAt && ` for ${dateTime(schedule.sendAt)}${schedule.timezone ? ` (${schedule.timezone})` : ''}`}
            {local?.localTime && ", at each recipient's local time"}
          </dd>
        </div>
        {local?.localWindow && (
          <div>
            <dt>Local-time window</dt>
            <dd data-testid="local-window">
              from {dateTime(local.localWindow.from)} (UTC+14 reaches the time) to {dateTime(local.localWindow.to)} (UTC−12 does): 26 hours
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
              <Link to={channel.routes.page} params={{ projectId, campaignId: campaign.resentFrom }}>
                the original campaign
              </Link>
            </dd>
          </div>
        )}
      </dl>
    </section>
  );
}

function CampaignActions<C extends AnyCampaign>({ channel, projectId, campaign: c, status }: { channel: CampaignChannel<C>; projectId: string; campaign: C; status: Status }) {
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const [failure, setFailure] = useState<unknown>();
  const act = async (action: Action) => {
    const updated = await channel.act(action, c.id);
    queryClient.setQueryData([channel.itemKey, c.id], updated);
    await queryClient.invalidateQueries({ queryKey: [channel.listKey, projectId] });
  };
  // Pause and resume are undone by each other: no confirmation, an error shown here.
  const run = (action: Action) => {
    setFailure(undefined);
    act(action).catch(setFailure);
  };
  const { duplicate } = channel;
  const copy = async (copyOf: (id: string) => Promise<C>) => {
    setFailure(undefined);
    try {
      const copied = await copyOf(c.id);
      await queryClient.invalidateQueries({ queryKey: [channel.listKey, projectId] });
      await navigate({ to: channel.routes.edit, params: { projectId, campaignId: copied.id } });
    } catch (error) {
      setFailure(error);
    }
  };
  const scheduled = c.schedule.mode === 'scheduled';
  const localTime = 'localTime' in c.schedule && c.schedule.localTime;
  return (
    <div className="actions start" role="group" aria-label="Campaign actions">
      {status === 'draft' && (
        <>
          <Link to={channel.routes.edit} params={{ projectId, campaignId: c.id }} className="button">
            Edit
          </Link>
          <Confirm
            trigger={scheduled ? 'Schedule' : 'Send'}
            title={`${scheduled ? 'Schedule' : 'Send'} “${c.name}”?`}
            description={
              scheduled && c.schedule.sendAt
                ? localTime
                  ? `It goes out at ${c.schedule.sendAt.slice(11, 16)} in each recipient's time zone, over 26 hours, to its audience as it is when sending starts.`
                  : `It goes out at ${dateTime(c.schedule.sendAt)} to its audience as it is then.`
                : `It goes out now to its audience as it is now. It can be ${channel.pausable ? 'paused or ' : ''}cancelled while it sends, not undone.`
            }
            confirm={scheduled ? 'Schedule campaign' : 'Send campaign'}
            onConfirm={() => act('send')}
          />
        </>
      )}
      {channel.pausable && status === 'sending' && (
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
          description={`${channel.items} not yet handed to a worker are suppressed and never sent; those being sent finish. This cannot be undone.`}
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
      {duplicate && (
        <button type="button" onClick={() => void copy(duplicate)}>
          Duplicate
        </button>
      )}
      {FINAL.includes(status) && <Resend channel={channel} projectId={projectId} campaign={c} />}
      <ErrorMessage error={failure} />
    </div>
  );
}

/** Re-send a finished campaign as a new one, to its own segment (evaluated now) or a saved segment chosen here. */
function Resend<C extends AnyCampaign>({ channel, projectId, campaign }: { channel: CampaignChannel<C>; projectId: string; campaign: C }) {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [segmentId, setSegmentId] = useState('');
  const segments = useQuery({
    queryKey: ['segments', projectId, 'all'],
    queryFn: () => unwrap(api.GET('/segments/project/{projectId}', { params: { path: { projectId }, query: { pageSize: 100 } } })),
  });
  const resend = async () => {
    const created = await channel.resend(campaign.id, segmentId ? { segment: { savedSegmentId: segmentId } } : {});
    await queryClient.invalidateQueries({ queryKey: [channel.listKey, projectId] });
    await navigate({ to: channel.routes.page, params: { projectId, campaignId: created.id } });
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
