// The overview's window in the URL (?days=7|30|90) and its two requests: kept apart from the page so the route tree does not load its charts.
import { queryOptions } from '@tanstack/react-query';
import { api, unwrap } from '../api/client';

export const WINDOWS = [7, 30, 90] as const;
export type OverviewWindow = (typeof WINDOWS)[number];

/** 30 days unless 7 or 90 is asked; anything else is dropped. */
export function overviewSearch(search: Record<string, unknown>): { days?: 7 | 90 } {
  const days = Number(search.days);
  return days === 7 || days === 90 ? { days } : {};
}

/**
 * The overview's activity for a window (all but the audience): the page reads it, and the route's loader starts it while
 * the page's code loads. It answers quickly at any audience size, so the page and its charts do not wait for the counts.
 */
export function activityQuery(projectId: string, days: number) {
  return queryOptions({
    queryKey: ['overview', projectId, 'activity', days],
    queryFn: () => unwrap(api.GET('/projects/{projectId}/overview/activity', { params: { path: { projectId }, query: { days } } })),
    refetchInterval: 60_000,
  });
}

/**
 * Who each channel reaches now: counted over the whole audience, the same for every window. Asked for once the activity
 * has come (the page's audience section asks): run beside it, its parallel counts take both cores of a small machine
 * and hold the charts back (docs/PERFORMANCE.md, "Dashboard", run 10).
 */
export function audienceQuery(projectId: string) {
  return queryOptions({
    queryKey: ['overview', projectId, 'audience'],
    queryFn: () => unwrap(api.GET('/projects/{projectId}/overview/audience', { params: { path: { projectId } } })),
    refetchInterval: 60_000,
  });
}
