// A project's SMS opt-outs: the numbers nothing is sent to by SMS (a STOP, or Twilio's 21610), most recent first.
import type { Db } from '../../db/database.js';
import type { ProjectScope } from '../tenancy.js';
import * as repo from './sms-opt-out.repository.js';

export interface SmsOptOut {
  number: string;
  reason: string | null;
  source: string | null;
  optedOutAt: string;
}

export class SmsOptOutService {
  constructor(private readonly db: Db) {}

  async list(scope: ProjectScope, page: number, pageSize: number): Promise<{ data: SmsOptOut[]; page: number; pageSize: number; total: number }> {
    const { rows, total } = await repo.listSmsOptOuts(this.db, scope, pageSize, (page - 1) * pageSize);
    const data = rows.map((row) => ({ number: row.address, reason: row.statusReason, source: row.source, optedOutAt: row.updatedAt.toISOString() }));
    return { data, page, pageSize, total };
  }
}
