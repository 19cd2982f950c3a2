// A secret the server shows once (an API key, an invitation link): a dialog that says so, with a copy button.
import * as Dialog from '@radix-ui/react-dialog';
import { useState, type ReactNode } from 'react';

interface ShownOnceProps {
  /** The secret; the dialog is open while it is set. */
  secret: string | undefined;
  title: string;
  warning: string;
  copyLabel: string;
  testId: string;
  onClose: () => void;
  /** Shown under the secret: what to do with it. */
  children?: ReactNode;
}

export function ShownOnceDialog({ secret, title, warning, copyLabel, testId, onClose, children }: ShownOnceProps) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    if (secret === undefined) return;
    await navigator.clipboard.writeText(secret);
    setCopied(true);
  };
  return (
    <Dialog.Root open={secret !== undefined} onOpenChange={(open) => (open ? undefined : (setCopied(false), onClose()))}>
      <Dialog.Portal>
        <Dialog.Overlay className="overlay" />
        <Dialog.Content className="dialog">
          <Dialog.Title>{title}</Dialog.Title>
          <Dialog.Description className="warning">{warning}</Dialog.Description>
          <code className="secret" data-testid={testId}>
            {secret}
          </code>
          {children}
          <div className="actions">
            <button type="button" onClick={() => void copy()}>
              {copied ? 'Copied' : copyLabel}
            </button>
            <Dialog.Close asChild>
              <button type="button" className="primary">
                I have stored it
              </button>
            </Dialog.Close>
          </div>
        </Dialog.Content>
      </Dialog.Portal>
    </Dialog.Root>
  );
}
