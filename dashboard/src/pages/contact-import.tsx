// Contacts import: a CSV or JSON file sent to POST /contacts/import (all or nothing); each bad row's errors listed.
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useParams } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { api, unwrap, type Body } from '../api/client';
import { useMembership } from '../auth/me';
import { FormError, SelectField } from '../components/field';
import { RowErrors, rowErrors } from '../components/row-errors';

type ImportBody = Body<'/contacts/import', 'post'>;
type UpsertBy = NonNullable<ImportBody['upsertBy']>;

async function upload(projectId: string, file: File, upsertBy: UpsertBy) {
  const text = await file.text();
  if (/\.csv$/i.test(file.name) || file.type === 'text/csv') {
    // CSV: the file as it is; projectId and upsertBy in the query (the route's text/csv body).
    return unwrap(
      api.POST('/contacts/import', {
        params: { query: { projectId, upsertBy } },
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
  const run = useMutation({
    mutationFn: ({ file, upsertBy }: { file: File; upsertBy: UpsertBy }) => upload(projectId, file, upsertBy),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['subscribers', projectId] }),
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const file = form.get('file');
    if (!(file instanceof File) || file.size === 0) return;
    setCsv(/\.csv$/i.test(file.name));
    run.mutate({ file, upsertBy: form.get('upsertBy') === 'email' ? 'email' : 'externalId' });
  };
  const rows = rowErrors(run.error);
  return (
    <section aria-labelledby="import-title">
      <h2 id="import-title">Import contacts</h2>
      <p className="muted">
        A CSV file with a header row (externalId, email, phone, timezone, language, tags, attributes.&lt;name&gt;,
        preferences.channels.&lt;channel&gt;), or a JSON array of contacts. Up to 10,000 rows; all or nothing: a bad row
        imports nothing.
      </p>
      {!canWrite ? (
        <p className="notice">A viewer cannot import contacts.</p>
      ) : (
        <form className="card inline" onSubmit={submit} aria-label="Import contacts">
          <div className="field">
            <label htmlFor="import-file">File (.csv or .json)</label>
            <input id="import-file" name="file" type="file" accept=".csv,.json,text/csv,application/json" required />
          </div>
          <SelectField label="Match existing subscribers by" field="upsertBy" error={run.error} defaultValue="externalId">
            <option value="externalId">externalId</option>
            <option value="email">email</option>
          </SelectField>
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
        <RowErrors rows={rows} csv={csv} />
      ) : (
        <FormError error={run.error} fields={['upsertBy']} />
      )}
    </section>
  );
}
