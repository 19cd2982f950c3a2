// Every destructive action goes through this dialog (Radix AlertDialog: focus trapped, Escape cancels).
import * as AlertDialog from '@radix-ui/react-alert-dialog';
import { useId, useState, type ReactNode } from 'react';
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
  /** The confirm button waits until this is typed (a project's name, before everything in it goes). */
  typeToConfirm?: string;
}

export function Confirm({ trigger, title, description, confirm, onConfirm, disabled, label, errorView, onError, typeToConfirm }: ConfirmProps) {
  const [open, setOpen] = useState(false);
  const [typed, setTyped] = useState('');
  const typedId = useId();
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
    <AlertDialog.Root open={open} onOpenChange={(next) => (setOpen(next), setError(undefined), setTyped(''))}>
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
          {typeToConfirm !== undefined && (
            <div className="field">
              <label htmlFor={typedId}>
                Type <strong>{typeToConfirm}</strong> to confirm
              </label>
              <input id={typedId} value={typed} onChange={(event) => setTyped(event.target.value)} autoComplete="off" spellCheck={false} />
            </div>
          )}
          {error !== undefined && errorView ? errorView(error) : <FormError error={error} fields={[]} />}
          <div className="actions">
            <AlertDialog.Cancel asChild>
              <button type="button">Cancel</button>
            </AlertDialog.Cancel>
            <button type="button" className="danger" onClick={() => void run()} disabled={busy || (typeToConfirm !== undefined && typed !== typeToConfirm)}>
              {confirm}
            </button>
          </div>
        </AlertDialog.Content>
      </AlertDialog.Portal>
    </AlertDialog.Root>
  );
}
