// The targeting benchmark's data: ten typed attributes per seeded person and a year of events over twenty names.
import pg from 'pg';
import { log } from './harness.js';

/**
 * The `attributes` of seeded person `g` (an SQL expression over `g`, its `r.created` instant and random()): plan (text,
 * pro ≈ 25%), ltv (number; a tenth as decimal strings, 0.5% unreadable "n/a"), vip (boolean, 5%), signup (date),
 * company (text), seats (number), newsletter (boolean; half as the strings "true"/"false"), last_login (date-time),
 * locale (text), score (number).
 */
export const ATTRIBUTES_SQL = `(select jsonb_build_object(
  'plan', (array['free','free','free','starter','pro','pro','team','enterprise'])[1 + floor(8 * random() + 0 * g)::int],
  'ltv', case when a.ltv < 0.005 then to_jsonb('n/a'::text) when a.ltv < 0.1 then to_jsonb(round(a.ltv * 20000)::text)
              else to_jsonb(round((a.ltv * 2000)::numeric, 2)) end,
  'vip', random() + 0 * g < 0.05,
  'signup', to_char(r.created, 'YYYY-MM-DD'),
  'company', 'Company ' || (g % 5000),
  'seats', (1 + floor(50 * power(random() + 0 * g, 3)))::int,
  'newsletter', case when a.nl < 0.25 then to_jsonb(true) when a.nl < 0.5 then to_jsonb(false)
                     when a.nl < 0.75 then to_jsonb('true'::text) else to_jsonb('false'::text) end,
  'last_login', to_char(now() - interval '90 days' * random() + 0 * g * interval '1 s', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
  'locale', (array['en-US','en-GB','de-DE','fr-FR','es-ES','pt-BR'])[1 + floor(6 * random() + 0 * g)::int],
  'score', round((100 * random() + 0 * g)::numeric, 1))
  from (select random() + 0 * g as ltv, random() + 0 * g as nl) a)`;

/** The event names and their shares of all events (they sum to 1). */
export const EVENT_NAMES: readonly [string, number][] = [
  ['page.viewed', 0.25], ['app.opened', 0.15], ['product.viewed', 0.12], ['search.performed', 0.08], ['cart.item_added', 0.06],
  ['email.link_clicked', 0.05], ['push.clicked', 0.04], ['order.completed', 0.04], ['checkout.started', 0.04],
  ['session.started', 0.03], ['video.played', 0.03], ['wishlist.added', 0.02], ['profile.updated', 0.02],
  ['coupon.applied', 0.015], ['review.submitted', 0.01], ['subscription.renewed', 0.01], ['support.ticket_opened', 0.01],
  ['share.clicked', 0.01], ['login.failed', 0.01], ['order.refunded', 0.005],
];

/**
 * Inserts `total` events over the last 365 days into the live environment of the project, in time order (as they would
 * arrive), set-based in chunks on two connections: 3% name nobody (subscriber_id null), the rest a seeded person, the
 * lower-numbered ones more often (a few active people, a long tail). order.completed carries total, currency, items
 * and shipping.method; page.viewed a path; the others a source. The tables' secondary indexes are dropped for the load
 * and built again after it (a sorted build is several times cheaper than 20M insertions), and foreign keys are not
 * checked row by row (session_replication_role = replica): every id is one the seed made. event_totals is summed from
 * the loaded events.
 */
export async function seedEvents(url: string, projectId: string, people: number, total: number): Promise<void> {
  const chunk = 500_000;
  const ranges: [number, number][] = [];
  for (let from = 1; from <= total; from += chunk) ranges.push([from, Math.min(total, from + chunk - 1)]);
  const names = `array[${EVENT_NAMES.map(([n]) => `'${n}'`).join(',')}]`;
  let sum = 0;
  const bounds = `array[${EVENT_NAMES.map(([, share]) => ((sum += share), sum - share).toFixed(4)).join(',')}]::float8[]`;
  const insert = `
    insert into events (id, project_id, sandbox, name, subscriber_id, identity, properties, occurred_at, received_at)
    select 'evt_bench' || lpad(g::text, 11, '0'), $1, false, x.name,
           case when x.who < 0.03 then null else 'sub_bench' || lpad(x.person::text, 10, '0') end,
           jsonb_build_object('subscriberId', 'sub_bench' || lpad(x.person::text, 10, '0')),
           case x.name
             when 'order.completed' then jsonb_build_object('total', round((5 + 295 * power(random() + 0 * g, 2))::numeric, 2),
               'currency', (array['EUR','USD','GBP'])[1 + floor(3 * random() + 0 * g)::int], 'items', 1 + floor(5 * random() + 0 * g)::int,
               'shipping', jsonb_build_object('method', case when random() + 0 * g < 0.2 then 'express' else 'standard' end))
             when 'page.viewed' then jsonb_build_object('path', '/p/' || floor(500 * power(random() + 0 * g, 3))::int)
             else jsonb_build_object('source', (array['web','ios','android'])[1 + floor(3 * random() + 0 * g)::int]) end,
           x.at, x.at + interval '2 s' * random()
    from generate_series($2::int, $3::int) g,
         lateral (select (${names})[width_bucket(random() + 0 * g, ${bounds})] as name, random() + 0 * g as who,
                         1 + floor($4::int * power(random() + 0 * g, 1.5))::int as person,
                         now() - interval '365 days' * (1 - g::float8 / $5::int) - interval '1 hour' * random() as at) x`;
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  try {
    const { rows: indexes } = await pool.query<{ name: string; definition: string }>(
      `select i.relname as name, pg_get_indexdef(i.oid) as definition from pg_index x join pg_class i on i.oid = x.indexrelid
       where x.indrelid in ('events'::regclass, 'event_totals'::regclass) and not x.indisprimary`,
    );
    for (const index of indexes) await pool.query(`drop index "${index.name}"`);
    const queue = [...ranges];
    let done = 0;
    const worker = async () => {
      const client = await pool.connect();
      try {
        await client.query('set synchronous_commit = off');
        await client.query('set session_replication_role = replica');
        for (let range = queue.shift(); range; range = queue.shift()) {
          await client.query(insert, [projectId, range[0], range[1], people, total]);
          done += range[1] - range[0] + 1;
          if (done % 2_000_000 === 0 || done === total) log(`events: ${done.toLocaleString('en')} / ${total.toLocaleString('en')}`);
        }
      } finally {
        client.release();
      }
    };
    await Promise.all([worker(), worker()]);
    // What POST /events keeps in the same transaction as each event, summed once for the load (in key order).
    log('events: summing event_totals');
    const client = await pool.connect();
    try {
      await client.query(`set session_replication_role = replica; set work_mem = '256MB'; set synchronous_commit = off`);
      await client.query(
        `insert into event_totals (project_id, sandbox, name, subscriber_id, count, first_at, last_at)
         select project_id, sandbox, name, subscriber_id, count(*), min(occurred_at), max(occurred_at) from events
         where project_id = $1 and subscriber_id is not null group by 1, 2, 3, 4 order by 1, 2, 3, 4`,
        [projectId],
      );
    } finally {
      client.release();
    }
    log(`events: building ${indexes.length} indexes`);
    const builds = [...indexes];
    const builder = async () => {
      const client = await pool.connect();
      try {
        await client.query(`set maintenance_work_mem = '512MB'`);
        for (let index = builds.shift(); index; index = builds.shift()) await client.query(index.definition);
      } finally {
        client.release();
      }
    };
    await Promise.all([builder(), builder()]);
    // As seedSubscribers: the checkpoint lets VACUUM mark the pages all-visible, for index-only scans.
    await pool.query('checkpoint');
    await pool.query('vacuum (analyze) events, event_totals');
    await pool.query('checkpoint');
  } finally {
    await pool.end();
  }
}
