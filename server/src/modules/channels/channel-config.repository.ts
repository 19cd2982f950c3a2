// Channel configurations of a project: provider, settings, and sealed credentials (never decrypted here).
import { and, eq, like, sql } from 'drizzle-orm';
import type { Db } from '../../db/database.js';
import { channelConfigs, type Channel } from '../../db/schema.js';

export type ChannelConfigRow = typeof channelConfigs.$inferSelect;

/** Credentials the 0011 migration copied from the old columns, sealed by the first start that reads them. */
export const UNSEALED_PREFIX = 'plain:';

export async function upsertChannelConfig(db: Db, row: typeof channelConfigs.$inferInsert): Promise<ChannelConfigRow> {
  const [saved] = await db
    .insert(channelConfigs)
    .values(row)
    .onConflictDoUpdate({
      target: [channelConfigs.projectId, channelConfigs.channel],
      set: { provider: row.provider, settings: row.settings, credentials: row.credentials, updatedAt: new Date() },
    })
    .returning();
  return saved!;
}

/**
 * Sets a channel's provider: its name, settings and credentials replace the previous provider's, except the settings
 * named in `keep` (e.g. email's `domain`, which belongs to the project, not to a provider).
 */
export async function replaceProvider(db: Db, row: typeof channelConfigs.$inferInsert, keep: readonly string[]): Promise<ChannelConfigRow> {
  const [saved] = await db
    .insert(channelConfigs)
    .values(row)
    .onConflictDoUpdate({
      target: [channelConfigs.projectId, channelConfigs.channel],
      set: {
        provider: row.provider,
        settings: sql`(SELECT coalesce(jsonb_object_agg(key, value), '{}'::jsonb) FROM jsonb_each(channel_configs.settings)
          WHERE key = ANY(${sql.param([...keep])}::text[])) || excluded.settings`,
        credentials: row.credentials,
        updatedAt: new Date(),
      },
    })
    .returning();
  return saved!;
}

/**
 * Merges `settings` into a configuration's (a null value removes its key), creating the configuration with `blank`
 * when the project has none for the channel yet.
 */
export async function mergeChannelSettings(
  db: Db,
  projectId: string,
  channel: Channel,
  settings: Record<string, unknown>,
  blank: { provider: string; credentials: string },
): Promise<void> {
  const set = JSON.stringify(Object.fromEntries(Object.entries(settings).filter(([, value]) => value !== null)));
  const removed = sql.param(Object.keys(settings).filter((name) => settings[name] === null));
  await db.execute(sql`
    INSERT INTO channel_configs (project_id, channel, provider, settings, credentials)
    VALUES (${projectId}, ${channel}, ${blank.provider}, ${set}::jsonb, ${blank.credentials})
    ON CONFLICT (project_id, channel) DO UPDATE
    SET settings = (channel_configs.settings - ${removed}::text[]) || ${set}::jsonb, updated_at = now()`);
}

export async function findChannelConfig(db: Db, projectId: string, channel: Channel): Promise<ChannelConfigRow | undefined> {
  const [row] = await db
    .select()
    .from(channelConfigs)
    .where(and(eq(channelConfigs.projectId, projectId), eq(channelConfigs.channel, channel)));
  return row;
}

export function listChannelConfigs(db: Db, projectId: string): Promise<ChannelConfigRow[]> {
  return db.select().from(channelConfigs).where(eq(channelConfigs.projectId, projectId)).orderBy(channelConfigs.channel);
}

/** Every configuration's credentials, of every project: the start-up sealing and the key rotation go through them. */
export function allCredentials(db: Db, onlyUnsealed = false) {
  return db
    .select({ projectId: channelConfigs.projectId, channel: channelConfigs.channel, credentials: channelConfigs.credentials })
    .from(channelConfigs)
    .where(onlyUnsealed ? like(channelConfigs.credentials, `${UNSEALED_PREFIX}%`) : sql`true`);
}

/** Replaces credentials only if they are still `expected` (a concurrent rotation or edit wins). */
export async function replaceCredentials(db: Db, projectId: string, channel: Channel, expected: string, credentials: string): Promise<boolean> {
  const updated = await db
    .update(channelConfigs)
    .set({ credentials })
    .where(and(eq(channelConfigs.projectId, projectId), eq(channelConfigs.channel, channel), eq(channelConfigs.credentials, expected)))
    .returning({ projectId: channelConfigs.projectId });
  return updated.length > 0;
}
