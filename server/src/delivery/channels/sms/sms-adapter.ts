// SMS behind the channel contract: the number's state, the project's Twilio account, the sender's rate, Twilio's callbacks.
import type { SmsContent } from '../../../db/schema.js';
import type { ChannelAdapter, ChannelProvider, ChannelWebhooks, ContentProblem } from '../../channel.js';
import type { ProviderConfig } from '../../delivery.repository.js';
import type { SmsItem, TwilioAccount } from './sms-item.js';
import { countSegments, MAX_SMS_SEGMENTS } from './sms-segments.js';
import { twilioRefusal } from './twilio-errors.js';
import { twilioAccount } from './twilio-provider.js';
import { statusCallbackUrl, twilioWebhook } from './twilio-status.js';

export interface SmsAdapterOptions {
  /** PUBLIC_URL: Twilio's status callbacks come back under it. */
  publicUrl: string;
  live: ChannelProvider<SmsItem>;
  sandbox: ChannelProvider<SmsItem>;
  /** When a message a person sent arrived. */
  clock?: () => Date;
}

const E164 = /^\+[1-9]\d{6,14}$/;

/** The Twilio account of an SMS configuration (settings checked when they were saved), or undefined for none. */
function accountOf(config: ProviderConfig | undefined): TwilioAccount | undefined {
  if (config?.provider !== 'twilio') return undefined;
  return twilioAccount(String(config.settings.accountSid), config.credentials);
}

/** What keeps an SMS text from going: none, or more than MAX_SMS_SEGMENTS parts. */
export function smsContentProblems(content: SmsContent): ContentProblem[] | undefined {
  if (content.body.length === 0) return [{ field: 'body', error: 'must not be empty' }];
  const { segments, encoding } = countSegments(content.body);
  if (segments > MAX_SMS_SEGMENTS) return [{ field: 'body', error: `takes ${segments} SMS parts (${encoding}); at most ${MAX_SMS_SEGMENTS}` }];
  return undefined;
}

export function createSmsAdapter(options: SmsAdapterOptions): ChannelAdapter<SmsItem, 'sms'> & { readonly webhooks: ChannelWebhooks<'twilio'> } {
  return {
    channel: 'sms',
    mayArriveLate: true,
    validate: smsContentProblems,
    address(delivery, message, project) {
      const { recipient } = delivery;
      if (recipient === null) return { refusal: 'invalid_phone' };
      if (recipient.status === 'opted_out') return { refusal: 'recipient_opted_out' };
      if (recipient.status === 'unreachable') return { refusal: recipient.reason === 'twilio_21211' ? 'invalid_phone' : 'carrier_rejected' };
      const account = accountOf(project.channels.sms);
      // The sandbox sends nothing, so a project may try SMS with a test key before it chooses a provider.
      if (!account && !message.sandbox) return { refusal: 'provider_not_configured' };
      const { from, messagingServiceSid, ratePerSecond } = message.options;
      const serviceSid = messagingServiceSid ?? (project.channels.sms?.settings.messagingServiceSid as string | undefined);
      if (from === undefined && serviceSid === undefined && !message.sandbox) return { refusal: 'unverified_sender_id' };
      return {
        item: {
          deliveryId: delivery.id,
          to: recipient.address,
          body: message.content.body,
          from,
          messagingServiceSid: serviceSid,
          statusCallback: statusCallbackUrl(`${options.publicUrl}/sms/twilio/status/${delivery.projectId}`, delivery.id),
          ratePerSecond,
          account,
        },
      };
    },
    // A sender's rate holds for every project sending from it; a Messaging Service spreads over its own pool.
    rate: (item) => (item.account ? { key: `twilio:${item.from ?? item.messagingServiceSid}`, perSecond: item.ratePerSecond } : undefined),
    webhooks: {
      twilio: twilioWebhook({
        refusal: twilioRefusal,
        // Whatever the code, a message the carrier did not deliver is the carrier's refusal unless the code says more.
        otherwise: 'carrier_rejected',
        sender: (from) => (E164.test(from) ? from : undefined),
        text: (params) => params.get('Body') ?? undefined,
        clock: options.clock ?? (() => new Date()),
      }),
    },
    provider: (sandbox) => (sandbox ? options.sandbox : options.live),
    close: async () => {
      await Promise.all([options.live.close(), options.sandbox.close()]);
    },
  };
}
