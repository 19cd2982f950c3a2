// The overview's window in the URL (?days=7|30|90) and its request: kept apart from the page so the route tree does not load its charts.
import { queryOptions } from '@tanstack/react-query';
import { api, unwrap } from '../api/client';

export const WINDOWS = [7, 30, 90] as const;
export type OverviewWindow = (typeof WINDOWS)[number];

/** 30 days unless 7 or 90 is asked; anything else is dropped. */
export function overviewSearch(search: Record<string, unknown>): { days?: 7 | 90 } {
  const days = Number(search.days);
  return days === 7 || days === 90 ? { days } : {};
}

/** The overview's answer for a window: the page reads it, and the route's loader starts it while the page's code loads. */
export function overviewQuery(projectId: string, days: number) {
  return queryOptions({
    queryKey: ['overview', projectId, days],
    queryFn: () => unwrap(api.GET('/projects/{projectId}/overview', { params: { path: { projectId }, query: { days } } })),
    refetchInterval: 60_000,
  });
}
