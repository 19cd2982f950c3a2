// The email benchmark's SMTP sink in its own process: accepts every message and discards it, counting; DKIM-checks a sample.
import { Resolver } from 'node:dns/promises';
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import { SMTPServer } from 'smtp-server';

const env = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};

const every = Number(env('SMTP_SINK_SAMPLE_EVERY'));
// The sample is verified against the records the bench published, through the DNS server Herald verified the domain with.
const dns = new Resolver();
dns.setServers([env('SMTP_SINK_DNS')]);
const resolver = (name: string, type: string) => dns.resolve(name, type as 'TXT');

/** Messages whose DATA began, accepted ones, and their bytes. */
let arrived = 0;
let messages = 0;
let bytes = 0;
let open = 0;
let connections = 0;
// SMTP_SINK_COUNT_EACH: messages counted per recipient address too, for a benchmark that checks nobody got one twice.
const perRecipient = process.env.SMTP_SINK_COUNT_EACH ? new Map<string, number>() : undefined;
/** Sampled DKIM verdicts by signing domain (`none` for an unsigned message): `pass` or the verifier's result. */
const dkim: Record<string, Record<string, number>> = {};

const tally = (domain: string, result: string) => {
  const counts = (dkim[domain] ??= {});
  counts[result] = (counts[result] ?? 0) + 1;
};

const server = new SMTPServer({
  // Plain SMTP on loopback, no account: the sink costs as little as a server can.
  disabledCommands: ['STARTTLS', 'AUTH'],
  authOptional: true,
  logger: false,
  // A client's pool keeps its connections open: closing the sink does not wait for them.
  closeTimeout: 500,
  onConnect(_session, callback) {
    open++;
    connections++;
    callback();
  },
  onClose() {
    open--;
  },
  onData(stream, session, callback) {
    const sampled = ++arrived % every === 0;
    const chunks: Buffer[] = [];
    let size = 0;
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (sampled) chunks.push(chunk);
    });
    stream.on('end', () => {
      messages++;
      bytes += size;
      for (const { address } of perRecipient ? session.envelope.rcptTo : []) perRecipient!.set(address, (perRecipient!.get(address) ?? 0) + 1);
      callback(null, 'Ok: discarded');
      if (!sampled) return;
      void dkimVerify(Buffer.concat(chunks), { resolver: resolver as never }).then(
        (verified) => {
          const first = verified.results[0];
          tally(first?.signingDomain ?? 'none', first?.status.result ?? 'none');
        },
        (error: Error) => tally('error', error.message),
      );
    });
  },
});

await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));

process.on('message', (message) => {
  if (message !== 'stats') return;
  let twice = 0;
  for (const count of perRecipient?.values() ?? []) if (count > 1) twice++;
  process.send!({ messages, bytes, open, connections, dkim, each: perRecipient && { distinct: perRecipient.size, twice } });
});
process.on('disconnect', () => server.close(() => process.exit(0)));
process.send!({ port: (server.server.address() as { port: number }).port });
