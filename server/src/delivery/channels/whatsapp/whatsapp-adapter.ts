// WhatsApp behind the channel contract: the number's opt-out state, the project's Cloud API account, its callbacks.
import type { WhatsAppContent } from '../../../db/schema.js';
import type { ChannelAdapter, ChannelProvider, ContentProblem } from '../../channel.js';
import { parseCloudApiWebhook } from './cloud-api-webhook.js';
import type { CloudApiAccount, WhatsAppItem } from './whatsapp-item.js';

export interface WhatsAppAdapterOptions {
  live: ChannelProvider<WhatsAppItem>;
  sandbox: ChannelProvider<WhatsAppItem>;
}

/** Meta's limit on a text message's body. */
export const WHATSAPP_TEXT_MAX = 4096;
/** The Cloud API's default throughput per business phone number (messages per second). */
const CLOUD_API_RATE = 80;

function contentProblems(content: WhatsAppContent): ContentProblem[] | undefined {
  if (content.type === 'text') {
    if (content.text.trim() === '') return [{ field: 'text', error: 'must not be empty' }];
    if (content.text.length > WHATSAPP_TEXT_MAX) return [{ field: 'text', error: `must be at most ${WHATSAPP_TEXT_MAX} characters` }];
    return undefined;
  }
  if (content.type === 'template') return content.template.name === '' ? [{ field: 'template.name', error: 'must not be empty' }] : undefined;
  return [{ error: 'must be a text or a template message' }];
}

export function createWhatsAppAdapter(options: WhatsAppAdapterOptions): ChannelAdapter<WhatsAppItem, 'whatsapp'> {
  return {
    channel: 'whatsapp',
    validate: contentProblems,
    address(delivery, message, project) {
      if (delivery.destination === null) return { refusal: 'subscriber_unsubscribed' };
      if (delivery.destinationStatus === 'opted_out') return { refusal: 'recipient_opted_out' };
      if (delivery.destinationStatus === 'unreachable') return { refusal: 'subscriber_unsubscribed' };
      const config = project.whatsapp;
      const account: CloudApiAccount | undefined =
        config?.provider === 'meta'
          ? { phoneNumberId: String(config.settings.phoneNumberId), accessToken: config.credentials.accessToken ?? '' }
          : undefined;
      // The sandbox sends nothing, so a project may try WhatsApp with a test key before it configures Meta.
      if (!account && !message.sandbox) return { refusal: 'provider_not_configured' };
      return { item: { deliveryId: delivery.id, to: delivery.destination, content: message.content, account } };
    },
    rate: ({ account }) => (account ? { key: `whatsapp:${account.phoneNumberId}`, perSecond: CLOUD_API_RATE } : undefined),
    webhook: {
      verifyAndParse: async (request, credentials) => {
        const parsed = parseCloudApiWebhook(request, credentials.appSecret ?? '', new Date());
        return 'refused' in parsed ? parsed : { events: parsed.events };
      },
    },
    provider: (sandbox) => (sandbox ? options.sandbox : options.live),
    close: async () => {
      await Promise.all([options.live.close(), options.sandbox.close()]);
    },
  };
}
