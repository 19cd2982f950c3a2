// CSV exports: fetched with the session's headers (a plain link cannot send them) and handed to the browser as a file.
import { session } from '../auth/session';
import { ApiError } from './client';

/** A GET, or a POST of `body` as JSON (an export whose selection does not fit in a URL). */
export async function download(path: string, fileName: string, body?: unknown): Promise<void> {
  const { token, orgId } = session.get();
  const headers: Record<string, string> = { authorization: `Bearer ${token ?? ''}`, 'x-org-id': orgId ?? '' };
  const res = await fetch(
    path,
    body === undefined ? { headers } : { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) },
  );
  if (res.status === 401) session.expire();
  if (!res.ok) {
    const envelope = (await res.json().catch(() => ({}))) as { code?: string; message?: string };
    throw new ApiError(res.status, envelope.code ?? 'http_error', envelope.message ?? res.statusText);
  }
  const link = document.createElement('a');
  link.href = URL.createObjectURL(await res.blob());
  link.download = fileName;
  link.click();
  URL.revokeObjectURL(link.href);
}
