// Which project of an organization sends its account mail: every call names the organization.
import { sql } from 'drizzle-orm';
import type { Db } from '../../db/database.js';

export interface SendingProjectRow {
  projectId: string;
  /** The project's chosen sending domain (may no longer be verified), and its verified domains by name. */
  chosenDomain: string | null;
  verifiedDomains: string[];
}

/** The organization's oldest project with an email provider and at least one verified sending domain, if any. */
export async function findSendingProject(db: Db, organizationId: string): Promise<SendingProjectRow | undefined> {
  const { rows } = await db.execute<{ id: string; chosen: string | null; verified: string[] }>(
    sql`SELECT p.id, c.settings->>'domain' AS chosen,
               array(SELECT d.domain FROM email_domains d WHERE d.project_id = p.id AND d.status = 'verified' ORDER BY d.domain) AS verified
          FROM projects p
          JOIN channel_configs c ON c.project_id = p.id AND c.channel = 'email' AND c.provider <> 'none'
         WHERE p.organization_id = ${organizationId}
           AND EXISTS (SELECT 1 FROM email_domains d WHERE d.project_id = p.id AND d.status = 'verified')
         ORDER BY p.created_at, p.id
         LIMIT 1`,
  );
  const row = rows[0];
  return row && { projectId: row.id, chosenDomain: row.chosen, verifiedDomains: row.verified };
}
