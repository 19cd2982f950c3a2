// Web push provider (RFC 8030/8291/8292): encrypts each payload, signs VAPID per origin, sends over pooled connections.
import { ProviderError, type ChannelProvider, type PushItem } from '../../channel.js';

export interface WebPushOptions {
  connectionsPerOrigin: number;
  /** Requests per second per push-service origin; 0 = unlimited. */
  ratePerOrigin: number;
  timeoutMs: number;
  /** Allow http:// and loopback push services (a local fake push service in tests); never in production. */
  allowInsecureEndpoints: boolean;
}

export function createWebPushProvider(_options: WebPushOptions): ChannelProvider<PushItem> {
  const unavailable = () =>
    new ProviderError('web push is not implemented yet', { reason: 'provider_error', retryable: false, providerCode: 'unimplemented' });
  return { name: 'web-push', send: async (items) => items.map(() => ({ ok: false, error: unavailable() })), close: async () => {} };
}
