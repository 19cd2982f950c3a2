// A customer's site for the SDK's browser tests: a page loading Herald's script build, and a service worker file of
// its own that imports Herald's, served from an origin other than Herald's.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Site {
  origin: string;
  close(): Promise<void>;
}

export async function startSite(heraldUrl: string): Promise<Site> {
  const files: Record<string, [string, string]> = {
    '/': [
      'text/html',
      `<!doctype html><html lang="en"><title>Shop</title>
       <script src="${heraldUrl}/sdk/herald.js"></script>
       <button id="subscribe" onclick="window.subscribing = Herald.subscribe()">Get notifications</button></html>`,
    ],
    '/sw.js': ['text/javascript', `importScripts('${heraldUrl}/sdk/herald-sw.js');`],
  };
  const server: Server = createServer((req, res) => {
    const file = files[new URL(req.url ?? '/', 'http://x').pathname];
    if (!file) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': file[0] }).end(file[1]);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/**
 * The one boundary the tests supply: headless Chromium cannot reach a real push service, so `PushManager` hands out a
 * subscription to the local push service with keys made by the test (kept in localStorage, as a browser keeps its
 * subscription across visits). Everything else — permission, the service worker, IndexedDB, fetch, CORS — is real.
 */
export function fakePushManager() {
  const KEY = 'test.pushSubscription';
  interface Stored {
    endpoint: string;
    p256dh: string;
    auth: string;
    applicationServerKey?: number[];
  }
  const read = (): Stored | null => JSON.parse(localStorage.getItem(KEY) ?? 'null') as Stored | null;
  const subscriptionOf = (stored: Stored) => ({
    endpoint: stored.endpoint,
    expirationTime: null,
    options: { userVisibleOnly: true, applicationServerKey: new Uint8Array(stored.applicationServerKey ?? []).buffer },
    toJSON: () => ({ endpoint: stored.endpoint, expirationTime: null, keys: { p256dh: stored.p256dh, auth: stored.auth } }),
    unsubscribe: async () => {
      localStorage.setItem(KEY, JSON.stringify({ ...read(), applicationServerKey: undefined, active: false }));
      return true;
    },
  });
  PushManager.prototype.getSubscription = async function () {
    const stored = read() as (Stored & { active?: boolean }) | null;
    return (stored?.applicationServerKey && stored.active !== false ? subscriptionOf(stored) : null) as unknown as PushSubscription;
  };
  PushManager.prototype.subscribe = async function (options?: PushSubscriptionOptionsInit) {
    const stored = read();
    if (!stored) throw new DOMException('no push service in this test', 'AbortError');
    const key = options?.applicationServerKey as Uint8Array;
    const next = { ...stored, applicationServerKey: Array.from(key), active: true };
    localStorage.setItem(KEY, JSON.stringify(next));
    return subscriptionOf(next) as unknown as PushSubscription;
  };
}

/** What the test's browser holds: the subscription the fake push manager hands out next. */
export const holdSubscription = (subscription: { endpoint: string; p256dh: string; auth: string }) =>
  `localStorage.setItem('test.pushSubscription', JSON.stringify(Object.assign(JSON.parse(localStorage.getItem('test.pushSubscription') ?? '{}'), ${JSON.stringify(subscription)})));`;
