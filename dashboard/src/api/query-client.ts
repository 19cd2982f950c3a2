// The one query cache: the app renders from it, and a route's loader may start a page's request in it before the page's code arrives.
import { QueryClient } from '@tanstack/react-query';
import { ApiError } from './client';

export const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      // A refusal (401, 403, 404, 422) will not change by asking again; a network error or 5xx may.
      retry: (failures, error) => !(error instanceof ApiError && error.status < 500) && failures < 2,
      staleTime: 10_000,
    },
  },
});
