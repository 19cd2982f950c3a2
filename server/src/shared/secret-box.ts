// Secrets sealed at rest: AES-256-GCM under the deployment's key, each sealed value naming the key that sealed it.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

const VERSION = 'hsb1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A key derived from a configured secret (any string of 32+ characters), with the id sealed values carry. */
interface Key {
  id: string;
  bytes: Buffer;
}

const keyOf = (secret: string): Key => {
  const bytes = createHash('sha256').update(`herald secret box\0${secret}`).digest();
  return { id: createHash('sha256').update(bytes).digest('base64url').slice(0, 8), bytes };
};

export interface SecretBox {
  /** `hsb1.<key id>.<iv>.<ciphertext and tag>`, all base64url. */
  seal(plaintext: string): string;
  /** The plaintext; throws when the value was sealed by a key this box does not hold, or was altered. */
  open(sealed: string): string;
  /** Whether the value was sealed by another key than the current one (the rotation command reseals it). */
  sealedByOtherKey(sealed: string): boolean;
}

/** `current` seals and opens; `previous` (a rotation in progress) only opens. */
export function createSecretBox(current: string, previous?: string): SecretBox {
  const sealer = keyOf(current);
  const keys = new Map([sealer, ...(previous ? [keyOf(previous)] : [])].map((key) => [key.id, key]));
  return {
    seal(plaintext) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', sealer.bytes, iv);
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
      return [VERSION, sealer.id, iv.toString('base64url'), body.toString('base64url')].join('.');
    },
    open(sealed) {
      const [version, keyId, iv, body] = sealed.split('.');
      if (version !== VERSION || !keyId || !iv || !body) throw new Error('not a sealed secret');
      const key = keys.get(keyId);
      if (!key) throw new Error(`sealed by key ${keyId}, which is neither HERALD_SECRET_KEY nor HERALD_SECRET_KEY_PREVIOUS`);
      const bytes = Buffer.from(body, 'base64url');
      const decipher = createDecipheriv('aes-256-gcm', key.bytes, Buffer.from(iv, 'base64url'));
      decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
      return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - TAG_BYTES)), decipher.final()]).toString('utf8');
    },
    sealedByOtherKey: (sealed) => sealed.split('.')[1] !== sealer.id,
  };
}
