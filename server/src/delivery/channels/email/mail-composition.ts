// What every email provider sends: a rendered email composed by nodemailer and DKIM-signed with its domain's keys.
import { createPrivateKey } from 'node:crypto';
import nodemailer from 'nodemailer';
import type { Options as MailOptions } from 'nodemailer/lib/mailer/index.js';
import { boundedMemo } from '../../../shared/bounded-memo.js';
import { dkimSignatures, type DkimSigner, type SignedHeaders } from './dkim-signature.js';
import type { EmailItem, RenderedEmail } from './email-item.js';

/** A domain's DKIM signing key (RFC 6376): `d=` is `domainName`, the public key is at `<keySelector>._domainkey.<domainName>`. */
export interface DkimKey {
  domainName: string;
  keySelector: string;
  /** PEM, RSA. */
  privateKey: string;
  /** A domain's optional second key (RFC 8463, `a=ed25519-sha256`): every message then carries both signatures. */
  ed25519?: { keySelector: string; privateKey: string } | undefined;
}

/** The key a project signs mail from `domain` with, if it has one (the sending-domains module keeps them). */
export type DkimKeys = (projectId: string, domain: string) => Promise<DkimKey | undefined>;

/**
 * Signed whatever the message holds: RFC 8058 one-click unsubscribe holds only when List-Unsubscribe and
 * List-Unsubscribe-Post are both covered by a valid signature, and Gmail's feedback loop reads Feedback-ID only when
 * signed. From and Subject are over-signed: a From or Subject added on the way (what a receiver may show instead of
 * the signed one) breaks the signature.
 */
export const DKIM_SIGNED_HEADERS: SignedHeaders = {
  names: [
    'From',
    'Sender',
    'Reply-To',
    'Subject',
    'Date',
    'Message-ID',
    'To',
    'Cc',
    'MIME-Version',
    'Content-Type',
    'Content-Transfer-Encoding',
    'List-Unsubscribe',
    'List-Unsubscribe-Post',
    'List-Id',
    'Feedback-ID',
  ],
  overSigned: ['From', 'Subject'],
};

/** One lookup per project and From domain in a batch; the signing itself is per message. */
export function batchKeys(dkimKeys: DkimKeys): (item: EmailItem) => Promise<DkimKey | undefined> {
  const keys = new Map<string, Promise<DkimKey | undefined>>();
  return (item) => {
    const domain = item.email.from.email.slice(item.email.from.email.lastIndexOf('@') + 1).toLowerCase();
    const name = `${item.projectId} ${domain}`;
    if (!keys.has(name)) keys.set(name, dkimKeys(item.projectId, domain));
    return keys.get(name)!;
  };
}

/** Sending domains whose parsed signing key is kept: far more than a process signs for at once. */
const SIGNING_KEYS = 1000;

// Decoding a PEM key costs OpenSSL more than the RSA signature made with it (docs/PERFORMANCE.md, "Transactional
// email"): each key is decoded once. Keyed by the PEM itself, so a rotated key is simply another entry.
const signingKeyOf = boundedMemo((pem: string) => createPrivateKey(pem), SIGNING_KEYS);

/** The message as nodemailer composes it, unsigned. */
function mailOptions(email: RenderedEmail): MailOptions {
  return {
    messageId: email.messageId,
    from: { address: email.from.email, name: email.from.name ?? '' },
    replyTo: email.replyTo && { address: email.replyTo.email, name: email.replyTo.name ?? '' },
    to: email.to,
    subject: email.subject,
    html: email.html,
    text: email.text,
    headers: email.headers,
    envelope: { from: email.returnPath, to: [email.to] },
    baseBoundary: email.baseBoundary,
    xMailer: false,
  };
}

// Composes in memory, sends nothing: the bytes an SMTP server would get, less the envelope.
const composer = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows', disableFileAccess: true, disableUrlAccess: true });

/**
 * The whole message, signed when its domain has a key: an RSA signature, and for a domain with an Ed25519 key a
 * second one above it, both over `signedHeaders` with the time of signing (`t=`). Herald signs itself rather than
 * through nodemailer, whose signer lists each header once and only those present (no over-signing) and gives no `t=`.
 */
export async function composeSigned(email: RenderedEmail, dkim: DkimKey | undefined, signedHeaders: SignedHeaders, now: Date = new Date()): Promise<Buffer> {
  const raw = (await composer.sendMail(mailOptions(email))).message as Buffer;
  if (!dkim) return raw;
  const signers: DkimSigner[] = [{ domain: dkim.domainName, selector: dkim.keySelector, key: signingKeyOf(dkim.privateKey), algorithm: 'rsa-sha256' }];
  if (dkim.ed25519) signers.unshift({ domain: dkim.domainName, selector: dkim.ed25519.keySelector, key: signingKeyOf(dkim.ed25519.privateKey), algorithm: 'ed25519-sha256' });
  return Buffer.concat([Buffer.from(dkimSignatures(raw, signers, signedHeaders, now), 'latin1'), raw]);
}
