// WhatsApp behind the channel contract: the number's opt-out state, the project's account (Meta's Cloud API or a
// Twilio WhatsApp sender), the sender's rate, each provider's callbacks.
import type { WhatsAppContent } from '../../../db/schema.js';
import type { ChannelAdapter, ChannelProvider, ChannelWebhooks, ContentProblem } from '../../channel.js';
import type { ProviderConfig } from '../../delivery.repository.js';
import { byAccount } from '../by-account.js';
import { twilioWhatsAppRefusal } from '../sms/twilio-errors.js';
import { twilioAccount } from '../sms/twilio-provider.js';
import { statusCallbackUrl, twilioWebhook } from '../sms/twilio-status.js';
import { parseCloudApiWebhook } from './cloud-api-webhook.js';
import type { WhatsAppAccount, WhatsAppItem } from './whatsapp-item.js';

export interface WhatsAppAdapterOptions {
  /** PUBLIC_URL: a Twilio sender's status callbacks come back under it. */
  publicUrl: string;
  /** One provider per kind of account a project may choose. */
  live: Record<WhatsAppAccount['provider'], ChannelProvider<WhatsAppItem>>;
  sandbox: ChannelProvider<WhatsAppItem>;
  /** The time an inbound message or a status Meta sent without its own stands at. */
  clock?: () => Date;
}

/** Meta's limit on a text message's body. */
export const WHATSAPP_TEXT_MAX = 4096;
/** How Twilio names a person's WhatsApp address: `whatsapp:+14155550123`. */
const TWILIO_WHATSAPP_ADDRESS = /^whatsapp:(\+[1-9]\d{6,14})$/;
/** A business phone number's default throughput, on the Cloud API and through Twilio alike (messages per second). */
const WHATSAPP_RATE = 80;

function contentProblems(content: WhatsAppContent): ContentProblem[] | undefined {
  if (content.type === 'text') {
    if (content.text.trim() === '') return [{ field: 'text', error: 'must not be empty' }];
    if (content.text.length > WHATSAPP_TEXT_MAX) return [{ field: 'text', error: `must be at most ${WHATSAPP_TEXT_MAX} characters` }];
    return undefined;
  }
  if (content.type === 'template') return content.template.name === '' ? [{ field: 'template.name', error: 'must not be empty' }] : undefined;
  return [{ error: 'must be a text or a template message' }];
}

/** The account of a WhatsApp configuration (settings checked when they were saved), or undefined for none. */
function accountOf(config: ProviderConfig | undefined): WhatsAppAccount | undefined {
  if (config?.provider === 'meta') return { provider: 'meta', phoneNumberId: String(config.settings.phoneNumberId), accessToken: config.credentials.accessToken ?? '' };
  if (config?.provider === 'twilio') {
    const { accountSid, from, messagingServiceSid } = config.settings as { accountSid: string; from?: string; messagingServiceSid?: string };
    return { provider: 'twilio', twilio: twilioAccount(accountSid, config.credentials), from, messagingServiceSid };
  }
  return undefined;
}

export function createWhatsAppAdapter(
  options: WhatsAppAdapterOptions,
): ChannelAdapter<WhatsAppItem, 'whatsapp'> & { readonly webhooks: ChannelWebhooks<WhatsAppAccount['provider']> } {
  const live = byAccount('whatsapp', options.live, (item) => item.account!.provider);
  const clock = options.clock ?? (() => new Date());
  return {
    channel: 'whatsapp',
    mayArriveLate: true,
    validate: contentProblems,
    address(delivery, message, project) {
      const { recipient } = delivery;
      if (recipient === null) return { refusal: 'subscriber_unsubscribed' };
      if (recipient.status === 'opted_out') return { refusal: 'recipient_opted_out' };
      if (recipient.status === 'unreachable') return { refusal: 'subscriber_unsubscribed' };
      const account = accountOf(project.channels.whatsapp);
      // The sandbox sends nothing, so a project may try WhatsApp with a test key before it chooses a provider.
      if (!account && !message.sandbox) return { refusal: 'provider_not_configured' };
      const statusCallback = statusCallbackUrl(`${options.publicUrl}/whatsapp/twilio/status/${delivery.projectId}`, delivery.id);
      return { item: { deliveryId: delivery.id, to: recipient.address, content: message.content, account, statusCallback } };
    },
    // A sender's rate holds for every project sending from it.
    rate: ({ account }) => {
      if (!account) return undefined;
      const key = account.provider === 'meta' ? `whatsapp:${account.phoneNumberId}` : `twilio:whatsapp:${account.from ?? account.messagingServiceSid}`;
      return { key, perSecond: WHATSAPP_RATE };
    },
    webhooks: {
      // Statuses, and the messages people send: the window, STOP and START (modules/whatsapp).
      meta: { verifyAndParse: async (request, credentials) => parseCloudApiWebhook(request, credentials.appSecret ?? '', clock()) },
      // A Twilio sender's status callbacks (delivered, read as `opened`, failed and undelivered with WhatsApp's reasons)
      // and the messages people send it.
      twilio: twilioWebhook({
        refusal: twilioWhatsAppRefusal,
        otherwise: 'provider_error',
        sender: (from) => TWILIO_WHATSAPP_ADDRESS.exec(from)?.[1],
        // A quick-reply button's text is what the person chose.
        text: (params) => params.get('Body') || params.get('ButtonText') || undefined,
        clock,
      }),
    },
    provider: (sandbox) => (sandbox ? options.sandbox : live),
    close: async () => {
      await Promise.all([live.close(), options.sandbox.close()]);
    },
  };
}
