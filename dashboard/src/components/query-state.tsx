// Loading, error and empty states of a query, the same on every page; a 403 is a message, never a crash.
import type { UseQueryResult } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { ApiError } from '../api/client';

export function errorText(error: unknown): string {
  if (error instanceof ApiError) {
    if (error.status === 403) return `You do not have permission for this: ${error.message}.`;
    if (error.status === 404) return `Not found: ${error.message}.`;
    return `${error.message} (${error.status}).`;
  }
  return error instanceof Error ? error.message : 'Something went wrong.';
}

export function ErrorMessage({ error }: { error: unknown }) {
  if (!error) return null;
  return (
    <p role="alert" className="error">
      {errorText(error)}
    </p>
  );
}

interface QueryStateProps<T> {
  query: UseQueryResult<T>;
  /** What the list is of, for its empty state ("No API keys yet"). */
  isEmpty?: (data: T) => boolean;
  empty?: ReactNode;
  children: (data: T) => ReactNode;
}

export function QueryState<T>({ query, isEmpty, empty, children }: QueryStateProps<T>) {
  if (query.isPending) {
    return (
      <p role="status" className="muted">
        Loading…
      </p>
    );
  }
  if (query.isError) {
    return (
      <div role="alert" className="error">
        <p>{errorText(query.error)}</p>
        {/* Asking again changes nothing for a refusal or a missing thing. */}
        {!(query.error instanceof ApiError && (query.error.status === 403 || query.error.status === 404)) && (
          <button type="button" onClick={() => void query.refetch()}>
            Try again
          </button>
        )}
      </div>
    );
  }
  if (isEmpty?.(query.data)) return <div className="empty">{empty}</div>;
  return <>{children(query.data)}</>;
}
