// Email behind the channel contract: an address reachable, the message rendered for its recipient, the project's account, SES's callbacks.
import type { Addressed, ChannelAdapter, ChannelProvider, ChannelWebhooks } from '../../channel.js';
import { byAccount } from '../by-account.js';
import type { ProviderConfig, SendingProject } from '../../delivery.repository.js';
import { renderAccountEmail, type AccountEmail } from './account-email.js';
import type { EmailLinks } from '../../email-links.js';
import { emailContentProblems } from './email-content.js';
import type { AccountLimits, EmailAccount, EmailItem, SmtpTls } from './email-item.js';
import { personalizeEmail, recipientVariables, renderEmail } from './email-render.js';
import { createSesWebhook, type SesWebhookOptions } from './ses-webhook.js';

export interface EmailAdapterOptions {
  links: EmailLinks;
  /** EMAIL_BOUNCE_DOMAIN: where bounces (VERP) and mailto unsubscribes come back. */
  bounceDomain: string;
  /** One provider per kind of account a project may choose. */
  live: Record<EmailAccount['provider'], ChannelProvider<EmailItem>>;
  sandbox: ChannelProvider<EmailItem>;
  /** SES's callbacks come through SNS topics of the instance (SES_SNS_TOPIC_ARNS, SNS_MAX_AGE), not of a project. */
  sesCallbacks: SesWebhookOptions;
}

/** What spec 8 holds a provider's sandbox account to, whatever more the account reports. */
export const PROVIDER_SANDBOX = { perSecond: 1, per24Hours: 200 };

/** The account of an email configuration (settings checked when they were saved), or undefined for none. */
function accountOf(config: ProviderConfig): EmailAccount | undefined {
  const settings = config.settings as { ratePerSecond?: number; sandbox?: boolean; per24Hours?: number };
  const limits: AccountLimits = { ratePerSecond: settings.ratePerSecond, sandbox: settings.sandbox === true, per24Hours: settings.per24Hours };
  if (config.provider === 'smtp') {
    const { host, port, tls, secure } = config.settings as { host: string; port: number; tls?: SmtpTls; secure?: boolean };
    const { user, pass } = config.credentials;
    return { provider: 'smtp', host, port, tls: tls ?? (secure === true ? 'implicit' : undefined), auth: user === undefined || pass === undefined ? undefined : { user, pass }, limits };
  }
  if (config.provider === 'ses') {
    const { region, configurationSet } = config.settings as { region: string; configurationSet?: string };
    const { accessKeyId, secretAccessKey } = config.credentials as { accessKeyId: string; secretAccessKey: string };
    return { provider: 'ses', region, accessKeyId, secretAccessKey, configurationSet, limits };
  }
  return undefined;
}

export type EmailAdapter = ChannelAdapter<EmailItem, 'email'> & {
  readonly webhooks: ChannelWebhooks<'ses'>;
  /** Account mail addressed to the project's own account (live), or why it cannot go. */
  accountItem(project: SendingProject, email: AccountEmail): Addressed<EmailItem>;
};

export function createEmailAdapter(options: EmailAdapterOptions): EmailAdapter {
  const context = { links: options.links, bounceDomain: options.bounceDomain };
  const live = byAccount('email', options.live, (item) => item.account!.provider);
  return {
    channel: 'email',
    mayArriveLate: true,
    monthlyCap: true,
    deadAddressReason: () => 'bounced',
    validate: emailContentProblems,
    address(delivery, message, project) {
      const { recipient } = delivery;
      // Email reachability is the address's, whatever its subscriber's push device says.
      if (recipient === null) return { refusal: 'subscriber_unsubscribed' };
      if (recipient.status === 'unreachable') return { refusal: 'recipient_bounced' };
      if (recipient.reason === 'complained') return { refusal: 'recipient_complained' };
      const unsubscribedOnly = message.options.essential === true && recipient.reason === 'unsubscribed';
      if (recipient.status === 'opted_out' && !unsubscribedOnly) return { refusal: 'subscriber_unsubscribed' };
      const account = project.channels.email && accountOf(project.channels.email);
      // The sandbox sends nothing, so a project may try email with a test key before it chooses a provider.
      if (!account && !message.sandbox) return { refusal: 'provider_not_configured' };
      const emailRecipient = {
        deliveryId: delivery.id,
        projectId: delivery.projectId,
        source: message.source,
        messageId: message.id,
        campaignId: message.campaignId,
        subscriberId: delivery.subscriberId,
        address: recipient.address,
      };
      // A transactional email's merge tags were rendered when it was asked for: its content goes as stored.
      let content = message.content;
      if (message.options.personalized === true) {
        const personalized = personalizeEmail(content, recipientVariables(recipient.address, delivery.mergeFields));
        if ('refusal' in personalized) return personalized;
        content = personalized.content;
      }
      return { item: { deliveryId: delivery.id, projectId: delivery.projectId, email: renderEmail(content, emailRecipient, context), account } };
    },
    accountItem(project, email) {
      const account = project.channels.email && accountOf(project.channels.email);
      if (!account) return { refusal: 'provider_not_configured' };
      return { item: { deliveryId: 0, projectId: project.id, email: renderAccountEmail(project.id, email), account } };
    },
    // An account's rate holds for every project sending through it.
    rate: ({ account }) => {
      if (!account) return undefined;
      const { ratePerSecond, sandbox, per24Hours } = account.limits;
      const key = account.provider === 'smtp' ? `smtp:${account.host}:${account.auth?.user ?? ''}` : `ses:${account.region}:${account.accessKeyId}`;
      if (sandbox) {
        return {
          key,
          perSecond: Math.min(ratePerSecond ?? PROVIDER_SANDBOX.perSecond, PROVIDER_SANDBOX.perSecond),
          per24Hours: Math.min(per24Hours ?? PROVIDER_SANDBOX.per24Hours, PROVIDER_SANDBOX.per24Hours),
        };
      }
      return ratePerSecond === undefined ? undefined : { key, perSecond: ratePerSecond };
    },
    // An SMTP server's bounces come back by mail (modules/email-webhooks, inbound mail), not through a webhook.
    webhooks: { ses: createSesWebhook(options.sesCallbacks) },
    provider: (sandbox) => (sandbox ? options.sandbox : live),
    close: async () => {
      await Promise.all([live.close(), options.sandbox.close()]);
    },
  };
}
