// The preference center's CSRF tokens: an HMAC of the delivery its link names and the time the page was issued.
import { createHmac, timingSafeEqual } from 'node:crypto';

export interface FormTokens {
  /** The token the page served at `now` for this delivery's link carries in each of its forms. */
  issue(deliveryId: number, now: Date): string;
  /** Whether `token` was issued for this delivery's link, at most the lifetime ago. */
  verify(deliveryId: number, token: string, now: Date): boolean;
}

const MAC_BYTES = 16;
const SHAPE = /^(\d{1,12})\.([A-Za-z0-9_-]{22})$/;
/** How long a page's forms work: long enough to read and decide, short enough that a copied token soon dies. */
export const FORM_TOKEN_LIFETIME_SECONDS = 2 * 60 * 60;
/** A page issued by a server whose clock runs slightly ahead of this one's is still good. */
const CLOCK_SKEW_SECONDS = 60;

/**
 * `<issued-at seconds>.<base64url HMAC-SHA256(key, delivery id, issued-at)>` truncated to 128 bits. Bound to the
 * delivery, so a token from another person's link opens nothing here; bound to its time, so a form left open (or a
 * token copied out of a page) stops working after FORM_TOKEN_LIFETIME_SECONDS. The key is derived from the email link
 * secret: every instance shares it, no state is kept.
 */
export function createFormTokens(secret: string): FormTokens {
  const key = createHmac('sha256', secret).update('herald preference center forms v1').digest();
  const mac = (deliveryId: number, issuedAt: number) =>
    createHmac('sha256', key).update(`${deliveryId}\0${issuedAt}`).digest().subarray(0, MAC_BYTES);
  const seconds = (now: Date) => Math.floor(now.getTime() / 1000);
  return {
    issue(deliveryId, now) {
      const issuedAt = seconds(now);
      return `${issuedAt}.${mac(deliveryId, issuedAt).toString('base64url')}`;
    },
    verify(deliveryId, token, now) {
      const shape = SHAPE.exec(token);
      if (!shape) return false;
      const issuedAt = Number(shape[1]);
      const age = seconds(now) - issuedAt;
      if (age > FORM_TOKEN_LIFETIME_SECONDS || age < -CLOCK_SKEW_SECONDS) return false;
      const given = Buffer.from(shape[2]!, 'base64url');
      // The last character carries bits beyond the MAC: only the canonical spelling is the token.
      return given.toString('base64url') === shape[2] && timingSafeEqual(given, mac(deliveryId, issuedAt));
    },
  };
}
