// The signed-in user, their organizations, and what their role in the chosen one lets them do.
import { queryOptions, useQuery } from '@tanstack/react-query';
import { api, unwrap, type Schemas } from '../api/client';
import { useSession } from './session';

export type Role = Schemas['User']['organizations'][number]['role'];

/** The signed-in user's request: the frame reads it, and the signed-in routes' loader starts it before the frame renders. */
export function meQuery(token: string | undefined) {
  return queryOptions({ queryKey: ['me', token], queryFn: () => unwrap(api.GET('/auth/me')), enabled: token !== undefined });
}

export function useMe() {
  const { token } = useSession();
  return useQuery(meQuery(token));
}

export interface Membership {
  organization: Schemas['User']['organizations'][number] | undefined;
  role: Role | undefined;
  /** MEMBER and above write; a VIEWER sees everything read-only. */
  canWrite: boolean;
  /** OWNER and ADMIN manage projects, API keys and members. */
  isAdmin: boolean;
}

export function useMembership(): Membership {
  const { orgId } = useSession();
  const organization = useMe().data?.organizations.find((org) => org.id === orgId);
  const role = organization?.role;
  return { organization, role, canWrite: role !== undefined && role !== 'VIEWER', isAdmin: role === 'OWNER' || role === 'ADMIN' };
}
