// The signed-in session: the JWT and chosen organization, kept in localStorage so a reload (or a new tab) keeps them.
import { useSyncExternalStore } from 'react';

export interface Session {
  token: string | undefined;
  orgId: string | undefined;
  /** Why the last session ended, shown once on the login page. */
  notice: string | undefined;
}

const TOKEN = 'herald.token';
const ORG = 'herald.orgId';
const listeners = new Set<() => void>();

function read(): Session {
  return { token: localStorage.getItem(TOKEN) ?? undefined, orgId: localStorage.getItem(ORG) ?? undefined, notice: undefined };
}

let current: Session = read();

function set(next: Session) {
  current = next;
  if (next.token) localStorage.setItem(TOKEN, next.token);
  else localStorage.removeItem(TOKEN);
  if (next.orgId) localStorage.setItem(ORG, next.orgId);
  else localStorage.removeItem(ORG);
  listeners.forEach((listener) => listener());
}

// Another tab logging out (or in) changes this one too.
window.addEventListener('storage', (event) => {
  if (event.key === TOKEN || event.key === ORG) set({ ...read(), notice: current.notice });
});

export const session = {
  get: () => current,
  subscribe(listener: () => void) {
    listeners.add(listener);
    return () => listeners.delete(listener);
  },
  login: (token: string, orgId: string | undefined) => set({ token, orgId, notice: undefined }),
  selectOrganization: (orgId: string) => set({ ...current, orgId }),
  logout: () => set({ token: undefined, orgId: current.orgId, notice: 'You have been logged out.' }),
  /** A 401 on a signed-in request: the token expired or the account changed. */
  expire() {
    if (current.token) set({ token: undefined, orgId: current.orgId, notice: 'Your session has expired. Please log in again.' });
  },
};

export function useSession(): Session {
  return useSyncExternalStore(session.subscribe, session.get);
}
