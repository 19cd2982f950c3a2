// The progress stream machinery on a real HTTP server: heartbeats, one shared poller per campaign, coalescing, and
// polling that stops when the last client leaves or the server closes.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { CampaignStreams } from './campaign-stream.js';
import type { CampaignProgress } from './campaign.service.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const quiet = { warn: () => undefined };

const progress = (status: CampaignProgress['status'], sent = 0): CampaignProgress => ({
  status,
  queued: 10,
  sent,
  delivered: 0,
  clicked: 0,
  dismissed: 0,
  failed: 0,
  suppressed: 0,
  ctr: 0,
  deliveryRate: 0,
  sendingIssue: null,
});

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

/** A server streaming campaign `key` to every client, reading progress with `read`. */
async function serve(streams: CampaignStreams, read: () => Promise<CampaignProgress | undefined>) {
  server = createServer((req, res) => {
    void read().then((first) => streams.stream('cmp_1', read, first!, req, res, { 'x-request-id': 'r1' }));
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

/** Everything a client received, until the stream ends or `abort` fires. */
function collect(url: string, abort?: AbortSignal) {
  const chunks: string[] = [];
  const done = (async () => {
    const res = await fetch(url, { signal: abort });
    expect(res.headers.get('x-request-id')).toBe('r1');
    expect(res.headers.get('cache-control')).toBe('no-cache, no-transform');
    try {
      for await (const chunk of res.body!) chunks.push(new TextDecoder().decode(chunk as Uint8Array));
    } catch (error) {
      if (!abort?.aborted) throw error;
    }
  })();
  return { text: () => chunks.join(''), done };
}

describe('CampaignStreams', () => {
  it('sends heartbeat comments while nothing changes', async () => {
    const streams = new CampaignStreams({ pollMs: 20, heartbeatMs: 50 }, quiet);
    const url = await serve(streams, async () => progress('sending'));
    const abort = new AbortController();
    const client = collect(url, abort.signal);
    // However slow the machine: two heartbeats arrive, and still nothing but the first progress event.
    await expect.poll(() => (client.text().match(/^: heartbeat$/gm) ?? []).length).toBeGreaterThanOrEqual(2);
    abort.abort();
    await client.done;
    const text = client.text();
    expect(text.startsWith('retry: 3000\n\n')).toBe(true);
    expect(text.match(/^data: /gm)).toHaveLength(1);
  });

  it('reads a campaign once per poll for all its clients, coalesces changes, and stops reading when they leave', async () => {
    const streams = new CampaignStreams({ pollMs: 100, heartbeatMs: 60_000 }, quiet);
    let reads = 0;
    let sent = 0;
    const url = await serve(streams, async () => {
      reads += 1;
      return progress('sending', sent);
    });
    const aborts = [new AbortController(), new AbortController(), new AbortController()];
    const clients = aborts.map((abort) => collect(url, abort.signal));
    // Every client connected and got its first snapshot (one read each) before anything changes, however busy the machine.
    for (let waited = 0; reads < aborts.length && waited < 5_000; waited += 10) await sleep(10);
    const connectReads = reads;
    // Ten changes between two polls arrive as one event.
    for (let i = 0; i < 10; i++) sent += 1;
    await sleep(520);
    const polled = reads - connectReads;
    expect(polled).toBeGreaterThanOrEqual(2);
    expect(polled).toBeLessThanOrEqual(7); // ~5 polls in 520 ms, shared by the three clients (15 if each polled)
    for (const abort of aborts) abort.abort();
    await Promise.all(clients.map((c) => c.done));
    for (const client of clients) {
      const events = client.text().match(/^data: .*$/gm)!.map((line) => JSON.parse(line.slice(6)) as CampaignProgress);
      expect(events.map((e) => e.sent)).toEqual([0, 10]);
    }
    await sleep(50);
    const after = reads;
    await sleep(300);
    expect(reads).toBe(after);
  });

  it('ends the stream after a final status, or when the campaign is gone, and closeAll ends the rest', async () => {
    const streams = new CampaignStreams({ pollMs: 20, heartbeatMs: 60_000 }, quiet);
    let state: CampaignProgress | undefined = progress('sending', 1);
    const url = await serve(streams, async () => state);
    const first = collect(url);
    await sleep(60);
    state = progress('cancelled', 4);
    await first.done;
    expect(first.text().match(/^data: .*$/gm)!.map((line) => JSON.parse(line.slice(6)).status)).toEqual(['sending', 'cancelled']);

    state = progress('scheduled');
    const second = collect(url);
    await sleep(60);
    state = undefined;
    await second.done;

    state = progress('sending');
    const third = collect(url);
    await sleep(60);
    streams.closeAll();
    await third.done;
    expect(third.text().match(/^data: /gm)).toHaveLength(1);
  });
});
