// Signed, unguessable tracking tokens carried in a push payload: the delivery id plus an HMAC of it.
import { createHmac, timingSafeEqual } from 'node:crypto';

const ID_BYTES = 8;
const MAC_BYTES = 16;
/** Characters of a token: the id and MAC in base64url (24 bytes, no padding). */
export const TRACKING_TOKEN_LENGTH = Math.ceil(((ID_BYTES + MAC_BYTES) * 8) / 6);
const TOKEN_SHAPE = new RegExp(`^[A-Za-z0-9_-]{${TRACKING_TOKEN_LENGTH}}$`);

/** The `track` URL of a push payload: the service worker appends /delivered, /clicked or /dismissed. */
export const trackingUrl = (publicUrl: string, token: string) => `${publicUrl}/t/${token}`;

export interface TrackingTokens {
  sign(deliveryId: number): string;
  /** The delivery id, or undefined for a token this instance did not sign. */
  verify(token: string): number | undefined;
}

/**
 * The key is derived from the instance's JWT secret (one secret to keep and rotate); rotating it invalidates the
 * tracking links of pushes already shown, which only loses their later clicks.
 */
export function createTrackingTokens(secret: string): TrackingTokens {
  const key = createHmac('sha256', secret).update('herald tracking token v1').digest();
  const mac = (id: Buffer) => createHmac('sha256', key).update(id).digest().subarray(0, MAC_BYTES);
  return {
    sign(deliveryId) {
      const id = Buffer.alloc(ID_BYTES);
      id.writeBigUInt64BE(BigInt(deliveryId));
      return Buffer.concat([id, mac(id)]).toString('base64url');
    },
    verify(token) {
      if (!TOKEN_SHAPE.test(token)) return undefined;
      const bytes = Buffer.from(token, 'base64url');
      const id = bytes.subarray(0, ID_BYTES);
      if (!timingSafeEqual(mac(id), bytes.subarray(ID_BYTES))) return undefined;
      const value = id.readBigUInt64BE();
      return value > BigInt(Number.MAX_SAFE_INTEGER) ? undefined : Number(value);
    },
  };
}
