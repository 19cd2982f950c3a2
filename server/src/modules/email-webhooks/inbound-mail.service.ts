// Mail that comes back to Herald's bounce domain: DSNs to a delivery's VERP address (`bounce+TOKEN@…`), so a self-hoster
// on plain SMTP gets bounces without a provider webhook, and mailto unsubscribes (`unsubscribe+TOKEN@…`, RFC 2369).
import { simpleParser } from 'mailparser';
import type { Db } from '../../db/database.js';
import * as delivery from '../../delivery/delivery-face.js';
import { dsnFeedback } from './dsn.js';
import { recordEmailFeedback } from './email-feedback.js';

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
    private readonly db: Db,
    private readonly links: delivery.EmailLinks,
    /** The preference center's unsubscribe of a signed token (a mail to the List-Unsubscribe mailto entry). */
    private readonly unsubscribe: (token: string) => Promise<unknown>,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  /**
   * Records what a message to these Herald addresses says. Any message to an unsubscribe address unsubscribes its
   * recipient (what it says does not matter, RFC 2369); a DSN to a bounce address is recorded on the delivery its token
   * names; a token no key signed, or a message to a bounce address that is no DSN, changes nothing. Returns the
   * deliveries recorded.
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
    const feedback = dsnFeedback(await simpleParser(raw), raw, now);
    if (!feedback) return 0;
    let recorded = 0;
    for (const id of new Set(deliveryIds)) {
      const named = await delivery.findNamedDelivery(this.db, id);
      if (!named) continue;
      for (const item of feedback) await recordEmailFeedback(this.db, [named], item, now);
      recorded++;
    }
    return recorded;
  }
}
