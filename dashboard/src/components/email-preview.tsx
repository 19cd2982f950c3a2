// An email rendered by the server (`POST /email-templates/preview`) in a sandboxed frame, at desktop or mobile width,
// and the subscriber it is rendered for: the template editor and the email campaign pages.
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useId, useMemo, useState } from 'react';
import { api, unwrap, type Schemas } from '../api/client';
import { dateTime } from './format';
import { useDebounced } from './segment-filter-fields';

type Subscriber = Schemas['Subscriber'];
export type PreviewWidth = 'desktop' | 'mobile';

export interface EmailParts {
  subject: string;
  html: string;
  preheader?: string | null;
  text?: string | null;
}

/** The live render of `parts` with `variables`, 400 ms after the last change; liquid's 422 is the query's error. */
export function useEmailPreview(projectId: string, parts: EmailParts, variables: Record<string, unknown>) {
  // Debounced as text: a page that renders again with equal values (a live counter ticking) does not restart the wait.
  const typed = useDebounced(JSON.stringify({ ...parts, variables }), 400);
  const request = useMemo(() => JSON.parse(typed) as EmailParts & { variables: Record<string, unknown> }, [typed]);
  return useQuery({
    queryKey: ['email-template-preview', projectId, request],
    queryFn: () => unwrap(api.POST('/email-templates/preview', { body: { projectId, ...request } })),
    placeholderData: keepPreviousData,
    enabled: request.subject !== '' && request.html !== '',
    retry: false,
  });
}

/**
 * Whom the preview is for: the subscribers holding an address (the last seen first, as a test send picks); none
 * chosen renders every merge tag's default.
 */
export function usePreviewSubscriber(projectId: string) {
  const [typed, setTyped] = useState('');
  const [chosenId, setChosenId] = useState('');
  const email = useDebounced(typed.trim(), 400);
  const matches = useQuery({
    queryKey: ['subscribers', projectId, 'email', email],
    queryFn: async () => {
      const list = await unwrap(api.GET('/subscribers/project/{projectId}', { params: { path: { projectId }, query: { email, pageSize: 20 } } }));
      return [...list.data].sort((a, b) => b.lastSeenAt.localeCompare(a.lastSeenAt));
    },
    enabled: email !== '',
  });
  const found = email === '' ? [] : (matches.data ?? []);
  const subscriber: Subscriber | undefined = found.find((match) => match.id === chosenId) ?? found[0];
  const status =
    email === ''
      ? 'No subscriber: merge tags render their defaults.'
      : matches.isFetching
        ? 'Looking…'
        : subscriber
          ? `Rendered for ${subscriber.email}${subscriber.externalId ? ` (${subscriber.externalId})` : ''}.`
          : 'No subscriber has this address: merge tags render their defaults.';
  return { typed, setTyped, found, subscriber, setChosenId, status };
}

export function PreviewSubscriber({ picker }: { picker: ReturnType<typeof usePreviewSubscriber> }) {
  const id = useId();
  return (
    <div className="row">
      <div className="field">
        <label htmlFor={`${id}-email`}>Preview for (a subscriber&apos;s email address)</label>
        <input id={`${id}-email`} type="search" value={picker.typed} onChange={(event) => picker.setTyped(event.target.value)} aria-describedby={`${id}-status`} />
        <span id={`${id}-status`} className="hint" role="status">
          {picker.status}
        </span>
      </div>
      {picker.found.length > 1 && (
        <div className="field">
          <label htmlFor={`${id}-subscriber`}>Subscriber</label>
          <select id={`${id}-subscriber`} value={picker.subscriber?.id ?? ''} onChange={(event) => picker.setChosenId(event.target.value)}>
            {picker.found.map((subscriber) => (
              <option key={subscriber.id} value={subscriber.id}>
                {subscriber.externalId ?? subscriber.id}, seen {dateTime(subscriber.lastSeenAt)}
              </option>
            ))}
          </select>
        </div>
      )}
    </div>
  );
}

export function WidthToggle({ width, onChange }: { width: PreviewWidth; onChange: (width: PreviewWidth) => void }) {
  return (
    <fieldset className="radios compact">
      <legend>Preview width</legend>
      <label>
        <input type="radio" name="preview-width" checked={width === 'desktop'} onChange={() => onChange('desktop')} /> Desktop
      </label>
      <label>
        <input type="radio" name="preview-width" checked={width === 'mobile'} onChange={() => onChange('mobile')} /> Mobile (375 px)
      </label>
    </fieldset>
  );
}

export function EmailPreview({ preview, failed, updating, width = 'desktop' }: { preview?: Schemas['EmailPreview']; failed: boolean; updating: boolean; width?: PreviewWidth }) {
  return (
    <section className="card email-preview" aria-labelledby="email-preview-title">
      <h3 id="email-preview-title">
        Preview{updating && <span className="muted"> (updating…)</span>}
      </h3>
      {failed && <p className="error">The email does not render yet: see the messages beside its parts.</p>}
      {!preview ? (
        <p className="muted">Write a subject and an HTML body to see the email.</p>
      ) : (
        <>
          <p>
            <strong data-testid="preview-subject">{preview.subject}</strong>
            {preview.preheader && <span className="muted"> — {preview.preheader}</span>}
          </p>
          {preview.missing.length > 0 && (
            <p className="notice" role="status">
              Missing (rendered empty): <code>{preview.missing.join(', ')}</code>
            </p>
          )}
          {/* No permission at all: the email's HTML runs no script and reaches nothing of the dashboard. */}
          <iframe title="Email HTML preview" sandbox="" srcDoc={preview.html} className={`email-frame ${width}`} />
          <details>
            <summary>Plain text</summary>
            <pre className="json" data-testid="preview-text">
              {preview.text}
            </pre>
          </details>
        </>
      )}
    </section>
  );
}
