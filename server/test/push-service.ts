// A local push service for tests and the benchmark: real HTTP on 127.0.0.1 that checks each push like FCM or autopush.
import { createECDH, randomBytes, type ECDH } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { importJWK, jwtVerify, type JWTPayload } from 'jose';

// http_ece (the reference implementation of RFC 8188/8291 by its author) ships no types and no ESM entry.
const ece = createRequire(import.meta.url)('http_ece') as {
  decrypt(body: Buffer, params: { version: 'aes128gcm'; privateKey: ECDH; authSecret: string }): Buffer;
};

/** A browser's push subscription keys (p256dh, auth), able to decrypt what is sent to it. */
export interface FakeBrowser {
  id: string;
  p256dh: string;
  auth: string;
  decrypt(body: Buffer): Buffer;
}

export function createFakeBrowser(): FakeBrowser {
  const ecdh = createECDH('prime256v1');
  ecdh.generateKeys();
  const auth = randomBytes(16).toString('base64url');
  return {
    id: randomBytes(8).toString('hex'),
    p256dh: ecdh.getPublicKey('base64url'),
    auth,
    decrypt: (body) => ece.decrypt(body, { version: 'aes128gcm', privateKey: ecdh, authSecret: auth }),
  };
}

/** A programmed answer: a status (with headers, e.g. Retry-After), no answer at all, or a reset connection. */
export type Answer = number | { status: number; headers?: Record<string, string> } | 'hang' | 'reset';

export interface ReceivedPush {
  id: string;
  status: number | 'hang' | 'reset';
  /** The decrypted JSON; undefined when not decrypted (benchmark mode, or refused before decryption). */
  payload: unknown;
  headers: { ttl?: string; urgency?: string; topic?: string; authorization?: string };
  /** The verified VAPID claims; undefined when VAPID was missing or invalid. */
  vapid: JWTPayload | undefined;
  bodyBytes: number;
  /** The sender's port: crash tests tell which process a push came from by its connections. */
  remotePort: number | undefined;
  /** When the answer was written (Date.now()); undefined for 'hang' and 'reset'. */
  answeredAt: number | undefined;
}

export interface PushService {
  origin: string;
  /** The subscription endpoint of a browser (registered for decryption) or of a bare id. */
  endpointFor(target: FakeBrowser | string): string;
  /** Every request that reached the service, in arrival order. */
  received: ReceivedPush[];
  /** Queues answers for the next requests to `id` ('*': to any id with none queued); otherwise requests get 201. */
  respond(id: string, ...answers: Answer[]): void;
  requestsFor(id: string): ReceivedPush[];
  close(): Promise<void>;
}

const DAY_S = 24 * 3600;

/** Why a request fails the checks a real push service makes (RFC 8030, 8291, 8292), as a status and reason. */
class Rejection extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export interface PushServiceOptions {
  /**
   * `false` (benchmark mode) skips decryption but still checks VAPID and counts requests; a predicate decrypts only
   * the ids it accepts (a benchmark checking a sample).
   */
  decrypt?: boolean | ((id: string) => boolean);
  /** Answer each request this much later, like a distant service (crash tests need sends in flight). */
  delayMs?: number;
  /** Serve HTTPS with this certificate, as every real push service does (clients that only speak HTTPS). */
  tls?: { key: string | Buffer; cert: string | Buffer };
}

/** Starts the service on a free port of 127.0.0.1. */
export async function startPushService({ decrypt = true, delayMs = 0, tls }: PushServiceOptions = {}): Promise<PushService> {
  const browsers = new Map<string, FakeBrowser>();
  const answers = new Map<string, Answer[]>();
  const received: ReceivedPush[] = [];
  // Senders reuse one signed header per origin, so each distinct header is verified once, as a real service may.
  const verified = new Map<string, Promise<JWTPayload>>();
  let origin = '';

  const verifyVapid = async (authorization: string | undefined): Promise<JWTPayload> => {
    const match = /^vapid t=([\w-]+\.[\w-]+\.[\w-]+), k=([\w-]+)$/.exec(authorization ?? '');
    if (!match) throw new Rejection(401, 'missing or malformed vapid authorization');
    const token = match[1]!;
    const publicKey = match[2]!;
    let claims = verified.get(authorization!);
    if (!claims) {
      claims = (async () => {
        const point = Buffer.from(publicKey, 'base64url');
        const key = await importJWK(
          { kty: 'EC', crv: 'P-256', x: point.subarray(1, 33).toString('base64url'), y: point.subarray(33).toString('base64url') },
          'ES256',
        );
        return (await jwtVerify(token, key, { algorithms: ['ES256'], audience: origin, requiredClaims: ['exp', 'sub'] })).payload;
      })();
      verified.set(authorization!, claims);
    }
    const payload = await claims.catch((error: Error) => {
      throw new Rejection(403, `vapid: ${error.message}`);
    });
    const now = Date.now() / 1000;
    if (payload.exp! <= now || payload.exp! > now + DAY_S) throw new Rejection(403, 'vapid exp is not within 24 h');
    if (!/^(mailto:|https:)/.test(String(payload.sub))) throw new Rejection(403, 'vapid sub is not mailto: or https:');
    return payload;
  };

  const nextAnswer = (id: string): Answer => answers.get(id)?.shift() ?? answers.get('*')?.shift() ?? 201;

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const id = /^\/push\/([\w-]+)$/.exec(req.url ?? '')?.[1];
    if (req.method !== 'POST' || !id) return void res.writeHead(404).end();

    const h = req.headers as Record<string, string | undefined>;
    const record: ReceivedPush = {
      id,
      status: 201,
      payload: undefined,
      headers: { ttl: h.ttl, urgency: h.urgency, topic: h.topic, authorization: h.authorization },
      vapid: undefined,
      bodyBytes: body.length,
      remotePort: req.socket.remotePort,
      answeredAt: undefined,
    };
    received.push(record);
    try {
      record.vapid = await verifyVapid(h.authorization);
      if (!/^\d+$/.test(h.ttl ?? '')) throw new Rejection(400, 'TTL header missing');
      if (h['content-encoding'] !== 'aes128gcm') throw new Rejection(400, 'Content-Encoding must be aes128gcm');
      if (body.length > 4096) throw new Rejection(413, 'body over 4096 bytes');
      const answer = nextAnswer(id);
      if (answer === 'hang' || answer === 'reset') {
        record.status = answer;
        if (answer === 'reset') req.socket.resetAndDestroy();
        return;
      }
      const { status, headers } = typeof answer === 'number' ? { status: answer, headers: {} } : answer;
      if (delayMs > 0) await sleep(delayMs);
      if ((typeof decrypt === 'function' ? decrypt(id) : decrypt) && status >= 200 && status < 300) {
        const browser = browsers.get(id);
        if (!browser) throw new Rejection(404, 'no such subscription');
        try {
          record.payload = JSON.parse(browser.decrypt(body).toString('utf8'));
        } catch (error) {
          throw new Rejection(400, `cannot decrypt: ${(error as Error).message}`);
        }
      }
      record.status = status;
      record.answeredAt = Date.now();
      res.writeHead(status, headers).end();
    } catch (error) {
      if (!(error instanceof Rejection)) throw error;
      record.status = error.status;
      record.answeredAt = Date.now();
      res.writeHead(error.status, { 'content-type': 'text/plain' }).end(error.message);
    }
  };

  const listener = (req: IncomingMessage, res: ServerResponse) => {
    handle(req, res).catch((error: unknown) => {
      console.error('push service failed', error);
      res.destroy();
    });
  };
  const server = tls ? createTlsServer(tls, listener) : createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `${tls ? 'https' : 'http'}://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    origin,
    endpointFor(target) {
      if (typeof target === 'string') return `${origin}/push/${target}`;
      browsers.set(target.id, target);
      return `${origin}/push/${target.id}`;
    },
    received,
    respond(id, ...programmed) {
      answers.set(id, [...(answers.get(id) ?? []), ...programmed]);
    },
    requestsFor: (id) => received.filter((r) => r.id === id),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}
