// `npm run bench [-- <filter>…]`: seeds an audience once, runs every case (or those whose name matches a filter)
// several times, prints median/min/max and writes the JSON to bench/results/.
//
// Environment: BENCH_SUBSCRIBERS (default 1,000,000), BENCH_RUNS (5), BENCH_INGEST_SECONDS (5),
// BENCH_CONNECTIONS (100), BENCH_PUSH_N (100,000), BENCH_PUSH_WEB_PUSH_N (20,000), BENCH_PUSH_RSS_N (0: no memory run;
// 1000000 for the 1M-recipient run, ~5 min more), BENCH_PUSH_CAMPAIGN_N (1,000,000: one campaign through the API, end
// to end, ~5 min; 0 skips it), BENCH_EMAIL_N (2,000 per run), BENCH_EMAIL_CONNECTIONS (50), BENCH_EMAIL_RENDER_N
// (2,000), BENCH_EMAIL_CAMPAIGN_N (1,000,000 recipients; 0 skips it), BENCH_EMAIL_CAMPAIGN_SEND (20,000 emails timed,
// then the campaign is cancelled; BENCH_EMAIL_CAMPAIGN_N sends it all, ~1 h here), BENCH_SMS_N (2,000 requests a
// run), BENCH_SMS_CONNECTIONS (50), BENCH_SMS_RATE (the API case's number, 200/s), BENCH_SMS_LANE_N (100,000 queued;
// 0 skips), BENCH_SMS_SENDERS (20) and BENCH_SMS_SENDER_RATE (25/s each), BENCH_AUTOMATIONS_N (100,000 enrollments
// through push → delay → email), BENCH_AUTOMATIONS_ENROLL_N (1,000,000 enrolled by a schedule trigger; 0 skips),
// BENCH_EVENTS (20,000,000 events over a year for the targeting cases, whose people carry ten attributes each),
// BENCH_DATABASE_URL (else an embedded
// PostgreSQL in a temporary directory). DELIVERY_* and PUSH_* settings
// are passed on to the push benchmarks' worker processes; DELIVERY_*, EMAIL_*, TRANSACTIONAL_* and DB_POOL_MAX to the
// email benchmark's API and campaign worker processes (EMAIL_SMTP_CONNECTIONS also sizes its nodemailer baseline's pool);
// AUTOMATION_*, DELIVERY_*, PUSH_*, EMAIL_* and DB_POOL_MAX to the automations benchmark's two workers.
import { automationCases } from './cases/automations.js';
import { analyticsCase, exportCase, listCases, reachCases, type AudienceContext } from './cases/audience.js';
import { campaignCases } from './cases/campaign.js';
import { dashboardCases } from './cases/dashboard.js';
import { emailCases } from './cases/email.js';
import { smsCases } from './cases/sms.js';
import { targetingCases } from './cases/targeting.js';
import { ingestCases } from './cases/ingest.js';
import { pushCases } from './cases/push.js';
import { createBenchTenant, openBenchDatabase, seedSubscribers } from './lib/database.js';
import { ATTRIBUTES_SQL, seedEvents } from './lib/events-seed.js';
import { log, printTable, writeResults, type CaseResult } from './lib/harness.js';
import { startHerald, type Child } from './lib/process.js';
import { JWT_SECRET, PUBLIC_URL } from './lib/push-bench.js';

const intEnv = (name: string, fallback: number) => {
  const value = Number((process.env[name] ?? '').replace(/[_,]/g, '') || fallback);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a whole number`);
  return value;
};

const subscribers = intEnv('BENCH_SUBSCRIBERS', 1_000_000);
const runs = Math.max(1, intEnv('BENCH_RUNS', 5));
const filters = process.argv.slice(2).map((f) => f.toLowerCase());

/** Case groups: a group runs when any filter matches its name or one of its aliases. */
const groups = [
  { name: 'subscribers.ingest', aliases: ['subscribers', 'ingest'] },
  { name: 'segments.reach', aliases: ['segments', 'reach'] },
  { name: 'segments.targeting', aliases: ['segments', 'targeting', 'events'] },
  { name: 'subscribers.analytics', aliases: ['subscribers', 'analytics'] },
  { name: 'subscribers.list', aliases: ['subscribers', 'list', 'dashboard'] },
  { name: 'dashboard', aliases: ['dashboard', 'overview'] },
  { name: 'segments.export', aliases: ['segments', 'export'] },
  { name: 'delivery.push', aliases: ['push', 'delivery'] },
  { name: 'delivery.email', aliases: ['email', 'delivery'] },
  { name: 'delivery.sms', aliases: ['sms', 'delivery'] },
  { name: 'automations', aliases: ['automations', 'automation'] },
] as const;
type Group = (typeof groups)[number]['name'];
const selected = new Set<Group>(
  groups.filter((g) => filters.length === 0 || filters.some((f) => g.name.includes(f) || g.aliases.some((a) => a === f))).map((g) => g.name),
);
if (selected.size === 0) {
  console.error(`No case matches ${filters.join(' ')}; cases: ${groups.map((g) => g.name).join(', ')}`);
  process.exit(2);
}

async function main() {
  const started = Date.now();
  const database = await openBenchDatabase();
  let server: Child | undefined;
  const results: CaseResult[] = [];
  try {
    const tenant = await createBenchTenant(database.url);
    const ownAudience: Group[] = ['subscribers.ingest', 'delivery.push', 'delivery.email', 'delivery.sms', 'automations'];
    const needsAudience = [...selected].some((g) => !ownAudience.includes(g));
    let seedSeconds: number | undefined;
    if (needsAudience) {
      log(`seeding ${subscribers.toLocaleString('en')} subscribers`);
      const seedStart = Date.now();
      await seedSubscribers(database.url, tenant.projectId, subscribers, selected.has('segments.targeting') ? ATTRIBUTES_SQL : undefined);
      seedSeconds = Math.round((Date.now() - seedStart) / 100) / 10;
      log(`seeded in ${seedSeconds} s`);
    }
    let eventsSeedSeconds: number | undefined;
    if (selected.has('segments.targeting')) {
      const total = intEnv('BENCH_EVENTS', 20_000_000);
      log(`seeding ${total.toLocaleString('en')} events`);
      const seedStart = Date.now();
      await seedEvents(database.url, tenant.projectId, subscribers, total);
      eventsSeedSeconds = Math.round((Date.now() - seedStart) / 100) / 10;
      log(`events seeded in ${eventsSeedSeconds} s`);
    }
    // Rate limits are raised through configuration, like an operator would. PUBLIC_URL as the push worker's: a campaign's
    // 4 KB check counts the tracking link the worker will send.
    server = await startHerald({
      DATABASE_URL: database.url,
      LOG_LEVEL: 'warn',
      JWT_SECRET,
      PUBLIC_URL,
      RATE_LIMIT_INGEST: '100000000',
      RATE_LIMIT_DEFAULT: '100000000',
    });
    log(`Herald API pid ${server.pid} at ${server.url}`);
    const audience: AudienceContext = { server, projectId: tenant.projectId, key: tenant.key, runs };
    if (selected.has('segments.reach')) results.push(...(await reachCases(audience)));
    if (selected.has('segments.targeting')) {
      results.push(
        ...(await targetingCases({
          ...audience,
          databaseUrl: database.url,
          people: subscribers,
          runs,
          seconds: intEnv('BENCH_INGEST_SECONDS', 5),
          connections: Math.min(intEnv('BENCH_CONNECTIONS', 100), 16),
        })),
      );
    }
    if (selected.has('subscribers.analytics')) results.push(await analyticsCase(audience));
    if (selected.has('subscribers.list')) results.push(...(await listCases(audience)));
    // The people page's first rows and the overview's charts in Chromium, the overview API, the initial JavaScript.
    if (selected.has('dashboard')) results.push(...(await dashboardCases(audience, tenant.owner)));
    if (selected.has('segments.export')) results.push(await exportCase(audience, Math.min(runs, 3)));
    if (selected.has('subscribers.ingest')) {
      log('ingest: autocannon against a bare Fastify, then POST /subscribers');
      results.push(
        ...(await ingestCases({
          server,
          databaseUrl: database.url,
          projectId: tenant.ingestProjectId,
          key: tenant.ingestKey,
          runs: Math.min(runs, 3),
          seconds: intEnv('BENCH_INGEST_SECONDS', 5),
          connections: intEnv('BENCH_CONNECTIONS', 100),
        })),
      );
    }
    if (selected.has('delivery.push')) {
      // The push cases bring their own audience, push service and worker process; the API is not involved. The campaign
      // case brings the same, in its own project, and goes through the API.
      results.push(
        ...(await pushCases({
          databaseUrl: database.url,
          projectId: tenant.pushProjectId,
          runs: Math.min(runs, 3),
          n: intEnv('BENCH_PUSH_N', 100_000),
          webPushN: intEnv('BENCH_PUSH_WEB_PUSH_N', 20_000),
          rssN: intEnv('BENCH_PUSH_RSS_N', 0),
          vapid: tenant.pushVapid,
        })),
      );
      results.push(
        ...(await campaignCases({
          databaseUrl: database.url,
          server,
          projectId: tenant.campaignProjectId,
          key: tenant.campaignKey,
          n: intEnv('BENCH_PUSH_CAMPAIGN_N', 1_000_000),
        })),
      );
    }
    if (selected.has('delivery.email')) {
      // Its own API process (DNS_SERVERS for the sending domain), SMTP sink and project, set up through the API.
      results.push(
        ...(await emailCases({
          databaseUrl: database.url,
          owner: tenant.owner,
          // All of them: its ratio is taken run by run, a neighbour's load moves single runs by ±10 %, and a run is short.
          runs,
          n: intEnv('BENCH_EMAIL_N', 2_000),
          connections: Math.max(1, intEnv('BENCH_EMAIL_CONNECTIONS', 50)),
          renderN: Math.max(1, intEnv('BENCH_EMAIL_RENDER_N', 2_000)),
          campaignN: intEnv('BENCH_EMAIL_CAMPAIGN_N', 1_000_000),
          campaignSend: intEnv('BENCH_EMAIL_CAMPAIGN_SEND', 20_000),
        })),
      );
    }
    if (selected.has('delivery.sms')) {
      // Its own API and two worker processes, a local Twilio in this process, a project set up through the API.
      results.push(
        ...(await smsCases({
          databaseUrl: database.url,
          owner: tenant.owner,
          runs: Math.min(runs, 3),
          n: intEnv('BENCH_SMS_N', 2_000),
          connections: Math.max(1, intEnv('BENCH_SMS_CONNECTIONS', 50)),
          rate: intEnv('BENCH_SMS_RATE', 200),
          laneN: intEnv('BENCH_SMS_LANE_N', 100_000),
          senders: Math.max(1, intEnv('BENCH_SMS_SENDERS', 20)),
          senderRate: Math.max(1, intEnv('BENCH_SMS_SENDER_RATE', 25)),
        })),
      );
    }
    if (selected.has('automations')) {
      // Its own API, two worker processes, the local push service and SMTP sink, and two projects set up through the API.
      results.push(
        ...(await automationCases({
          databaseUrl: database.url,
          owner: tenant.owner,
          n: intEnv('BENCH_AUTOMATIONS_N', 100_000),
          enrollN: intEnv('BENCH_AUTOMATIONS_ENROLL_N', 1_000_000),
        })),
      );
    }
    console.log(`\nHerald benchmarks — ${subscribers.toLocaleString('en')} subscribers, ${runs} runs\n`);
    console.log(printTable(results));
    const file = await writeResults(
      {
        date: new Date().toISOString(),
        subscribers,
        runs,
        filters,
        database: database.embedded ? 'embedded' : 'external',
        seedSeconds,
        eventsSeedSeconds,
        totalSeconds: Math.round((Date.now() - started) / 1000),
      },
      results,
    );
    console.log(`\nresults: ${file}`);
  } finally {
    await server?.stop();
    await database.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
