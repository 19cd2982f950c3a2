// Meta's WhatsApp callbacks for one project: the verification handshake, then signed statuses and inbound messages —
// the customer-service window, STOP and START, and delivery events recorded once through the delivery face.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { ChannelWebhook, DeliveryRecords, InboundMessage, WebhookRequest } from '../../delivery/index.js';
import { AppError } from '../../shared/errors.js';
import type { ChannelConfigService } from '../channels/index.js';

/** Words that opt a number out of the project's WhatsApp messages, and back in (the whole message, any case). */
export const STOP_KEYWORDS = ['STOP', 'STOPALL', 'UNSUBSCRIBE', 'CANCEL', 'END', 'QUIT', 'OPTOUT', 'OPT-OUT'];
export const START_KEYWORDS = ['START', 'UNSTOP', 'SUBSCRIBE', 'OPTIN', 'OPT-IN'];

const keyword = (text: string | undefined) => text?.trim().replace(/[.!]+$/, '').toUpperCase();

export interface WebhookOutcome {
  /** Inbound messages read (each opens or extends the number's window). */
  messages: number;
  optedOut: number;
  optedIn: number;
  /** Status callbacks recorded on a delivery (a replay is applied again and changes nothing). */
  applied: number;
  /** Status callbacks naming a message Herald did not send for the project. */
  unknown: number;
}

const refused = () => new AppError(403, 'webhook_refused', 'The callback could not be verified');
const digest = (value: string) => createHash('sha256').update(value).digest();

export class WhatsAppWebhookService {
  constructor(
    private readonly records: DeliveryRecords,
    private readonly channels: ChannelConfigService,
    /** The WhatsApp adapter's `meta` webhook. */
    private readonly webhook: ChannelWebhook,
  ) {}

  /** The opened Meta configuration of a project, or a 403 that does not say whether the project exists. */
  private async credentials(projectId: string): Promise<Record<string, string>> {
    const config = await this.channels.opened(projectId, 'whatsapp');
    if (config?.provider !== 'meta') throw refused();
    return config.credentials;
  }

  /** Meta's verification GET: the challenge echoed when the mode is `subscribe` and the token is the project's. */
  async verify(projectId: string, query: { mode?: string | undefined; token?: string | undefined; challenge?: string | undefined }): Promise<string> {
    const { verifyToken } = await this.credentials(projectId);
    const matches = verifyToken !== undefined && query.token !== undefined && timingSafeEqual(digest(verifyToken), digest(query.token));
    if (query.mode !== 'subscribe' || !matches || query.challenge === undefined) throw refused();
    return query.challenge;
  }

  /** A signed callback: refused (403, nothing recorded) unless X-Hub-Signature-256 holds over the raw body. */
  async receive(projectId: string, request: WebhookRequest): Promise<WebhookOutcome> {
    const parsed = await this.webhook.verifyAndParse(request, await this.credentials(projectId));
    if ('refused' in parsed) throw refused();
    const { inbound = [], optedOut = [] } = parsed;
    const outcome: WebhookOutcome = { messages: inbound.length, optedOut: 0, optedIn: 0, applied: 0, unknown: 0 };
    // Oldest first, so a STOP then START in one callback ends opted in.
    for (const message of [...inbound].sort((a, b) => a.at.getTime() - b.at.getTime())) {
      const change = await this.inbound(projectId, message);
      if (change === 'out') outcome.optedOut++;
      if (change === 'in') outcome.optedIn++;
    }
    if (optedOut.length > 0) {
      outcome.optedOut += await this.records.recordAddressStates(
        optedOut.map(({ address, providerCode }) => ({ projectId, sandbox: false, channel: 'whatsapp', address, status: 'opted_out', reason: providerCode, source: 'provider' })),
      );
    }
    const { applied, unknown } = await this.records.applyProviderEvents({ projectId, channel: 'whatsapp' }, parsed.events);
    return { ...outcome, applied, unknown };
  }

  /**
   * One message from a person: a STOP keyword opts the number out, a START keyword lifts any opt-out of it, and every
   * message opens the 24-hour window from its own time. Inbound messages are the live environment's: a test key's
   * sends read the window of the live number. Meta's webhook and a Twilio sender's incoming messages come here.
   */
  async inbound(projectId: string, message: InboundMessage): Promise<'out' | 'in' | undefined> {
    const key = { projectId, sandbox: false, channel: 'whatsapp' as const, address: message.from };
    const word = keyword(message.text);
    let change: 'out' | 'in' | undefined;
    if (word !== undefined && START_KEYWORDS.includes(word)) {
      if (await this.records.liftAddressState(key)) change = 'in';
    }
    await this.records.recordInbound(key, message.at);
    if (word !== undefined && STOP_KEYWORDS.includes(word)) {
      const changed = await this.records.recordAddressStates([{ ...key, status: 'opted_out', reason: 'whatsapp_stop', source: 'recipient' }]);
      if (changed > 0) change = 'out';
    }
    return change;
  }
}
