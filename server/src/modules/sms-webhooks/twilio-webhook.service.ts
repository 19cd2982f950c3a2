// Twilio's callbacks to a project: status changes of the SMS it sent, and the messages people send its numbers
// (STOP, START, HELP), each believed only when X-Twilio-Signature holds under the project's auth token.
import type { Db } from '../../db/database.js';
import {
  applyProviderEvents,
  findDeliveriesByProviderIds,
  liftAddressState,
  recordAddressStates,
  verifyTwilioRequest,
  type ChannelWebhook,
  type ProviderConfig,
  type WebhookRequest,
} from '../../delivery/delivery-face.js';
import { forbidden } from '../../shared/errors.js';

/** Twilio's opt-out and opt-in keywords (its Advanced Opt-Out defaults), matched on the whole message. */
export const STOP_KEYWORDS = new Set(['STOP', 'STOPALL', 'UNSUBSCRIBE', 'CANCEL', 'END', 'QUIT']);
export const START_KEYWORDS = new Set(['START', 'UNSTOP', 'YES']);
const HELP_KEYWORDS = new Set(['HELP', 'INFO']);

/** The SMS configuration of a project (credentials opened), as the delivery engine keeps it; undefined without one. */
export type SmsConfigOf = (projectId: string) => Promise<ProviderConfig | undefined>;

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
    private readonly db: Db,
    private readonly webhook: ChannelWebhook,
    private readonly smsConfigOf: SmsConfigOf,
  ) {}

  /**
   * A status callback: `delivered` moves the delivery to delivered, `undelivered`/`failed` to failed with the
   * carrier's reason and Twilio's error code — once, however often Twilio sends it; 21610 also opts the number out.
   */
  async status(projectId: string, request: WebhookRequest): Promise<StatusOutcome> {
    const config = await this.twilioOf(projectId);
    const parsed = await this.webhook.verifyAndParse(request, config.credentials);
    if ('refused' in parsed) throw forbidden(`Twilio callback refused: ${parsed.refused}`, 'invalid_signature');
    const outcome = await applyProviderEvents(this.db, { projectId, channel: 'sms' }, parsed.events);
    const optedOut = parsed.events.filter((e) => e.detail?.errorCode === 21610).map((e) => e.providerMessageId);
    const named = (await findDeliveriesByProviderIds(this.db, 'sms', optedOut)).filter((d) => d.projectId === projectId && d.destination !== null);
    await recordAddressStates(
      this.db,
      named.map((d) => ({ projectId, sandbox: d.sandbox, channel: 'sms' as const, address: d.destination!, status: 'opted_out' as const, reason: 'twilio_21610', source: 'provider' })),
    );
    return outcome;
  }

  /** An inbound message to one of the project's numbers: live numbers only (a test key's SMS go nowhere to answer). */
  async inbound(projectId: string, request: WebhookRequest): Promise<InboundOutcome> {
    const config = await this.twilioOf(projectId);
    const params = config.credentials.authToken === undefined ? undefined : verifyTwilioRequest(request, config.credentials.authToken);
    if (!params) throw forbidden('Twilio callback refused: X-Twilio-Signature does not match', 'invalid_signature');
    const from = params.get('From') ?? '';
    const keyword = (params.get('Body') ?? '').trim().toUpperCase();
    const key = { projectId, sandbox: false, channel: 'sms' as const, address: from };
    if (!/^\+[1-9]\d{6,14}$/.test(from)) return { action: 'none', twiml: twiml() };
    if (STOP_KEYWORDS.has(keyword)) {
      await recordAddressStates(this.db, [{ ...key, status: 'opted_out', reason: 'sms_stop', source: 'recipient' }]);
      return { action: 'opted_out', twiml: twiml() };
    }
    if (START_KEYWORDS.has(keyword)) {
      // The person wrote from the number: whatever kept it out (their STOP, Twilio's 21610) is lifted.
      await liftAddressState(this.db, key);
      return { action: 'opted_in', twiml: twiml() };
    }
    if (HELP_KEYWORDS.has(keyword)) return { action: 'help', twiml: twiml(config.settings.helpReply as string | undefined) };
    return { action: 'none', twiml: twiml() };
  }

  /** A project without Twilio has no token to check a signature with: its callbacks are refused like forged ones. */
  private async twilioOf(projectId: string): Promise<ProviderConfig> {
    const config = await this.smsConfigOf(projectId);
    if (config?.provider !== 'twilio') throw forbidden('Twilio callback refused: the project has no Twilio account', 'invalid_signature');
    return config;
  }
}
