// A project's home: who each channel reaches, growth and sends over a window, rates in words, recent work, health
// warnings with the page that fixes each, and the getting-started checklist. Loaded on demand (its charts).
import { useQuery } from '@tanstack/react-query';
import { Link, useParams, useSearch } from '@tanstack/react-router';
import { useMemo, type ReactNode } from 'react';
import type { Schemas } from '../api/client';
import { useMembership } from '../auth/me';
import { dateTime } from '../components/format';
import { LineChart, type Series } from '../components/line-chart';
import { QueryState } from '../components/query-state';
import { SdkSnippet } from '../components/sdk-snippet';
import { activityQuery, audienceQuery, WINDOWS } from './overview-window';

type Overview = Schemas['OverviewActivity'];
type Health = Overview['health'][number];
type Step = Overview['checklist'][number]['step'];

const number = (value: number) => value.toLocaleString('en');
const percent = (count: number, of: number) => `${(Math.min(1, count / of) * 100).toLocaleString('en', { maximumFractionDigits: 1 })} %`;
const plural = (count: number, one: string, many = `${one}s`) => `${number(count)} ${count === 1 ? one : many}`;

const CHANNEL_COLORS = { push: '#1d4ed8', email: '#b54708', sms: '#05603a', whatsapp: '#6927da' };

const HEALTH_WORDS: Record<Health['code'], string> = {
  no_verified_domain: 'An email provider is connected but no sending domain is verified, so no email can be sent.',
  domain_failing: 'A verified sending domain’s DNS records are now missing or changed: its emails may be refused.',
  email_provider_missing: 'The project uses email (a sending domain or an email campaign) but no email provider is connected.',
  bounce_rate_high: 'More than 2 % of the emails of this window bounced: mailbox providers may start refusing the project’s mail.',
  complaint_rate_high: 'More than 0.1 % of the emails of this window were marked as spam: mailbox providers may start refusing the project’s mail.',
  vapid_subject_unset: 'Push services have no contact address for this project (the VAPID subject).',
};

const STATUS_WORDS: Record<string, string> = {
  draft: 'Draft',
  scheduled: 'Scheduled',
  sending: 'Sending',
  paused: 'Paused',
  sent: 'Sent',
  cancelled: 'Cancelled',
  failed: 'Failed',
  active: 'Active',
};

export function OverviewPage() {
  const { projectId } = useParams({ from: '/signed-in/projects/$projectId/overview' });
  const search = useSearch({ from: '/signed-in/projects/$projectId/overview' });
  const days = search.days ?? 30;
  const activity = useQuery(activityQuery(projectId, days));
  return (
    <section aria-labelledby="overview-title">
      <div className="row align-center">
        <h2 id="overview-title">Overview</h2>
        <nav className="row window-picker" aria-label="Window">
          {WINDOWS.map((window) => (
            <Link
              key={window}
              to="/projects/$projectId/overview"
              params={{ projectId }}
              search={{ days: window === 30 ? undefined : window }}
              activeOptions={{ exact: true }}
              aria-current={window === days ? 'page' : undefined}
            >
              {window} days
            </Link>
          ))}
        </nav>
      </div>
      <QueryState query={activity}>{(data) => <OverviewBody projectId={projectId} data={data} />}</QueryState>
    </section>
  );
}

function OverviewBody({ projectId, data }: { projectId: string; data: Overview }) {
  const done = data.checklist.filter((step) => step.done).length;
  return (
    <>
      {done < data.checklist.length && <Checklist projectId={projectId} checklist={data.checklist} done={done} />}
      <HealthSection projectId={projectId} health={data.health} />
      <Audience projectId={projectId} data={data} />
      <Activity data={data} />
      <Recent projectId={projectId} recent={data.recent} />
    </>
  );
}

function Checklist({ projectId, checklist, done }: { projectId: string; checklist: Overview['checklist']; done: number }) {
  const { canWrite, isAdmin } = useMembership();
  const steps: Record<Step, { title: string; how: ReactNode }> = {
    install_sdk: {
      title: 'Install the SDK on your site',
      how: (
        <>
          <p>Add these lines to your site; a visitor who accepts notifications becomes a person push reaches.</p>
          <SdkSnippet projectId={projectId} />
          <p>
            {isAdmin ? (
              <>
                A publishable key comes from{' '}
                <Link to="/projects/$projectId/keys" params={{ projectId }}>
                  API keys
                </Link>
                ;
              </>
            ) : (
              'An owner or admin of the organization creates the publishable key;'
            )}{' '}
            identity verification and allowed origins are in the{' '}
            <Link to="/projects/$projectId/settings" params={{ projectId }}>
              project settings
            </Link>
            .
          </p>
        </>
      ),
    },
    verify_domain: {
      title: 'Verify a sending domain',
      how: (
        <p>
          Publish the DNS records of your domain, then verify it in{' '}
          <Link to="/projects/$projectId/domains" params={{ projectId }}>
            Sending domains
          </Link>
          .
        </p>
      ),
    },
    connect_provider: {
      title: 'Connect a provider',
      how: (
        <p>
          Email goes out through an{' '}
          <Link to="/projects/$projectId/email-provider" params={{ projectId }}>
            email provider
          </Link>
          , text messages through{' '}
          <Link to="/projects/$projectId/sms" params={{ projectId }}>
            SMS
          </Link>{' '}
          or{' '}
          <Link to="/projects/$projectId/whatsapp" params={{ projectId }}>
            WhatsApp
          </Link>
          : connect one.
        </p>
      ),
    },
    add_people: {
      title: 'Import or collect people',
      how: (
        <p>
          {canWrite && (
            <>
              <Link to="/projects/$projectId/import" params={{ projectId }}>
                Import contacts
              </Link>{' '}
              from a CSV or JSON file, or collect
            </>
          )}
          {!canWrite && 'Collect'} them with the SDK or the API; they are listed in{' '}
          <Link to="/projects/$projectId/subscribers" params={{ projectId }}>
            People
          </Link>
          .
        </p>
      ),
    },
    first_campaign: {
      title: 'Send a first campaign',
      how: (
        <p>
          Write a{' '}
          <Link to="/projects/$projectId/campaigns" params={{ projectId }}>
            push campaign
          </Link>{' '}
          or an{' '}
          <Link to="/projects/$projectId/email-campaigns" params={{ projectId }}>
            email campaign
          </Link>{' '}
          and send it.
        </p>
      ),
    },
  };
  return (
    <section className="card" aria-labelledby="checklist-title">
      <h3 id="checklist-title">Getting started</h3>
      <p className="muted">
        {done} of {checklist.length} steps done.
      </p>
      <ol className="checklist">
        {checklist.map(({ step, done: stepDone }) => (
          <li key={step} className={stepDone ? 'done' : undefined}>
            <p className="checklist-title">
              <span className={stepDone ? 'badge verified' : 'badge pending'}>{stepDone ? 'Done' : 'To do'}</span> {steps[step].title}
            </p>
            {!stepDone && steps[step].how}
          </li>
        ))}
      </ol>
    </section>
  );
}

const FIX_LINKS: Record<Health['fix'], { to: '/projects/$projectId/domains' | '/projects/$projectId/email-provider' | '/projects/$projectId/settings' | '/projects/$projectId/suppressions'; label: string }> = {
  domains: { to: '/projects/$projectId/domains', label: 'Fix it in Sending domains' },
  'email-provider': { to: '/projects/$projectId/email-provider', label: 'Fix it in Email provider' },
  settings: { to: '/projects/$projectId/settings', label: 'Fix it in the project settings' },
  suppressions: { to: '/projects/$projectId/suppressions', label: 'Review the Suppressions' },
};

function HealthSection({ projectId, health }: { projectId: string; health: Health[] }) {
  return (
    <section className="card" aria-labelledby="health-title">
      <h3 id="health-title">Health</h3>
      {health.length === 0 ? (
        <p className="success">All is well: nothing needs attention.</p>
      ) : (
        <ul className="health">
          {health.map((item) => (
            <li key={item.code} className={item.severity}>
              <span className={item.severity === 'critical' ? 'badge failing' : 'badge pending'}>{item.severity === 'critical' ? 'Critical' : 'Warning'}</span>{' '}
              {HEALTH_WORDS[item.code]}{' '}
              <Link to={FIX_LINKS[item.fix].to} params={{ projectId }}>
                {FIX_LINKS[item.fix].label}
              </Link>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

/** The audience's tiles come with their own request (a count over everyone), the growth chart with the activity. */
function Audience({ projectId, data }: { projectId: string; data: Overview }) {
  const audience = useQuery(audienceQuery(projectId));
  const growth = useMemo(
    () => ({ labels: data.growth.map((g) => g.day), series: [{ label: 'New people', color: CHANNEL_COLORS.push, values: data.growth.map((g) => g.subscribed) }] }),
    [data.growth],
  );
  return (
    <section aria-labelledby="audience-title">
      <h3 id="audience-title">Who you can reach now</h3>
      <QueryState query={audience}>
        {(counts) => (
          <dl className="tiles">
            {(
              [
                ['People', counts.people],
                ['By Push', counts.push],
                ['By Email', counts.email],
                ['By SMS', counts.sms],
                ['By WhatsApp', counts.whatsapp],
              ] as const
            ).map(([label, value]) => (
              <div key={label} className="tile">
                <dt>{label}</dt>
                <dd>{number(value)}</dd>
              </div>
            ))}
          </dl>
        )}
      </QueryState>
      <p className="muted">Push counts devices; email, SMS and WhatsApp count the addresses a marketing message would reach (consent given, not suppressed).</p>
      <LineChart title={`New people per day, last ${data.days} days`} labels={growth.labels} series={growth.series} />
    </section>
  );
}

function Activity({ data }: { data: Overview }) {
  const sends = useMemo(() => {
    const series: Series[] = (['push', 'email', 'sms', 'whatsapp'] as const).map((channel) => ({
      label: { push: 'Push', email: 'Email', sms: 'SMS', whatsapp: 'WhatsApp' }[channel],
      color: CHANNEL_COLORS[channel],
      values: data.sends.map((day) => day[channel]),
    }));
    return { labels: data.sends.map((day) => day.day), series };
  }, [data.sends]);
  const { email, push } = data.rates;
  return (
    <section aria-labelledby="activity-title">
      <h3 id="activity-title">Messages sent</h3>
      <LineChart title={`Messages sent per day and channel, last ${data.days} days`} labels={sends.labels} series={sends.series} />
      <div className="card rates">
        <p>
          {email.sent === 0
            ? `No emails sent in the last ${data.days} days.`
            : `Of ${plural(email.sent, 'email')} sent in the last ${data.days} days, ` +
              // Only some providers report deliveries: none reported is not "0 % delivered".
              (email.delivered > 0 ? `${number(email.delivered)} were delivered (${percent(email.delivered, email.sent)}), ` : '') +
              `${number(email.opened)} opened (${percent(email.opened, email.sent)}) and ${number(email.clicked)} clicked (${percent(email.clicked, email.sent)}); ` +
              `${number(email.bounced)} bounced (${percent(email.bounced, email.sent)}) and ${number(email.complained)} were marked as spam (${percent(email.complained, email.sent)}).`}
        </p>
        <p>
          {push.sent === 0
            ? `No pushes sent in the last ${data.days} days.`
            : `Of ${plural(push.sent, 'push', 'pushes')} sent, ${number(push.delivered)} reached the device (${percent(push.delivered, push.sent)}) ` +
              `and ${number(push.clicked)} were clicked (${percent(push.clicked, push.sent)}).`}
        </p>
      </div>
    </section>
  );
}

function Recent({ projectId, recent }: { projectId: string; recent: Overview['recent'] }) {
  return (
    <div className="recent">
      <section className="card" aria-labelledby="recent-campaigns-title">
        <h3 id="recent-campaigns-title">Recent campaigns</h3>
        {recent.campaigns.length === 0 ? (
          <p className="muted">
            No campaigns yet:{' '}
            <Link to="/projects/$projectId/campaigns" params={{ projectId }}>
              push campaigns
            </Link>
            ,{' '}
            <Link to="/projects/$projectId/email-campaigns" params={{ projectId }}>
              email campaigns
            </Link>
            .
          </p>
        ) : (
          <ul className="list">
            {recent.campaigns.map((campaign) => (
              <li key={campaign.id}>
                {campaign.channel === 'push' ? (
                  <Link to="/projects/$projectId/campaigns/$campaignId" params={{ projectId, campaignId: campaign.id }}>
                    {campaign.name}
                  </Link>
                ) : (
                  <Link to="/projects/$projectId/email-campaigns/$campaignId" params={{ projectId, campaignId: campaign.id }}>
                    {campaign.name}
                  </Link>
                )}{' '}
                <span className="muted">
                  {campaign.channel === 'push' ? 'Push' : 'Email'} · <span className="badge">{STATUS_WORDS[campaign.status] ?? campaign.status}</span> · {dateTime(campaign.at)}
                </span>
              </li>
            ))}
          </ul>
        )}
      </section>
      <section className="card" aria-labelledby="recent-automations-title">
        <h3 id="recent-automations-title">Recent automations</h3>
        {recent.automations.length === 0 ? (
          <p className="muted">
            No automations yet: start from one in{' '}
            <Link to="/projects/$projectId/automations" params={{ projectId }}>
              Automations
            </Link>
            .
          </p>
        ) : (
          <ul className="list">
            {recent.automations.map((automation) => (
              <li key={automation.id}>
                <Link to="/projects/$projectId/automations/$automationId" params={{ projectId, automationId: automation.id }}>
                  {automation.name}
                </Link>{' '}
                <span className="muted">
                  <span className="badge">{STATUS_WORDS[automation.status] ?? automation.status}</span> · changed {dateTime(automation.at)}
                </span>
              </li>
            ))}
          </ul>
        )}
      </section>
    </div>
  );
}
