// A campaign's activity chart, shared by email and push campaigns: the bucket names and the chart's labels and lines.
import { useMemo } from 'react';
import type { Schemas } from '../api/client';
import { LineChart, type Series } from '../components/line-chart';

type Analytics = Schemas['EmailCampaignAnalytics'] | Schemas['PushCampaignAnalytics'];

export const BUCKET_NAMES: Record<Analytics['bucket'], string> = {
  '1m': 'minute',
  '5m': '5 minutes',
  '15m': '15 minutes',
  '1h': 'hour',
  '6h': '6 hours',
  '1d': 'day',
  '1w': 'week (from Monday)',
};

/** The chart of `analytics` with the lines `seriesOf` draws; a bucket is named by its time under a day, by its date from a day. */
export function ActivityChart<A extends Analytics>({ analytics, seriesOf }: { analytics: A; seriesOf: (buckets: A['buckets']) => Series[] }) {
  const chart = useMemo(() => {
    const { buckets, bucketSeconds } = analytics;
    // Under a day a bucket is named by its time (with its date, as a window may span days).
    const format: Intl.DateTimeFormatOptions =
      bucketSeconds < 86_400 ? { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' } : { year: 'numeric', month: 'short', day: 'numeric' };
    return { labels: buckets.map((b) => new Date(b.start).toLocaleString(undefined, format)), series: seriesOf(buckets) };
  }, [analytics, seriesOf]);
  return <LineChart title={`Events per ${BUCKET_NAMES[analytics.bucket]}`} labels={chart.labels} series={chart.series} />;
}
