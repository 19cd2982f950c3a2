// Amazon SNS messages as Herald trusts them: signature (versions 1 and 2) verified with a certificate fetched only from
// the pinned SNS host, an expected topic, a recent timestamp; subscriptions confirmed only for those topics.
import type { Agent } from 'node:https';
import { get } from 'node:https';
import Validator from 'sns-payload-validator';

export type SnsMessage = Validator.SnsPayload;

/** Why a message is not believed (answered 403, nothing recorded). */
export class SnsRefusal extends Error {
  constructor(readonly reason: 'bad_signature' | 'unexpected_topic' | 'stale_message' | 'bad_subscribe_url') {
    super(`SNS message refused: ${reason}`);
  }
}

export interface SnsOptions {
  /** The topics Herald subscribed to; any other is refused, and never confirmed. */
  topicArns: readonly string[];
  /** Messages older than this (or from further ahead than a clock's drift) are refused: a captured one cannot be replayed later. */
  maxAgeSeconds: number;
  /** The agent certificates and subscription confirmations go through (tests give one that trusts their own SNS). */
  agent?: Agent | undefined;
  clock?: () => Date;
}

// The SNS endpoints Herald ever contacts: the validator pins SigningCertURL to the same hosts.
const SNS_URL = /^https:\/\/sns\.[a-z0-9-]+\.amazonaws\.com(\.cn)?\//;
const CLOCK_DRIFT_MS = 5 * 60 * 1000;

export class SnsVerifier {
  private readonly validator: Validator;

  constructor(private readonly options: SnsOptions) {
    this.validator = new Validator({ useCache: true, maxCerts: 100, requestAgent: options.agent });
  }

  /** The message, once its signature, topic and age hold; else an SnsRefusal. */
  async verify(payload: Record<string, unknown>): Promise<SnsMessage> {
    let message: SnsMessage;
    try {
      message = await this.validator.validate(payload as unknown as SnsMessage);
    } catch {
      throw new SnsRefusal('bad_signature');
    }
    if (!this.options.topicArns.includes(message.TopicArn)) throw new SnsRefusal('unexpected_topic');
    const sentAt = Date.parse(message.Timestamp);
    const now = (this.options.clock ?? (() => new Date()))().getTime();
    if (!(now - sentAt <= this.options.maxAgeSeconds * 1000 && sentAt - now <= CLOCK_DRIFT_MS)) throw new SnsRefusal('stale_message');
    return message;
  }

  /** Confirms a verified subscription to an expected topic by visiting its SubscribeURL (an SNS URL, nothing else). */
  async confirm(message: SnsMessage): Promise<void> {
    const url = message.SubscribeURL ?? '';
    if (!SNS_URL.test(url)) throw new SnsRefusal('bad_subscribe_url');
    await new Promise<void>((resolve, reject) => {
      get(url, { agent: this.options.agent }, (response) => {
        response.resume();
        response.on('end', () => (response.statusCode === 200 ? resolve() : reject(new Error(`SNS answered ${response.statusCode} to the confirmation`))));
      }).on('error', reject);
    });
  }
}
