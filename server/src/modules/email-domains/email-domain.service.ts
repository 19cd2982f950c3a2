// Sending domains: DKIM keys generated and sealed at rest, the DNS records to publish, and their verification.
import { domainToASCII } from 'node:url';
import type { Db } from '../../db/database.js';
import { notifyProjectChange, type ForgetProject } from '../../db/project-changes.js';
import type { DomainRecordProblem, EmailDomainStatus } from '../../db/schema.js';
import { boundedMemo } from '../../shared/bounded-memo.js';
import { conflict, forbidden, notFound } from '../../shared/errors.js';
import { newId } from '../../shared/ids.js';
import { NotifiedCache } from '../../shared/notified-cache.js';
import { randomToken } from '../../shared/secrets.js';
import type { Keyring } from '../channels/index.js';
import type { ProjectScope } from '../tenancy.js';
import { generateEd25519KeyPair, generateRsaKeyPair } from './dkim-keys.js';
import { checkRecords, recordsToPublish, type DnsRecord, type TxtLookup } from './domain-records.js';
import * as repo from './email-domain.repository.js';

export const RECHECK_TASK = 'email-domain-recheck';

/** Domains the hourly re-check looks up at once. */
const RECHECK_CONCURRENCY = 8;

/** A sending domain as answered: never its private keys. */
export interface EmailDomain {
  id: string;
  projectId: string;
  domain: string;
  status: EmailDomainStatus;
  records: DnsRecord[];
  problems: DomainRecordProblem[];
  verifiedAt: string | null;
  lastCheckedAt: string | null;
  createdAt: string;
  updatedAt: string;
}

/** What nodemailer's `dkim` option needs to sign for a verified domain, keys opened. */
export interface DkimSigningKeys {
  /** The signature's `d=`: the verified domain, also when the sender is on a subdomain of it. */
  domainName: string;
  selector: string;
  /** RSA 2048, PKCS#8 PEM. */
  privateKey: string;
  /** The second signature (RFC 8463, `a=ed25519-sha256`), for a domain added with `ed25519: true`. */
  ed25519?: { selector: string; privateKey: string };
}

/** The sealed `private_keys` column, opened. */
interface PrivateKeys {
  rsa: string;
  ed25519?: string;
}

export interface EmailDomainOptions {
  lookupTxt: TxtLookup;
  /** EMAIL_SPF_INCLUDE. */
  spfInclude: string | undefined;
  clock?: () => Date;
  /** Drops the project's cached sending settings in this process (other processes hear the NOTIFY). */
  forget?: ForgetProject;
}

/**
 * What a check makes of a domain: verified when no record is wrong. A record found missing or different keeps a new
 * domain pending and makes a verified one `failing`; lookups that got no answer prove nothing, so they change nothing.
 */
function nextStatus(current: EmailDomainStatus, problems: DomainRecordProblem[]): EmailDomainStatus {
  if (problems.length === 0) return 'verified';
  if (problems.every((found) => found.problem === 'lookup_failed')) return current;
  return current === 'pending' ? 'pending' : 'failing';
}

/** A domain in A-labels, lower case; remembered: every email asks for its sender's, and a project sends from a few. */
const asciiDomain = boundedMemo((domain: string) => domainToASCII(domain), 1000);

/** An address's domain as stored (lower case, A-labels), or undefined when it has none. */
function domainOf(address: string): string | undefined {
  const at = address.lastIndexOf('@');
  const domain = at === -1 ? '' : asciiDomain(address.slice(at + 1).replace(/\.$/, ''));
  return domain.includes('.') ? domain : undefined;
}

/** The domains that may cover an address's domain: itself, then each parent but the top-level one, most specific first. */
function coveringNames(address: string): string[] {
  const labels = domainOf(address)?.split('.') ?? [];
  return labels.slice(0, -1).map((_, i) => labels.slice(i).join('.'));
}

/** A test key acts in the sandbox: it may read and verify the domains, not change what live mail is signed with. */
function refuseTestKey(scope: ProjectScope) {
  if (scope.sandbox) throw forbidden('A test key cannot add or delete sending domains: use a live key or the dashboard', 'test_key_forbidden');
}

/** Reseals every domain's private keys sealed by HERALD_SECRET_KEY_PREVIOUS under HERALD_SECRET_KEY. Returns how many. */
export async function resealPrivateKeys(db: Db, keyring: Keyring): Promise<number> {
  const box = await keyring.box();
  let count = 0;
  for (const row of await repo.allPrivateKeys(db)) {
    if (!box.sealedByOtherKey(row.privateKeys)) continue;
    if (await repo.replacePrivateKeys(db, row.projectId, row.id, row.privateKeys, box.seal(box.open(row.privateKeys)))) count++;
  }
  return count;
}

export class EmailDomainService {
  private readonly clock: () => Date;
  private readonly forget: ForgetProject;
  /**
   * Each project's verified domains, read by every email sent (its sender checked, its DKIM key): kept while the
   * delivery engine's listener hears project changes, which every change of a domain's status announces.
   */
  private readonly verified = new NotifiedCache<{ projectId: string; rows: repo.EmailDomainRow[] }>({ maxEntries: 10_000, ttlMs: 30_000 });
  /** What each cached row answers, made once per row: a send asks for them every time. */
  private readonly views = new WeakMap<repo.EmailDomainRow, EmailDomain>();
  private readonly signing = new WeakMap<repo.EmailDomainRow, DkimSigningKeys>();

  constructor(
    private readonly db: Db,
    private readonly keyring: Keyring,
    private readonly options: EmailDomainOptions,
  ) {
    this.clock = options.clock ?? (() => new Date());
    this.forget = options.forget ?? (() => undefined);
  }

  /** A new pending domain with fresh DKIM keys; 409 when the project already has it. */
  async add(scope: ProjectScope, input: { domain: string; ed25519?: boolean | undefined }): Promise<EmailDomain> {
    refuseTestKey(scope);
    const [rsa, ed25519] = await Promise.all([generateRsaKeyPair(), input.ed25519 ? generateEd25519KeyPair() : undefined]);
    // Unique per domain record, so two projects sending from one domain (or a domain added again) publish apart.
    const selector = `herald-${randomToken(8)}`;
    const privateKeys: PrivateKeys = { rsa: rsa.privateKey, ...(ed25519 && { ed25519: ed25519.privateKey }) };
    const row = await repo.insertDomain(this.db, {
      id: newId('dom'),
      projectId: scope.projectId,
      domain: input.domain,
      ownershipToken: randomToken(32),
      dkimSelector: selector,
      dkimPublicKey: rsa.publicKey,
      ed25519Selector: ed25519 ? `${selector}-ed25519` : null,
      ed25519PublicKey: ed25519?.publicKey ?? null,
      privateKeys: (await this.keyring.box()).seal(JSON.stringify(privateKeys)),
    });
    if (!row) throw conflict(`The project already has the domain ${input.domain}`, 'email_domain_exists');
    return this.view(row);
  }

  async list(scope: ProjectScope): Promise<{ data: EmailDomain[] }> {
    return { data: (await repo.listDomains(this.db, scope.projectId)).map((row) => this.view(row)) };
  }

  async get(scope: ProjectScope, id: string): Promise<EmailDomain> {
    return this.view(await this.find(scope, id));
  }

  /** Looks the records up now and answers the domain with what was found. */
  async verify(scope: ProjectScope, id: string): Promise<EmailDomain> {
    const checked = await this.check(await this.find(scope, id));
    if (!checked) throw notFound('Email domain');
    return this.view(checked);
  }

  async remove(scope: ProjectScope, id: string): Promise<void> {
    refuseTestKey(scope);
    const removed = await this.db.transaction(async (tx) => {
      const row = await repo.deleteDomain(tx, scope.projectId, id);
      if (row?.status === 'verified') await notifyProjectChange(tx, scope.projectId);
      return row;
    });
    if (!removed) throw notFound('Email domain');
    if (removed.status === 'verified') this.forget(scope.projectId);
  }

  /** The hourly job: checks again every domain verified once. Answers those it found had lost their records. */
  async recheck(): Promise<EmailDomain[]> {
    const due = await repo.domainsToRecheck(this.db);
    const lost: EmailDomain[] = [];
    const work = async () => {
      for (let row = due.shift(); row; row = due.shift()) {
        const checked = await this.check(row);
        if (row.status === 'verified' && checked?.status === 'failing') lost.push(this.view(checked));
      }
    };
    await Promise.all(Array.from({ length: RECHECK_CONCURRENCY }, work));
    return lost;
  }

  /**
   * The project's verified domain `address` may be sent from: the address's own domain, or a parent of it
   * (mail.example.com is covered by a verified example.com; the most specific wins). Undefined when there is none —
   * `pending` and `failing` domains do not count.
   */
  async verifiedDomainFor(projectId: string, address: string): Promise<EmailDomain | undefined> {
    const names = coveringNames(address);
    if (names.length === 0) return undefined;
    const rows = await this.verifiedDomains(projectId);
    const row = names.map((name) => rows.find((r) => r.domain === name)).find((found) => found !== undefined);
    if (!row) return undefined;
    if (!this.views.has(row)) this.views.set(row, this.view(row));
    return this.views.get(row);
  }

  /**
   * The keys to sign with for the project's verified `domain` (as `verifiedDomainFor` answered it), opened; undefined
   * unless that domain is verified.
   */
  async signingKeys(projectId: string, domain: string): Promise<DkimSigningKeys | undefined> {
    const name = asciiDomain(domain);
    const row = (await this.verifiedDomains(projectId)).find((r) => r.domain === name);
    if (!row) return undefined;
    const opened = this.signing.get(row);
    if (opened) return opened;
    const keys = JSON.parse((await this.keyring.box()).open(row.privateKeys)) as PrivateKeys;
    const signing = {
      domainName: row.domain,
      selector: row.dkimSelector,
      privateKey: keys.rsa,
      ...(keys.ed25519 && row.ed25519Selector && { ed25519: { selector: row.ed25519Selector, privateKey: keys.ed25519 } }),
    };
    this.signing.set(row, signing);
    return signing;
  }

  /** After a domain's status changed or it was deleted in this process (others hear of it as a project change). */
  forgetProject(projectId: string): void {
    this.verified.evictWhere((entry) => entry.projectId === projectId);
  }

  /** Trusted while the delivery engine's listener is connected (`DeliveryEngine.watchChanges`). */
  setTrusted(trusted: boolean): void {
    this.verified.setTrusted(trusted);
  }

  private async verifiedDomains(projectId: string): Promise<repo.EmailDomainRow[]> {
    const version = this.verified.version();
    const cached = this.verified.get(projectId);
    if (cached) return cached.rows;
    const rows = await repo.listVerified(this.db, projectId);
    this.verified.set(projectId, { projectId, rows }, version);
    return rows;
  }

  private async find(scope: ProjectScope, id: string): Promise<repo.EmailDomainRow> {
    const row = await repo.findDomain(this.db, scope.projectId, id);
    if (!row) throw notFound('Email domain');
    return row;
  }

  /** Looks the domain's records up and stores the verdict; a change of status is announced like a settings change. */
  private async check(row: repo.EmailDomainRow): Promise<repo.EmailDomainRow | undefined> {
    const problems = await checkRecords(row, this.options.lookupTxt);
    const status = nextStatus(row.status, problems);
    const checkedAt = this.clock();
    const changed = status !== row.status;
    const saved = await this.db.transaction(async (tx) => {
      const updated = await repo.recordCheck(tx, row.projectId, row.id, {
        status,
        problems,
        checkedAt,
        ...(changed && status === 'verified' && { verifiedAt: checkedAt }),
      });
      if (updated && changed) await notifyProjectChange(tx, row.projectId);
      return updated;
    });
    if (changed) this.forget(row.projectId);
    return saved;
  }

  private view(row: repo.EmailDomainRow): EmailDomain {
    return {
      id: row.id,
      projectId: row.projectId,
      domain: row.domain,
      status: row.status,
      records: recordsToPublish(row, this.options.spfInclude),
      problems: row.problems,
      verifiedAt: row.verifiedAt?.toISOString() ?? null,
      lastCheckedAt: row.lastCheckedAt?.toISOString() ?? null,
      createdAt: row.createdAt.toISOString(),
      updatedAt: row.updatedAt.toISOString(),
    };
  }
}
