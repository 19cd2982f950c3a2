// Contacts import: a CSV file's columns mapped to contact fields and typed attributes in the browser, or a JSON file,
// sent to POST /contacts/import (all or nothing); each bad row's errors listed.
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useParams } from '@tanstack/react-router';
import { useId, useState, type ChangeEvent, type FormEvent } from 'react';
import { api, unwrap, type Body } from '../api/client';
import { useMembership } from '../auth/me';
import { FormError, SelectField } from '../components/field';
import { RowErrors, rowErrors } from '../components/row-errors';
import {
  ATTRIBUTE_TYPES,
  columnOfField,
  columnsOf,
  DESTINATION_LABEL,
  importParams,
  mappingProblems,
  TYPE_LABEL,
  type AttributeType,
  type ColumnMapping,
  type Destination,
  withListedType,
} from './contact-import-model';

type ImportBody = Body<'/contacts/import', 'post'>;
type UpsertBy = NonNullable<ImportBody['upsertBy']>;

const isCsv = (file: File) => /\.csv$/i.test(file.name) || file.type === 'text/csv';

async function upload(projectId: string, file: File, upsertBy: UpsertBy, columns: ColumnMapping[] | null) {
  const text = await file.text();
  if (isCsv(file)) {
    // CSV: the file as it is; projectId, upsertBy and where each column goes in the query (the route's text/csv body).
    return unwrap(
      api.POST('/contacts/import', {
        params: { query: { projectId, upsertBy, ...(columns ? importParams(columns) : {}) } },
        body: text as unknown as ImportBody,
        bodySerializer: (body) => body as unknown as string,
        headers: { 'content-type': 'text/csv' },
      }),
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error(`${file.name} is neither a .csv file nor valid JSON.`);
  }
  // A JSON file is the contacts array, or an object holding it as `contacts`.
  const contacts = Array.isArray(parsed) ? parsed : (parsed as { contacts?: unknown }).contacts;
  if (!Array.isArray(contacts)) throw new Error(`${file.name} holds no array of contacts.`);
  return unwrap(api.POST('/contacts/import', { body: { projectId, upsertBy, contacts: contacts as ImportBody['contacts'] } }));
}

export function ContactImportPage() {
  const { projectId } = useParams({ from: '/signed-in/projects/$projectId/import' });
  const { canWrite } = useMembership();
  const queryClient = useQueryClient();
  const [csv, setCsv] = useState(true);
  /** The chosen CSV file's columns as mapped so far; null for a JSON file or none. */
  const [columns, setColumns] = useState<ColumnMapping[] | null>(null);
  const [checked, setChecked] = useState(false);
  const run = useMutation({
    mutationFn: ({ file, upsertBy, columns }: { file: File; upsertBy: UpsertBy; columns: ColumnMapping[] | null }) =>
      upload(projectId, file, upsertBy, columns),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['subscribers', projectId] }),
  });
  const listed = async () => {
    try {
      const { data } = await queryClient.fetchQuery({
        queryKey: ['attributes', projectId],
        queryFn: () => unwrap(api.GET('/projects/{projectId}/attributes', { params: { path: { projectId } } })),
        staleTime: 60_000,
      });
      return new Map(data.map((attribute) => [attribute.name, attribute.type]));
    } catch {
      // Without the list, the samples' guesses stand.
      return new Map<string, AttributeType>();
    }
  };
  const [types, setTypes] = useState<ReadonlyMap<string, AttributeType>>(new Map());
  const choose = async (event: ChangeEvent<HTMLInputElement>) => {
    const file = event.target.files?.[0];
    run.reset();
    setChecked(false);
    if (!file || !isCsv(file)) return setColumns(null);
    const [text, known] = await Promise.all([file.text(), listed()]);
    setTypes(known);
    setColumns(columnsOf(text).map((column) => withListedType(column, known)));
  };
  const problems = columns ? mappingProblems(columns) : new Map<number, string>();
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const file = form.get('file');
    if (!(file instanceof File) || file.size === 0) return;
    setChecked(true);
    if (problems.size > 0) return;
    setCsv(isCsv(file));
    run.mutate({ file, upsertBy: form.get('upsertBy') === 'email' ? 'email' : 'externalId', columns: isCsv(file) ? columns : null });
  };
  const rows = rowErrors(run.error);
  return (
    <section aria-labelledby="import-title">
      <h2 id="import-title">Import contacts</h2>
      <p className="muted">
        A CSV file with a header row, or a JSON array of contacts. After choosing a CSV file, say where each column goes: a
        contact field, an attribute (with its type), or nowhere. Up to 10,000 rows; all or nothing: a bad row imports
        nothing.
      </p>
      {!canWrite ? (
        <p className="notice">A viewer cannot import contacts.</p>
      ) : (
        <form className="card" onSubmit={submit} aria-label="Import contacts">
          <div className="import-file">
            <div className="field">
              <label htmlFor="import-file">File (.csv or .json)</label>
              <input id="import-file" name="file" type="file" accept=".csv,.json,text/csv,application/json" required onChange={(event) => void choose(event)} />
            </div>
            <SelectField label="Match existing subscribers by" field="upsertBy" error={run.error} defaultValue="externalId">
              <option value="externalId">externalId</option>
              <option value="email">email</option>
            </SelectField>
          </div>
          {columns && (
            <ColumnTable
              columns={columns}
              problems={checked ? problems : new Map()}
              listed={types}
              onChange={(index, column) => setColumns((current) => current && current.map((c, i) => (i === index ? column : c)))}
            />
          )}
          {checked && problems.size > 0 && (
            <p role="alert" className="error">
              Some columns need another look before importing (see the table).
            </p>
          )}
          <button type="submit" className="primary" disabled={run.isPending}>
            Import
          </button>
        </form>
      )}
      {run.isPending && (
        <p role="status" className="muted">
          Importing…
        </p>
      )}
      {run.data && (
        <p role="status" className="success">
          Imported {run.data.total} rows: {run.data.created} created, {run.data.updated} updated.
        </p>
      )}
      {rows.length > 0 ? (
        <RowErrors rows={rows} csv={csv} columnOf={columns ? (field) => columnOfField(columns, field) : undefined} />
      ) : (
        <FormError error={run.error} fields={['upsertBy']} />
      )}
    </section>
  );
}

/** One row per column of the file: its header, a few sample values, where it goes and, for an attribute, its name and type. */
function ColumnTable({
  columns,
  problems,
  listed,
  onChange,
}: {
  columns: ColumnMapping[];
  problems: Map<number, string>;
  /** The project's attribute list: a column renamed to one of its attributes takes its type. */
  listed: ReadonlyMap<string, AttributeType>;
  onChange: (index: number, column: ColumnMapping) => void;
}) {
  const id = useId();
  return (
    <div className="table-scroll">
      <table className="column-mapping">
        <caption>Where each column goes</caption>
        <thead>
          <tr>
            <th scope="col">Column</th>
            <th scope="col">Sample values</th>
            <th scope="col">Goes to</th>
            <th scope="col">Attribute name and type</th>
          </tr>
        </thead>
        <tbody>
          {columns.map((column, index) => {
            const problem = problems.get(index);
            const errorId = `${id}-${index}-error`;
            const quoted = `“${column.header}”`;
            const destinations = Object.entries(DESTINATION_LABEL) as [Exclude<Destination, 'header'>, string][];
            return (
              <tr key={index}>
                <th scope="row">{column.header || <span className="muted">(no header)</span>}</th>
                <td>
                  {column.samples.some((sample) => sample !== '') ? (
                    column.samples.filter((sample) => sample !== '').map((sample, i) => (
                      <span key={i} className="sample">
                        {sample.length > 40 ? `${sample.slice(0, 40)}…` : sample}
                      </span>
                    ))
                  ) : (
                    <span className="muted">empty</span>
                  )}
                </td>
                <td>
                  <select
                    aria-label={`Where ${quoted} goes`}
                    value={column.destination}
                    aria-invalid={problem && column.destination !== 'attribute' ? true : undefined}
                    aria-describedby={problem ? errorId : undefined}
                    onChange={(event) => onChange(index, withListedType({ ...column, destination: event.target.value as Destination }, listed))}
                  >
                    {column.destination === 'header' && <option value="header">As its header says</option>}
                    {destinations.map(([value, label]) => (
                      <option key={value} value={value}>
                        {label}
                      </option>
                    ))}
                  </select>
                  {problem && (
                    <span id={errorId} className="field-error">
                      {problem}
                    </span>
                  )}
                </td>
                <td>
                  {column.destination === 'attribute' ? (
                    <div className="name-type">
                      <input
                        aria-label={`Attribute name for ${quoted}`}
                        value={column.attribute}
                        maxLength={100}
                        aria-invalid={problem ? true : undefined}
                        aria-describedby={problem ? errorId : undefined}
                        onChange={(event) => onChange(index, withListedType({ ...column, attribute: event.target.value }, listed))}
                      />
                      <select
                        aria-label={`Type of ${quoted}`}
                        value={column.type}
                        onChange={(event) => onChange(index, { ...column, type: event.target.value as AttributeType })}
                      >
                        {ATTRIBUTE_TYPES.map((type) => (
                          <option key={type} value={type}>
                            {TYPE_LABEL[type]}
                          </option>
                        ))}
                      </select>
                    </div>
                  ) : (
                    <span className="muted">—</span>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
