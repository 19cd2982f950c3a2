// What the push and campaign benchmarks share: the audience on the local push service, the worker process's settings
// and the check of the push service's answers.
import type pg from 'pg';
import type { WorkerProcess } from '../../server/test/worker-processes.js';
import { startHeraldWorker, type PushPeer } from './process.js';

/** Subscriptions share the keys of a few fake browsers: the push service checks a sample, and seeding stays cheap. */
export const BROWSERS = 16;
/** The push service decrypts the push of every SAMPLE_EVERY-th subscriber (endpoint /push/b<g>), up to its sampleMax. */
export const SAMPLE_EVERY = 10_000;
export const PUBLIC_URL = 'https://herald.example.com';
export const VAPID_SUBJECT = 'mailto:bench@example.com';
export const JWT_SECRET = 'bench-secret-bench-secret-bench-secret-0123';

/** Subscriber ids of an audience seeded with `prefix`: <prefix><g, 8 digits>, so `id <= subscriberId(p, n)` is the first n. */
export const subscriberId = (prefix: string, g: number) => `sub_${prefix}${String(g).padStart(8, '0')}`;

/**
 * Seeds subscribers 1…total of the project: endpoint /push/b<g> on the peer, keys of browser g mod BROWSERS; ids and
 * tokens carry `prefix` (both are unique across projects). Set-based, 100,000 rows a statement.
 */
export async function seedAudience(pool: pg.Pool, projectId: string, peer: PushPeer, total: number, prefix: string): Promise<void> {
  const chunk = 100_000;
  for (let from = 1; from <= total; from += chunk) {
    await pool.query(
      `INSERT INTO subscribers (id, project_id, token, endpoint, p256dh, auth)
       SELECT 'sub_' || $8 || lpad(g::text, 8, '0'), $1, 'st_' || $8 || g, $2 || '/push/b' || g, ($3::text[])[1 + g % $5], ($4::text[])[1 + g % $5]
       FROM generate_series($6::int, $7::int) g`,
      [projectId, peer.origin, peer.browsers.map((b) => b.p256dh), peer.browsers.map((b) => b.auth), BROWSERS, from, Math.min(total, from + chunk - 1), prefix],
    );
  }
  await pool.query('ANALYZE subscribers');
}

/** The real worker process, sending to the peer: default settings, plus any DELIVERY_* and PUSH_* of the bench's environment. */
export function startPushWorker(databaseUrl: string, peer: PushPeer): Promise<WorkerProcess> {
  return startHeraldWorker(databaseUrl, {
    ALLOW_INSECURE_PUSH_ENDPOINTS: 'true',
    NODE_EXTRA_CA_CERTS: peer.caFile,
    JWT_SECRET,
    PUBLIC_URL,
    VAPID_SUBJECT,
    LOG_LEVEL: 'warn',
    // Engine and provider settings can be tried without code changes: DELIVERY_BATCH_SIZE=… npm run bench -- push
    ...Object.fromEntries(Object.entries(process.env).filter(([name]) => /^(DELIVERY|PUSH)_/.test(name)) as [string, string][]),
  });
}

/** What the peer answered between two stats readings; throws on anything but 201 or a sample not decrypted. */
export function checkAnswers(before: Awaited<ReturnType<PushPeer['stats']>>, after: Awaited<ReturnType<PushPeer['stats']>>, sent: number) {
  const delta = (status: string) => (after.statuses[status] ?? 0) - (before.statuses[status] ?? 0);
  const other = Object.keys(after.statuses).filter((s) => s !== '201' && delta(s) > 0);
  if (delta('201') !== sent || other.length > 0) {
    throw new Error(`push service answered ${delta('201')} × 201 for ${sent} sends; others: ${other.map((s) => `${s} × ${delta(s)}`).join(', ')}`);
  }
  const decrypted = after.decrypted - before.decrypted;
  if (decrypted !== Math.floor(sent / SAMPLE_EVERY)) throw new Error(`${decrypted} sampled pushes decrypted, expected ${Math.floor(sent / SAMPLE_EVERY)}`);
  return decrypted;
}
