// Project-change notifications: the NOTIFY channel every process that keeps a project's settings in memory listens on.
import { sql } from 'drizzle-orm';
import type { Db } from './database.js';

/**
 * Announces `{"projectId": …}` when a project's settings change or it is deleted: every process that keeps a
 * project's settings in memory (API key owners, the delivery engine's sending settings) listens and forgets them.
 */
export const PROJECT_CHANGES_CHANNEL = 'herald_project_changes';

/** Delivered to the listeners when the caller's transaction commits (at once outside a transaction). */
export async function notifyProjectChange(db: Db, projectId: string): Promise<void> {
  await db.execute(sql`select pg_notify(${PROJECT_CHANGES_CHANNEL}, ${JSON.stringify({ projectId })})`);
}

/** Called after a project is deleted or its settings change, once the change is committed. */
export type ForgetProject = (projectId: string) => void;
