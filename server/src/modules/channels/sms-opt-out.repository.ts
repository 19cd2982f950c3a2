// Reads of a project's SMS opt-outs: the numbers of one environment whose SMS address is `opted_out`.
import { and, asc, count, desc, eq, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/database.js';
import { channelAddresses } from '../../db/schema.js';
import type { ProjectScope } from '../tenancy.js';

export type SmsOptOutRow = Pick<typeof channelAddresses.$inferSelect, 'address' | 'statusReason' | 'source' | 'updatedAt'>;

const optedOutIn = (scope: ProjectScope): SQL =>
  and(
    eq(channelAddresses.projectId, scope.projectId),
    eq(channelAddresses.sandbox, scope.sandbox),
    eq(channelAddresses.channel, 'sms'),
    eq(channelAddresses.status, 'opted_out'),
  )!;

export async function listSmsOptOuts(db: Db, scope: ProjectScope, limit: number, offset: number): Promise<{ rows: SmsOptOutRow[]; total: number }> {
  const where = optedOutIn(scope);
  const columns = { address: channelAddresses.address, statusReason: channelAddresses.statusReason, source: channelAddresses.source, updatedAt: channelAddresses.updatedAt };
  const [rows, [total]] = await Promise.all([
    db.select(columns).from(channelAddresses).where(where).orderBy(desc(channelAddresses.updatedAt), asc(channelAddresses.address)).limit(limit).offset(offset),
    db.select({ total: count() }).from(channelAddresses).where(where),
  ]);
  return { rows, total: total?.total ?? 0 };
}
