// The overview's window in the URL (?days=7|30|90): kept apart from the page so the route tree does not load its charts.
export const WINDOWS = [7, 30, 90] as const;
export type OverviewWindow = (typeof WINDOWS)[number];

/** 30 days unless 7 or 90 is asked; anything else is dropped. */
export function overviewSearch(search: Record<string, unknown>): { days?: 7 | 90 } {
  const days = Number(search.days);
  return days === 7 || days === 90 ? { days } : {};
}
