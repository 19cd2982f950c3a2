// VAPID key pairs (RFC 8292): one P-256 key per project, kept as base64url raw public point and private scalar.
import { createECDH, generateKeyPairSync } from 'node:crypto';

export interface VapidKeys {
  publicKey: string;
  privateKey: string;
}

export function generateVapidKeys(): VapidKeys {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const pub = publicKey.export({ format: 'jwk' });
  const priv = privateKey.export({ format: 'jwk' });
  const point = Buffer.concat([Buffer.from([4]), Buffer.from(pub.x!, 'base64url'), Buffer.from(pub.y!, 'base64url')]);
  return { publicKey: point.toString('base64url'), privateKey: priv.d! };
}

/** Why a VAPID pair someone brings (from another push service) cannot be used, or undefined when its halves match. */
export function vapidPairProblem(keys: VapidKeys): string | undefined {
  try {
    const ecdh = createECDH('prime256v1');
    ecdh.setPrivateKey(Buffer.from(keys.privateKey, 'base64url'));
    return ecdh.getPublicKey('base64url') === keys.publicKey ? undefined : 'the public key is not the private key’s';
  } catch {
    return 'not a P-256 key pair (base64url private scalar and uncompressed public point)';
  }
}
