// The push benchmark's push service in its own process: HTTPS, VAPID checked, a sample of pushes decrypted.
import { readFileSync } from 'node:fs';
import { createFakeBrowser, startPushService } from '../../server/test/push-service.js';

const env = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};

const browsers = Array.from({ length: Number(env('PUSH_PEER_BROWSERS')) }, () => createFakeBrowser());
const every = Number(env('PUSH_PEER_SAMPLE_EVERY'));
const sampled = new Set<string>();
const push = await startPushService({
  decrypt: (id) => sampled.has(id),
  tls: { key: readFileSync(env('PUSH_PEER_KEY')), cert: readFileSync(env('PUSH_PEER_CERT')) },
});
// Subscriber g has the endpoint /push/b<g> and the keys of browser g mod the browser count (see cases/push.ts).
for (let g = every; g <= Number(env('PUSH_PEER_SAMPLE_MAX')); g += every) {
  sampled.add(`b${g}`);
  push.endpointFor({ ...browsers[g % browsers.length]!, id: `b${g}` });
}

// Records are tallied and dropped as they come: a million kept would weigh on this process.
const statuses: Record<string, number> = {};
let decrypted = 0;
// PUSH_PEER_COUNT_EACH: accepted pushes counted per subscription too, for a benchmark that checks nobody got one twice.
const perEndpoint = process.env.PUSH_PEER_COUNT_EACH ? new Map<string, number>() : undefined;
const drain = () => {
  for (const r of push.received.splice(0)) {
    statuses[r.status] = (statuses[r.status] ?? 0) + 1;
    if (r.payload !== undefined) decrypted++;
    if (perEndpoint && r.status === 201) perEndpoint.set(r.id, (perEndpoint.get(r.id) ?? 0) + 1);
  }
};
/** Subscriptions that got at least one push, and those that got more than one. */
const tallyEach = () => {
  if (!perEndpoint) return undefined;
  let twice = 0;
  for (const count of perEndpoint.values()) if (count > 1) twice++;
  return { distinct: perEndpoint.size, twice };
};
setInterval(drain, 250).unref();

process.on('message', (message) => {
  if (message !== 'stats') return;
  drain();
  process.send!({ statuses, decrypted, each: tallyEach() });
});
process.on('disconnect', () => void push.close().finally(() => process.exit(0)));
process.send!({ origin: push.origin, browsers: browsers.map((b) => ({ p256dh: b.p256dh, auth: b.auth })) });
