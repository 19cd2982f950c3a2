// Web push message encryption (RFC 8291): the aes128gcm content coding (RFC 8188) of one payload, node:crypto only.
import { createCipheriv, createECDH, createHmac, randomBytes, type ECDH } from 'node:crypto';

/** The largest body every push service must accept (RFC 8030 §7.2); larger ones are refused before sending. */
export const MAX_BODY_BYTES = 4096;
/** salt (16) + record size (4) + key id length (1) + sender public key (65). */
const HEADER_BYTES = 86;
const TAG_BYTES = 16;
/** 3993: the body limit less the header, the one-byte last-record delimiter and the GCM tag. */
export const MAX_PLAINTEXT_BYTES = MAX_BODY_BYTES - HEADER_BYTES - 1 - TAG_BYTES;

// HKDF with one output block is a single HMAC over `info || 0x01`, so the constant infos carry their 0x01.
const KEY_INFO = Buffer.from('WebPush: info\0');
const ONE = Buffer.from([1]);
const CEK_INFO = Buffer.from('Content-Encoding: aes128gcm\0\x01');
const NONCE_INFO = Buffer.from('Content-Encoding: nonce\0\x01');
const LAST_RECORD = Buffer.from([2]);

/** The sender's side of one message: a key pair and salt that must never be reused. */
interface SenderKeys {
  ecdh: ECDH;
  salt: Buffer;
}

function freshSenderKeys(): SenderKeys {
  const ecdh = createECDH('prime256v1');
  ecdh.generateKeys();
  return { ecdh, salt: randomBytes(16) };
}

function hmac(key: Buffer, ...parts: Buffer[]): Buffer {
  const h = createHmac('sha256', key);
  for (const part of parts) h.update(part);
  return h.digest();
}

/**
 * Encrypts `plaintext` for the subscription whose keys are `uaPublic` (p256dh, 65-byte uncompressed point) and
 * `authSecret` (16 bytes), as one record with no padding. Throws RangeError on a payload over
 * MAX_PLAINTEXT_BYTES or malformed keys.
 */
export function encryptPushPayload(plaintext: Buffer, uaPublic: Buffer, authSecret: Buffer, sender: SenderKeys = freshSenderKeys()): Buffer {
  if (plaintext.length > MAX_PLAINTEXT_BYTES) throw new RangeError(`push payload of ${plaintext.length} bytes exceeds ${MAX_PLAINTEXT_BYTES}`);
  if (uaPublic.length !== 65 || uaPublic[0] !== 4) throw new RangeError('p256dh is not an uncompressed P-256 point');
  if (authSecret.length !== 16) throw new RangeError('auth secret is not 16 bytes');
  const asPublic = sender.ecdh.getPublicKey();
  const ecdhSecret = sender.ecdh.computeSecret(uaPublic);
  // RFC 8291 §3.3–3.4: the auth secret binds the shared secret to this subscription; RFC 8188 §2.2 then derives
  // the content key and nonce from it with the salt.
  const ikm = hmac(hmac(authSecret, ecdhSecret), KEY_INFO, uaPublic, asPublic, ONE);
  const prk = hmac(sender.salt, ikm);
  const cek = hmac(prk, CEK_INFO).subarray(0, 16);
  const nonce = hmac(prk, NONCE_INFO).subarray(0, 12);

  const body = Buffer.allocUnsafe(HEADER_BYTES + plaintext.length + 1 + TAG_BYTES);
  sender.salt.copy(body, 0);
  body.writeUInt32BE(MAX_BODY_BYTES, 16);
  body[20] = asPublic.length;
  asPublic.copy(body, 21);
  const cipher = createCipheriv('aes-128-gcm', cek, nonce);
  let at = HEADER_BYTES;
  at += cipher.update(plaintext).copy(body, at);
  at += cipher.update(LAST_RECORD).copy(body, at);
  cipher.final();
  cipher.getAuthTag().copy(body, at);
  return body;
}
