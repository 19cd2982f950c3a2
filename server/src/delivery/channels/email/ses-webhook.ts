// SES's callbacks through SNS: the message believed (sns-message.ts), a subscription confirmed, a notification read into its event.
import type { ChannelWebhook, WebhookParse } from '../../channel.js';
import { sesEvent, type MachineSignals } from './ses-event.js';
import { SnsRefusal, SnsVerifier, type SnsOptions } from './sns-message.js';

export interface SesWebhookOptions extends SnsOptions {
  machineSignals: MachineSignals;
}

export function createSesWebhook(options: SesWebhookOptions): ChannelWebhook {
  const sns = new SnsVerifier(options);
  const refused = (error: SnsRefusal): WebhookParse => ({ refused: error.message, code: error.reason });
  return {
    async verifyAndParse(request) {
      let payload: Record<string, unknown>;
      try {
        payload = JSON.parse(request.rawBody.toString('utf8')) as Record<string, unknown>;
      } catch {
        return refused(new SnsRefusal('bad_signature'));
      }
      let message;
      try {
        message = await sns.verify(payload);
        if (message.Type === 'SubscriptionConfirmation') {
          await sns.confirm(message);
          return { events: [], confirmed: true };
        }
      } catch (error) {
        if (error instanceof SnsRefusal) return refused(error);
        throw error;
      }
      const event = message.Type === 'Notification' ? sesEvent(message.Message, options.machineSignals) : undefined;
      if (!event) return { events: [] };
      const { messageId, ...read } = event;
      // SNS's MessageId names the notification: one SNS delivers twice is recorded once.
      return { events: [{ providerMessageId: messageId, ...read, eventId: message.MessageId }] };
    },
  };
}
