// A person's timeline on their page: messages, what became of them, the app's events and automation runs, newest first.
import { useInfiniteQuery } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { api, unwrap, type Schemas } from '../api/client';
import { dateTime } from '../components/format';
import { ErrorMessage } from '../components/query-state';

type Item = Schemas['TimelineItem'];

const PAGE = 25;

const SOURCE_LABEL = { campaign: 'Campaign', automation: 'Automation', transactional: 'Transactional' } as const;

/** Where the item came from, linked where the dashboard has a page for it. */
function Origin({ projectId, item }: { projectId: string; item: Item }) {
  if (item.campaign) {
    const name = item.campaign.name ?? 'Campaign (deleted)';
    if (item.channel === 'email') {
      return (
        <Link to="/projects/$projectId/email-campaigns/$campaignId" params={{ projectId, campaignId: item.campaign.id }}>
          {name}
        </Link>
      );
    }
    if (item.channel === 'push') {
      return (
        <Link to="/projects/$projectId/campaigns/$campaignId" params={{ projectId, campaignId: item.campaign.id }}>
          {name}
        </Link>
      );
    }
    return <>{name}</>;
  }
  if (item.automation) {
    return (
      <Link to="/projects/$projectId/automations/$automationId" params={{ projectId, automationId: item.automation.id }}>
        {item.automation.name ?? 'Automation (deleted)'}
      </Link>
    );
  }
  return <>{item.source ? SOURCE_LABEL[item.source] : '—'}</>;
}

/** What the item says beyond its title: a link clicked, why a message did not go, an event's properties. */
function Detail({ item }: { item: Item }) {
  if (item.url) {
    return (
      <a href={item.url} rel="noreferrer noopener" target="_blank" className="event-detail">
        {item.url}
      </a>
    );
  }
  const parts = [item.messageTitle && `“${item.messageTitle}”`, item.detail].filter(Boolean);
  return <>{parts.length > 0 ? parts.join(' — ') : '—'}</>;
}

export function PersonTimeline({ projectId, subscriberId }: { projectId: string; subscriberId: string }) {
  const timeline = useInfiniteQuery({
    queryKey: ['subscriber-timeline', subscriberId],
    queryFn: ({ pageParam }) =>
      unwrap(api.GET('/subscribers/{id}/timeline', { params: { path: { id: subscriberId }, query: { limit: PAGE, ...(pageParam && { cursor: pageParam }) } } })),
    initialPageParam: '',
    getNextPageParam: (page) => page.nextCursor ?? undefined,
  });
  const items = timeline.data?.pages.flatMap((page) => page.data) ?? [];
  return (
    <section aria-labelledby="timeline-title">
      <h3 id="timeline-title">Timeline</h3>
      <p className="hint">Everything that happened to or with this person, newest first: messages, opens and clicks, events your app sent, automations.</p>
      {timeline.isPending ? (
        <p className="muted" role="status">
          Loading…
        </p>
      ) : timeline.isError && items.length === 0 ? (
        <ErrorMessage error={timeline.error} />
      ) : items.length === 0 ? (
        <p className="muted">Nothing yet: messages sent, their opens and clicks, events and automations will show here.</p>
      ) : (
        <>
          <table className="timeline">
            <caption className="visually-hidden">Timeline, newest first</caption>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">What</th>
                <th scope="col">From</th>
                <th scope="col">Detail</th>
              </tr>
            </thead>
            <tbody>
              {items.map((item, index) => (
                <tr key={`${item.at}-${item.kind}-${index}`} data-kind={item.kind}>
                  <td>{dateTime(item.at)}</td>
                  <td>
                    {item.title}
                    {item.machine && <span className="badge machine">Machine</span>} {item.repeat && <span className="badge">Repeat</span>}
                  </td>
                  <td>
                    <Origin projectId={projectId} item={item} />
                  </td>
                  <td>
                    <Detail item={item} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <ErrorMessage error={timeline.isFetchNextPageError ? timeline.error : null} />
          {timeline.hasNextPage ? (
            <button type="button" disabled={timeline.isFetchingNextPage} onClick={() => void timeline.fetchNextPage()}>
              {timeline.isFetchingNextPage ? 'Loading older…' : 'Show older'}
            </button>
          ) : (
            <p className="muted">That is everything.</p>
          )}
        </>
      )}
    </section>
  );
}
