// WhatsApp through a Twilio WhatsApp sender: the Messages API with `whatsapp:` addresses, free-form text as `Body` and
// approved templates as Content API `ContentSid` + `ContentVariables`.
import type { WhatsAppContent } from '../../../db/schema.js';
import { ProviderError, type ChannelProvider, type SendOutcome } from '../../channel.js';
import { twilioWhatsAppRefusal } from '../sms/twilio-errors.js';
import { postTwilioMessage, type TwilioProviderOptions } from '../sms/twilio-provider.js';
import type { WhatsAppItem } from './whatsapp-item.js';

/** How Twilio's Messages API names a WhatsApp address: `whatsapp:+14155550123`. */
export const WHATSAPP_ADDRESS_PREFIX = 'whatsapp:';

type Template = Extract<WhatsAppContent, { type: 'template' }>['template'];

/**
 * A template's ContentVariables: as the send gave them, else its body's text parameters numbered from 1 (the template's
 * `{{1}}`, `{{2}}` … in Twilio's Content Template Builder); none without either.
 */
export function contentVariables(template: Template): Record<string, string> | undefined {
  if (template.variables) return template.variables;
  const body = template.components?.find((component) => component.type.toLowerCase() === 'body');
  const numbered = (body?.parameters ?? []).flatMap((parameter, i) => (typeof parameter.text === 'string' ? [[String(i + 1), parameter.text] as const] : []));
  return numbered.length > 0 ? Object.fromEntries(numbered) : undefined;
}

/** The Messages API form of one message, or why it cannot be sent through Twilio. */
function formOf(item: WhatsAppItem): URLSearchParams | ProviderError {
  const account = item.account;
  if (account?.provider !== 'twilio') {
    return new ProviderError('no Twilio WhatsApp sender for this message', { reason: 'provider_not_configured', retryable: false, providerCode: 'no_account' });
  }
  const form = new URLSearchParams({ To: `${WHATSAPP_ADDRESS_PREFIX}${item.to}`, StatusCallback: item.statusCallback });
  if (account.from !== undefined) form.set('From', `${WHATSAPP_ADDRESS_PREFIX}${account.from}`);
  else form.set('MessagingServiceSid', account.messagingServiceSid!);
  const { content } = item;
  if (content.type === 'text') {
    form.set('Body', content.text);
    return form;
  }
  const { template } = content;
  // The provider changed since the send was asked for: Twilio knows templates by Content SID only.
  if (template.contentSid === undefined) {
    return new ProviderError(`the template ${template.name} (${template.language}) has no Twilio Content SID`, { reason: 'template_not_found', retryable: false, providerCode: 'no_content_sid' });
  }
  form.set('ContentSid', template.contentSid);
  const variables = contentVariables(template);
  if (variables) form.set('ContentVariables', JSON.stringify(variables));
  return form;
}

export function createTwilioWhatsAppProvider(options: TwilioProviderOptions): ChannelProvider<WhatsAppItem> {
  const sendOne = async (item: WhatsAppItem): Promise<SendOutcome> => {
    const form = formOf(item);
    if (form instanceof ProviderError) return { ok: false, error: form };
    const account = item.account as Extract<WhatsAppItem['account'], { provider: 'twilio' }>;
    return postTwilioMessage(options, account.twilio, form, twilioWhatsAppRefusal);
  };
  return {
    name: 'twilio-whatsapp',
    send: (items) => Promise.all(items.map(sendOne)),
    close: async () => {},
  };
}
