// Mail that comes back to Herald's bounce domain: DSNs and ARF complaint reports to a delivery's VERP address
// (`bounce+TOKEN@…`), so a self-hoster on plain SMTP gets bounces and complaints without a provider webhook, and mailto
// unsubscribes (`unsubscribe+TOKEN@…`, RFC 2369).
import { simpleParser } from 'mailparser';
import * as delivery from '../../delivery/index.js';
import { arfReport, type ArfReport } from './arf.js';
import { dsnFeedback } from './dsn.js';
import { recordEmailFeedback, type EmailFeedback } from './email-feedback.js';

/** What one inbound address is for, read from its local part: `<purpose>+<token>@<bounce domain>`. */
export interface InboundAddress {
  purpose: 'bounce' | 'unsubscribe';
  token: string;
}

/** The Herald address `recipient` is, or undefined: anything else is refused at RCPT (Herald relays nothing). */
export function inboundAddress(recipient: string, bounceDomain: string): InboundAddress | undefined {
  const match = /^(bounce|unsubscribe)\+([a-z2-7]+)@(.+)$/i.exec(recipient.trim());
  if (!match || match[3]!.toLowerCase() !== bounceDomain) return undefined;
  return { purpose: match[1]!.toLowerCase() as InboundAddress['purpose'], token: match[2]!.toLowerCase() };
}

export class InboundMailService {
  constructor(
    private readonly records: delivery.DeliveryRecords,
    private readonly links: delivery.EmailLinks,
    /** The preference center's unsubscribe of a signed token (a mail to the List-Unsubscribe mailto entry). */
    private readonly unsubscribe: (token: string) => Promise<unknown>,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  /**
   * Records what a message to these Herald addresses says. Any message to an unsubscribe address unsubscribes its
   * recipient (what it says does not matter, RFC 2369); a DSN to a bounce address is recorded on the delivery its token
   * names; an ARF complaint report (RFC 5965) to a bounce address, on the delivery the quoted original names — by its
   * Message-ID or Return-Path — else on the one the bounce address names, as SES's complaints are. A token no key
   * signed, or a message to a bounce address that is neither, changes nothing. Returns the deliveries recorded.
   */
  async receive(to: readonly InboundAddress[], raw: Buffer): Promise<number> {
    for (const address of to) if (address.purpose === 'unsubscribe') await this.unsubscribe(address.token);
    const deliveryIds = to.flatMap((address) => {
      if (address.purpose !== 'bounce') return [];
      const id = this.links.verifyBounce(address.token);
      return id === undefined ? [] : [id];
    });
    if (deliveryIds.length === 0) return 0;
    const now = this.clock();
    const mail = await simpleParser(raw);
    const dsn = dsnFeedback(mail, raw, now);
    if (dsn) return this.record(deliveryIds, dsn, now);
    const arf = arfReport(mail, raw, now);
    if (!arf) return 0;
    const quoted = this.quotedDelivery(arf.original);
    return this.record(quoted === undefined ? deliveryIds : [quoted], [arf.feedback], now);
  }

  /** The delivery a quoted original message names: its Message-ID's token, else its Return-Path's (VERP). */
  private quotedDelivery(original: ArfReport['original']): number | undefined {
    const messageToken = /^<?([a-z2-7]+)@/i.exec(original.messageId ?? '')?.[1];
    const bounceToken = /^<?bounce\+([a-z2-7]+)@/i.exec(original.returnPath ?? '')?.[1];
    return (messageToken ? this.links.verifyMessageId(messageToken) : undefined) ?? (bounceToken ? this.links.verifyBounce(bounceToken) : undefined);
  }

  private async record(deliveryIds: readonly number[], feedback: readonly EmailFeedback[], now: Date): Promise<number> {
    let recorded = 0;
    for (const id of new Set(deliveryIds)) {
      const named = await this.records.namedDelivery(id);
      if (!named) continue;
      for (const item of feedback) await recordEmailFeedback(this.records, [named], item, now);
      recorded++;
    }
    return recorded;
  }
}
