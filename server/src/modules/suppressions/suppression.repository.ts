// Reads of a project's email suppression list: the email addresses of one environment that are not reachable.
import { and, asc, count, desc, eq, gt, ilike, ne, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/database.js';
import { channelAddresses } from '../../db/schema.js';
import type { SuppressionReason } from '../../delivery/index.js';
import type { ProjectScope } from '../tenancy.js';

export type SuppressionRow = Pick<typeof channelAddresses.$inferSelect, 'address' | 'source' | 'updatedAt'> & { reason: SuppressionReason };

/**
 * An address's reason on the list: its own when it is a suppression reason (none: `manual`, added without one); a
 * provider's code on an unreachable address reads `bounced`, as `emailStatusOf` reads it.
 */
const reason = sql<SuppressionReason>`CASE WHEN ${channelAddresses.statusReason} IN ('bounced', 'complained', 'unsubscribed', 'manual') THEN ${channelAddresses.statusReason}
  WHEN ${channelAddresses.status} = 'unreachable' THEN 'bounced' ELSE 'manual' END`;

const columns = {
  address: channelAddresses.address,
  reason,
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
      filters.reason === undefined ? undefined : sql`${reason} = ${filters.reason}`,
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

/** Each address's suppression in its scope's project and environment, in the order given (undefined: none). */
export async function findSuppressions(db: Db, wanted: readonly { scope: ProjectScope; address: string }[]): Promise<(SuppressionReason | undefined)[]> {
  if (wanted.length === 0) return [];
  const column = <T>(pick: (w: (typeof wanted)[number]) => T) => sql.param(wanted.map(pick));
  const { rows } = await db.execute<{ i: number; reason: SuppressionReason }>(sql`
    SELECT w.i::int AS i, ${reason} AS reason
    FROM unnest(${column((w) => w.scope.projectId)}::text[], ${column((w) => w.scope.sandbox)}::boolean[], ${column((w) => w.address)}::text[])
      WITH ORDINALITY AS w(project_id, sandbox, address, i)
    JOIN channel_addresses ON channel_addresses.project_id = w.project_id AND channel_addresses.sandbox = w.sandbox
      AND channel_addresses.channel = 'email' AND channel_addresses.address = w.address
    WHERE channel_addresses.status <> 'reachable'`);
  const found: (SuppressionReason | undefined)[] = new Array(wanted.length).fill(undefined);
  for (const row of rows) found[row.i - 1] = row.reason;
  return found;
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
