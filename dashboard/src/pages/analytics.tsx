// Audience analytics (spec 4.3): active subscribers by country, platform, browser, OS, device and city, as bar charts.
// Loaded on demand (a route of its own chunk), so the charting library is not in the first page's JavaScript.
import { useQuery } from '@tanstack/react-query';
import { useParams } from '@tanstack/react-router';
import { api, unwrap, type Schemas } from '../api/client';
import { BarChart } from '../components/bar-chart';
import { QueryState } from '../components/query-state';

type Analytics = Schemas['SubscriberAnalytics'];

const CHARTS: [keyof Analytics, string][] = [
  ['country', 'Country'],
  ['city', 'City'],
  ['platform', 'Platform'],
  ['device', 'Device'],
  ['browser', 'Browser'],
  ['os', 'Operating system'],
];

export function AnalyticsPage() {
  const { projectId } = useParams({ from: '/signed-in/projects/$projectId/audience' });
  const analytics = useQuery({
    queryKey: ['analytics', projectId],
    queryFn: () => unwrap(api.GET('/subscribers/analytics/project/{projectId}', { params: { path: { projectId }, query: { limit: 10 } } })),
  });
  return (
    <section aria-labelledby="audience-title">
      <h2 id="audience-title">Audience</h2>
      <p className="muted">Active subscribers, the ten largest values of each; computed live.</p>
      <QueryState
        query={analytics}
        isEmpty={(data) => CHARTS.every(([key]) => data[key].length === 0)}
        empty={<p>No active subscribers yet.</p>}
      >
        {(data) => (
          <div className="charts">
            {CHARTS.map(([key, title]) => (
              <BarChart key={key} title={title} bars={data[key]} />
            ))}
          </div>
        )}
      </QueryState>
    </section>
  );
}
