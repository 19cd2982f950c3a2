// The email suppression list of a project: shared by campaign and transactional email, fed by bounces, complaints,
// unsubscribes and the project's own additions; lifted only by the project, and never for a complaint.
import { CsvError, parse } from 'csv-parse/sync';
import type { Db } from '../../db/database.js';
import * as delivery from '../../delivery/index.js';
import { AppError, conflict, notFound, validationFailed, type FieldError } from '../../shared/errors.js';
import { email as emailSchema } from '../subscribers/index.js';
import type { ProjectScope } from '../tenancy.js';
import * as repo from './suppression.repository.js';

export interface Suppression {
  email: string;
  reason: delivery.SuppressionReason;
  /** Who said so: `provider` (a bounce or complaint report), `recipient` (an unsubscribe), `api`, `import`. */
  source: string | null;
  suppressedAt: string;
}

export type SuppressionState =
  | (Suppression & { suppressed: true })
  | { email: string; suppressed: false; reason: null; source: null; suppressedAt: null };

export interface SuppressionInput {
  email: string;
  reason?: delivery.SuppressionReason | undefined;
}

/** At most this many rows in one import, and this many row errors listed in its 422. */
export const MAX_IMPORT_ROWS = 100_000;
const MAX_REPORTED_ERRORS = 500;
const EXPORT_BATCH = 1000;

const toSuppression = (row: repo.SuppressionRow): Suppression => ({
  email: row.address,
  reason: row.reason,
  source: row.source,
  suppressedAt: row.updatedAt.toISOString(),
});

const stateOf = (scope: ProjectScope, input: SuppressionInput, source: string): delivery.AddressState => {
  const reason = input.reason ?? 'manual';
  return {
    projectId: scope.projectId,
    sandbox: scope.sandbox,
    channel: 'email',
    address: input.email.toLowerCase(),
    status: delivery.suppressionStatus(reason),
    reason,
    source,
  };
};

export class SuppressionService {
  constructor(
    private readonly db: Db,
    private readonly records: delivery.DeliveryRecords,
  ) {}

  async list(scope: ProjectScope, filters: { reason?: delivery.SuppressionReason | undefined; q?: string | undefined }, page: number, pageSize: number) {
    const { rows, total } = await repo.listSuppressions(this.db, scope, filters, pageSize, (page - 1) * pageSize);
    return { data: rows.map(toSuppression), page, pageSize, total };
  }

  /** Whether the address is suppressed, and why: a state either way, so asking is never an error. */
  async state(scope: ProjectScope, email: string): Promise<SuppressionState> {
    const address = email.toLowerCase();
    const row = await repo.findSuppression(this.db, scope, address);
    if (!row) return { email: address, suppressed: false, reason: null, source: null, suppressedAt: null };
    return { ...toSuppression(row), suppressed: true };
  }

  /** Why each address (lower-cased) is suppressed in its scope's environment, or undefined where it is not; in order. */
  async reasonsFor(db: Db, wanted: readonly { scope: ProjectScope; address: string }[]): Promise<(delivery.SuppressionReason | undefined)[]> {
    return repo.findSuppressions(db, wanted);
  }

  /** Suppresses an address (an address already suppressed keeps its first reason, unless this one is a complaint). */
  async add(scope: ProjectScope, input: SuppressionInput): Promise<Suppression> {
    await this.records.recordAddressStates([stateOf(scope, input, 'api')]);
    const row = await repo.findSuppression(this.db, scope, input.email.toLowerCase());
    if (!row) throw new Error(`suppression of ${input.email} not recorded`);
    return toSuppression(row);
  }

  /** Lifts a suppression; a complaint is permanent (409). The address's subscribers take mail again. */
  async remove(scope: ProjectScope, email: string): Promise<void> {
    const lifted = await this.records.liftAddressState({ projectId: scope.projectId, sandbox: scope.sandbox, channel: 'email', address: email.toLowerCase() });
    if (lifted === undefined) throw notFound('Suppression');
    if (!lifted) {
      throw conflict('A complaint is a permanent suppression: the recipient marked mail as spam, and is never mailed again', 'complaint_permanent');
    }
  }

  /** Imports rows (`email`, optional `reason`), all validated before any is written; returns how many were new. */
  async import(scope: ProjectScope, rows: SuppressionInput[]): Promise<{ received: number; suppressed: number }> {
    const suppressed = await this.db.transaction((tx) => this.records.recordAddressStates(rows.map((row) => stateOf(scope, row, 'import')), tx));
    return { received: rows.length, suppressed };
  }

  /** The whole list, streamed in keyset batches: memory does not grow with the list. */
  async *export(scope: ProjectScope): AsyncGenerator<Suppression> {
    let after: string | undefined;
    for (;;) {
      const rows = await repo.pageSuppressions(this.db, scope, after, EXPORT_BATCH);
      for (const row of rows) yield toSuppression(row);
      if (rows.length < EXPORT_BATCH) return;
      after = rows.at(-1)!.address;
    }
  }
}

/**
 * Reads a suppression CSV (header row first; columns `email` and optionally `reason`, other columns ignored, as
 * exports of other services carry more) and validates every row. Malformed CSV → 400; any bad row → 422 naming
 * `rows[<index>].<field>`.
 */
export function suppressionsFromCsv(text: string): SuppressionInput[] {
  let records: Record<string, string>[];
  try {
    records = parse(text, { bom: true, columns: (header: string[]) => header.map((name) => name.trim().toLowerCase()), skip_empty_lines: true }) as Record<string, string>[];
  } catch (error) {
    if (error instanceof CsvError) throw new AppError(400, 'invalid_csv', `Invalid CSV: ${error.message}`);
    throw error;
  }
  if (records.length > 0 && !('email' in records[0]!)) throw validationFailed([{ field: 'columns.email', error: 'is required' }]);
  if (records.length > MAX_IMPORT_ROWS) throw validationFailed([{ field: 'rows', error: `at most ${MAX_IMPORT_ROWS} rows in one import` }]);
  const problems: FieldError[] = [];
  const rows: SuppressionInput[] = [];
  records.forEach((record, index) => {
    const address = emailSchema.safeParse(record.email ?? '');
    const reason = record.reason?.trim() ? record.reason.trim().toLowerCase() : 'manual';
    if (!address.success) problems.push({ field: `rows[${index}].email`, error: address.error.issues[0]!.message });
    if (!(delivery.SUPPRESSION_REASONS as readonly string[]).includes(reason)) {
      problems.push({ field: `rows[${index}].reason`, error: `must be one of ${delivery.SUPPRESSION_REASONS.join(', ')}` });
    }
    if (address.success) rows.push({ email: address.data, reason: reason as delivery.SuppressionReason });
  });
  if (problems.length > 0) {
    const shown = problems.slice(0, MAX_REPORTED_ERRORS);
    const message = problems.length > shown.length ? `Validation failed: ${problems.length} errors, the first ${shown.length} listed` : 'Validation failed';
    throw new AppError(422, 'validation_failed', message, shown);
  }
  return rows;
}
