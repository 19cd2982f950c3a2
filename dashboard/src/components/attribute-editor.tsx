// A subscriber's attributes edited key by key with their types kept, saved as one merge PATCH (null removes a key).
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, ApiError, unwrap, type Schemas } from '../api/client';
import { ATTRIBUTE_TYPES, attributesPatch, retype, rowsFromAttributes, TYPE_LABEL, type AttributeRow, type AttributeType, type RowErrors } from '../pages/attribute-model';
import { FormError } from './field';

type Subscriber = Schemas['Subscriber'];

export function AttributeEditor({ subscriber, canWrite }: { subscriber: Subscriber; canWrite: boolean }) {
  const queryClient = useQueryClient();
  // What the server holds as last read or saved: edits are compared with it, and a save's answer replaces it.
  const [stored, setStored] = useState(subscriber.attributes);
  const [rows, setRows] = useState(() => rowsFromAttributes(subscriber.attributes));
  const [errors, setErrors] = useState<Map<number, RowErrors>>(new Map());
  const [nextId, setNextId] = useState(rows.length);
  const [unchanged, setUnchanged] = useState(false);
  const save = useMutation({
    mutationFn: (attributes: Record<string, unknown>) => unwrap(api.PATCH('/subscribers/{id}', { params: { path: { id: subscriber.id } }, body: { attributes } })),
    onSuccess: (saved) => {
      setStored(saved.attributes);
      setRows(rowsFromAttributes(saved.attributes));
      setNextId(Object.keys(saved.attributes).length);
      return Promise.all([
        queryClient.invalidateQueries({ queryKey: ['subscriber', subscriber.id] }),
        queryClient.invalidateQueries({ queryKey: ['subscribers', subscriber.projectId] }),
      ]);
    },
  });

  if (!canWrite) {
    return rows.length === 0 ? (
      <p className="muted">None.</p>
    ) : (
      <dl className="details">
        {rows.map((row) => (
          <div key={row.id}>
            <dt>{row.key}</dt>
            <dd>
              {row.type === 'boolean' ? (row.value === 'true' ? 'Yes' : 'No') : row.value} <span className="muted">({TYPE_LABEL[row.type]})</span>
            </dd>
          </div>
        ))}
      </dl>
    );
  }

  const change = (id: number, update: (row: AttributeRow) => AttributeRow) => {
    setRows((current) => current.map((row) => (row.id === id ? update(row) : row)));
    setUnchanged(false);
    save.reset();
  };
  const add = () => {
    setRows((current) => [...current, { id: nextId, key: '', type: 'string', value: '' }]);
    setNextId(nextId + 1);
    save.reset();
  };
  const submit = () => {
    const result = attributesPatch(stored, rows);
    if ('errors' in result) {
      setErrors(result.errors);
      return;
    }
    setErrors(new Map());
    const changed = Object.keys(result.patch).length > 0;
    setUnchanged(!changed);
    if (changed) save.mutate(result.patch);
  };
  const serverError = (key: string) => (save.error instanceof ApiError ? save.error.fieldError(`attributes.${key.trim()}`) : undefined);

  return (
    <form
      className="card attribute-editor"
      aria-labelledby="attributes-title"
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        submit();
      }}
    >
      {rows.length === 0 && <p className="muted">No attributes yet.</p>}
      {rows.length > 0 && (
        <div className="table-scroll">
          <table>
            <caption className="visually-hidden">Attributes</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Type</th>
                <th scope="col">Value</th>
                <th scope="col">
                  <span className="visually-hidden">Remove</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((row, index) => {
                const problems = errors.get(row.id) ?? {};
                const valueError = problems.value ?? serverError(row.key);
                const label = row.key.trim() || `attribute ${index + 1}`;
                const keyErrorId = `attribute-${row.id}-key-error`;
                const valueErrorId = `attribute-${row.id}-value-error`;
                return (
                  <tr key={row.id}>
                    <td>
                      <input
                        aria-label={`Name of attribute ${index + 1}`}
                        value={row.key}
                        maxLength={100}
                        aria-invalid={problems.key ? true : undefined}
                        aria-describedby={problems.key ? keyErrorId : undefined}
                        onChange={(event) => change(row.id, (r) => ({ ...r, key: event.target.value }))}
                      />
                      {problems.key && (
                        <span id={keyErrorId} className="field-error" role="alert">
                          {problems.key}
                        </span>
                      )}
                    </td>
                    <td>
                      <select aria-label={`Type of ${label}`} value={row.type} onChange={(event) => change(row.id, (r) => retype(r, event.target.value as AttributeType))}>
                        {ATTRIBUTE_TYPES.map((type) => (
                          <option key={type} value={type}>
                            {TYPE_LABEL[type]}
                          </option>
                        ))}
                      </select>
                    </td>
                    <td>
                      {row.type === 'boolean' ? (
                        <select aria-label={`Value of ${label}`} value={row.value} onChange={(event) => change(row.id, (r) => ({ ...r, value: event.target.value }))}>
                          <option value="true">Yes</option>
                          <option value="false">No</option>
                        </select>
                      ) : (
                        <input
                          aria-label={`Value of ${label}`}
                          value={row.value}
                          inputMode={row.type === 'number' ? 'decimal' : undefined}
                          aria-invalid={valueError ? true : undefined}
                          aria-describedby={valueError ? valueErrorId : undefined}
                          onChange={(event) => change(row.id, (r) => ({ ...r, value: event.target.value }))}
                        />
                      )}
                      {valueError && (
                        <span id={valueErrorId} className="field-error" role="alert">
                          {valueError}
                        </span>
                      )}
                    </td>
                    <td>
                      <button type="button" className="link" aria-label={`Remove ${label}`} onClick={() => (setRows((current) => current.filter((r) => r.id !== row.id)), save.reset())}>
                        Remove
                      </button>
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      <div className="actions">
        <button type="button" onClick={add}>
          Add attribute
        </button>
        <button type="submit" className="primary" disabled={save.isPending}>
          Save attributes
        </button>
        <button
          type="button"
          onClick={() => {
            setRows(rowsFromAttributes(stored));
            setErrors(new Map());
            save.reset();
          }}
        >
          Discard changes
        </button>
      </div>
      {errors.size > 0 && (
        <p role="alert" className="error">
          Please correct the highlighted attributes.
        </p>
      )}
      <FormError error={save.error} fields={rows.map((row) => `attributes.${row.key.trim()}`)} />
      {save.isSuccess && <p role="status">Attributes saved.</p>}
      {unchanged && <p role="status">Nothing has changed: there is nothing to save.</p>}
    </form>
  );
}
