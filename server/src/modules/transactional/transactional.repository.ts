// Transactional sends: finding the recipient's devices across environments, and the send log of every channel.
import { and, count, desc, eq, gte, inArray, isNotNull, isNull, lt, sql } from 'drizzle-orm';
import type { Db } from '../../db/database.js';
import { deliveries, subscribers, transactionalSends, type Channel } from '../../db/schema.js';
import { GroupCommit } from '../../shared/group-commit.js';
import { newId } from '../../shared/ids.js';
import type { ProjectScope, ProjectTenant } from '../tenancy.js';

export type Recipient = { externalId: string } | { token: string };

export interface Device {
  id: string;
  status: 'active' | 'inactive' | 'unsubscribed';
  sandbox: boolean;
  /** Has a complete push subscription (a contact without one cannot get a push). */
  pushable: boolean;
  timezone: string | null;
}

/**
 * The project's subscribers named by externalId (every device, newest first, at most `limit`) or by token, live and
 * sandbox alike: the caller tells an environment mismatch apart from an unknown recipient.
 */
export async function findDevices(db: Db, projectId: string, recipient: Recipient, limit: number): Promise<Device[]> {
  const named = 'externalId' in recipient ? eq(subscribers.externalId, recipient.externalId) : eq(subscribers.token, recipient.token);
  return db
    .select({
      id: subscribers.id,
      status: subscribers.status,
      sandbox: subscribers.sandbox,
      pushable: sql<boolean>`${subscribers.endpoint} IS NOT NULL AND ${subscribers.p256dh} IS NOT NULL AND ${subscribers.auth} IS NOT NULL`,
      timezone: subscribers.timezone,
    })
    .from(subscribers)
    .where(and(eq(subscribers.projectId, projectId), named))
    .orderBy(desc(subscribers.createdAt), desc(subscribers.id))
    .limit(limit);
}

export type SendRow = typeof transactionalSends.$inferInsert;

/** Sends logged together at most by one INSERT. */
const MAX_LOG_GROUP = 100;

/** Logs one transactional send as its route answered it, and answers that envelope. */
export type SendLog = <E extends { reason: string | null }>(
  sender: ProjectTenant,
  channel: Channel,
  recipient: Record<string, string>,
  idempotencyKey: string | undefined,
  sent: { messageId: string | null; envelope: E },
) => Promise<E>;

/** The send log of every channel: the rows that arrive together share one multi-row INSERT and its commit (group commit). */
export function sendLog(db: Db): SendLog {
  const commits = new GroupCommit<SendRow, void>(async (rows) => {
    await db.insert(transactionalSends).values(rows);
    return rows.map(() => undefined);
  }, { maxBatch: MAX_LOG_GROUP });
  return async (sender, channel, recipient, idempotencyKey, { messageId, envelope }) => {
    await commits.submit({
      id: newId('txs'),
      projectId: sender.projectId,
      channel,
      apiKeyId: sender.apiKeyId,
      sandbox: sender.sandbox,
      recipient,
      messageId,
      idempotencyKey: idempotencyKey ?? null,
      outcome: { ...envelope },
      reason: envelope.reason,
    });
    return envelope;
  };
}

export interface SendFilters {
  channel?: 'push' | 'email' | 'sms' | 'whatsapp' | undefined;
  reason?: string | undefined;
  delivered?: boolean | undefined;
  from?: Date | undefined;
  to?: Date | undefined;
}

/** The project's send log, newest first, an SMS or WhatsApp send with its delivery; a test key sees only its sandbox sends. */
export async function listSends(db: Db, scope: ProjectScope, filters: SendFilters, limit: number, offset: number) {
  const where = and(
    eq(transactionalSends.projectId, scope.projectId),
    scope.sandbox ? eq(transactionalSends.sandbox, true) : undefined,
    filters.channel !== undefined ? eq(transactionalSends.channel, filters.channel) : undefined,
    filters.reason !== undefined ? eq(transactionalSends.reason, filters.reason) : undefined,
    // The reason is null exactly when the send went: a push delivered, an email sent.
    filters.delivered === undefined
      ? undefined
      : filters.delivered
        ? isNull(transactionalSends.reason)
        : isNotNull(transactionalSends.reason),
    filters.from !== undefined ? gte(transactionalSends.createdAt, filters.from) : undefined,
    filters.to !== undefined ? lt(transactionalSends.createdAt, filters.to) : undefined,
  );
  const [rows, [total]] = await Promise.all([
    db
      .select({
        send: transactionalSends,
        delivery: { status: deliveries.status, reason: deliveries.reason, providerCode: deliveries.providerCode, providerError: deliveries.providerError },
      })
      .from(transactionalSends)
      // An SMS or WhatsApp send writes one message to one number: its one delivery says what became of it since.
      .leftJoin(deliveries, and(eq(deliveries.messageId, transactionalSends.messageId), inArray(transactionalSends.channel, ['sms', 'whatsapp'])))
      .where(where)
      .orderBy(desc(transactionalSends.createdAt), desc(transactionalSends.id))
      .limit(limit)
      .offset(offset),
    db.select({ total: count() }).from(transactionalSends).where(where),
  ]);
  return { rows, total: total?.total ?? 0 };
}
