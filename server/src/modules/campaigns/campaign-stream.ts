// Live campaign progress as server-sent events: one poller per campaign shared by its listeners, changes coalesced.
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { FINAL_STATUSES, type CampaignProgress } from './campaign.service.js';

export interface StreamTiming {
  /** How often a watched campaign's counters are read: changes in between are coalesced into one event. */
  pollMs: number;
  /** A comment line this often keeps proxies and browsers from dropping an idle stream. */
  heartbeatMs: number;
}

export const DEFAULT_STREAM_TIMING: StreamTiming = { pollMs: 400, heartbeatMs: 15_000 };

/** Undefined once the campaign is gone (deleted): its streams end. */
type Read = () => Promise<CampaignProgress | undefined>;
type Listener = (progress: CampaignProgress | undefined) => void;

interface Channel {
  listeners: Set<Listener>;
  timer: NodeJS.Timeout;
}

/**
 * The open progress streams of one HTTP server. Each campaign is read once per poll however many clients watch it;
 * reading stops when its last client leaves.
 */
export class CampaignStreams {
  private readonly channels = new Map<string, Channel>();
  private readonly open = new Set<() => void>();

  constructor(
    private readonly timing: StreamTiming,
    private readonly logger: Pick<Logger, 'warn'>,
  ) {}

  /**
   * Streams `first`, then a snapshot whenever the counters or the status change, and ends after a final status
   * (sent, cancelled, failed, archived), when the campaign is deleted, or when the client goes away. Each event is
   * `data: <JSON>`.
   */
  stream(
    key: string,
    read: Read,
    first: CampaignProgress,
    request: IncomingMessage,
    response: ServerResponse,
    headers: Record<string, string | number | string[] | undefined>,
  ): void {
    response.writeHead(200, {
      ...(headers as OutgoingHttpHeaders),
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      // Nginx and similar proxies buffer responses unless told not to.
      'x-accel-buffering': 'no',
    });
    response.write('retry: 3000\n\n');
    let last = '';
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      clearInterval(heartbeat);
      unsubscribe();
      this.open.delete(end);
      response.end();
    };
    const send: Listener = (progress) => {
      if (ended) return;
      if (!progress) return end();
      const data = JSON.stringify(progress);
      if (data !== last) {
        last = data;
        response.write(`data: ${data}\n\n`);
      }
      if (FINAL_STATUSES.has(progress.status)) end();
    };
    const heartbeat = setInterval(() => response.write(': heartbeat\n\n'), this.timing.heartbeatMs);
    const unsubscribe = this.subscribe(key, read, send);
    this.open.add(end);
    request.once('close', end);
    response.once('close', end);
    send(first);
  }

  /** Ends every open stream (the server is closing: it would otherwise wait for them). */
  closeAll(): void {
    for (const end of [...this.open]) end();
  }

  private subscribe(key: string, read: Read, listener: Listener): () => void {
    let channel = this.channels.get(key);
    if (!channel) {
      const listeners = new Set<Listener>();
      let reading = false;
      const timer = setInterval(() => {
        if (reading) return;
        reading = true;
        read()
          .then((progress) => {
            for (const notify of [...listeners]) notify(progress);
          })
          .catch((error: unknown) => this.logger.warn({ err: error, campaign: key }, 'campaign progress read failed; retrying'))
          .finally(() => (reading = false));
      }, this.timing.pollMs);
      channel = { listeners, timer };
      this.channels.set(key, channel);
    }
    channel.listeners.add(listener);
    const current = channel;
    return () => {
      current.listeners.delete(listener);
      if (current.listeners.size === 0) {
        clearInterval(current.timer);
        this.channels.delete(key);
      }
    };
  }
}
