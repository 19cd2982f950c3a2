// The spec 7.3 retry policy against a local HTTP server that answers 429 with Retry-After, and 502/503/504.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Herald, HeraldError } from './index.js';
import { retryingFetch } from './retry.js';

interface Seen {
  method: string;
  url: string;
  idempotencyKey: string | undefined;
  body: string;
}

/** What the server answers next, in order; once they run out it answers 200 `{}`. */
let script: { status: number; headers?: Record<string, string>; body?: unknown }[] = [];
let seen: Seen[] = [];
let server: Server;
let baseUrl: string;

const read = async (request: IncomingMessage) => {
  let body = '';
  for await (const chunk of request) body += String(chunk);
  return body;
};

beforeAll(async () => {
  server = createServer(async (request, response) => {
    const idempotencyKey = request.headers['idempotency-key'];
    seen.push({ method: request.method!, url: request.url!, idempotencyKey: typeof idempotencyKey === 'string' ? idempotencyKey : undefined, body: await read(request) });
    const next = script.shift() ?? { status: 200, body: {} };
    response.writeHead(next.status, { 'content-type': 'application/json', 'x-request-id': `req-${seen.length}`, ...next.headers });
    response.end(JSON.stringify(next.body ?? { statusCode: next.status, code: 'rate_limited', message: 'Too many requests', requestId: `req-${seen.length}` }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
afterEach(() => {
  script = [];
  seen = [];
});

/** A client whose waits are recorded instead of slept. */
function client() {
  const waits: number[] = [];
  const herald = new Herald({
    baseUrl,
    apiKey: 'hrd_live_00000000000000000000000000000000',
    sleep: async (ms) => {
      waits.push(ms);
    },
  });
  return { herald, waits };
}

const tooMany = (retryAfter?: string) => ({ status: 429, ...(retryAfter !== undefined && { headers: { 'retry-after': retryAfter } }) });

describe('on 429', () => {
  it('waits Retry-After and retries once', async () => {
    const { herald, waits } = client();
    script = [tooMany('2'), { status: 200, body: { id: 'sub_1', tags: ['a'] } }];
    expect(await herald.subscribers.tag({ token: 'st_1', tags: ['a'] })).toEqual({ id: 'sub_1', tags: ['a'] });
    expect(waits).toEqual([2000]);
    expect(seen).toHaveLength(2);
    // The retry sends the same body again.
    expect(seen[1]!.body).toBe(seen[0]!.body);
    expect(JSON.parse(seen[1]!.body)).toEqual({ token: 'st_1', tags: ['a'] });
  });

  it('on another 429 doubles the wait, up to three retries, then throws the last 429 as a HeraldError', async () => {
    const { herald, waits } = client();
    script = [tooMany('1'), tooMany('1'), tooMany('1'), tooMany('1'), { status: 200 }];
    const error = await herald.campaigns.list('prj_1').catch((e: unknown) => e);
    expect(waits).toEqual([1000, 2000, 4000]);
    expect(seen).toHaveLength(4);
    expect(error).toBeInstanceOf(HeraldError);
    expect(error).toMatchObject({ statusCode: 429, code: 'rate_limited', requestId: 'req-4' });
  });

  it('takes a longer Retry-After over the doubled wait, reads HTTP dates, and waits 1 s when none is given', async () => {
    const { herald, waits } = client();
    script = [tooMany('1'), tooMany('10'), tooMany(new Date(Date.now() + 60_000).toUTCString()), { status: 200 }];
    await herald.campaigns.list('prj_1');
    expect(waits[0]).toBe(1000);
    expect(waits[1]).toBe(10_000);
    expect(waits[2]).toBeGreaterThan(50_000);
    const second = client();
    script = [tooMany(), { status: 200 }];
    await second.herald.campaigns.list('prj_1');
    expect(second.waits).toEqual([1000]);
  });

  it('retries a transactional send with the same Idempotency-Key and body', async () => {
    const { herald, waits } = client();
    script = [tooMany('3'), { status: 200, body: { success: true } }];
    await herald.transactional.send({ token: 'st_1', title: 'Hi', body: 'There' });
    expect(waits).toEqual([3000]);
    expect(seen[0]!.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
    expect(seen[1]!.idempotencyKey).toBe(seen[0]!.idempotencyKey);
    expect(seen[1]!.body).toBe(seen[0]!.body);
  });
});

describe('on 502, 503 and 504', () => {
  it('backs off 0.5 s, 1 s, 2 s on reads, then succeeds', async () => {
    const { herald, waits } = client();
    script = [{ status: 502 }, { status: 503 }, { status: 504 }, { status: 200, body: { data: [] } }];
    expect(await herald.segments.list('prj_1')).toEqual({ data: [] });
    expect(waits).toEqual([500, 1000, 2000]);
  });

  it('gives up after three retries with the gateway error', async () => {
    const { herald, waits } = client();
    script = [{ status: 503 }, { status: 503 }, { status: 503 }, { status: 503, body: 'Service Unavailable' }];
    const error = await herald.segments.get('seg_1').catch((e: unknown) => e);
    expect(waits).toEqual([500, 1000, 2000]);
    expect(error).toMatchObject({ statusCode: 503, code: 'http_error', message: 'Service Unavailable', requestId: 'req-4' });
  });

  it('retries a send (it carries an Idempotency-Key) but not another POST, which may have been carried out', async () => {
    const send = client();
    script = [{ status: 502 }, { status: 200, body: { success: true } }];
    await send.herald.transactional.send({ token: 'st_1', title: 'Hi', body: 'There' });
    expect(send.waits).toEqual([500]);
    const create = client();
    script = [{ status: 502 }];
    await expect(create.herald.segments.create({ projectId: 'prj_1', name: 'S', filters: {} })).rejects.toMatchObject({ statusCode: 502 });
    expect(create.waits).toEqual([]);
  });

  it('retries any POST when the caller says its requests are safe to repeat (the browser SDK)', async () => {
    const waits: number[] = [];
    const send = retryingFetch((request) => fetch(request), async (ms) => void waits.push(ms), { repeatable: () => true });
    script = [{ status: 503 }, { status: 200, body: { id: 'sub_1' } }];
    const response = await send(new Request(`${baseUrl}/subscribers/tag`, { method: 'POST', body: '{"tags":["a"]}' }));
    expect(response.status).toBe(200);
    expect(waits).toEqual([500]);
    expect(seen.map((s) => s.body)).toEqual(['{"tags":["a"]}', '{"tags":["a"]}']);
  });

  it('does not retry other errors', async () => {
    const { herald, waits } = client();
    script = [{ status: 500, body: { statusCode: 500, code: 'internal_error', message: 'Internal error', requestId: 'r' } }];
    await expect(herald.segments.list('prj_1')).rejects.toMatchObject({ statusCode: 500, code: 'internal_error' });
    expect(waits).toEqual([]);
  });
});
