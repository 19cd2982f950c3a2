// CSV exports: fetched with the session's headers (a plain link cannot send them) and handed to the browser as a file.
import { session } from '../auth/session';
import { ApiError } from './client';

export async function download(path: string, fileName: string): Promise<void> {
  const { token, orgId } = session.get();
  const res = await fetch(path, { headers: { authorization: `Bearer ${token ?? ''}`, 'x-org-id': orgId ?? '' } });
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
