// Loading, error and empty states of a query, the same on every page; a 403 is a message, never a crash.
import type { UseQueryResult } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { ApiError } from '../api/client';
import { ReasonLink } from './problem-text';
import { detailWords, envelopeWords, fieldWords, reasonAction } from './reasons';

/** An error in words: the envelope's message (or the words of its code where the message says less), a 422's details. */
export function errorText(error: unknown): string {
  if (error instanceof ApiError) {
    const words = envelopeWords(error.code, error.message);
    if (error.status === 403) return `You do not have permission for this: ${words}.`;
    if (error.status === 404) return `Not found: ${words}.`;
    if (error.status === 422 && error.details?.length) return `${words}: ${error.details.map((d) => `${fieldWords(d.field)} ${detailWords(d.error)}`).join('; ')}.`;
    return `${words}.`;
  }
  return error instanceof Error ? error.message : 'Something went wrong.';
}

export function ErrorMessage({ error }: { error: unknown }) {
  if (!error) return null;
  return (
    <p role="alert" className="error">
      {errorText(error)}
      {error instanceof ApiError && <ReasonLink action={reasonAction(error.code)} />}
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
