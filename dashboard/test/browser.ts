// End-to-end helpers: a Chromium found on this machine, a real `herald serve` on a test database, axe-core checks.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Browser, BrowserContext, BrowserContextOptions, Locator, Page } from 'playwright-core';
import { expect } from 'vitest';
import { freePort } from '../../server/src/db/embedded-postgres.js';
import type { DnsServer } from '../../server/test/dns-server.js';
import { createTestDatabase, type TestDatabase } from '../../server/test/harness.js';
import type { SmtpPeer } from '../../server/test/smtp-peer.js';

import { launch } from './chromium.js';

export { findChromium, launch } from './chromium.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const MAIN = path.join(ROOT, 'server/dist/main.js');
export const SCREENSHOTS = path.join(ROOT, 'docs/screenshots');

export const ADMIN = { email: 'admin@example.com', password: 'admin-password-e2e' };
export const VIEWER = { email: 'viewer@example.com', password: 'viewer-password-e2e' };

export interface Herald {
  url: string;
  child: ChildProcess;
  output: () => string;
  database: TestDatabase;
  env: Record<string, string>;
  stop(): Promise<void>;
}

/** `herald serve` from server/dist on a fresh database, first run done with ADMIN's credentials; `extraEnv` on top. */
export async function startHerald(extraEnv: Record<string, string> = {}): Promise<Herald> {
  if (!existsSync(MAIN) || !existsSync(path.join(ROOT, 'dashboard/dist/index.html'))) {
    throw new Error('server/dist or dashboard/dist is missing: run `npm run build` first (npm test does)');
  }
  const database = await createTestDatabase();
  const port = await freePort();
  const dataDir = await mkdtemp(path.join(tmpdir(), 'herald-e2e-'));
  const env = {
    PATH: process.env.PATH ?? '',
    DATABASE_URL: database.url,
    DATA_DIR: dataDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    JWT_SECRET: 'e2e-secret-e2e-secret-e2e-secret-0123456789',
    RATE_LIMIT_ENABLED: 'false',
    ADMIN_EMAIL: ADMIN.email,
    ADMIN_PASSWORD: ADMIN.password,
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    // The tests' SMTP sinks listen on loopback: an allowed outbound host, as a self-hoster's own relay would be.
    OUTBOUND_ALLOWED_HOSTS: '127.0.0.1',
    ...extraEnv,
  };
  const child = spawn(process.execPath, [MAIN, 'serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`herald exited before it was ready:\n${output}`);
    const status = await fetch(`${url}/readyz`).then((res) => res.status, () => 0);
    if (status === 200) break;
    if (Date.now() > deadline) throw new Error(`herald not ready after 60 s:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return {
    url,
    child,
    output: () => output,
    database,
    env,
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
        await exited;
        clearTimeout(timer);
        expect(child.exitCode, `herald did not stop cleanly on SIGTERM:\n${output}`).toBe(0);
      }
      // Nothing is left: the process is gone.
      expect(() => process.kill(child.pid!, 0)).toThrow();
      await rm(dataDir, { recursive: true, force: true });
      await database.drop();
    },
  };
}

/** `herald admin …` against the same database, as an operator would run it. */
export async function admin(herald: Herald, ...args: string[]): Promise<Record<string, unknown>> {
  const { stdout } = await promisify(execFile)(process.execPath, [MAIN, 'admin', ...args], { env: herald.env });
  return JSON.parse(stdout) as Record<string, unknown>;
}

export async function api<T>(herald: Herald, method: string, url: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
  const res = await fetch(`${herald.url}${url}`, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/**
 * axe-core from node_modules, evaluated through the DevTools protocol (the page's CSP refuses injected script tags,
 * rightly): no serious or critical violation on the page as it is now.
 */
export async function expectAccessible(page: Page, what: string) {
  const source = await readFile(AXE, 'utf8');
  await page.evaluate(source);
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(context: Document, options: object): Promise<{ violations: AxeViolation[] }> } }).axe;
    return (await axe.run(document, { resultTypes: ['violations'] })).violations;
  });
  const blocking = violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => `${violation.impact} ${violation.id}: ${violation.help} (${violation.nodes.map((node) => node.target.join(' ')).join(', ')})`);
  expect(blocking, `accessibility of ${what}`).toEqual([]);
}

/**
 * A row added through the condition builder's "+ Condition" menu (`kind`: Attribute, Event, In segment, Tags, Country …)
 * to the last group within `scope` (the top group of a builder: nested groups come before its own menu).
 */
export async function addCondition(scope: Page | Locator, kind: string) {
  await scope.getByRole('button', { name: '+ Condition' }).last().click();
  await scope.getByRole('group', { name: 'Kind of condition' }).getByRole('button', { name: kind, exact: true }).click();
}

/** With DASHBOARD_SCREENSHOTS=1, docs/screenshots/<name>.png; otherwise nothing (normal runs leave the docs alone). */
export async function screenshot(page: Page, name: string) {
  if (process.env.DASHBOARD_SCREENSHOTS !== '1') return;
  await mkdir(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/** A `herald serve` whose owner ADMIN is logged in through the API, a VIEWER of its organization, and a Chromium. */
export interface Session {
  herald: Herald;
  browser: Browser;
  /** The owner's JWT headers for API calls. */
  auth: Record<string, string>;
  orgId: string;
  /** The first-run project "Demo". */
  projectId: string;
  /** Content-Security-Policy complaints of every page this session opened. */
  cspViolations: string[];
  newPage(options?: BrowserContextOptions & { permissions?: string[] }): Promise<{ context: BrowserContext; page: Page }>;
  /** Logs `who` in through the login page and opens the Demo project (its overview). */
  openDemo(page: Page, who: { email: string; password: string }): Promise<void>;
  stop(): Promise<void>;
}

export async function startSession(chromiumPath: string, extraEnv: Record<string, string> = {}): Promise<Session> {
  const herald = await startHerald(extraEnv);
  try {
    const login = await api<{ access_token: string; user: { organizations: { id: string }[] } }>(herald, 'POST', '/auth/login', ADMIN);
    const orgId = login.user.organizations[0]!.id;
    const auth = { authorization: `Bearer ${login.access_token}`, 'x-org-id': orgId };
    const projects = await api<{ data: { id: string; name: string }[] }>(herald, 'GET', '/projects', undefined, auth);
    const projectId = projects.data.find((project) => project.name === 'Demo')!.id;
    await admin(herald, 'create-user', '--email', VIEWER.email, '--password', VIEWER.password, '--name', 'Vera Viewer');
    await admin(herald, 'add-member', '--org', orgId, '--email', VIEWER.email, '--role', 'VIEWER');
    const browser = await launch(chromiumPath);
    const cspViolations: string[] = [];
    return {
      herald,
      browser,
      auth,
      orgId,
      projectId,
      cspViolations,
      async newPage({ permissions, ...options } = {}) {
        const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, ...options });
        if (permissions) await context.grantPermissions(permissions, { origin: herald.url });
        const page = await context.newPage();
        page.setDefaultTimeout(10_000);
        page.on('console', (message) => {
          if (/Content.Security.Policy/i.test(message.text())) cspViolations.push(message.text());
        });
        return { context, page };
      },
      async openDemo(page, who) {
        await page.goto(`${herald.url}/app/`);
        await page.waitForURL('**/app/login');
        await page.getByLabel('Email').fill(who.email);
        await page.getByLabel('Password').fill(who.password);
        await page.getByRole('button', { name: 'Log in' }).click();
        await page.getByRole('link', { name: 'Demo' }).click();
        await page.getByRole('heading', { name: 'Overview', level: 2 }).waitFor();
      },
      async stop() {
        await browser.close();
        await herald.stop();
      },
    };
  } catch (error) {
    await herald.stop();
    throw error;
  }
}

/**
 * Nothing when the page does not scroll sideways (`scrollWidth <= innerWidth`); else what sticks out past the right
 * edge (outermost elements, outside any scrolling region), to say what to fix.
 */
export async function sidewaysOverflow(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const width = window.innerWidth;
    if (document.documentElement.scrollWidth <= width) return [];
    const clipped = (element: Element) => {
      for (let parent = element.parentElement; parent && parent !== document.body; parent = parent.parentElement) {
        if (getComputedStyle(parent).overflowX !== 'visible') return true;
      }
      return false;
    };
    const name = (element: Element) => `${element.tagName.toLowerCase()}${element.id ? `#${element.id}` : ''}${element.className ? `.${String(element.className).split(/\s+/).join('.')}` : ''}`;
    const past = Array.from(document.querySelectorAll('body *')).filter((element) => element.getBoundingClientRect().right > width);
    // An absolutely placed element can stick out of a scrolling region too: then every element past the edge is named.
    const wide = past.some((element) => !clipped(element)) ? past.filter((element) => !clipped(element)) : past;
    const outermost = wide.filter((element) => !wide.includes(element.parentElement!));
    const found = outermost.slice(0, 8).map((element) => `${name(element)} (right ${Math.round(element.getBoundingClientRect().right)}): ${(element.textContent ?? '').slice(0, 40)}`);
    return [`page ${document.documentElement.scrollWidth} px wide in ${width}`, ...found];
  });
}

/** The project emails through the local SMTP peer, from `domain` verified against the local DNS server. */
export async function emailThroughPeer(
  { herald, auth, projectId }: { herald: Herald; auth: Record<string, string>; projectId: string },
  dns: DnsServer,
  peer: SmtpPeer,
  domain: string,
): Promise<{ id: string }> {
  const added = await api<{ id: string; records: { name: string; value: string; checked: boolean }[] }>(
    herald,
    'POST',
    `/projects/${projectId}/email-domains`,
    { domain },
    auth,
  );
  for (const record of added.records) if (record.checked) dns.setTxt(record.name, record.value);
  await api(herald, 'POST', `/projects/${projectId}/email-domains/${added.id}/verify`, undefined, auth);
  await api(herald, 'PUT', `/projects/${projectId}/channels/email`, { provider: 'smtp', settings: { host: peer.host, port: peer.port, secure: false } }, auth);
  return added;
}
