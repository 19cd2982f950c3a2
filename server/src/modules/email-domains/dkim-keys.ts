// DKIM key pairs of a sending domain: RSA 2048, which every receiver verifies, and Ed25519 (RFC 8463) as a second signature.
import { generateKeyPair } from 'node:crypto';
import { promisify } from 'node:util';

const generate = promisify(generateKeyPair);

export interface DkimKeyPair {
  /** Base64, as published in the DKIM record's `p=` tag. */
  publicKey: string;
  /** PKCS#8 PEM, as nodemailer signs with it. */
  privateKey: string;
}

export async function generateRsaKeyPair(): Promise<DkimKeyPair> {
  const { publicKey, privateKey } = await generate('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'der' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return { publicKey: publicKey.toString('base64'), privateKey };
}

export async function generateEd25519KeyPair(): Promise<DkimKeyPair> {
  const { publicKey, privateKey } = await generate('ed25519', {
    publicKeyEncoding: { type: 'spki', format: 'der' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  // RFC 8463 publishes the raw 32-byte key, which ends the SubjectPublicKeyInfo, not the SubjectPublicKeyInfo itself.
  return { publicKey: publicKey.subarray(-32).toString('base64'), privateKey };
}
