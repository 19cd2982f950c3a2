// Herald's service worker code, imported by the site's own worker (`importScripts('<herald>/sdk/herald-sw.js')`): shows
// Herald's pushes, reports them delivered, clicked or dismissed, and re-registers a subscription the browser renewed.
import { call } from '../api.js';
import { loadState, saveState } from '../store.js';
import { fromBase64url, keysOf, registerSubscription } from '../subscription.js';

declare const self: ServiceWorkerGlobalScope;

/** What Herald sends (server/src/delivery/channel.ts, PushPayload). */
interface Payload {
  title: string;
  body: string;
  icon?: string;
  image?: string;
  badge?: string;
  url?: string;
  actions?: { action: string; title: string }[];
  /** Base URL of this delivery's tracking routes. */
  track: string;
}

// TypeScript's NotificationOptions lacks these, which Chromium, Firefox and Safari take.
interface ShownOptions extends NotificationOptions {
  image?: string;
  actions?: { action: string; title: string }[];
}

/** Herald's payload, or undefined for a push that is not Herald's (left to the site's own handlers). */
function heraldPayload(data: PushMessageData | null): Payload | undefined {
  try {
    const payload = data?.json() as Partial<Payload> | undefined;
    return typeof payload?.title === 'string' && typeof payload.track === 'string' ? (payload as Payload) : undefined;
  } catch {
    return undefined;
  }
}

// The tracking routes take no credentials and are idempotent: repeats are harmless, failures are dropped quietly.
const report = (payload: Payload, event: 'delivered' | 'clicked' | 'dismissed') => call(undefined, 'POST', `${payload.track}/${event}`);

const payloadOf = (notification: Notification) => (notification.data as { herald?: Payload } | null)?.herald;

self.addEventListener('push', (event) => {
  const payload = heraldPayload(event.data);
  if (!payload) return;
  const options: ShownOptions = {
    body: payload.body,
    data: { herald: payload },
    ...(payload.icon && { icon: payload.icon }),
    ...(payload.image && { image: payload.image }),
    ...(payload.badge && { badge: payload.badge }),
    // A button is named by its index: its URL is read back from the payload on a click.
    ...(payload.actions && { actions: payload.actions.map((button, i) => ({ action: String(i), title: button.title })) }),
  };
  event.waitUntil(Promise.all([self.registration.showNotification(payload.title, options), report(payload, 'delivered')]));
});

async function openOrFocus(url: string) {
  const windows = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
  try {
    const open = windows.find((client) => client.url === url);
    await (open ? open.focus() : self.clients.openWindow(url));
  } catch {
    // Not allowed here (no click to act on): the click is reported all the same.
  }
}

async function tellPages(message: Record<string, unknown>) {
  for (const client of await self.clients.matchAll({ type: 'window', includeUncontrolled: true })) client.postMessage(message);
}

self.addEventListener('notificationclick', (event) => {
  const payload = payloadOf(event.notification);
  if (!payload) return;
  event.notification.close();
  const url = event.action ? payload.actions?.[Number(event.action)]?.action : payload.url;
  event.waitUntil(
    Promise.all([report(payload, 'clicked'), url && openOrFocus(url), tellPages({ herald: 'click', url, action: event.action })]),
  );
});

self.addEventListener('notificationclose', (event) => {
  const payload = payloadOf(event.notification);
  if (payload) event.waitUntil(report(payload, 'dismissed'));
});

interface SubscriptionChange extends ExtendableEvent {
  oldSubscription?: PushSubscription | null;
  newSubscription?: PushSubscription | null;
}

/** The browser renewed the subscription (key rotation, expiry): the same subscriber gets the new one. */
async function renew(event: SubscriptionChange) {
  const state = await loadState();
  if (!state?.token) return;
  const applicationServerKey = event.oldSubscription?.options.applicationServerKey ?? (state.vapidPublicKey ? fromBase64url(state.vapidPublicKey) : null);
  const subscription = event.newSubscription ?? (await self.registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey }));
  const result = await registerSubscription(state, keysOf(subscription), {});
  if (!result.error) await saveState(result.data);
}

self.addEventListener('pushsubscriptionchange', (event) => {
  (event as SubscriptionChange).waitUntil(renew(event as SubscriptionChange).catch(() => undefined));
});
