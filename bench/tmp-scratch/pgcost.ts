import { readFileSync } from 'node:fs';
import { openBenchDatabase, createBenchTenant } from '../lib/database.js';
import { openDatabase } from '../../server/src/db/database.js';
import * as repo from '../../server/src/delivery/delivery.repository.js';
import { newId } from '../../server/src/shared/ids.js';

const cpu = (pid: number) => { const s = readFileSync(`/proc/${pid}/stat`, 'utf8'); const f = s.slice(s.lastIndexOf(')') + 2).split(' '); return (Number(f[11]) + Number(f[12])) * 10; };
const database = await openBenchDatabase();
const tenant = await createBenchTenant(database.url);
const d = openDatabase(database.url, 1);
const N = 100_000;
await d.pool.query(`INSERT INTO subscribers (id, project_id, token, endpoint, p256dh, auth) SELECT 'sub_push' || lpad(g::text, 8, '0'), $1, 'st' || g, 'https://x.example/push/b' || g, 'BEeq', 'auth' FROM generate_series(1, $2::int) g`, [tenant.pushProjectId, N]);
await d.pool.query('ANALYZE subscribers');
const client = await d.pool.connect(); const { rows: [{ pid }] } = await client.query('select pg_backend_pid() as pid'); client.release();
for (const batch of [100, 500]) {
  const m = newId('msg');
  await d.pool.query(`INSERT INTO messages (id, project_id, channel, source, sandbox, content, options) VALUES ($1,$2,'push','campaign',false,'{}','{}')`, [m, tenant.pushProjectId]);
  await d.pool.query(`INSERT INTO message_stats (message_id, queued) VALUES ($1, $2)`, [m, N]);
  let t0 = Date.now(); let c0 = cpu(pid);
  await d.pool.query(`INSERT INTO deliveries (project_id, message_id, subscriber_id) SELECT project_id, $1, id FROM subscribers WHERE project_id=$2`, [m, tenant.pushProjectId]);
  console.log('insert', Date.now() - t0, 'ms wall', cpu(pid) - c0, 'ms cpu');
  await d.pool.query('VACUUM ANALYZE deliveries');
  let claimCpu = 0, recordCpu = 0, claimWall = 0, recordWall = 0, n = 0;
  for (;;) {
    let c = cpu(pid); let w = performance.now();
    const claimed = await repo.claimDue(d.db, batch, 120);
    claimCpu += cpu(pid) - c; claimWall += performance.now() - w;
    if (claimed.length === 0) break;
    n += claimed.length;
    c = cpu(pid); w = performance.now();
    await repo.recordOutcomes(d.db, claimed.map((x) => ({ id: x.id, fence: x.attempts, attempts: x.attempts, status: 'sent' as const, reason: null, providerCode: 'http_201', delayMs: 0 })));
    recordCpu += cpu(pid) - c; recordWall += performance.now() - w;
  }
  console.log(`batch ${batch}: ${n} rows; claim ${(1000 * claimCpu / n).toFixed(0)} µs cpu/row (${(1000 * claimWall / n).toFixed(0)} wall), record ${(1000 * recordCpu / n).toFixed(0)} µs cpu/row (${(1000 * recordWall / n).toFixed(0)} wall)`);
}
await d.close();
await database.stop();
