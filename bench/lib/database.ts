// The benchmark database: BENCH_DATABASE_URL, or an embedded PostgreSQL in a temporary DATA_DIR; migrated, seeded once.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres } from '../../server/src/db/embedded-postgres.js';
import { openDatabase } from '../../server/src/db/database.js';
import { createLogger } from '../../server/src/logger.js';
import { hashPassword, userDirectory } from '../../server/src/modules/auth/index.js';
import { migrateAll } from '../../server/src/runtime.js';
import { loadConfig } from '../../server/src/config.js';
import { generateVapidKeys } from '../../server/src/modules/channels/vapid.js';
import { createServices } from '../../server/src/services.js';
import { newId } from '../../server/src/shared/ids.js';
import { randomToken } from '../../server/src/shared/secrets.js';
import { log } from './harness.js';

export interface BenchDatabase {
  url: string;
  embedded: boolean;
  stop(): Promise<void>;
}

export async function openBenchDatabase(): Promise<BenchDatabase> {
  const external = process.env.BENCH_DATABASE_URL;
  let url: string;
  let stop = async () => {};
  if (external) {
    url = external;
  } else {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'herald-bench-'));
    log(`starting embedded PostgreSQL in ${dataDir}`);
    const server = await startEmbeddedPostgres({ dataDir });
    url = server.connectionString;
    stop = async () => {
      await server.stop();
      await rm(dataDir, { recursive: true, force: true });
    };
  }
  await migrateAll(url, createLogger('warn'));
  return { url, embedded: !external, stop };
}

export interface BenchTenant {
  /** The owner's login, for the dashboard case. */
  owner: { email: string; password: string };
  projectId: string;
  /** A live key of the seeded project. */
  key: string;
  /** A second, empty project (and its key) that ingest writes into, so the seeded counts stay put. */
  ingestProjectId: string;
  ingestKey: string;
  /** A third project, for the push benchmark's own subscribers (endpoints on the local push service). */
  pushProjectId: string;
  pushVapid: { publicKey: string; privateKey: string };
  /** A fourth, for the campaign benchmark: its audience is exactly the subscribers that case seeds; and its live key. */
  campaignProjectId: string;
  campaignKey: string;
}

/** An owner, organization, four projects and a live key for all but the push one, through Herald's own services. */
export async function createBenchTenant(url: string): Promise<BenchTenant> {
  const database = openDatabase(url, 2);
  try {
    const services = createServices(database.db, loadConfig({ JWT_TTL: '1h' }), randomToken(32));
    const owner = { email: `bench-${randomToken(6)}@example.com`, password: randomToken(16) };
    const user = await userDirectory.create(database.db, { id: newId('usr'), email: owner.email, name: 'Bench', passwordHash: await hashPassword(owner.password) });
    const org = await services.organizations.create(user.id, 'Bench');
    const project = await services.projects.create(org.id, { name: 'Bench audience' });
    const ingest = await services.projects.create(org.id, { name: 'Bench ingest' });
    const push = await services.projects.create(org.id, { name: 'Bench push' });
    const campaign = await services.projects.create(org.id, { name: 'Bench campaign' });
    // A pair the bench knows, for web-push's baseline: Herald keeps the one it generates sealed.
    const pushVapid = generateVapidKeys();
    await services.channels.setPush({ organizationId: org.id, projectId: push.id, sandbox: false }, pushVapid);
    const key = await services.apiKeys.create({ organizationId: org.id, projectId: project.id, sandbox: false }, { name: 'bench', mode: 'live' });
    const ingestKey = await services.apiKeys.create(
      { organizationId: org.id, projectId: ingest.id, sandbox: false },
      { name: 'bench', mode: 'live' },
    );
    const campaignKey = await services.apiKeys.create(
      { organizationId: org.id, projectId: campaign.id, sandbox: false },
      { name: 'bench', mode: 'live' },
    );
    return {
      owner,
      projectId: project.id,
      key: key.key,
      ingestProjectId: ingest.id,
      ingestKey: ingestKey.key,
      pushProjectId: push.id,
      pushVapid,
      campaignProjectId: campaign.id,
      campaignKey: campaignKey.key,
    };
  } finally {
    await database.close();
  }
}

/** The tag carried by exactly every tenth subscriber (all active): the 100,000-row export at 1M. */
export const EXPORT_TAG = 'export-tenth';

const COUNTRIES = [
  'US', 'IN', 'BR', 'DE', 'GB', 'FR', 'ID', 'MX', 'JP', 'IT', 'ES', 'CA', 'TR', 'PL', 'NL', 'RU', 'PH', 'VN', 'AR', 'CO',
  'KR', 'AU', 'TH', 'EG', 'NG', 'PK', 'BD', 'SA', 'ZA', 'UA', 'MY', 'SE', 'BE', 'CH', 'AT', 'PT', 'CZ', 'RO', 'CL', 'PE',
  'GR', 'HU', 'IL', 'DK', 'FI', 'NO', 'IE', 'NZ', 'SG', 'AE', 'KE', 'MA', 'DZ', 'VE', 'EC', 'SK', 'BG', 'HR', 'RS', 'LT',
];
const TAGS = ['news', 'sports', 'promo', 'vip', 'beta', 'weather', 'finance', 'tech', 'travel', 'music'];

/**
 * Seeds `total` subscribers into the project, set-based (INSERT … SELECT generate_series) in chunks on two connections.
 * Distributions: countries Zipf-like over 60 codes (US ≈ 25%), ~20 cities per country (10% unknown), platform
 * mobile 55% / desktop 38% / tablet 7%, browser by market share, os by platform, 0–4 tags, created over two years
 * (recent heavier), last seen skewed to recent, 90% active (all of the export tenth), 0.5% sandbox, 30% with an
 * email address of which a sixth unsubscribed. `attributes`: an SQL expression of each person's attributes (over g and
 * r.created), else none.
 */
export async function seedSubscribers(url: string, projectId: string, total: number, attributes?: string): Promise<void> {
  const chunk = 100_000;
  const ranges: [number, number][] = [];
  for (let from = 1; from <= total; from += chunk) ranges.push([from, Math.min(total, from + chunk - 1)]);
  const countries = `array[${COUNTRIES.map((c) => `'${c}'`).join(',')}]`;
  const tags = `array[${TAGS.map((t) => `'${t}'`).join(',')}]`;
  const insert = `
    insert into subscribers (id, project_id, token, endpoint, p256dh, auth, user_agent, platform, browser, os, device,
                             country, city, language, timezone, external_id, email, status, sandbox, tags,
                             created_at, subscribed_at, updated_at, last_seen_at${attributes ? ', attributes' : ''})
    select 'sub_bench' || lpad(g::text, 10, '0'), $1, 'st_bench' || md5(g::text),
           'https://fcm.googleapis.com/fcm/send/bench-' || g, 'BENCHp256dh', 'BENCHauth', 'Mozilla/5.0 (bench)',
           r.platform::subscriber_platform,
           (case when r.b < 0.65 then 'Chrome' when r.b < 0.85 then 'Safari' when r.b < 0.93 then 'Firefox' else 'Edge' end)::subscriber_browser,
           (case r.platform
              when 'desktop' then case when r.o < 0.7 then 'Windows' else 'macOS' end
              when 'mobile' then case when r.o < 0.6 then 'Android' else 'iOS' end
              else case when r.o < 0.7 then 'iOS' else 'Android' end end)::subscriber_os,
           case when r.platform = 'desktop' then null
                when r.o < 0.3 then 'iPhone' when r.o < 0.5 then 'Galaxy S23' when r.o < 0.6 then 'Pixel 8'
                when r.o < 0.7 then 'iPad' when r.o < 0.8 then 'Redmi Note 12' else 'Android phone' end,
           r.country,
           case when r.ci < 0.1 then null else r.country || ' City ' || (1 + floor(20 * power(r.ci, 2)))::int end,
           (array['en','en','en','de','fr','es','pt','ja','it','nl'])[1 + floor(10 * r.l)::int],
           (array['America/New_York','Europe/Berlin','Europe/London','Asia/Kolkata','America/Sao_Paulo','Asia/Tokyo'])[1 + floor(6 * r.l)::int],
           case when r.e < 0.4 then 'user-' || g end,
           case when r.e < 0.3 then 'user' || g || '@example.com' end,
           (case when g % 10 = 0 or r.s < 0.9 then 'active' when r.s < 0.97 then 'unsubscribed' else 'inactive' end)::subscriber_status,
           g % 10 <> 0 and r.s > 0.995,
           array(select t from unnest(${tags}) with ordinality u(t, n) where random() + 0 * g < 0.25 / n)
             || case when g % 10 = 0 then array['${EXPORT_TAG}'] else '{}'::text[] end,
           r.created, r.created, r.created,
           now() - (now() - r.created) * power(r.seen, 3)${attributes ? `, ${attributes}` : ''}
    from generate_series($2::int, $3::int) g,
         lateral (select case when p < 0.55 then 'mobile' when p < 0.93 then 'desktop' else 'tablet' end as platform,
                         b, o, ci, l, e, s, seen,
                         (${countries})[1 + floor(${COUNTRIES.length} * power(c, 3))::int] as country,
                         now() - interval '730 days' * power(cr, 2) as created
                  from (select random() + 0 * g as p, random() + 0 * g as b, random() + 0 * g as o, random() + 0 * g as c,
                               random() + 0 * g as ci, random() + 0 * g as l, random() + 0 * g as e, random() + 0 * g as s,
                               random() + 0 * g as seen, random() + 0 * g as cr) x) r`;
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  try {
    const queue = [...ranges];
    let done = 0;
    const worker = async () => {
      const client = await pool.connect();
      try {
        await client.query('set synchronous_commit = off');
        for (let range = queue.shift(); range; range = queue.shift()) {
          await client.query(insert, [projectId, range[0], range[1]]);
          done += range[1] - range[0] + 1;
          if (done % 200_000 === 0 || done === total) log(`seeded ${done.toLocaleString('en')} / ${total.toLocaleString('en')}`);
        }
      } finally {
        client.release();
      }
    };
    await Promise.all([worker(), worker()]);
    // A sixth of the addresses unsubscribed (5% of the people).
    await pool.query(
      `insert into channel_addresses (project_id, sandbox, channel, address, status, status_reason, source, consent, consent_source)
       select project_id, sandbox, 'email', lower(email), 'opted_out', 'unsubscribed', 'recipient', 'unsubscribed', 'recipient'
       from subscribers where project_id = $1 and email is not null and abs(hashtext(id)) % 6 = 0
       on conflict do nothing`,
      [projectId],
    );
    // VACUUM sets the visibility map (index-only scans) and ANALYZE the statistics the planner needs. A page is marked
    // all-visible only once its rows carry the committed hint bit, which PostgreSQL may not set before the commit's WAL
    // is flushed — and the seed commits asynchronously — so the checkpoint comes first: without it a third to two
    // thirds of the pages stayed unmarked, and analytics read the heap (443–637 ms instead of ~100 ms).
    await pool.query('checkpoint');
    await pool.query('vacuum (analyze) subscribers, attribute_values');
    await pool.query('checkpoint');
  } finally {
    await pool.end();
  }
}
