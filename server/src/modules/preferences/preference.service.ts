// The preference center's rules: the page, the one unsubscribe (one click, mailto, the page), re-subscribing, channel preferences.
import type { Db } from '../../db/database.js';
import type { Channel } from '../../db/schema.js';
import { suppressionStatus, type DeliveryRecords, type EmailLinks } from '../../delivery/index.js';
import type { ContactService } from '../subscribers/index.js';
import type { FormTokens } from './form-token.js';
import { findLinkedRecipient, type LinkedRecipient } from './preference.repository.js';

/** How an unsubscribe came: RFC 8058's POST, the mailto entry of List-Unsubscribe (inbound mail), or the page's form. */
export type UnsubscribeVia = 'one_click' | 'mailto' | 'preference_center';

/**
 * Email as the page shows it: `subscribed`; `unsubscribed` — the person's own word (an unsubscribe, or email turned
 * off in their preferences), which they may take back; `stopped` — a bounce, a complaint or the project's own
 * suppression, which they may not.
 */
export type EmailState = 'subscribed' | 'unsubscribed' | 'stopped';

export type OtherChannel = Exclude<Channel, 'email'>;

/** What a page is about, enough to word it: the link, who sent the mail, the person's language. */
export interface PageSubject {
  /** The link's token, canonically spelled. */
  token: string;
  sender: string;
  language: string | null;
}

export interface PreferenceView extends PageSubject {
  /** The address, its local part masked: the page is reached by a link that may be forwarded. */
  maskedAddress: string;
  email: EmailState;
  /** The other channels this subscriber can be reached on (a phone for SMS and WhatsApp, a push subscription). */
  channels: { channel: OtherChannel; enabled: boolean }[];
  /** The CSRF token each of the page's forms carries. */
  formToken: string;
}

export interface ChannelChoice {
  channel: Channel;
  enabled: boolean;
}

export type ChangeResult =
  | { outcome: 'not_found' }
  /** The form did not come from a page of this link, recently: nothing changed. */
  | { outcome: 'forbidden'; subject: PageSubject }
  /** Email cannot be turned back on by the person (a bounce, a complaint, the project's suppression). */
  | { outcome: 'refused'; subject: PageSubject }
  | { outcome: 'changed'; subject: PageSubject };

export interface PreferenceServiceOptions {
  /** PUBLIC_URL: the page's forms are posted from its origin. */
  publicUrl: string;
  formTokens: FormTokens;
  clock?: () => Date;
}

/** `j•••@example.org`: enough for the person to recognise their address, not enough to learn someone else's. */
export function maskAddress(address: string): string {
  const at = address.lastIndexOf('@');
  const local = address.slice(0, at);
  return `${local.length > 1 ? local[0] : ''}•••${address.slice(at)}`;
}

function emailState(recipient: LinkedRecipient): EmailState {
  if (recipient.suppression === null) return recipient.channels.email === false ? 'unsubscribed' : 'subscribed';
  return recipient.suppression === 'unsubscribed' ? 'unsubscribed' : 'stopped';
}

export class PreferenceService {
  private readonly publicOrigin: string;
  private readonly clock: () => Date;

  constructor(
    private readonly db: Db,
    private readonly records: DeliveryRecords,
    private readonly links: EmailLinks,
    private readonly contacts: ContactService,
    private readonly options: PreferenceServiceOptions,
  ) {
    this.publicOrigin = new URL(options.publicUrl).origin;
    this.clock = options.clock ?? (() => new Date());
  }

  /** What the preference center shows for a link; undefined for a link Herald did not sign or whose delivery is gone. Reads only. */
  async page(token: string): Promise<PreferenceView | undefined> {
    const recipient = await this.recipientOf(token);
    if (!recipient) return undefined;
    const channels: PreferenceView['channels'] = [];
    if (recipient.hasPhone) channels.push({ channel: 'sms', enabled: recipient.channels.sms !== false }, { channel: 'whatsapp', enabled: recipient.channels.whatsapp !== false });
    if (recipient.hasPush) channels.push({ channel: 'push', enabled: recipient.channels.push !== false });
    return {
      ...subjectOf(token, recipient),
      maskedAddress: maskAddress(recipient.address),
      email: emailState(recipient),
      channels,
      formToken: this.options.formTokens.issue(recipient.deliveryId, this.clock()),
    };
  }

  /**
   * Unsubscribes the address an unsubscribe token's delivery went to, at once: suppressed as `unsubscribed` (source
   * `recipient`) in its project and environment — every subscriber carrying it shows `emailStatus` `unsubscribed`, and
   * no later email is sent to it — and the delivery's `unsubscribed` event logged and counted once. A repeat changes
   * nothing. Answers what a confirmation names; undefined, and nothing changed, for a token Herald did not sign or
   * whose delivery is gone. The inbound mail role calls it with the token of a `mailto:unsubscribe+<token>@…` message
   * (in any case: local parts get folded).
   */
  async unsubscribeByToken(token: string, via: UnsubscribeVia): Promise<PageSubject | undefined> {
    const recipient = await this.recipientOf(token);
    if (!recipient) return undefined;
    await this.unsubscribe(recipient, via);
    return subjectOf(token, recipient);
  }

  /**
   * A choice made on the page. Applied only when the form carries the CSRF token a page of this link issued within
   * the token's lifetime, and when the browser says it was posted from Herald's origin (Origin, else Referer; with
   * neither, the token decides). Email off unsubscribes as the one-click does; email on lifts the person's own
   * unsubscribe (never a bounce, a complaint or the project's suppression: `refused`) and turns email back on in
   * their preferences; another channel is turned on or off in the subscriber's `preferences.channels`.
   */
  async change(token: string, submitted: { formToken: string | undefined; origin: string | undefined }, choice: ChannelChoice): Promise<ChangeResult> {
    const recipient = await this.recipientOf(token);
    if (!recipient) return { outcome: 'not_found' };
    const subject = subjectOf(token, recipient);
    const fromPage = submitted.origin === undefined || submitted.origin === this.publicOrigin;
    if (!fromPage || !submitted.formToken || !this.options.formTokens.verify(recipient.deliveryId, submitted.formToken, this.clock())) {
      return { outcome: 'forbidden', subject };
    }
    if (choice.channel === 'email' && !choice.enabled) {
      await this.unsubscribe(recipient, 'preference_center');
    } else if (choice.channel === 'email') {
      const key = { projectId: recipient.projectId, sandbox: recipient.sandbox, channel: 'email' as const, address: recipient.address };
      if ((await this.records.liftAddressState(key, 'unsubscribed')) === false) return { outcome: 'refused', subject };
      if (recipient.channels.email === false) await this.setChannel(recipient, 'email', true);
    } else {
      await this.setChannel(recipient, choice.channel, choice.enabled);
    }
    return { outcome: 'changed', subject };
  }

  private async recipientOf(token: string): Promise<LinkedRecipient | undefined> {
    const deliveryId = this.links.verifyUnsubscribe(token);
    return deliveryId === undefined ? undefined : findLinkedRecipient(this.db, deliveryId);
  }

  private async unsubscribe(recipient: LinkedRecipient, via: UnsubscribeVia): Promise<void> {
    await this.db.transaction(async (tx) => {
      await this.records.recordAddressStates(
        [
        {
          projectId: recipient.projectId,
          sandbox: recipient.sandbox,
          channel: 'email',
          address: recipient.address,
          status: suppressionStatus('unsubscribed'),
          reason: 'unsubscribed',
          source: 'recipient',
        },
        ],
        tx,
      );
      await this.records.recordEvents([{ deliveryId: recipient.deliveryId, type: 'unsubscribed', occurredAt: this.clock(), detail: { via } }], tx);
    });
  }

  private async setChannel(recipient: LinkedRecipient, channel: Channel, enabled: boolean): Promise<void> {
    const scope = { organizationId: recipient.organizationId, projectId: recipient.projectId, sandbox: recipient.sandbox };
    await this.contacts.updateById(scope, recipient.subscriberId, { preferences: { channels: { [channel]: enabled } } });
  }
}

const subjectOf = (token: string, recipient: LinkedRecipient): PageSubject => ({
  token: token.toLowerCase(),
  sender: recipient.sender,
  language: recipient.language,
});
