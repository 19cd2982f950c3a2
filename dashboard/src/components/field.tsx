// A labelled form control with the API's 422 message for its field shown beside it in words (and announced).
import { Fragment, useCallback, useId, useState, type ChangeEvent, type ComponentProps, type InputHTMLAttributes, type ReactNode, type SelectHTMLAttributes } from 'react';
import { ApiError, belongsTo } from '../api/client';
import { DetailList, DetailText, ReasonLink } from './problem-text';
import { envelopeWords, reasonAction } from './reasons';

interface FieldProps {
  label: string;
  /** The field's name in the error envelope (`name`, `settings.timezone` …). */
  field: string;
  error: unknown;
  hint?: ReactNode;
}

function useFieldIds(field: string, error: unknown) {
  const id = useId();
  const messages = error instanceof ApiError ? [...new Set((error.details ?? []).filter((detail) => belongsTo(detail.field, field)).map((detail) => detail.error))] : [];
  return { id, messages, errorId: `${id}-error`, hintId: `${id}-hint` };
}

/** The hint, and the 422's messages for the field in words (said about its value), each with its link to a fix. */
function Describe({ messages, value, errorId, hint, hintId }: { messages: string[]; value: unknown; errorId: string; hint?: ReactNode; hintId: string }) {
  return (
    <>
      {hint && (
        <span id={hintId} className="hint">
          {hint}
        </span>
      )}
      {messages.length > 0 && (
        <span id={errorId} className="field-error" role="alert">
          {messages.map((message, i) => (
            <Fragment key={i}>
              {i > 0 && '; '}
              <DetailText message={message} value={typeof value === 'string' ? value : undefined} />
            </Fragment>
          ))}
        </span>
      )}
    </>
  );
}

interface ControlProps {
  id: string;
  name: string;
  'aria-invalid': true | undefined;
  'aria-describedby': string | undefined;
}

/** The label, the hint and the 422 message around one control, tied to it for assistive technology. */
function Labelled({ label, field, error, hint, value, control }: FieldProps & { value?: unknown; control: (props: ControlProps) => ReactNode }) {
  const { id, messages, errorId, hintId } = useFieldIds(field, error);
  const invalid = messages.length > 0;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {control({
        id,
        name: field,
        'aria-invalid': invalid ? true : undefined,
        'aria-describedby': [hint && hintId, invalid && errorId].filter(Boolean).join(' ') || undefined,
      })}
      <Describe messages={messages} value={value} errorId={errorId} hint={hint} hintId={hintId} />
    </div>
  );
}

/** What a control with a length limit takes instead of `maxLength`, and the hint that says the limit. */
interface LengthLimit<E extends HTMLInputElement | HTMLTextAreaElement> {
  hint: ReactNode;
  onChange: (event: ChangeEvent<E>) => void;
  ref: (element: E | null) => void;
}

/**
 * A length limit said before submit: the count shows once the text nears the limit, and text over it is marked with
 * how much to cut, which keeps the form from submitting. The browser's own `maxLength` would cut a long paste
 * without a word.
 */
function useLengthLimit<E extends HTMLInputElement | HTMLTextAreaElement>(
  maxLength: number | undefined,
  { value, defaultValue, onChange }: { value?: unknown; defaultValue?: unknown; onChange?: ((event: ChangeEvent<E>) => void) | undefined },
  hint: ReactNode,
): LengthLimit<E> | undefined {
  const [typed, setLength] = useState(typeof defaultValue === 'string' ? defaultValue.length : 0);
  // A controlled control's count is its value's, whoever changed it.
  const length = typeof value === 'string' ? value.length : typed;
  const over = maxLength === undefined ? 0 : length - maxLength;
  const message = over > 0 ? `${over.toLocaleString('en')} character${over === 1 ? '' : 's'} over the limit of ${maxLength!.toLocaleString('en')}: shorten it.` : '';
  const ref = useCallback((element: E | null) => element?.setCustomValidity(message), [message]);
  if (maxLength === undefined) return undefined;
  const shown = over > 0 || length >= maxLength * 0.8;
  return {
    hint: (
      <>
        {hint}
        {hint && shown && ' '}
        {shown && (
          <span className={over > 0 ? 'field-error' : undefined} aria-live="polite">
            {over > 0 ? message : `${length.toLocaleString('en')} / ${maxLength.toLocaleString('en')} characters`}
          </span>
        )}
      </>
    ),
    onChange: (event) => {
      setLength(event.target.value.length);
      onChange?.(event);
    },
    ref,
  };
}

export function Field({ label, field, error, hint, maxLength, ...input }: FieldProps & InputHTMLAttributes<HTMLInputElement>) {
  const limit = useLengthLimit<HTMLInputElement>(maxLength, input, hint);
  return (
    <Labelled
      label={label}
      field={field}
      error={error}
      hint={limit?.hint ?? hint}
      value={input.value ?? input.defaultValue}
      control={(props) => <input {...props} {...input} {...(limit && { onChange: limit.onChange, ref: limit.ref })} />}
    />
  );
}

export function SelectField({ label, field, error, hint, children, ...select }: FieldProps & SelectHTMLAttributes<HTMLSelectElement>) {
  return (
    <Labelled
      label={label}
      field={field}
      error={error}
      hint={hint}
      control={(props) => (
        <select {...props} {...select}>
          {children}
        </select>
      )}
    />
  );
}

/** `ref` reaches the textarea (an editor inserting at the cursor). */
export function TextAreaField({ label, field, error, hint, maxLength, ...textarea }: FieldProps & ComponentProps<'textarea'>) {
  const limit = useLengthLimit<HTMLTextAreaElement>(maxLength, textarea, hint);
  const { ref: forward } = textarea;
  const ref = (element: HTMLTextAreaElement | null) => {
    limit?.ref(element);
    if (typeof forward === 'function') forward(element);
    else if (forward) forward.current = element;
  };
  return (
    <Labelled
      label={label}
      field={field}
      error={error}
      hint={limit?.hint ?? hint}
      control={(props) => <textarea {...props} {...textarea} ref={ref} {...(limit && { onChange: limit.onChange })} />}
    />
  );
}

/** A form-level error: anything but a 422 whose every detail is shown beside a field of `fields`; a 422's others listed in words. */
export function FormError({ error, fields }: { error: unknown; fields: string[] }) {
  if (!error) return null;
  if (error instanceof ApiError && error.status === 422 && error.details?.every((detail) => fields.some((field) => belongsTo(detail.field, field)))) {
    return (
      <p role="alert" className="error">
        Please correct the highlighted fields.
      </p>
    );
  }
  if (error instanceof ApiError && error.status === 422 && error.details?.length) {
    return (
      <div role="alert" className="error">
        <p>{envelopeWords(error.code, error.message)}:</p>
        <DetailList details={error.details.filter((detail) => !fields.some((field) => belongsTo(detail.field, field)))} />
      </div>
    );
  }
  const text =
    error instanceof ApiError
      ? error.status === 403
        ? `You do not have permission for this: ${error.message}.`
        : envelopeWords(error.code, error.message)
      : String(error);
  return (
    <p role="alert" className="error">
      {text}
      {error instanceof ApiError && <ReasonLink action={reasonAction(error.code)} />}
    </p>
  );
}

/** A list filter form's buttons: apply (the form's submit), clear (back to no filter), and any of the page's own after them. */
export function FilterActions({ onClear, children }: { onClear: () => void; children?: ReactNode }) {
  return (
    <div className="actions">
      <button type="submit" className="primary">
        Apply filters
      </button>
      <button type="button" onClick={onClear}>
        Clear
      </button>
      {children}
    </div>
  );
}
