// Twilio's callbacks to a project, for its SMS numbers and its WhatsApp sender alike: status changes of the messages
// it sent, and the messages people send (STOP, START, HELP; on WhatsApp, every message opens the 24-hour window),
// each believed only when X-Twilio-Signature holds under the project's auth token.
import type { ChannelWebhook, DeliveryRecords, InboundMessage, ProviderConfig, WebhookRequest } from '../../delivery/index.js';
import { forbidden } from '../../shared/errors.js';

/** The channels a Twilio account sends for. */
export type TwilioChannel = 'sms' | 'whatsapp';

/** Twilio's SMS opt-out and opt-in keywords (its Advanced Opt-Out defaults), matched on the whole message. */
export const STOP_KEYWORDS = new Set(['STOP', 'STOPALL', 'UNSUBSCRIBE', 'CANCEL', 'END', 'QUIT']);
export const START_KEYWORDS = new Set(['START', 'UNSTOP', 'YES']);
const HELP_KEYWORDS = new Set(['HELP', 'INFO']);

/** A project's configuration of a channel (credentials opened), as the delivery engine keeps it; undefined without one. */
export type ChannelConfigOf = (projectId: string, channel: TwilioChannel) => Promise<ProviderConfig | undefined>;

/** What a WhatsApp message from a person changes: the window, and a STOP or START (modules/whatsapp). */
export type WhatsAppInbound = (projectId: string, message: InboundMessage) => Promise<'out' | 'in' | undefined>;

export interface TwilioWebhookDependencies {
  /** Each channel's reading of Twilio's callbacks (status events, people's messages): its adapter's `twilio` webhook. */
  webhooks: Record<TwilioChannel, ChannelWebhook>;
  configOf: ChannelConfigOf;
  whatsappInbound: WhatsAppInbound;
}

export interface StatusOutcome {
  applied: number;
  unknown: number;
}

export interface InboundOutcome {
  action: 'opted_out' | 'opted_in' | 'help' | 'none';
  /** TwiML: Herald's HELP reply, or an empty Response (Twilio's own replies stand). */
  twiml: string;
}

const escapeXml = (text: string) => text.replace(/[<>&'"]/g, (c) => `&#${c.charCodeAt(0)};`);
const twiml = (reply?: string) => `<?xml version="1.0" encoding="UTF-8"?><Response>${reply === undefined ? '' : `<Message>${escapeXml(reply)}</Message>`}</Response>`;

export class TwilioWebhookService {
  constructor(
    private readonly records: DeliveryRecords,
    private readonly deps: TwilioWebhookDependencies,
  ) {}

  /**
   * A status callback: `delivered` (and on WhatsApp `read`) moves the delivery on, `undelivered`/`failed` to failed
   * with the reason and Twilio's error code — once, however often Twilio sends it. A code saying the person opted out
   * (21610; on WhatsApp 63014, a block) also opts the number out.
   */
  async status(channel: TwilioChannel, projectId: string, request: WebhookRequest): Promise<StatusOutcome> {
    const config = await this.twilioOf(projectId, channel);
    const parsed = await this.deps.webhooks[channel].verifyAndParse(request, config.credentials);
    if ('refused' in parsed) throw forbidden(`Twilio callback refused: ${parsed.refused}`, 'invalid_signature');
    const { applied, unknown, matched } = await this.records.applyProviderEvents({ projectId, channel }, parsed.events);
    const optedOut = matched.filter(({ event, delivery }) => event.detail?.reason === 'recipient_opted_out' && delivery.destination !== null);
    await this.records.recordAddressStates(
      optedOut.map(({ event, delivery }) => ({
        projectId,
        sandbox: delivery.sandbox,
        channel,
        address: delivery.destination!,
        status: 'opted_out' as const,
        reason: String(event.detail!.providerCode),
        source: 'provider',
      })),
    );
    return { applied, unknown };
  }

  /**
   * An inbound message to one of the project's numbers or its WhatsApp sender: live numbers only (a test key's
   * messages go nowhere to answer). On SMS, STOP, START and HELP; on WhatsApp, what Meta's webhook does with a message.
   */
  async inbound(channel: TwilioChannel, projectId: string, request: WebhookRequest): Promise<InboundOutcome> {
    const config = await this.twilioOf(projectId, channel);
    const parsed = await this.deps.webhooks[channel].verifyAndParse(request, config.credentials);
    if ('refused' in parsed) throw forbidden('Twilio callback refused: X-Twilio-Signature does not match', 'invalid_signature');
    // None when `From` is no person's number on the channel.
    const [message] = parsed.inbound ?? [];
    if (!message) return { action: 'none', twiml: twiml() };
    if (channel === 'whatsapp') {
      const change = await this.deps.whatsappInbound(projectId, message);
      return { action: change === 'out' ? 'opted_out' : change === 'in' ? 'opted_in' : 'none', twiml: twiml() };
    }
    const keyword = (message.text ?? '').trim().toUpperCase();
    const key = { projectId, sandbox: false, channel, address: message.from };
    if (STOP_KEYWORDS.has(keyword)) {
      await this.records.recordAddressStates([{ ...key, status: 'opted_out', reason: 'sms_stop', source: 'recipient' }]);
      return { action: 'opted_out', twiml: twiml() };
    }
    if (START_KEYWORDS.has(keyword)) {
      // The person wrote from the number: whatever kept it out (their STOP, Twilio's 21610) is lifted.
      await this.records.liftAddressState(key);
      return { action: 'opted_in', twiml: twiml() };
    }
    if (HELP_KEYWORDS.has(keyword)) return { action: 'help', twiml: twiml(config.settings.helpReply as string | undefined) };
    return { action: 'none', twiml: twiml() };
  }

  /** A project whose channel is not on Twilio has no token to check a signature with: its callbacks are refused like forged ones. */
  private async twilioOf(projectId: string, channel: TwilioChannel): Promise<ProviderConfig> {
    const config = await this.deps.configOf(projectId, channel);
    if (config?.provider !== 'twilio') throw forbidden(`Twilio callback refused: the project's ${channel === 'sms' ? 'SMS' : 'WhatsApp'} is not on Twilio`, 'invalid_signature');
    return config;
  }
}
