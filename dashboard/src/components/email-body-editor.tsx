// An email body written in the visual editor or as HTML: the mode switch (leaving a design for HTML is confirmed), the
// visual editor loaded on demand, the HTML editor the page gives.
import * as AlertDialog from '@radix-ui/react-alert-dialog';
import { lazy, Suspense, useState, type ReactNode } from 'react';
import type { EmailDesign } from './email-design-model';

const EmailDesignEditor = lazy(() => import('./email-design-editor'));

export type BodyMode = 'visual' | 'html';

interface EmailBodyEditorProps {
  design: EmailDesign | null;
  html: string;
  /** A design edited (with its HTML), or the design dropped (null) for HTML written by hand. */
  onChange: (change: { design: EmailDesign | null; html: string }) => void;
  mergeTags: string[];
  error: unknown;
  fieldPrefix: string;
  disabled: boolean;
  /** The page's HTML editor, shown in HTML mode. */
  htmlEditor: ReactNode;
}

/** A body with a design opens in the visual editor, one with HTML alone in the HTML editor, an empty one in the visual editor. */
export function initialMode(design: EmailDesign | null | undefined, html: string): BodyMode {
  return design || html === '' ? 'visual' : 'html';
}

export function EmailBodyEditor({ design, html, onChange, mergeTags, error, fieldPrefix, disabled, htmlEditor }: EmailBodyEditorProps) {
  const [mode, setMode] = useState<BodyMode>(initialMode(design, html));
  const [confirming, setConfirming] = useState(false);
  const toHtml = () => {
    if (design) setConfirming(true);
    else setMode('html');
  };
  return (
    <div>
      <fieldset className="radios compact" disabled={disabled}>
        <legend>Editor</legend>
        <label>
          <input type="radio" name="body-mode" checked={mode === 'visual'} onChange={() => setMode('visual')} /> Visual
        </label>
        <label>
          <input type="radio" name="body-mode" checked={mode === 'html'} onChange={toHtml} /> HTML
        </label>
      </fieldset>
      {mode === 'visual' ? (
        <>
          {!design && html !== '' && <p className="notice">This email was written as HTML. Picking a design below replaces that HTML.</p>}
          <Suspense fallback={<p className="muted">Loading the visual editor…</p>}>
            <EmailDesignEditor
              design={design}
              onChange={(next, rendered) => onChange({ design: next, html: rendered })}
              mergeTags={mergeTags}
              error={error}
              fieldPrefix={fieldPrefix}
              disabled={disabled}
            />
          </Suspense>
        </>
      ) : (
        htmlEditor
      )}
      <AlertDialog.Root open={confirming} onOpenChange={setConfirming}>
        <AlertDialog.Portal>
          <AlertDialog.Overlay className="overlay" />
          <AlertDialog.Content className="dialog">
            <AlertDialog.Title>Edit as HTML?</AlertDialog.Title>
            <AlertDialog.Description>
              The HTML of the design is kept, but the design is not: further edits happen in the HTML and can no longer be made with the visual editor.
            </AlertDialog.Description>
            <div className="actions">
              <AlertDialog.Cancel asChild>
                <button type="button">Keep the visual editor</button>
              </AlertDialog.Cancel>
              <button
                type="button"
                className="danger"
                onClick={() => {
                  onChange({ design: null, html });
                  setMode('html');
                  setConfirming(false);
                }}
              >
                Edit as HTML
              </button>
            </div>
          </AlertDialog.Content>
        </AlertDialog.Portal>
      </AlertDialog.Root>
    </div>
  );
}
