// The browser SDK: subscribes this browser to a project's web push and keeps its subscriber's data in Herald.
import { call, failure, type Connection, type Result } from './api.js';
import { loadState, saveState, type StoredState } from './store.js';
import { fromBase64url, keysOf, registerSubscription, type Registered } from './subscription.js';

export interface HeraldOptions {
  /** Herald's address, e.g. `https://herald.example.com`. */
  baseUrl: string;
  projectId: string;
  /** A publishable key (`hrd_pub_live_…`, or `hrd_pub_test_…` for sandbox subscribers). */
  key: string;
  /** Your service worker file, on your own origin, which imports Herald's (`/herald-sw.js` unless set). */
  serviceWorkerPath?: string;
  /** Its scope (the worker file's directory unless set). */
  serviceWorkerScope?: string;
}

export interface ClickDetail {
  /** The URL opened: the notification's, or the clicked button's. */
  url: string | undefined;
  /** The clicked button's index as a string, or '' for the notification itself. */
  action: string;
}

interface Events {
  subscribed: Registered;
  unsubscribed: Registered;
  click: ClickDetail;
}
export type HeraldEvent = keyof Events;

export interface Channels {
  email?: boolean;
  push?: boolean;
  sms?: boolean;
  whatsapp?: boolean;
}

type Listener<E extends HeraldEvent> = (detail: Events[E]) => void;

export class HeraldClient {
  private options: HeraldOptions | undefined;
  private state: StoredState | undefined;
  private readonly initialized: Promise<void>;
  private markInitialized!: () => void;
  /** Calls made before this browser has a subscriber, released by the first registration. */
  private waiting: (() => void)[] = [];
  private readonly listeners = new Map<HeraldEvent, Set<Listener<never>>>();

  constructor() {
    this.initialized = new Promise((resolve) => (this.markInitialized = resolve));
  }

  /**
   * Reads the subscriber kept from an earlier visit and brings it up to date: `seen` now, its push subscription
   * renewed when the browser's keys or the project's VAPID key changed, unsubscribed when permission was revoked.
   */
  async init(options: HeraldOptions): Promise<Result<{ subscribed: boolean }>> {
    if (this.options) return failure('already_initialized', 'Herald.init() was already called on this page');
    if (!options?.baseUrl || !options.projectId || !options.key) return failure('invalid_options', 'Herald.init() needs baseUrl, projectId and key');
    this.options = { ...options, baseUrl: options.baseUrl.replace(/\/+$/, '') };
    const { baseUrl, projectId, key } = this.options;
    const stored = await loadState();
    // Another project or Herald: the stored subscriber is not this one's.
    this.state = stored?.projectId === projectId && stored.baseUrl === baseUrl ? { ...stored, key } : { baseUrl, projectId, key };
    await saveState(this.state);
    navigator.serviceWorker?.addEventListener('message', (event: MessageEvent<{ herald?: string } & ClickDetail>) => {
      if (event.data?.herald === 'click') this.emit('click', { url: event.data.url, action: event.data.action });
    });
    this.markInitialized();
    if (this.state.token) this.release();
    return { data: { subscribed: await this.refresh() }, error: null };
  }

  isPushSupported(): boolean {
    return typeof window !== 'undefined' && 'serviceWorker' in navigator && 'PushManager' in window && 'Notification' in window;
  }

  /** The notification permission, or `unsupported` where this browser has no web push. */
  permission(): NotificationPermission | 'unsupported' {
    return this.isPushSupported() ? Notification.permission : 'unsupported';
  }

  /**
   * Subscribes this browser: asks for permission (call it from a click or key press: browsers ask only on a user
   * gesture), registers the service worker, subscribes with the project's VAPID key and registers the subscriber.
   * An existing subscription is reused; one made with another VAPID key is replaced.
   */
  async subscribe(): Promise<Result<Registered>> {
    await this.initialized;
    if (!this.isPushSupported()) return failure('push_unsupported', 'This browser cannot receive web push notifications');
    let permission = Notification.permission;
    if (permission === 'default') {
      if (navigator.userActivation && !navigator.userActivation.isActive) {
        return failure('user_gesture_required', 'Call subscribe() from a click or key press: browsers ask for permission only then');
      }
      permission = await Notification.requestPermission();
    }
    if (permission !== 'granted') {
      return permission === 'denied'
        ? failure('permission_denied', 'Notifications are blocked for this site in the browser settings')
        : failure('permission_default', 'The permission prompt was dismissed');
    }
    return this.register();
  }

  /** Unsubscribes this browser from push, in the browser and in Herald; the subscriber and its data stay. */
  async unsubscribe(): Promise<Result<{ status: string }>> {
    await this.initialized;
    try {
      const registration = await navigator.serviceWorker?.getRegistration(this.scope());
      await (await registration?.pushManager.getSubscription())?.unsubscribe();
    } catch {
      // Herald is told all the same
    }
    const state = this.state!;
    if (!state.token) return { data: { status: 'unsubscribed' }, error: null };
    const result = await call<{ status: string }>(this.connection(), 'POST', '/subscribers/unsubscribe', { token: state.token });
    if (!result.error) {
      const { endpoint: _e, p256dh: _p, auth: _a, ...rest } = state;
      await this.keep(rest);
      this.emit('unsubscribed', { id: state.subscriberId!, token: state.token });
    }
    return result;
  }

  /** Links this subscriber to your user id; `hash` is the HMAC your server computes when identity verification is on. */
  identify(externalId: string, options: { hash?: string } = {}) {
    return this.byToken<{ externalId: string }>('/subscribers/identify', { externalId, ...(options.hash && { externalIdHash: options.hash }) });
  }

  tag(tags: string[]) {
    return this.byToken<{ tags: string[] }>('/subscribers/tag', { tags });
  }

  untag(tags: string[]) {
    return this.byToken<{ tags: string[] }>('/subscribers/untag', { tags });
  }

  /** null removes the address. */
  setEmail(email: string | null) {
    return this.byToken('/subscribers/update', { email });
  }

  /** International format; null removes the number. */
  setPhone(phone: string | null) {
    return this.byToken('/subscribers/update', { phone });
  }

  /** Merged key by key; a null value removes its key. */
  setAttributes(attributes: Record<string, unknown>) {
    return this.byToken('/subscribers/update', { attributes });
  }

  /** The channels this person accepts, merged flag by flag. */
  setChannels(channels: Channels) {
    return this.byToken('/subscribers/update', { preferences: { channels } });
  }

  /** This browser's subscriber as Herald holds it; `data` is null while it has none. */
  async getSubscriber(): Promise<Result<Record<string, unknown> | null>> {
    await this.initialized;
    const token = this.state?.token;
    if (!token) return { data: null, error: null };
    return call(this.connection(), 'GET', `/subscribers/token/${encodeURIComponent(token)}`);
  }

  /** Listens to `subscribed`, `unsubscribed` or `click` (a notification clicked while a page of the site is open); returns the way to stop. */
  on<E extends HeraldEvent>(event: E, listener: Listener<E>): () => void {
    const set = this.listeners.get(event) ?? new Set();
    this.listeners.set(event, set.add(listener as Listener<never>));
    return () => void set.delete(listener as Listener<never>);
  }

  private emit<E extends HeraldEvent>(event: E, detail: Events[E]) {
    for (const listener of (this.listeners.get(event) ?? []) as Set<Listener<E>>) {
      try {
        listener(detail);
      } catch (error) {
        // A listener's own failure is reported, and does not stop the others nor the SDK.
        setTimeout(() => {
          throw error;
        });
      }
    }
  }

  private connection(): Connection {
    return { baseUrl: this.options!.baseUrl, key: this.options!.key };
  }

  private scope(): string {
    return this.options!.serviceWorkerScope ?? new URL('.', new URL(this.options!.serviceWorkerPath ?? '/herald-sw.js', location.href)).pathname;
  }

  private async keep(state: StoredState) {
    this.state = state;
    await saveState(state);
  }

  private release() {
    for (const resume of this.waiting.splice(0)) resume();
  }

  /** A call by the subscriber's token, made once this browser has one: calls before subscribe() wait for it. */
  private async byToken<T>(path: string, body: Record<string, unknown>): Promise<Result<T>> {
    await this.initialized;
    if (!this.state!.token) await new Promise<void>((resume) => this.waiting.push(resume));
    return call<T>(this.connection(), 'POST', path, { token: this.state!.token, ...body });
  }

  /** The service worker registered and active, and a push subscription with the project's current VAPID key. */
  private async register(): Promise<Result<Registered>> {
    const config = await call<{ vapidPublicKey: string }>(this.connection(), 'GET', `/projects/${encodeURIComponent(this.options!.projectId)}/push-config`);
    if (config.error) return config;
    let subscription: PushSubscription;
    try {
      const registration = await navigator.serviceWorker.register(this.options!.serviceWorkerPath ?? '/herald-sw.js', { scope: this.scope() });
      await activated(registration);
      subscription = await subscribed(registration, config.data.vapidPublicKey);
    } catch (error) {
      return failure('subscription_failed', `The browser could not subscribe to push: ${(error as Error).message}`);
    }
    const before = this.state!;
    const result = await registerSubscription(before, keysOf(subscription), {
      timezone: Intl.DateTimeFormat().resolvedOptions().timeZone,
    });
    if (result.error) return result;
    await this.keep({ ...result.data, vapidPublicKey: config.data.vapidPublicKey });
    const registered = { id: result.data.subscriberId!, token: result.data.token! };
    this.release();
    if (!before.endpoint || before.token !== registered.token) this.emit('subscribed', registered);
    return { data: registered, error: null };
  }

  /** An earlier visit's subscriber brought up to date; whether this browser is subscribed now. */
  private async refresh(): Promise<boolean> {
    const state = this.state!;
    if (!state.token || !this.isPushSupported()) return false;
    // Blocked, or reset to "ask": browsers drop the push subscription with the permission.
    if (state.endpoint && Notification.permission !== 'granted') {
      await this.unsubscribe();
      return false;
    }
    void call(this.connection(), 'POST', '/subscribers/seen', { token: state.token });
    // Permission is still granted: no prompt, so this is safe on load. Keys or VAPID key changed → re-registered.
    return Boolean(state.endpoint) && !(await this.register()).error;
  }
}

async function activated(registration: ServiceWorkerRegistration): Promise<void> {
  const worker = registration.installing ?? registration.waiting;
  if (registration.active || !worker) return;
  await new Promise<void>((resolve, reject) => {
    worker.addEventListener('statechange', () => {
      if (worker.state === 'activated') resolve();
      if (worker.state === 'redundant') reject(new Error('the service worker failed to install'));
    });
  });
}

async function subscribed(registration: ServiceWorkerRegistration, vapidPublicKey: string): Promise<PushSubscription> {
  const key = fromBase64url(vapidPublicKey);
  const existing = await registration.pushManager.getSubscription();
  const current = existing?.options.applicationServerKey;
  if (existing && current && new Uint8Array(current).every((byte, i) => byte === key[i]) && current.byteLength === key.length) return existing;
  // Made with another VAPID key: push services refuse pushes signed with the new one, so it is replaced.
  await existing?.unsubscribe();
  return registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key });
}
