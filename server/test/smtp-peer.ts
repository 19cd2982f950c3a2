// A real SMTP server on 127.0.0.1 for tests: answers as programmed per recipient, parses and DKIM-verifies every message.
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import { SMTPServer } from 'smtp-server';

/** What the peer answers a recipient next: accept, or refuse with `code` at RCPT TO (default) or after DATA. */
export type SmtpAnswer = 'ok' | { code: number; at?: 'RCPT' | 'DATA' };

/** The DNS a verifier sees: the TXT record of `<selector>._domainkey.<domain>`. */
export interface DkimRecord {
  domain: string;
  selector: string;
  /** The public key (the record's `p=`): SPKI DER in base64 for RSA, the raw 32 bytes in base64 for Ed25519. */
  publicKey: string;
  /** The record's `k=`; RSA by default. */
  keyType?: 'rsa' | 'ed25519';
}

export interface ReceivedMail {
  envelope: { from: string; to: string[] };
  raw: Buffer;
  parsed: ParsedMail;
  /**
   * The DKIM verdict of the first signature (`none` without one) and the headers it signs (`h=`, lower-cased); every
   * signature's algorithm and verdict, in order.
   */
  dkim: { result: string; signingDomain: string | undefined; signedHeaders: string[]; signatures: { algorithm: string; result: string }[] };
  /** The reply to the message: 250 accepted (`queued as <queueId>`), or the code it was refused with after DATA. */
  answer: number;
  queueId: string;
  /** The sender's port: crash tests tell which process a message came from by its connections. */
  remotePort: number;
  /** When the reply to DATA was given (Date.now()). */
  answeredAt: number;
  /** The message came over TLS (STARTTLS, or from the first byte). */
  secure: boolean;
}

export interface SmtpPeer {
  host: string;
  port: number;
  /** Every message transmitted (DATA), accepted or refused, in order. */
  readonly messages: ReceivedMail[];
  respond(address: string, ...answers: SmtpAnswer[]): void;
  /** RCPT TO commands for an address, accepted or not: each is one attempt to send to it. */
  attempts(address: string): number;
  /** The messages to an address the peer accepted. */
  received(address: string): ReceivedMail[];
  /** The messages to an address that reached DATA, refused ones included. */
  transmitted(address: string): ReceivedMail[];
  close(): Promise<void>;
}

class SmtpRefusal extends Error {
  constructor(
    readonly responseCode: number,
    message: string,
  ) {
    super(message);
  }
}

/** The `h=` tag of the message's first DKIM-Signature, its header section unfolded. */
function signedHeaders(raw: Buffer): string[] {
  const head = raw.toString('latin1').split(/\r?\n\r?\n/, 1)[0]!.replace(/\r?\n[ \t]+/g, ' ');
  const signature = /^dkim-signature:(.*)$/im.exec(head)?.[1];
  const list = signature && /(?:^|;)\s*h=([^;]+)/.exec(signature)?.[1];
  return list ? list.split(':').map((name) => name.trim().toLowerCase()) : [];
}

/** The DKIM verdict of a message's signatures, as a verifier that sees only `dkim`'s records in DNS gives it. */
export async function dkimVerdict(raw: Buffer, dkim: DkimRecord | DkimRecord[] | undefined): Promise<ReceivedMail['dkim']> {
  const records = dkim === undefined ? [] : [dkim].flat();
  const resolver = async (name: string, type: string) => {
    const record = type === 'TXT' ? records.find((r) => name.toLowerCase() === `${r.selector}._domainkey.${r.domain}`) : undefined;
    if (record) return [[`v=DKIM1; k=${record.keyType ?? 'rsa'}; p=${record.publicKey}`]];
    throw Object.assign(new Error(`no ${type} record for ${name}`), { code: 'ENOTFOUND' });
  };
  const { results } = await dkimVerify(raw, { resolver: resolver as never });
  const first = results[0];
  return {
    result: first?.status.result ?? 'none',
    signingDomain: first?.signingDomain,
    signedHeaders: signedHeaders(raw),
    signatures: results.map((r) => ({ algorithm: String(r.status.header?.a ?? ''), result: r.status.result })),
  };
}

export interface SmtpPeerOptions {
  dkim?: DkimRecord | DkimRecord[];
  auth?: { user: string; pass: string };
  /** How long the peer takes at least to answer DATA, like a remote server: sends are in flight when a test acts. */
  delayMs?: number;
  /** Speak TLS with this certificate: offered through STARTTLS, or from the first byte (`implicit`). Without, none. */
  tls?: { key: string; cert: string; implicit?: boolean };
}

export async function startSmtpPeer(options: SmtpPeerOptions = {}): Promise<SmtpPeer> {
  const answers = new Map<string, SmtpAnswer[]>();
  const attempts = new Map<string, number>();
  const messages: ReceivedMail[] = [];
  const nextAnswer = (address: string) => answers.get(address.toLowerCase())?.shift() ?? 'ok';

  const server = new SMTPServer({
    // Plain SMTP on loopback unless the test brings a certificate the client is told to trust.
    ...(options.tls ? { key: options.tls.key, cert: options.tls.cert, secure: options.tls.implicit === true } : { disabledCommands: ['STARTTLS'] }),
    allowInsecureAuth: true,
    authOptional: !options.auth,
    logger: false,
    // A client's pool may keep its connections open: closing the peer does not wait for them.
    closeTimeout: 500,
    onAuth(auth, _session, callback) {
      if (options.auth && auth.username === options.auth.user && auth.password === options.auth.pass) return callback(null, { user: auth.username });
      callback(new SmtpRefusal(535, '5.7.8 Authentication credentials invalid'));
    },
    onRcptTo(address, session, callback) {
      const to = address.address.toLowerCase();
      attempts.set(to, (attempts.get(to) ?? 0) + 1);
      const answer = nextAnswer(to);
      if (answer === 'ok') return callback();
      if ((answer.at ?? 'RCPT') === 'RCPT') return callback(new SmtpRefusal(answer.code, answer.code >= 500 ? '5.1.1 No such user' : '4.7.1 Try again later'));
      // Refused after DATA: remembered on the session until the message is read.
      (session as { refuseData?: number }).refuseData = answer.code;
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const held = session as { refuseData?: number };
        const refuse = held.refuseData;
        // The session outlives the message on a pooled connection.
        delete held.refuseData;
        const raw = Buffer.concat(chunks);
        const queueId = randomBytes(6).toString('hex').toUpperCase();
        const delay = new Promise((resolve) => setTimeout(resolve, options.delayMs ?? 0));
        Promise.all([simpleParser(raw), dkimVerdict(raw, options.dkim), delay])
          .then(([parsed, dkim]) => {
            messages.push({
              envelope: {
                from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
                to: session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
              },
              raw,
              parsed,
              dkim,
              answer: refuse ?? 250,
              queueId,
              remotePort: session.remotePort,
              answeredAt: Date.now(),
              secure: session.secure,
            });
            if (refuse !== undefined) callback(new SmtpRefusal(refuse, `${refuse >= 500 ? '5.6.0 Message refused' : '4.3.0 Try again later'}`));
            else callback(null, `2.0.0 Ok: queued as ${queueId}`);
          })
          .catch((error: Error) => callback(error));
      });
    },
  });
  server.on('error', (error: NodeJS.ErrnoException) => {
    // A client killed in the middle of a message (a crash test's worker) resets its connection: not the peer's failure.
    if (error.code === 'ECONNRESET' || error.code === 'EPIPE') return;
    throw error;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;

  return {
    host: '127.0.0.1',
    port,
    messages,
    respond: (address, ...next) => answers.set(address.toLowerCase(), [...(answers.get(address.toLowerCase()) ?? []), ...next]),
    attempts: (address) => attempts.get(address.toLowerCase()) ?? 0,
    received: (address) => messages.filter((m) => m.answer === 250 && m.envelope.to.includes(address.toLowerCase())),
    transmitted: (address) => messages.filter((m) => m.envelope.to.includes(address.toLowerCase())),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
