// Web push provider (RFC 8030/8291/8292): encrypts (on threads), signs VAPID per origin, sends over pooled connections.
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import type { ChannelProvider, PushItem, SendOutcome } from '../../channel.js';
import { createOutboundGuard } from '../../outbound-guard.js';
import { createEncryptionPool, type EncryptionJob, type EncryptionResult } from './push-encryption-pool.js';
import { MAX_PLAINTEXT_BYTES } from './push-encryption.js';
import { blocked, outcomeOfError, outcomeOfStatus, refused, tooLarge } from './push-outcome.js';
import { createVapidSigner } from './vapid-signer.js';

export interface WebPushOptions {
  connectionsPerOrigin: number;
  /** Requests per second per push-service origin; 0 = unlimited. */
  ratePerOrigin: number;
  timeoutMs: number;
  /** Allow http:// and loopback push services (a local fake push service in tests); never in production. */
  allowInsecureEndpoints: boolean;
  /** Worker threads encrypting payloads; 0 encrypts on the event loop. */
  encryptionThreads: number;
}

/** Endpoints are user-supplied, so their origins are unbounded: the least recently used pool beyond this closes. */
const MAX_ORIGINS = 1000;

interface Origin {
  pool: Pool;
  /** When the next request may start (performance.now() ms), spacing requests evenly at `ratePerOrigin`. */
  nextAt: number;
}

export function createWebPushProvider(options: WebPushOptions): ChannelProvider<PushItem> {
  const guard = createOutboundGuard({ allowInsecure: options.allowInsecureEndpoints });
  const vapid = createVapidSigner();
  const origins = new Map<string, Origin>();
  const interval = options.ratePerOrigin > 0 ? 1000 / options.ratePerOrigin : 0;
  const encryption = createEncryptionPool(options.encryptionThreads);

  function originOf(origin: string): Origin {
    let entry = origins.get(origin);
    if (entry) {
      origins.delete(origin);
    } else {
      if (origins.size >= MAX_ORIGINS) {
        const [oldest, evicted] = origins.entries().next().value!;
        origins.delete(oldest);
        void evicted.pool.close();
      }
      entry = {
        // Redirects are not followed: a plain Pool has no redirect interceptor.
        pool: new Pool(origin, {
          connections: options.connectionsPerOrigin,
          headersTimeout: options.timeoutMs,
          bodyTimeout: options.timeoutMs,
          connect: { timeout: options.timeoutMs, lookup: guard.lookup },
        }),
        nextAt: 0,
      };
    }
    origins.set(origin, entry);
    return entry;
  }

  /** Waits for this origin's next slot; evenly spaced rather than bursty, so a burst never trips the service's limit. */
  async function takeTurn(origin: Origin): Promise<void> {
    if (interval === 0) return;
    const now = performance.now();
    const at = Math.max(now, origin.nextAt);
    origin.nextAt = at + interval;
    if (at > now) await sleep(at - now);
  }

  /** What can be refused before encrypting: the endpoint and the payload size. */
  function check(item: PushItem): { url: URL; job: EncryptionJob } | SendOutcome {
    let url: URL;
    try {
      url = new URL(item.endpoint);
    } catch {
      return refused('invalid_endpoint', 'push endpoint is not a URL');
    }
    const refusal = guard.refusal(url);
    if (refusal) return blocked(`push endpoint refused: ${refusal}`);
    const plaintext = JSON.stringify(item.payload);
    const bytes = Buffer.byteLength(plaintext);
    if (bytes > MAX_PLAINTEXT_BYTES) return tooLarge(`push payload is ${bytes} bytes; at most ${MAX_PLAINTEXT_BYTES} fit in 4096 encrypted`);
    return { url, job: { plaintext, p256dh: item.p256dh, auth: item.auth } };
  }

  async function post(item: PushItem, url: URL, encrypted: EncryptionResult): Promise<SendOutcome> {
    if ('error' in encrypted) return refused('invalid_subscription_keys', `push subscription keys are unusable: ${encrypted.error}`);
    const { body } = encrypted;
    let authorization: string;
    try {
      authorization = vapid.authorization(url.origin, item.vapid);
    } catch (error) {
      return refused('invalid_vapid_key', `project VAPID key is unusable: ${(error as Error).message}`);
    }

    const headers: Record<string, string> = {
      authorization,
      'content-encoding': 'aes128gcm',
      'content-type': 'application/octet-stream',
      ttl: String(item.options.ttlSeconds),
      urgency: item.options.urgency,
    };
    if (item.options.topic) headers.topic = item.options.topic;

    const origin = originOf(url.origin);
    await takeTurn(origin);
    try {
      const response = await origin.pool.request({ method: 'POST', path: `${url.pathname}${url.search}`, headers, body });
      // The status is the answer: the body is only drained so the connection can be reused, and a body that breaks
      // off must not turn an accepted message into a retry (a duplicate notification).
      await response.body.dump().catch(() => undefined);
      return outcomeOfStatus(response.statusCode, response.headers['retry-after']);
    } catch (error) {
      return outcomeOfError(error);
    }
  }

  return {
    name: 'web-push',
    async send(items) {
      const outcomes: SendOutcome[] = [];
      const ready: { index: number; url: URL }[] = [];
      const jobs: EncryptionJob[] = [];
      items.forEach((item, index) => {
        const checked = check(item);
        if ('job' in checked) {
          ready.push({ index, url: checked.url });
          jobs.push(checked.job);
        } else {
          outcomes[index] = checked;
        }
      });
      const encrypted = await encryption.encrypt(jobs);
      await Promise.all(ready.map(async ({ index, url }, i) => (outcomes[index] = await post(items[index]!, url, encrypted[i]!))));
      return outcomes;
    },
    close: async () => {
      const pools = [...origins.values()].map((o) => o.pool.close());
      origins.clear();
      await Promise.all([...pools, encryption.close()]);
    },
  };
}
