// A push campaign's activity over time (sent, delivered, clicked per bucket): loaded on demand, Chart.js with it.
import { useQuery } from '@tanstack/react-query';
import { api, unwrap, type Schemas } from '../api/client';
import { dateTime } from '../components/format';
import type { Series } from '../components/line-chart';
import { QueryState } from '../components/query-state';
import { ActivityChart, BUCKET_NAMES } from './campaign-activity';
import { PUSH_DELIVERED } from './campaign-channel';

type Buckets = Schemas['PushCampaignAnalytics']['buckets'];

const seriesOf = (buckets: Buckets): Series[] => [
  { label: 'Sent', color: '#1d4ed8', values: buckets.map((b) => b.sent) },
  { label: 'Delivered', color: '#15803d', values: buckets.map((b) => b.delivered) },
  { label: 'Clicked', color: '#a16207', values: buckets.map((b) => b.clicked.unique) },
];

/** Read again every 10 s while the campaign is sending, as its counters are. */
export function PushCampaignActivity({ campaignId, live }: { campaignId: string; live: boolean }) {
  const analytics = useQuery({
    queryKey: ['campaign', campaignId, 'analytics'],
    queryFn: () => unwrap(api.GET('/campaigns/{id}/analytics', { params: { path: { id: campaignId } } })),
    refetchInterval: live ? 10_000 : false,
  });
  return (
    <section aria-labelledby="activity-title">
      <h3 id="activity-title">Activity over time</h3>
      <QueryState query={analytics}>
        {(a) => (
          <>
            <p className="hint">
              Per {BUCKET_NAMES[a.bucket]}, from {dateTime(a.from)} to {dateTime(a.to)}. Delivered: {PUSH_DELIVERED}, so recent buckets may still grow.
              Clicked: each delivery's first click.
            </p>
            <ActivityChart analytics={a} seriesOf={seriesOf} />
          </>
        )}
      </QueryState>
    </section>
  );
}
