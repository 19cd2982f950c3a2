// Signed email links — open pixel, click redirect, unsubscribe, bounce (VERP) and Message-ID tokens — under a keyring whose older keys still verify.
import { createCipheriv, createDecipheriv, createHash, createHmac, timingSafeEqual, type Cipher, type Decipher } from 'node:crypto';

/**
 * The secrets email links are signed with: `current` signs and verifies, each of `previous` only verifies, so the
 * links of mail already delivered keep working after a rotation for as long as their key stays listed.
 */
export interface EmailLinkSecrets {
  current: string;
  previous: readonly string[];
}

/** What an open or click link names: the campaign (campaign mail) or the message (transactional mail), and the subscriber. */
export interface LinkSubject {
  id: string;
  subscriberId: string;
}

export interface EmailLinks {
  /** `${publicUrl}/e/open/<id>/<subscriberId>?s=<signature>`: the open pixel. */
  openUrl(subject: LinkSubject): string;
  /** `${publicUrl}/e/click/<id>/<subscriberId>?u=<target>&s=<signature>`: redirects to `target`. */
  clickUrl(subject: LinkSubject, target: string): string;
  verifyOpen(subject: LinkSubject, signature: string): boolean;
  verifyClick(subject: LinkSubject, target: string, signature: string): boolean;
  /** A delivery's unsubscribe token: of its preference center URL and of the `mailto:unsubscribe+<token>@…` entry. */
  unsubscribeToken(deliveryId: number): string;
  /** The preference center of an unsubscribe token, `${publicUrl}/u/<token>`, also the https entry of List-Unsubscribe. */
  unsubscribeUrl(token: string): string;
  /** The token of a delivery's VERP Return-Path, `bounce+<token>@…`: a DSN names its delivery by it. */
  bounceToken(deliveryId: number): string;
  /**
   * The local part of a delivery's Message-ID: opaque (no id, no time, nothing of Herald's volume), the same on every
   * attempt, unique per delivery and key.
   */
  messageIdToken(deliveryId: number): string;
  /** The delivery id a token names, or undefined for one no key of the ring signed. */
  verifyUnsubscribe(token: string): number | undefined;
  verifyBounce(token: string): number | undefined;
  verifyMessageId(token: string): number | undefined;
}

/** The query parameter carrying a link's signature. */
export const SIGNATURE_PARAMETER = 's';

const SIGNATURE_MAC_BYTES = 16;
const TOKEN_ID_BYTES = 8;
const TOKEN_MAC_BYTES = 8;
/** Key id byte, then one AES block (id ‖ MAC). */
const TOKEN_BYTES = 1 + TOKEN_ID_BYTES + TOKEN_MAC_BYTES;
const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';
const TOKEN_LENGTH = Math.ceil((TOKEN_BYTES * 8) / 5);
const TOKEN_SHAPE = new RegExp(`^[a-z2-7]{${TOKEN_LENGTH}}$`);
const SIGNATURE_SHAPE = new RegExp(`^[A-Za-z0-9_-]{${Math.ceil(((1 + SIGNATURE_MAC_BYTES) * 8) / 6)}}$`);

/** An opaque token of one purpose under one key: `id ‖ MAC(id)` sealed as one AES block, like push tracking tokens. */
interface Sealer {
  macKey: Buffer;
  encrypt: Cipher;
  decrypt: Decipher;
}

interface LinkKey {
  /** One byte naming the key in what it signed, so verification tries only the keys it may be (collisions allowed). */
  id: number;
  open: Buffer;
  click: Buffer;
  unsubscribe: Sealer;
  bounce: Sealer;
  messageId: Sealer;
}

function keyOf(secret: string): LinkKey {
  const master = createHmac('sha256', secret).update('herald email links v1').digest();
  const derive = (purpose: string) => createHmac('sha256', master).update(purpose).digest();
  const sealer = (purpose: string): Sealer => {
    const cipherKey = derive(`${purpose} cipher`).subarray(0, 16);
    // ECB over one block whose plaintexts never repeat, objects never finalised: see tracking-token.ts.
    return {
      macKey: derive(`${purpose} mac`),
      encrypt: createCipheriv('aes-128-ecb', cipherKey, null).setAutoPadding(false),
      decrypt: createDecipheriv('aes-128-ecb', cipherKey, null).setAutoPadding(false),
    };
  };
  return {
    id: createHash('sha256').update(master).digest()[0]!,
    open: derive('open'),
    click: derive('click'),
    unsubscribe: sealer('unsubscribe'),
    bounce: sealer('bounce'),
    messageId: sealer('message-id'),
  };
}

/** RFC 4648 base32, lower case, unpadded: tokens ride in email local parts, which some systems fold to one case. */
function base32(bytes: Buffer): string {
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = ((buffer << 8) | byte) & 0xffff;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += BASE32[(buffer >> bits) & 31];
    }
  }
  return bits > 0 ? out + BASE32[(buffer << (5 - bits)) & 31] : out;
}

function fromBase32(text: string): Buffer {
  const bytes: number[] = [];
  let buffer = 0;
  let bits = 0;
  for (const char of text) {
    buffer = ((buffer << 5) | BASE32.indexOf(char)) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      bytes.push((buffer >> bits) & 0xff);
    }
  }
  return Buffer.from(bytes);
}

const fields = (...values: string[]) => values.join('\0');

/**
 * Links are signed with HMAC-SHA256 under keys derived from each secret, one per purpose (an open signature is no
 * click signature). Open and click links carry their ids in the clear (the route shapes are the spec's) and a
 * signature over them — and, for a click, over the target, so the redirect is no open redirect. Unsubscribe, bounce
 * and Message-ID tokens must fit an email local part (64 octets, RFC 5321), where two ids and a MAC do not: they name
 * the delivery (which names the message, the subscriber and the address), sealed with its MAC in one AES block as push
 * tracking tokens are, so they reveal nothing of Herald's volume. Every signature starts with its key's id byte.
 */
export function createEmailLinks(publicUrl: string, secrets: EmailLinkSecrets): EmailLinks {
  const [current, ...older] = [secrets.current, ...secrets.previous].map(keyOf) as [LinkKey, ...LinkKey[]];
  const keys = [current, ...older];
  const candidates = (id: number) => keys.filter((key) => key.id === id);

  const sign = (key: LinkKey, purpose: 'open' | 'click', data: string) =>
    Buffer.concat([Buffer.of(key.id), createHmac('sha256', key[purpose]).update(data).digest().subarray(0, SIGNATURE_MAC_BYTES)]).toString('base64url');
  const verify = (purpose: 'open' | 'click', data: string, signature: string) => {
    if (!SIGNATURE_SHAPE.test(signature)) return false;
    const bytes = Buffer.from(signature, 'base64url');
    // The last character carries bits beyond the bytes: only the canonical spelling is the signature.
    if (bytes.toString('base64url') !== signature) return false;
    return candidates(bytes[0]!).some((key) => timingSafeEqual(Buffer.from(sign(key, purpose, data), 'base64url'), bytes));
  };

  type SealPurpose = 'unsubscribe' | 'bounce' | 'messageId';
  const seal = (purpose: SealPurpose, deliveryId: number) => {
    const sealer = current[purpose];
    const id = Buffer.alloc(TOKEN_ID_BYTES);
    id.writeBigUInt64BE(BigInt(deliveryId));
    const mac = createHmac('sha256', sealer.macKey).update(id).digest().subarray(0, TOKEN_MAC_BYTES);
    return base32(Buffer.concat([Buffer.of(current.id), sealer.encrypt.update(Buffer.concat([id, mac]))]));
  };
  const open = (purpose: SealPurpose, token: string) => {
    const spelled = token.toLowerCase();
    if (!TOKEN_SHAPE.test(spelled)) return undefined;
    const bytes = fromBase32(spelled);
    if (base32(bytes) !== spelled) return undefined;
    for (const key of candidates(bytes[0]!)) {
      const sealer = key[purpose];
      const block = sealer.decrypt.update(bytes.subarray(1));
      const id = block.subarray(0, TOKEN_ID_BYTES);
      const mac = createHmac('sha256', sealer.macKey).update(id).digest().subarray(0, TOKEN_MAC_BYTES);
      if (!timingSafeEqual(mac, block.subarray(TOKEN_ID_BYTES))) continue;
      const value = id.readBigUInt64BE();
      return value > BigInt(Number.MAX_SAFE_INTEGER) ? undefined : Number(value);
    }
    return undefined;
  };

  const path = ({ id, subscriberId }: LinkSubject) => `${encodeURIComponent(id)}/${encodeURIComponent(subscriberId)}`;
  return {
    openUrl: (subject) => `${publicUrl}/e/open/${path(subject)}?${SIGNATURE_PARAMETER}=${sign(current, 'open', fields(subject.id, subject.subscriberId))}`,
    clickUrl: (subject, target) =>
      `${publicUrl}/e/click/${path(subject)}?u=${encodeURIComponent(target)}&${SIGNATURE_PARAMETER}=${sign(current, 'click', fields(subject.id, subject.subscriberId, target))}`,
    verifyOpen: (subject, signature) => verify('open', fields(subject.id, subject.subscriberId), signature),
    verifyClick: (subject, target, signature) => verify('click', fields(subject.id, subject.subscriberId, target), signature),
    unsubscribeToken: (deliveryId) => seal('unsubscribe', deliveryId),
    unsubscribeUrl: (token) => `${publicUrl}/u/${token}`,
    bounceToken: (deliveryId) => seal('bounce', deliveryId),
    verifyUnsubscribe: (token) => open('unsubscribe', token),
    verifyBounce: (token) => open('bounce', token),
    messageIdToken: (deliveryId) => seal('messageId', deliveryId),
    verifyMessageId: (token) => open('messageId', token),
  };
}
