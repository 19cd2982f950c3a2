// Reads of a project's email suppression list: the email addresses of one environment that are not reachable.
import { and, asc, count, desc, eq, gt, ilike, ne, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/database.js';
import { channelAddresses } from '../../db/schema.js';
import type { ProjectScope } from '../tenancy.js';

export type SuppressionRow = Pick<typeof channelAddresses.$inferSelect, 'address' | 'statusReason' | 'source' | 'updatedAt'>;

const columns = {
  address: channelAddresses.address,
  statusReason: channelAddresses.statusReason,
  source: channelAddresses.source,
  updatedAt: channelAddresses.updatedAt,
};

/** The suppressed email addresses of the scope's project and environment. */
const suppressedIn = (scope: ProjectScope, extra?: SQL): SQL =>
  and(
    eq(channelAddresses.projectId, scope.projectId),
    eq(channelAddresses.sandbox, scope.sandbox),
    eq(channelAddresses.channel, 'email'),
    ne(channelAddresses.status, 'reachable'),
    extra,
  )!;

export async function listSuppressions(
  db: Db,
  scope: ProjectScope,
  filters: { reason?: string | undefined; q?: string | undefined },
  limit: number,
  offset: number,
): Promise<{ rows: SuppressionRow[]; total: number }> {
  const where = suppressedIn(
    scope,
    and(
      filters.reason === undefined ? undefined : eq(channelAddresses.statusReason, filters.reason),
      filters.q === undefined ? undefined : ilike(channelAddresses.address, `%${filters.q.replace(/[\\%_]/g, '\\$&')}%`),
    ),
  );
  const [rows, [total]] = await Promise.all([
    db.select(columns).from(channelAddresses).where(where).orderBy(desc(channelAddresses.updatedAt), asc(channelAddresses.address)).limit(limit).offset(offset),
    db.select({ total: count() }).from(channelAddresses).where(where),
  ]);
  return { rows, total: total?.total ?? 0 };
}

export async function findSuppression(db: Db, scope: ProjectScope, address: string): Promise<SuppressionRow | undefined> {
  const [row] = await db.select(columns).from(channelAddresses).where(suppressedIn(scope, eq(channelAddresses.address, address)));
  return row;
}

/** Keyset page (by address) of the whole list, for the streamed export. */
export function pageSuppressions(db: Db, scope: ProjectScope, after: string | undefined, limit: number): Promise<SuppressionRow[]> {
  return db
    .select(columns)
    .from(channelAddresses)
    .where(suppressedIn(scope, after === undefined ? undefined : gt(channelAddresses.address, after)))
    .orderBy(asc(channelAddresses.address))
    .limit(limit);
}
