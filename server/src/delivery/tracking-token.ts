// Opaque, signed tracking tokens carried in a push payload: the delivery id and an HMAC of it, sealed in one AES block.
import { createCipheriv, createDecipheriv, createHmac, timingSafeEqual } from 'node:crypto';

const ID_BYTES = 8;
const MAC_BYTES = 8;
/** id ‖ MAC fills exactly one AES block. */
const BLOCK_BYTES = ID_BYTES + MAC_BYTES;
/** Characters of a token: one AES block in base64url (16 bytes, no padding). */
export const TRACKING_TOKEN_LENGTH = Math.ceil((BLOCK_BYTES * 8) / 6);
const TOKEN_SHAPE = new RegExp(`^[A-Za-z0-9_-]{${TRACKING_TOKEN_LENGTH}}$`);

/** The `track` URL of a push payload: the service worker appends /delivered, /clicked or /dismissed. */
export const trackingUrl = (publicUrl: string, token: string) => `${publicUrl}/t/${token}`;

export interface TrackingTokens {
  sign(deliveryId: number): string;
  /** The delivery id, or undefined for a token this instance did not sign. */
  verify(token: string): number | undefined;
}

/**
 * Delivery ids are one sequence across the instance, so a readable id would tell recipients how many pushes Herald
 * sent. The block `id ‖ HMAC(id)[0..8]` is encrypted with AES-128 as a keyed permutation of that single block (ECB on
 * one block whose plaintexts never repeat: no pattern to leak), so a token shows nothing of the id, and forging one
 * means hitting a 64-bit MAC through the cipher blind. Keys are derived from the instance's JWT secret (one secret to
 * keep and rotate); rotating it invalidates the tracking links of pushes already shown, which only loses their later
 * clicks.
 */
export function createTrackingTokens(secret: string): TrackingTokens {
  const derive = (purpose: string) => createHmac('sha256', secret).update(`herald tracking token v2 ${purpose}`).digest();
  const cipherKey = derive('cipher').subarray(0, 16);
  const macKey = derive('mac');
  const mac = (id: Buffer) => createHmac('sha256', macKey).update(id).digest().subarray(0, MAC_BYTES);
  // ECB keeps no state between blocks and, unpadded, answers each whole block at once: one cipher object serves
  // every token (never finalised), which halves the cost of making one per token.
  const encrypt = createCipheriv('aes-128-ecb', cipherKey, null).setAutoPadding(false);
  const decrypt = createDecipheriv('aes-128-ecb', cipherKey, null).setAutoPadding(false);
  return {
    sign(deliveryId) {
      const id = Buffer.alloc(ID_BYTES);
      id.writeBigUInt64BE(BigInt(deliveryId));
      return encrypt.update(Buffer.concat([id, mac(id)])).toString('base64url');
    },
    verify(token) {
      if (!TOKEN_SHAPE.test(token)) return undefined;
      const sealed = Buffer.from(token, 'base64url');
      // The last character carries 4 bits beyond the block: only the canonical spelling is the token.
      if (sealed.toString('base64url') !== token) return undefined;
      const block = decrypt.update(sealed);
      const id = block.subarray(0, ID_BYTES);
      if (!timingSafeEqual(mac(id), block.subarray(ID_BYTES))) return undefined;
      const value = id.readBigUInt64BE();
      return value > BigInt(Number.MAX_SAFE_INTEGER) ? undefined : Number(value);
    },
  };
}
