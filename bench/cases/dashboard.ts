// The dashboard's subscribers page on the seeded audience in Chromium: from navigation to its first rows on screen.
import { findChromium, launch } from '../../dashboard/test/chromium.js';
import { log, measure, type CaseResult } from '../lib/harness.js';
import type { AudienceContext } from './audience.js';

export async function dashboardListCase(ctx: AudienceContext, owner: { email: string; password: string }): Promise<CaseResult[]> {
  const chromium = findChromium();
  if (!chromium) {
    log('dashboard: no Chromium (CHROME_PATH, or chromium on PATH): the page case is skipped');
    return [];
  }
  const res = await fetch(`${ctx.server.url}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(owner) });
  if (!res.ok) throw new Error(`login: ${res.status} ${await res.text()}`);
  const { access_token: token, user } = (await res.json()) as { access_token: string; user: { organizations: { id: string }[] } };
  const browser = await launch(chromium);
  try {
    return [
      await measure('dashboard subscribers page: first rows', { unit: 'ms', runs: ctx.runs, target: { kind: 'max', value: 1000 } }, async () => {
        const context = await browser.newContext();
        // The session as the login page leaves it (auth/session.ts).
        await context.addInitScript({
          content: `localStorage.setItem('herald.token', ${JSON.stringify(token)}); localStorage.setItem('herald.orgId', ${JSON.stringify(user.organizations[0]!.id)});`,
        });
        const page = await context.newPage();
        const start = performance.now();
        await page.goto(`${ctx.server.url}/app/projects/${ctx.projectId}/subscribers`);
        await page.locator('table tbody tr').first().waitFor({ timeout: 30_000 });
        const ms = performance.now() - start;
        const rows = await page.locator('table tbody tr').count();
        await context.close();
        return { value: ms, extra: { rows } };
      }),
    ];
  } finally {
    await browser.close();
  }
}
