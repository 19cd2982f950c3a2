// The dashboard on the seeded audience: the people page's first rows and the overview's charts in Chromium, the
// overview API over HTTP, and the initial JavaScript the browser loads before any page (gzipped, against the budget).
import type { Browser } from 'playwright-core';
import { findChromium, launch } from '../../dashboard/test/chromium.js';
import { BUDGET_KB, initialJavaScript } from '../../dashboard/scripts/initial-javascript.js';
import { log, measure, measureInTurns, median, ratio, type CaseResult } from '../lib/harness.js';
import { recordTimeline, watchTimeline, type Timeline } from '../lib/page-timeline.js';
import type { AudienceContext } from './audience.js';

interface Session {
  token: string;
  orgId: string;
}

const PAGE_TARGET = { kind: 'max', value: 1000 } as const;

async function login(ctx: AudienceContext, owner: { email: string; password: string }): Promise<Session> {
  const res = await fetch(`${ctx.server.url}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(owner) });
  if (!res.ok) throw new Error(`login: ${res.status} ${await res.text()}`);
  const { access_token: token, user } = (await res.json()) as { access_token: string; user: { organizations: { id: string }[] } };
  return { token, orgId: user.organizations[0]!.id };
}

export async function dashboardCases(ctx: AudienceContext, owner: { email: string; password: string }): Promise<CaseResult[]> {
  const session = await login(ctx, owner);
  const results = [await bundleCase(), ...(await overviewApiCases(ctx, session))];
  const chromium = findChromium();
  if (!chromium) {
    log('dashboard: no Chromium (CHROME_PATH, or chromium on PATH): the page cases are skipped');
    return results;
  }
  const browser = await launch(chromium);
  try {
    results.push(await peoplePageCase(ctx, session, browser));
    results.push(...(await overviewPageCases(ctx, session, browser)));
  } finally {
    await browser.close();
  }
  return results;
}

/** The built dashboard's entry and modulepreloads, gzipped as dashboard/scripts/bundle-budget.ts reads them. */
async function bundleCase(): Promise<CaseResult> {
  const { initial, total, lazyBytes, lazyFiles } = await initialJavaScript(new URL('../../dashboard/dist/', import.meta.url));
  const kb = Math.round((total / 1024) * 10) / 10;
  return {
    name: 'dashboard initial JavaScript (gzip)',
    unit: 'KB',
    runs: [kb],
    median: kb,
    min: kb,
    max: kb,
    target: { kind: 'max', value: BUDGET_KB },
    pass: kb <= BUDGET_KB,
    notes: { files: initial.length, lazyChunks: lazyFiles, lazyKb: Math.round(lazyBytes / 1024) },
  };
}

/**
 * `GET /projects/:id/overview` (the whole) and its two parts the page asks for, each as the dashboard asks it (a
 * member's session, the default 30-day window; the audience has none): request to full JSON, one after another.
 */
async function overviewApiCases(ctx: AudienceContext, session: Session): Promise<CaseResult[]> {
  const headers = { authorization: `Bearer ${session.token}`, 'x-org-id': session.orgId };
  const call = (part: string) => async () => {
    const start = performance.now();
    const res = await fetch(`${ctx.server.url}/projects/${ctx.projectId}/overview${part}${part === '/audience' ? '' : '?days=30'}`, { headers });
    const firstByte = performance.now() - start;
    if (!res.ok) throw new Error(`overview${part}: ${res.status} ${await res.text()}`);
    await res.json();
    return { value: performance.now() - start, extra: { firstByteMs: Math.round(firstByte) } };
  };
  const whole = await measure('overview API (30 days)', { unit: 'ms', runs: ctx.runs, target: PAGE_TARGET }, call(''));
  const probe = await fetch(`${ctx.server.url}/projects/${ctx.projectId}/overview/activity?days=30`, { headers });
  await probe.arrayBuffer();
  if (probe.status === 404) {
    log('dashboard: no /overview/activity on this server (a build before the overview was split): its parts are skipped');
    return [whole];
  }
  return [
    whole,
    await measure('overview API: activity (30 days)', { unit: 'ms', runs: ctx.runs }, call('/activity')),
    await measure('overview API: audience', { unit: 'ms', runs: ctx.runs }, call('/audience')),
  ];
}

/** A fresh context (no cache) holding the session the login page leaves (auth/session.ts). */
async function signedInPage(browser: Browser, session: Session) {
  const context = await browser.newContext();
  await context.addInitScript({
    content: `localStorage.setItem('herald.token', ${JSON.stringify(session.token)}); localStorage.setItem('herald.orgId', ${JSON.stringify(session.orgId)});`,
  });
  return { context, page: await context.newPage() };
}

/** From navigation to the people page's first table row on screen. */
function peoplePageCase(ctx: AudienceContext, session: Session, browser: Browser): Promise<CaseResult> {
  return measure('dashboard people page: first rows', { unit: 'ms', runs: ctx.runs, target: PAGE_TARGET }, async () => {
    const { context, page } = await signedInPage(browser, session);
    const start = performance.now();
    await page.goto(`${ctx.server.url}/app/projects/${ctx.projectId}/subscribers`);
    await page.locator('table tbody tr').first().waitFor({ timeout: 30_000 });
    const ms = performance.now() - start;
    const rows = await page.locator('table tbody tr').count();
    await context.close();
    return { value: ms, extra: { rows } };
  });
}

/** The overview page's phases in one run, ms from the navigation's start (see `overviewBreakdown`). */
type Phases = Record<string, number>;

const OVERVIEW_SELECTORS = { charts: 'main canvas', numbers: 'main .tiles dd', notFound: 'main h1' };

/**
 * The overview page's run cut into what it waited for: the HTML and entry script, the app's first call, `/auth/me`
 * and the project, the overview's activity (queued, first byte, complete) and audience, the page's lazy chunks (the page, the line
 * chart, Chart.js), the numbers and the charts on screen, the long tasks before the charts and the renderer's CPU.
 */
function overviewBreakdown(timeline: Timeline, projectId: string): Phases {
  const find = (test: (name: string) => boolean) => timeline.requests.filter((r) => test(r.name));
  const one = (test: (name: string) => boolean) => find(test)[0];
  const entry = one((name) => /\/assets\/index-[^/]+\.js$/.test(name));
  const me = one((name) => name === '/auth/me');
  const project = one((name) => name === `/projects/${projectId}`);
  // The page asks for the overview's activity and its audience apart (before: the whole, in one request).
  const api = one((name) => name === `/projects/${projectId}/overview/activity`) ?? one((name) => name === `/projects/${projectId}/overview`);
  const audience = one((name) => name === `/projects/${projectId}/overview/audience`);
  const chunks = find((name) => /\/assets\/(overview|line-chart|chart)-[^/]+\.js$/.test(name));
  const charts = timeline.seen.charts ?? NaN;
  const before = timeline.longTasks.filter((t) => t.start < charts);
  const firstCall = Math.min(...timeline.requests.filter((r) => r.name !== 'document' && !r.name.startsWith('/app')).map((r) => r.start));
  const ready = Math.max(api?.end ?? NaN, ...chunks.map((c) => c.end));
  const phases: Phases = {
    htmlEnd: timeline.requests[0]!.end,
    entryJsEnd: entry?.end ?? NaN,
    firstApiCall: firstCall,
    meStart: me?.start ?? NaN,
    meEnd: me?.end ?? NaN,
    projectStart: project?.start ?? NaN,
    projectEnd: project?.end ?? NaN,
    overviewStart: api?.start ?? NaN,
    overviewFirstByte: api?.firstByte ?? NaN,
    overviewEnd: api?.end ?? NaN,
    audienceStart: audience?.start ?? NaN,
    audienceEnd: audience?.end ?? NaN,
    chunksStart: Math.min(...chunks.map((c) => c.start)),
    chunksEnd: Math.max(...chunks.map((c) => c.end)),
    numbers: timeline.seen.numbers ?? NaN,
    charts,
    renderAfterData: charts - ready,
    longTasksBeforeCharts: before.reduce((sum, t) => sum + t.duration, 0),
    longestTask: Math.max(0, ...before.map((t) => t.duration)),
    ...timeline.cpu,
  };
  return Object.fromEntries(Object.entries(phases).map(([k, v]) => [k, Math.round(v)]));
}

/** Each phase's median over the runs, one line for the log and the notes. */
function medianPhases(runs: Phases[]): Phases {
  return Object.fromEntries(Object.keys(runs[0] ?? {}).map((key) => [key, Math.round(median(runs.map((r) => r[key]!)))]));
}

const describePhases = (p: Phases) =>
  `html ${p.htmlEnd} · entry JS ${p.entryJsEnd} · first call ${p.firstApiCall} · /auth/me ${p.meStart}–${p.meEnd} · ` +
  `project ${p.projectStart}–${p.projectEnd} · overview API (activity) ${p.overviewStart}–${p.overviewEnd} (first byte ${p.overviewFirstByte}) · ` +
  `audience ${p.audienceStart}–${p.audienceEnd} · ` +
  `chunks ${p.chunksStart}–${p.chunksEnd} · numbers ${p.numbers} · charts ${p.charts} (render after data ${p.renderAfterData}) · ` +
  `long tasks before charts ${p.longTasksBeforeCharts} (longest ${p.longestTask}) · renderer CPU: task ${p.taskMs}, script ${p.scriptMs}, ` +
  `style ${p.styleMs}, layout ${p.layoutMs}`;

/**
 * From navigation to the overview's first chart canvas on screen, with its breakdown (`overviewBreakdown`), and to its
 * audience's numbers (the tiles, from their own request, which may come later). Measured
 * in turns with the **ceiling**: the same page whose overview request the browser answers itself, at once, with an
 * answer the server gave — what the page costs on this machine in this minute beside its API.
 * Skipped while the dashboard has no such page (its route says "Page not found").
 */
async function overviewPageCases(ctx: AudienceContext, session: Session, browser: Browser): Promise<CaseResult[]> {
  const url = `${ctx.server.url}/app/projects/${ctx.projectId}/overview`;
  const headers = { authorization: `Bearer ${session.token}`, 'x-org-id': session.orgId };
  // What the server answers on each of the overview's paths the page may ask (the whole, its activity, its audience).
  const answers = new Map<string, string>();
  for (const part of ['', '/activity', '/audience']) {
    const res = await fetch(`${ctx.server.url}/projects/${ctx.projectId}/overview${part}${part === '/audience' ? '' : '?days=30'}`, { headers });
    if (res.ok) answers.set(`/projects/${ctx.projectId}/overview${part}`, await res.text());
  }
  const open = async (instantApi: boolean) => {
    const { context, page } = await signedInPage(browser, session);
    await watchTimeline(context, OVERVIEW_SELECTORS);
    if (instantApi) {
      await page.route(`**/projects/${ctx.projectId}/overview**`, (route) => {
        const body = answers.get(new URL(route.request().url()).pathname);
        return body === undefined ? route.continue() : route.fulfill({ status: 200, contentType: 'application/json', body });
      });
    }
    const read = await recordTimeline(context, page);
    const start = performance.now();
    await page.goto(url);
    const found = await Promise.race([
      page
        .locator(OVERVIEW_SELECTORS.charts)
        .first()
        .waitFor({ timeout: 30_000 })
        .then(() => 'chart' as const),
      page
        .getByRole('heading', { name: 'Page not found' })
        .waitFor({ timeout: 30_000 })
        .then(() => 'missing' as const),
    ]);
    const ms = performance.now() - start;
    const charts = found === 'chart' ? await page.locator(OVERVIEW_SELECTORS.charts).count() : 0;
    // The audience's numbers may come after the charts: waited for, so that no run's counts overlap the next run.
    if (found === 'chart') await page.locator(OVERVIEW_SELECTORS.numbers).first().waitFor({ timeout: 30_000 });
    const numbersMs = performance.now() - start;
    const phases = found === 'chart' ? overviewBreakdown(await read(), ctx.projectId) : {};
    await context.close();
    return { found, ms, numbersMs, charts, phases };
  };
  if ((await open(false)).found === 'missing') {
    log(`dashboard: ${url.replace(ctx.server.url, '')} says "Page not found": the overview page case is skipped until the page lands`);
    return [];
  }
  const phases: Record<'real' | 'ceiling', Phases[]> = { real: [], ceiling: [] };
  const numbers: number[] = [];
  const run = (kind: 'real' | 'ceiling') => async (index: number) => {
    const { found, ms, numbersMs, charts, phases: p } = await open(kind === 'ceiling');
    if (found !== 'chart') throw new Error('overview page: no chart');
    if (index >= 0) {
      phases[kind].push(p);
      if (kind === 'real') numbers.push(numbersMs);
      log(`overview page (${kind}) run ${index + 1}: charts ${Math.round(ms)} ms, numbers ${Math.round(numbersMs)} ms — ${describePhases(p)}`);
    }
    return { value: ms, extra: { charts } };
  };
  const [real, ceiling] = await measureInTurns([
    { name: 'dashboard overview page: charts', options: { unit: 'ms', runs: ctx.runs, target: PAGE_TARGET }, once: run('real') },
    { name: 'dashboard overview page: charts, API answered at once (ceiling)', options: { unit: 'ms', runs: ctx.runs }, once: run('ceiling') },
  ]);
  const round = (n: number) => Math.round(n);
  const audienceNumbers: CaseResult = {
    name: 'dashboard overview page: audience numbers',
    unit: 'ms',
    runs: numbers.map(round),
    median: round(median(numbers)),
    min: round(Math.min(...numbers)),
    max: round(Math.max(...numbers)),
  };
  for (const kind of ['real', 'ceiling'] as const) log(`overview page (${kind}), median phases (ms from navigation): ${describePhases(medianPhases(phases[kind]))}`);
  const medians = medianPhases(phases.real);
  real!.notes = { ...real!.notes, ...Object.fromEntries(Object.entries(medians).map(([k, v]) => [`median ${k}`, v])) };
  return [real!, audienceNumbers, ceiling!, ratio('overview page / its ceiling', real!, ceiling!)];
}
