// Test fixture: subscribers written straight into the database in bulk, with the fields campaign audiences read.
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { newId } from '../src/shared/ids.js';
import { createFakeBrowser, type PushService } from './push-service.js';

export interface SeedSubscriber {
  endpoint?: string | null;
  p256dh?: string;
  auth?: string;
  sandbox?: boolean;
  status?: 'active' | 'inactive' | 'unsubscribed';
  country?: string | null;
  tags?: string[];
  timezone?: string | null;
  /** preferences.channels.push */
  push?: boolean;
}

/** Inserts the subscribers of a project in one statement per 5,000; returns their ids in order. */
export async function seedSubscribers(pool: pg.Pool, projectId: string, rows: SeedSubscriber[]): Promise<string[]> {
  const ids = rows.map(() => newId('sub'));
  for (let start = 0; start < rows.length; start += 5_000) {
    const chunk = rows.slice(start, start + 5_000);
    const chunkIds = ids.slice(start, start + 5_000);
    const col = <T>(pick: (row: SeedSubscriber, i: number) => T) => chunk.map(pick);
    await pool.query(
      `INSERT INTO subscribers (id, project_id, token, endpoint, p256dh, auth, sandbox, status, country, tags, timezone, preferences)
       SELECT id, $1, 'st_' || id, endpoint, p256dh, auth, sandbox, status::subscriber_status, country, string_to_array(tags, '|'), timezone,
              CASE WHEN push IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('channels', jsonb_build_object('push', push)) END
       FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::bool[], $7::text[], $8::text[], $9::text[], $10::text[], $11::bool[])
         AS x(id, endpoint, p256dh, auth, sandbox, status, country, tags, timezone, push)`,
      [
        projectId,
        chunkIds,
        col((r, i) => (r.endpoint === undefined ? `https://push.example.com/${chunkIds[i]}` : r.endpoint)),
        col((r) => r.p256dh ?? randomBytes(65).toString('base64url')),
        col((r) => r.auth ?? randomBytes(16).toString('base64url')),
        col((r) => r.sandbox ?? false),
        col((r) => r.status ?? 'active'),
        col((r) => r.country ?? null),
        col((r) => (r.tags ?? []).join('|')),
        col((r) => r.timezone ?? null),
        col((r) => r.push ?? null),
      ],
    );
  }
  return ids;
}

/** Subscriptions share a few fake browsers' keys: the push service still decrypts every push, key generation stays cheap. */
const SHARED_BROWSERS = 16;

/**
 * `count` active push subscribers of a project whose endpoints are on the local push service, in one statement.
 * Each subscriber's id is also its id at the push service (`push.received[].id`).
 */
export async function seedPushRecipients(pool: pg.Pool, push: PushService, projectId: string, count: number, tags: string[] = []): Promise<void> {
  const browsers = Array.from({ length: SHARED_BROWSERS }, () => createFakeBrowser());
  for (let g = 1; g <= count; g++) push.endpointFor({ ...browsers[g % SHARED_BROWSERS]!, id: `sub_push_${g}` });
  await pool.query(
    `INSERT INTO subscribers (id, project_id, token, endpoint, p256dh, auth, tags)
     SELECT 'sub_push_' || g, $1, 'tok_push_' || g, $2 || '/push/sub_push_' || g, ($3::text[])[1 + g % $5], ($4::text[])[1 + g % $5], $7::text[]
     FROM generate_series(1, $6::int) g`,
    [projectId, push.origin, browsers.map((b) => b.p256dh), browsers.map((b) => b.auth), SHARED_BROWSERS, count, tags],
  );
}
