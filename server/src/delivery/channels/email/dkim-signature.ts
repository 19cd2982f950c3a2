// DKIM-Signature header fields (RFC 6376, RFC 8463) for a composed message: relaxed/relaxed, a signing time, and the
// headers that name the sender and the subject over-signed, so that a header of those added later breaks the signature.
import { createHash, sign, type KeyObject } from 'node:crypto';

export interface DkimSigner {
  /** `d=` */
  domain: string;
  /** `s=` */
  selector: string;
  key: KeyObject;
  algorithm: 'rsa-sha256' | 'ed25519-sha256';
}

/** The headers to sign, in `h=` order, and those listed once more than the message has them (RFC 6376 §8.15). */
export interface SignedHeaders {
  names: readonly string[];
  overSigned: readonly string[];
}

/** RFC 6376 §3.4.2: the name lower-cased, the value unfolded, each run of spaces and tabs one space, none at its ends. */
function relaxedHeader(field: string): string {
  const colon = field.indexOf(':');
  const value = field
    .slice(colon + 1)
    .replace(/\r\n/g, '')
    .replace(/[ \t]+/g, ' ')
    .trim();
  return `${field.slice(0, colon).trim().toLowerCase()}:${value}`;
}

/** RFC 6376 §3.4.4: spaces and tabs at line ends dropped, other runs one space, empty lines at the end dropped. */
function relaxedBody(body: string): string {
  const lines = body
    .replace(/[ \t]+/g, ' ')
    .replace(/ (?=\r\n|$)/g, '')
    .replace(/(?:\r\n)+$/, '');
  return lines === '' ? '' : `${lines}\r\n`;
}

/** `raw`'s header fields (folded lines kept with their field) and its body. */
function parts(raw: Buffer): { fields: string[]; body: string } {
  const text = raw.toString('latin1');
  const end = text.indexOf('\r\n\r\n');
  const head = end === -1 ? text : text.slice(0, end);
  return { fields: head.split(/\r\n(?![ \t])/).filter((field) => field.includes(':')), body: end === -1 ? '' : text.slice(end + 4) };
}

/**
 * The DKIM-Signature fields for `raw` (a message composed with CRLF line ends), one per signer, each ending in CRLF: to
 * be put above the message. Each listed header the message has is signed, every instance of it (from the bottom up);
 * an over-signed one is listed once more, an instance no one can add without breaking the signature.
 */
export function dkimSignatures(raw: Buffer, signers: readonly DkimSigner[], headers: SignedHeaders, signedAt: Date): string {
  const { fields, body } = parts(raw);
  const bodyHash = createHash('sha256').update(relaxedBody(body), 'latin1').digest('base64');
  const instances = new Map<string, string[]>();
  for (const field of fields) {
    const name = field.slice(0, field.indexOf(':')).trim().toLowerCase();
    instances.set(name, [...(instances.get(name) ?? []), field]);
  }
  const listed: string[] = [];
  const signed: string[] = [];
  for (const header of headers.names) {
    const name = header.toLowerCase();
    const present = [...(instances.get(name) ?? [])].reverse();
    for (const field of present) {
      listed.push(header);
      signed.push(relaxedHeader(field));
    }
    if (headers.overSigned.some((over) => over.toLowerCase() === name)) listed.push(header);
  }
  const time = Math.floor(signedAt.getTime() / 1000);
  return signers
    .map((signer) => {
      const field =
        `DKIM-Signature: v=1; a=${signer.algorithm}; c=relaxed/relaxed; d=${signer.domain};\r\n s=${signer.selector}; t=${time};` +
        ` bh=${bodyHash};\r\n h=${listed.join(':')};\r\n b=`;
      const data = Buffer.from([...signed, relaxedHeader(field)].join('\r\n'), 'latin1');
      // RFC 8463: Ed25519 signs the SHA-256 digest of the header data (PureEdDSA over the hash).
      const signature =
        signer.algorithm === 'rsa-sha256' ? sign('sha256', data, signer.key) : sign(null, createHash('sha256').update(data).digest(), signer.key);
      return `${field}${signature.toString('base64').replace(/.{1,72}/g, (chunk, offset: number) => (offset === 0 ? chunk : `\r\n ${chunk}`))}\r\n`;
    })
    .join('');
}
