// What the preference center reads: the email delivery a signed unsubscribe link names, its recipient and the address's state.
import { sql } from 'drizzle-orm';
import type { Db } from '../../db/database.js';
import type { SubscriberPreferences } from '../../db/schema.js';

/** The recipient of one email delivery, as its preference center shows and changes them. */
export interface LinkedRecipient {
  deliveryId: number;
  organizationId: string;
  projectId: string;
  sandbox: boolean;
  subscriberId: string;
  /** The address the email went to (lower-case): what an unsubscribe suppresses. */
  address: string;
  /** The From name of the email, else its From address: who the person knows the mail by. */
  sender: string;
  language: string | null;
  hasPhone: boolean;
  hasPush: boolean;
  channels: NonNullable<SubscriberPreferences['channels']>;
  /** The address's suppression reason on email in the project and environment, null while it is reachable. */
  suppression: string | null;
}

/**
 * The email delivery `deliveryId` names, with its subscriber and message. The signed link is the authority (the
 * page is public), as a tracking token is: no tenant is given, the delivery decides the project and environment.
 * Undefined when the delivery is gone (its subscriber deleted).
 */
export async function findLinkedRecipient(db: Db, deliveryId: number): Promise<LinkedRecipient | undefined> {
  const { rows } = await db.execute<{
    organization_id: string;
    project_id: string;
    sandbox: boolean;
    subscriber_id: string;
    address: string;
    sender: string;
    language: string | null;
    has_phone: boolean;
    has_push: boolean;
    channels: LinkedRecipient['channels'] | null;
    suppression: string | null;
  }>(sql`
    SELECT p.organization_id, d.project_id, s.sandbox, s.id AS subscriber_id, lower(d.destination) AS address,
      coalesce(nullif(m.content #>> '{from,name}', ''), m.content #>> '{from,email}') AS sender, s.language,
      s.phone IS NOT NULL AS has_phone, s.endpoint IS NOT NULL AS has_push, s.preferences -> 'channels' AS channels,
      (SELECT coalesce(a.status_reason, 'manual') FROM channel_addresses a
       WHERE a.project_id = d.project_id AND a.sandbox = s.sandbox AND a.channel = 'email' AND a.address = lower(d.destination)
         AND a.status <> 'reachable') AS suppression
    FROM deliveries d
    JOIN subscribers s ON s.id = d.subscriber_id
    JOIN messages m ON m.id = d.message_id
    JOIN projects p ON p.id = d.project_id
    WHERE d.id = ${deliveryId} AND d.channel = 'email' AND d.destination IS NOT NULL`);
  const row = rows[0];
  return (
    row && {
      deliveryId,
      organizationId: row.organization_id,
      projectId: row.project_id,
      sandbox: row.sandbox,
      subscriberId: row.subscriber_id,
      address: row.address,
      sender: row.sender,
      language: row.language,
      hasPhone: row.has_phone,
      hasPush: row.has_push,
      channels: row.channels ?? {},
      suppression: row.suppression,
    }
  );
}
