// Every destructive action goes through this dialog (Radix AlertDialog: focus trapped, Escape cancels).
import * as AlertDialog from '@radix-ui/react-alert-dialog';
import { useState, type ReactNode } from 'react';
import { FormError } from './field';

interface ConfirmProps {
  /** The button that opens the dialog. */
  trigger: string;
  title: string;
  description: ReactNode;
  confirm: string;
  onConfirm: () => Promise<unknown>;
  disabled?: boolean;
  /** Accessible name of the trigger when its text alone is ambiguous in a list ("Revoke key ci"). */
  label?: string;
  /** How a failure is shown in the dialog, when the page can say more than FormError (a step's problem with its link). */
  errorView?: (error: unknown) => ReactNode;
  onError?: (error: unknown) => void;
}

export function Confirm({ trigger, title, description, confirm, onConfirm, disabled, label, errorView, onError }: ConfirmProps) {
  const [open, setOpen] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const run = async () => {
    setBusy(true);
    setError(undefined);
    try {
      await onConfirm();
      setOpen(false);
    } catch (failure) {
      setError(failure);
      onError?.(failure);
    } finally {
      setBusy(false);
    }
  };
  return (
    <AlertDialog.Root open={open} onOpenChange={(next) => (setOpen(next), setError(undefined))}>
      <AlertDialog.Trigger asChild>
        <button type="button" className="danger" disabled={disabled} aria-label={label}>
          {trigger}
        </button>
      </AlertDialog.Trigger>
      <AlertDialog.Portal>
        <AlertDialog.Overlay className="overlay" />
        <AlertDialog.Content className="dialog">
          <AlertDialog.Title>{title}</AlertDialog.Title>
          <AlertDialog.Description>{description}</AlertDialog.Description>
          {error !== undefined && errorView ? errorView(error) : <FormError error={error} fields={[]} />}
          <div className="actions">
            <AlertDialog.Cancel asChild>
              <button type="button">Cancel</button>
            </AlertDialog.Cancel>
            <button type="button" className="danger" onClick={() => void run()} disabled={busy}>
              {confirm}
            </button>
          </div>
        </AlertDialog.Content>
      </AlertDialog.Portal>
    </AlertDialog.Root>
  );
}
