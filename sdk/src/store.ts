// The SDK's state in IndexedDB: kept across visits, and shared with the service worker of the same origin.
import { createStore, get, set, type UseStore } from 'idb-keyval';
import type { SubscriptionKeys } from './subscription.js';

export interface StoredState extends Partial<SubscriptionKeys> {
  baseUrl: string;
  projectId: string;
  key: string;
  /** The subscriber's token and id once registered. */
  token?: string;
  subscriberId?: string;
  /** The VAPID public key the browser subscription was made with. */
  vapidPublicKey?: string;
}

let store: UseStore | undefined;
// Without IndexedDB (some private modes) the state lives as long as the page.
let memory: StoredState | undefined;

const openStore = () => (store ??= createStore('herald', 'state'));

export async function loadState(): Promise<StoredState | undefined> {
  try {
    return (await get<StoredState>('state', openStore())) ?? memory;
  } catch {
    return memory;
  }
}

export async function saveState(state: StoredState): Promise<void> {
  memory = state;
  try {
    await set('state', state, openStore());
  } catch {
    // kept in memory only
  }
}
