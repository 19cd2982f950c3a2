// CSV responses: streamed rows with formula-injection-safe cells.
import { Readable, pipeline } from 'node:stream';
import { stringify } from 'csv-stringify';
import type { FastifyReply, FastifyRequest } from 'fastify';

// CSV cells that a spreadsheet would run as a formula are neutralised with a leading apostrophe.
const FORMULA_START = /^[=+\-@\t\r\0]/;

export function escapeCell(value: string | null | undefined): string {
  if (value === null || value === undefined) return '';
  return FORMULA_START.test(value) ? `'${value}` : value;
}

/** Streams `rows` as a CSV attachment (a header line, then one record per row); a failure mid-stream only cuts it short. */
export function sendCsv<T>(
  request: FastifyRequest,
  reply: FastifyReply,
  csv: { filename: string; columns: readonly string[]; rows: AsyncIterable<T>; toRecord: (row: T) => string[] },
): FastifyReply {
  const out = stringify({ header: true, columns: [...csv.columns] });
  const source = Readable.from(
    (async function* () {
      for await (const row of csv.rows) yield csv.toRecord(row);
    })(),
  );
  pipeline(source, out, (error) => {
    if (error) request.log.warn({ err: error, filename: csv.filename }, 'CSV export stopped');
  });
  return reply
    .header('content-type', 'text/csv; charset=utf-8')
    .header('content-disposition', `attachment; filename="${csv.filename}"`)
    .send(out);
}
