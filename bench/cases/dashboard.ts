// The dashboard on the seeded audience: the people page's first rows and the overview's charts in Chromium, the
// overview API over HTTP, and the initial JavaScript the browser loads before any page (gzipped, against the budget).
import type { Browser } from 'playwright-core';
import { findChromium, launch } from '../../dashboard/test/chromium.js';
import { BUDGET_KB, initialJavaScript } from '../../dashboard/scripts/initial-javascript.js';
import { log, measure, type CaseResult } from '../lib/harness.js';
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
  const results = [await bundleCase(), await overviewApiCase(ctx, session)];
  const chromium = findChromium();
  if (!chromium) {
    log('dashboard: no Chromium (CHROME_PATH, or chromium on PATH): the page cases are skipped');
    return results;
  }
  const browser = await launch(chromium);
  try {
    results.push(await peoplePageCase(ctx, session, browser));
    const overview = await overviewPageCase(ctx, session, browser);
    if (overview) results.push(overview);
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

/** `GET /projects/:id/overview` as the dashboard asks it (a member's session, the default 30-day window): request to full JSON. */
async function overviewApiCase(ctx: AudienceContext, session: Session): Promise<CaseResult> {
  const headers = { authorization: `Bearer ${session.token}`, 'x-org-id': session.orgId };
  return measure('overview API (30 days)', { unit: 'ms', runs: ctx.runs, target: PAGE_TARGET }, async () => {
    const start = performance.now();
    const res = await fetch(`${ctx.server.url}/projects/${ctx.projectId}/overview?days=30`, { headers });
    const firstByte = performance.now() - start;
    if (!res.ok) throw new Error(`overview: ${res.status} ${await res.text()}`);
    const body = (await res.json()) as { audience: Record<string, number> };
    const ms = performance.now() - start;
    return { value: ms, extra: { firstByteMs: Math.round(firstByte), ...body.audience } };
  });
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

/**
 * From navigation to the overview's first chart canvas on screen: its charts are drawn from the one overview answer,
 * so they appear together. Skipped while the dashboard has no such page (its route says "Page not found").
 */
async function overviewPageCase(ctx: AudienceContext, session: Session, browser: Browser): Promise<CaseResult | undefined> {
  const url = `${ctx.server.url}/app/projects/${ctx.projectId}/overview`;
  const chart = 'main canvas';
  const open = async () => {
    const { context, page } = await signedInPage(browser, session);
    const start = performance.now();
    await page.goto(url);
    const found = await Promise.race([
      page
        .locator(chart)
        .first()
        .waitFor({ timeout: 30_000 })
        .then(() => 'chart' as const),
      page
        .getByRole('heading', { name: 'Page not found' })
        .waitFor({ timeout: 30_000 })
        .then(() => 'missing' as const),
    ]);
    const ms = performance.now() - start;
    const charts = found === 'chart' ? await page.locator(chart).count() : 0;
    await context.close();
    return { found, ms, charts };
  };
  if ((await open()).found === 'missing') {
    log(`dashboard: ${url.replace(ctx.server.url, '')} says "Page not found": the overview page case is skipped until the page lands`);
    return undefined;
  }
  return measure('dashboard overview page: charts', { unit: 'ms', runs: ctx.runs, target: PAGE_TARGET }, async () => {
    const { found, ms, charts } = await open();
    if (found !== 'chart') throw new Error('overview page: no chart');
    return { value: ms, extra: { charts } };
  });
}
