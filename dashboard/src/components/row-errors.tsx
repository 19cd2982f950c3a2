// The per-row errors of an all-or-nothing import's 422 (`rows[i].field`), listed by CSV line or JSON row.
import { ApiError } from '../api/client';

export interface RowError {
  row: number;
  field: string;
  error: string;
}

const ROW = /^rows\[(\d+)\]\.?(.*)$/;

/** The 422 details that name a row; the others stay for the form-level message. */
export function rowErrors(error: unknown): RowError[] {
  if (!(error instanceof ApiError) || error.status !== 422) return [];
  return (error.details ?? []).flatMap((detail) => {
    const match = ROW.exec(detail.field);
    return match ? [{ row: Number(match[1]), field: match[2] || '(row)', error: detail.error }] : [];
  });
}

/** A field as the file names it: `Score (attributes.score)`, or the field alone when the column bears its name. */
const fieldWords = (field: string, column: string | undefined) => (column === undefined || field === column ? field : `${column} (${field})`);

/** `columnOf`: the file's column a field came from (a mapped CSV), shown beside the field. */
export function RowErrors({ rows, csv, columnOf }: { rows: RowError[]; csv: boolean; columnOf?: (field: string) => string | undefined }) {
  return (
    <div role="alert">
      <p className="error">Nothing was imported: {rows.length} error(s) in the file.</p>
      <table>
        <caption className="visually-hidden">Errors by row</caption>
        <thead>
          <tr>
            <th scope="col">{csv ? 'Line' : 'Row'}</th>
            <th scope="col">Field</th>
            <th scope="col">Error</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={`${row.row}.${row.field}`}>
              {/* rows[0] is the first record: line 2 of a CSV (after its header), row 1 of a JSON array. */}
              <td>{csv ? row.row + 2 : row.row + 1}</td>
              <td>{fieldWords(row.field, columnOf?.(row.field))}</td>
              <td>{row.error}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
