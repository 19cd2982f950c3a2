// A browser's push subscription as Herald stores it, and its (re-)registration for a known or a new subscriber.
import { call, type Connection, type Result } from './api.js';
import type { StoredState } from './store.js';

export interface SubscriptionKeys {
  endpoint: string;
  p256dh: string;
  auth: string;
}

export interface Registered {
  id: string;
  token: string;
}

/** Endpoint and keys as base64url, the form PushSubscription.toJSON() gives and Herald takes. */
export function keysOf(subscription: PushSubscription): SubscriptionKeys {
  const { endpoint, keys } = subscription.toJSON();
  return { endpoint: endpoint ?? subscription.endpoint, p256dh: keys?.p256dh ?? '', auth: keys?.auth ?? '' };
}

export const sameKeys = (a: Partial<SubscriptionKeys>, b: SubscriptionKeys) => a.endpoint === b.endpoint && a.p256dh === b.p256dh && a.auth === b.auth;

export function fromBase64url(value: string): Uint8Array<ArrayBuffer> {
  const binary = atob(value.replace(/-/g, '+').replace(/_/g, '/'));
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

const connectionOf = (state: StoredState): Connection => ({ baseUrl: state.baseUrl, key: state.key });

/** The subscriber a 409 `subscriber_exists` names as holding this browser's endpoint, if that is the answer. */
const holderOf = (result: Result<Registered>): Registered | undefined =>
  result.error?.code === 'subscriber_exists' ? (result.error.body as { subscriber?: Registered } | null)?.subscriber : undefined;

/**
 * Tells Herald about this browser's subscription: nothing when it is the one already registered, the new keys for a
 * known subscriber (keeping its externalId, tags and contact fields), else a registration. A subscriber already
 * holding the endpoint (a 409) is adopted, with the keys this browser holds now. Resolves to the state to keep.
 */
export async function registerSubscription(state: StoredState, keys: SubscriptionKeys, extra: Record<string, string>): Promise<Result<StoredState>> {
  const connection = connectionOf(state);
  if (state.token && sameKeys(state, keys)) return { data: state, error: null };
  const replace = (token: string) =>
    call<Registered>(connection, 'POST', '/subscribers/push-subscription', { token, ...keys, userAgent: navigator.userAgent });
  let result = state.token ? await replace(state.token) : undefined;
  // The subscriber was deleted on the server: register afresh.
  if (result?.error?.statusCode === 404) result = undefined;
  result ??= await call<Registered>(connection, 'POST', '/subscribers', { projectId: state.projectId, ...keys, userAgent: navigator.userAgent, ...extra });
  const holder = holderOf(result);
  if (holder) result = await replace(holder.token);
  if (result.error) return result;
  return { data: { ...state, ...keys, token: result.data.token, subscriberId: result.data.id }, error: null };
}
