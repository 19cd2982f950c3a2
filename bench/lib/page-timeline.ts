// Where a dashboard page's time goes in Chromium: its requests (resource timing), long tasks, the moments chosen
// elements appear and the renderer's own CPU (CDP Performance domain), all in ms from the navigation's start.
import type { BrowserContext, Page } from 'playwright-core';

/** A request as the page saw it: queued at `start`, first byte at `firstByte`, body complete at `end`. */
export interface Fetched {
  name: string;
  start: number;
  firstByte: number;
  end: number;
}

export interface Timeline {
  requests: Fetched[];
  longTasks: { start: number; duration: number }[];
  /** When each watched selector first matched, by the name it was watched under. */
  seen: Record<string, number>;
  /** Renderer CPU from the CDP Performance domain: script, layout and style, and every task. */
  cpu: { scriptMs: number; layoutMs: number; styleMs: number; taskMs: number };
}

/**
 * Before the page's first script: a long-task observer and a watch on `selectors` (name → CSS selector) recording
 * `performance.now()` at the first DOM change where each matches.
 */
export async function watchTimeline(context: BrowserContext, selectors: Record<string, string>): Promise<void> {
  await context.addInitScript({
    content: `(() => {
      const t = (window.__timeline = { longTasks: [], seen: {} });
      new PerformanceObserver((list) => {
        for (const e of list.getEntries()) t.longTasks.push({ start: e.startTime, duration: e.duration });
      }).observe({ type: 'longtask', buffered: true });
      const selectors = ${JSON.stringify(selectors)};
      const check = () => {
        for (const [name, selector] of Object.entries(selectors)) {
          if (t.seen[name] === undefined && document.querySelector(selector)) t.seen[name] = performance.now();
        }
      };
      new MutationObserver(check).observe(document, { childList: true, subtree: true });
    })();`,
  });
}

/** Starts the renderer's CPU counters for `page`; the returned function reads them with the page's timeline. */
export async function recordTimeline(context: BrowserContext, page: Page): Promise<() => Promise<Timeline>> {
  const cdp = await context.newCDPSession(page);
  await cdp.send('Performance.enable', { timeDomain: 'timeTicks' });
  return async () => {
    const { metrics } = await cdp.send('Performance.getMetrics');
    const metric = (name: string) => Math.round((metrics.find((m) => m.name === name)?.value ?? 0) * 1000);
    // A string: this file is compiled without the DOM's types.
    const page_ = await page.evaluate<Omit<Timeline, 'cpu'>>(`(() => {
      const pathOf = (name) => new URL(name).pathname;
      const requests = performance.getEntriesByType('resource').map((e) => ({ name: pathOf(e.name), start: e.startTime, firstByte: e.responseStart, end: e.responseEnd }));
      const nav = performance.getEntriesByType('navigation')[0];
      requests.unshift({ name: 'document', start: nav.startTime, firstByte: nav.responseStart, end: nav.responseEnd });
      return { requests, longTasks: window.__timeline.longTasks, seen: window.__timeline.seen };
    })()`);
    return {
      ...page_,
      cpu: { scriptMs: metric('ScriptDuration'), layoutMs: metric('LayoutDuration'), styleMs: metric('RecalcStyleDuration'), taskMs: metric('TaskDuration') },
    };
  };
}
