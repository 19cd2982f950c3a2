// A sending domain's DNS records: those to publish, their lookup through DNS_SERVERS, and when a published one matches.
import { Resolver } from 'node:dns/promises';
import type { CheckedRecord, DomainRecordProblem } from '../../db/schema.js';

export const RECORD_PURPOSES = ['dkim', 'dkim_ed25519', 'ownership', 'spf', 'dmarc'] as const;

export interface DnsRecord {
  type: 'TXT';
  name: string;
  value: string;
  purpose: (typeof RECORD_PURPOSES)[number];
  /** Whether verification looks for it; the SPF and DMARC records are recommendations. */
  checked: boolean;
}

/** What a sending domain publishes, as stored. */
export interface PublishedKeys {
  domain: string;
  ownershipToken: string;
  dkimSelector: string;
  dkimPublicKey: string;
  ed25519Selector: string | null;
  ed25519PublicKey: string | null;
}

interface CheckedTxt {
  record: CheckedRecord;
  name: string;
  value: string;
  matches(txt: string): boolean;
}

/** RFC 6376 3.2: `tag=value` pairs separated by `;`; whitespace around them is ignored, and inside base64 values too. */
function dkimTags(txt: string): Map<string, string> {
  const tags = new Map<string, string>();
  for (const pair of txt.split(';')) {
    const equals = pair.indexOf('=');
    if (equals !== -1) tags.set(pair.slice(0, equals).trim(), pair.slice(equals + 1).replace(/\s+/g, ''));
  }
  return tags;
}

function dkimRecord(record: CheckedRecord, domain: string, selector: string, keyType: 'rsa' | 'ed25519', publicKey: string): CheckedTxt {
  return {
    record,
    name: `${selector}._domainkey.${domain}`,
    value: `v=DKIM1; k=${keyType}; p=${publicKey}`,
    matches: (txt) => {
      const tags = dkimTags(txt);
      return (tags.get('v') ?? 'DKIM1') === 'DKIM1' && (tags.get('k') ?? 'rsa') === keyType && tags.get('p') === publicKey;
    },
  };
}

function checkedRecords(keys: PublishedKeys): CheckedTxt[] {
  const ownership = `herald-verification=${keys.ownershipToken}`;
  return [
    dkimRecord('dkim', keys.domain, keys.dkimSelector, 'rsa', keys.dkimPublicKey),
    ...(keys.ed25519Selector && keys.ed25519PublicKey
      ? [dkimRecord('dkim_ed25519', keys.domain, keys.ed25519Selector, 'ed25519', keys.ed25519PublicKey)]
      : []),
    { record: 'ownership', name: `_herald.${keys.domain}`, value: ownership, matches: (txt) => txt.trim() === ownership },
  ];
}

/** The records the project publishes: the checked ones, then the SPF and DMARC records we recommend. */
export function recordsToPublish(keys: PublishedKeys, spfInclude: string | undefined): DnsRecord[] {
  return [
    ...checkedRecords(keys).map(({ record, name, value }): DnsRecord => ({ type: 'TXT', name, value, purpose: record, checked: true })),
    {
      type: 'TXT',
      name: keys.domain,
      value: spfInclude ? `v=spf1 include:${spfInclude} ~all` : 'v=spf1 a mx ~all',
      purpose: 'spf',
      checked: false,
    },
    { type: 'TXT', name: `_dmarc.${keys.domain}`, value: 'v=DMARC1; p=none;', purpose: 'dmarc', checked: false },
  ];
}

/**
 * The TXT records at a name, each one's strings joined (a value longer than 255 bytes is published as several);
 * `missing`: no such name, or no TXT record at it; `failed`: no answer (timeout, SERVFAIL, refused).
 */
export type TxtLookup = (name: string) => Promise<string[] | 'missing' | 'failed'>;

/** Asks `servers` (`ip[:port]`), or the system's resolvers when there are none. */
export function createTxtLookup(servers: readonly string[]): TxtLookup {
  // A request waits for the answer: two short tries, then the record counts as not looked up.
  const resolver = new Resolver({ timeout: 2000, tries: 2 });
  if (servers.length > 0) resolver.setServers(servers);
  return async (name) => {
    try {
      return (await resolver.resolveTxt(name)).map((strings) => strings.join(''));
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      return code === 'ENOTFOUND' || code === 'ENODATA' ? 'missing' : 'failed';
    }
  };
}

/** Looks up every checked record; none wrong means verified. */
export async function checkRecords(keys: PublishedKeys, lookup: TxtLookup): Promise<DomainRecordProblem[]> {
  const found = await Promise.all(
    checkedRecords(keys).map(async ({ record, name, matches }): Promise<DomainRecordProblem | undefined> => {
      const txt = await lookup(name);
      if (txt === 'missing') return { record, name, problem: 'missing' };
      if (txt === 'failed') return { record, name, problem: 'lookup_failed' };
      return txt.some(matches) ? undefined : { record, name, problem: 'wrong_value' };
    }),
  );
  return found.filter((problem) => problem !== undefined);
}
