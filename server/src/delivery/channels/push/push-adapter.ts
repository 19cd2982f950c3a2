// Web push behind the channel contract: a device's subscription addressed, the payload rendered with its tracking URL.
import type { ChannelAdapter, ChannelProvider, PushItem } from '../../channel.js';
import { TRACKING_TOKEN_LENGTH, trackingUrl, type TrackingTokens } from '../../tracking-token.js';
import { oversizedPush, pushPayload } from './push-payload.js';

export interface PushAdapterOptions {
  publicUrl: string;
  tracking: TrackingTokens;
  /** The instance's VAPID contact, for projects that set none. */
  vapidSubject: string;
  live: ChannelProvider<PushItem>;
  sandbox: ChannelProvider<PushItem>;
}

export function createPushAdapter(options: PushAdapterOptions): ChannelAdapter<PushItem, 'push'> {
  // Every delivery's tracking URL is as long as this one.
  const longestTrack = trackingUrl(options.publicUrl, 'x'.repeat(TRACKING_TOKEN_LENGTH));
  return {
    channel: 'push',
    validate(content) {
      const oversized = oversizedPush(content, longestTrack);
      return oversized ? [{ error: oversized }] : undefined;
    },
    address(delivery, message, project) {
      const { recipient } = delivery;
      // Push reachability is the device's: its status and its subscription.
      if (delivery.subscriberStatus === 'unsubscribed' || recipient === null) return { refusal: 'subscriber_unsubscribed' };
      if (delivery.subscriberStatus !== 'active') return { refusal: 'subscriber_inactive' };
      const publicKey = project.channels.push?.settings.vapidPublicKey as string | undefined;
      const privateKey = project.channels.push?.credentials.vapidPrivateKey;
      // A project without a push configuration has nothing to sign with.
      if (!publicKey || !privateKey) return { refusal: 'provider_error' };
      return {
        item: {
          deliveryId: delivery.id,
          endpoint: recipient.endpoint,
          p256dh: recipient.p256dh,
          auth: recipient.auth,
          payload: pushPayload(message.content, trackingUrl(options.publicUrl, options.tracking.sign(delivery.id))),
          options: message.options,
          vapid: { publicKey, privateKey, subject: project.vapidSubject ?? options.vapidSubject },
        },
      };
    },
    provider: (sandbox) => (sandbox ? options.sandbox : options.live),
    close: async () => {
      await Promise.all([options.live.close(), options.sandbox.close()]);
    },
  };
}
